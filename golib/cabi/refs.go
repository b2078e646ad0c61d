package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/arrowio"
	"github.com/tabscreen/tabscreen/golib/guard"
	"github.com/tabscreen/tabscreen/golib/refs"
)

type refsRequest struct {
	Op     string            `json:"op"` // open, next, close, dedup, columns
	Path   string            `json:"path"`
	Handle int64             `json:"handle"`
	Read   refs.Options      `json:"read"`
	Dedup  refs.DedupOptions `json:"dedup"`
	Names  []string          `json:"names"`
}

// Files being read are reached from C through integer handles, as runs are.
var (
	readersMu  sync.Mutex
	readers    = map[int64]*reading{}
	nextReader int64
)

// reading is a file being read: a goroutine takes the parser's chunks and encodes them into C
// memory one ahead of R, so that R's thread only decodes them.
type reading struct {
	rd   *refs.Reader
	out  chan encoded
	stop chan struct{}
	once sync.Once
}

// encoded is a chunk's IPC stream in C memory, or the end (p nil) with the reading's error.
type encoded struct {
	b   *cBuffer
	err error
}

func startReading(rd *refs.Reader) *reading {
	r := &reading{rd: rd, out: make(chan encoded, 1), stop: make(chan struct{})}
	go func() {
		defer close(r.out)
		defer guard.Recover(func(err error) { r.send(encoded{err: err}) })
		for {
			ch, err := rd.Next()
			if err != nil || ch == nil {
				r.send(encoded{err: err})
				return
			}
			b := newCBuffer(ch.Bytes())
			err = ch.WriteIPC(b)
			ch.Release()
			if err != nil {
				b.free()
				r.send(encoded{err: &ipcError{err}})
				return
			}
			if !r.send(encoded{b: b}) {
				b.free()
				return
			}
		}
	}()
	return r
}

// ipcError is a chunk that could not be encoded (not the file's fault).
type ipcError struct{ error }

func (r *reading) send(e encoded) bool {
	select {
	case r.out <- e:
		return true
	case <-r.stop:
		return false
	}
}

// close stops the reading and frees what was encoded and not taken.
func (r *reading) close() {
	r.once.Do(func() { close(r.stop) })
	r.rd.Close()
	for e := range r.out {
		if e.b != nil {
			e.b.free()
		}
	}
}

// TsRefs serves read_refs(), dedup_refs() and write_refs(). "open" starts reading the file at
// path ({"handle", "format", ...}); each "next" returns the next chunk of its table in *out, or
// {"done": true} with what the whole file told (a CSV's quoted columns) and releases the handle;
// "close" stops a reading early. "dedup" finds the duplicate groups of the records table (in,
// inLen); "columns" maps column names to read_refs()'s named columns. A file that cannot be read
// is an error document whose "refs" member says where and why, for R's message; the handle is
// then released.
//
//export TsRefs
func TsRefs(request *C.char, in unsafe.Pointer, inLen C.size_t, out *unsafe.Pointer, outLen *C.size_t, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	*out, *outLen = nil, 0
	var req refsRequest
	if err := decodeStrict("refs request", []byte(C.GoString(request)), &req); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	switch req.Op {
	case "columns":
		return succeed(doc, map[string]any{"names": refs.ColumnNames(req.Names)})
	case "open":
		rd, err := refs.Open(req.Path, req.Read)
		if err != nil {
			return refsFail(doc, err)
		}
		readersMu.Lock()
		nextReader++
		h := nextReader
		readers[h] = startReading(rd)
		readersMu.Unlock()
		return succeed(doc, map[string]any{"handle": h, "format": rd.Format, "delimiter": rd.Delimiter, "header_line": rd.HeaderLine})
	case "next":
		return refsNext(req.Handle, out, outLen, doc)
	case "close":
		if r := takeReader(req.Handle); r != nil {
			r.close()
		}
		return succeed(doc, struct{}{})
	case "dedup":
		table, err := arrowio.Decode(cView(in, inLen))
		if err != nil {
			return fail(doc, "tabscreen_error_ipc", err)
		}
		groups, summary, err := refs.Dedup(table, req.Dedup)
		if err != nil {
			return fail(doc, "tabscreen_error_refs", err)
		}
		if err := cTable(groups, out, outLen); err != nil {
			return fail(doc, "tabscreen_error_ipc", err)
		}
		return succeed(doc, summary)
	}
	return fail(doc, "tabscreen_error_internal", fmt.Errorf("unknown refs operation %q", req.Op))
}

func refsNext(h int64, out *unsafe.Pointer, outLen *C.size_t, doc **C.char) C.int {
	readersMu.Lock()
	r := readers[h]
	readersMu.Unlock()
	if r == nil {
		return fail(doc, "tabscreen_error_internal", fmt.Errorf("no file being read with handle %d", h))
	}
	e := <-r.out
	if e.b != nil {
		*out, *outLen = e.b.p, C.size_t(e.b.len)
		return succeed(doc, struct{}{})
	}
	takeReader(h)
	r.close()
	// The chunks are R's now: the file's memory goes back to the system while R binds them.
	guard.Go(func(error) {}, debug.FreeOSMemory)
	if e.err != nil {
		var ie *ipcError
		if errors.As(e.err, &ie) {
			return fail(doc, "tabscreen_error_ipc", e.err)
		}
		return refsFail(doc, e.err)
	}
	return succeed(doc, map[string]any{"done": true, "text_columns": nonNil(r.rd.TextColumns)})
}

func takeReader(h int64) *reading {
	readersMu.Lock()
	defer readersMu.Unlock()
	rd := readers[h]
	delete(readers, h)
	return rd
}

// refsFail hands R the error document of a file that cannot be read, with the details R words.
func refsFail(doc **C.char, err error) C.int {
	var re *refs.Error
	if errors.As(err, &re) {
		*doc = cJSON(map[string]any{"error": map[string]any{"class": re.Class, "message": re.Error(), "refs": re}})
		return statusError
	}
	// The file could not be opened or read (it vanished, permissions changed since R checked).
	return fail(doc, "tabscreen_error_refs_files", err)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
