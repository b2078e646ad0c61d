package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/arrowio"
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
	readers    = map[int64]*refs.Reader{}
	nextReader int64
)

// TsRefs serves read_refs(), dedup_refs() and write_refs(). "open" starts reading the file at
// path ({"handle", "format", ...}); each "next" returns the next chunk of its table in *out, or
// {"done": true} with what the whole file told (a CSV's quoted columns) and releases the handle;
// "close" stops a reading early. "dedup" finds the duplicate groups of the records table (in,
// inLen); "columns" maps column names to read_refs()'s named columns. A file that cannot be read
// is an error document whose "refs" member says where and why, for R's message; the handle is
// then released.
//
//export TsRefs
func TsRefs(request *C.char, in unsafe.Pointer, inLen C.size_t, out *unsafe.Pointer, outLen *C.size_t) (result *C.char) {
	defer recovered(&result)
	*out, *outLen = nil, 0
	var req refsRequest
	if err := json.Unmarshal([]byte(C.GoString(request)), &req); err != nil {
		return cError("tabscreen_error_internal", fmt.Errorf("refs request is not valid JSON: %v", err))
	}
	switch req.Op {
	case "columns":
		return cJSON(map[string]any{"names": refs.ColumnNames(req.Names)})
	case "open":
		rd, err := refs.Open(req.Path, req.Read)
		if err != nil {
			return refsError(err)
		}
		readersMu.Lock()
		nextReader++
		h := nextReader
		readers[h] = rd
		readersMu.Unlock()
		return cJSON(map[string]any{"handle": h, "format": rd.Format, "delimiter": rd.Delimiter, "header_line": rd.HeaderLine})
	case "next":
		return refsNext(req.Handle, out, outLen)
	case "close":
		if rd := takeReader(req.Handle); rd != nil {
			rd.Close()
		}
		return C.CString("{}")
	case "dedup":
		table, err := arrowio.Decode(goBytes(in, inLen))
		if err != nil {
			return cError("tabscreen_error_ipc", err)
		}
		groups, summary, err := refs.Dedup(table, req.Dedup)
		if err != nil {
			return cError("tabscreen_error_refs", err)
		}
		if err := cTable(groups, out, outLen); err != nil {
			return cError("tabscreen_error_ipc", err)
		}
		return cJSON(summary)
	}
	return cError("tabscreen_error_internal", fmt.Errorf("unknown refs operation %q", req.Op))
}

func refsNext(h int64, out *unsafe.Pointer, outLen *C.size_t) *C.char {
	readersMu.Lock()
	rd := readers[h]
	readersMu.Unlock()
	if rd == nil {
		return cError("tabscreen_error_internal", fmt.Errorf("no file being read with handle %d", h))
	}
	ch, err := rd.Next()
	if err != nil || ch == nil {
		takeReader(h)
		rd.Close()
		// The chunks are R's now: give the file's memory back before R builds its table.
		debug.FreeOSMemory()
		if err != nil {
			return refsError(err)
		}
		return cJSON(map[string]any{"done": true, "text_columns": nonNil(rd.TextColumns)})
	}
	b := newCBuffer(ch.Bytes())
	if err := ch.WriteIPC(b); err != nil {
		b.free()
		return cError("tabscreen_error_ipc", err)
	}
	*out, *outLen = b.p, C.size_t(b.len)
	return C.CString("{}")
}

func takeReader(h int64) *refs.Reader {
	readersMu.Lock()
	defer readersMu.Unlock()
	rd := readers[h]
	delete(readers, h)
	return rd
}

// refsError is the error document of a file that cannot be read, with the details R words.
func refsError(err error) *C.char {
	var re *refs.Error
	if errors.As(err, &re) {
		return cJSON(map[string]any{"error": map[string]any{"class": re.Class, "message": re.Error(), "refs": re}})
	}
	// The file could not be opened or read (it vanished, permissions changed since R checked).
	return cJSON(map[string]any{"error": map[string]any{"class": "tabscreen_error_refs_files", "message": err.Error()}})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
