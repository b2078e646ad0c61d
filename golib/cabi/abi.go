package main

/*
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// Status codes of the exports. C reads the code, never the document, to know whether a call
// succeeded; R reads the error's class and message from the document.
const (
	statusOK    C.int = 0
	statusError C.int = 1
)

// cJSON marshals v into a malloc'ed NUL-terminated string.
func cJSON(v any) *C.char {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(abiError("tabscreen_error_internal", err.Error()))
	}
	return C.CString(string(b))
}

// succeed hands v to the caller as the call's document.
func succeed(out **C.char, v any) C.int {
	*out = cJSON(v)
	return statusOK
}

// fail hands the caller an error document of that class.
func fail(out **C.char, class string, err error) C.int {
	*out = cError(class, err)
	return statusError
}

type errorBody struct {
	Class   string `json:"class"`
	Message string `json:"message"`
	// Status is the HTTP status of the provider's answer behind the error, when there was one.
	Status int `json:"status,omitempty"`
}

func abiError(class, message string) map[string]errorBody {
	return map[string]errorBody{"error": {Class: class, Message: message}}
}

// cError is the JSON document of an error.
func cError(class string, err error) *C.char {
	return cJSON(abiError(class, err.Error()))
}

// goBytes copies a C buffer so that Go never keeps a pointer into memory R owns.
func goBytes(p unsafe.Pointer, n C.size_t) []byte {
	if p == nil || n == 0 {
		return nil
	}
	// C.GoBytes takes an int length and would overflow past 2 GiB.
	b := make([]byte, int(n))
	copy(b, unsafe.Slice((*byte)(p), int(n)))
	return b
}

// cView is a C buffer seen as a slice, without a copy: for a reader that is done with it when the
// call returns (arrowio.View), or that copies it (arrowio.Decode).
func cView(p unsafe.Pointer, n C.size_t) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), int(n))
}

// recovered turns a panic in an export into an error instead of crashing R.
func recovered(status *C.int, out **C.char) {
	if r := recover(); r != nil {
		*status = fail(out, "tabscreen_error_internal", fmt.Errorf("internal error in the Go core: %v", r))
	}
}

// cBuffer is an io.Writer into C memory, so that an encoded table lands where C takes it without
// first being a Go slice that is then copied.
type cBuffer struct {
	p        unsafe.Pointer
	len, cap int
}

func newCBuffer(capacity int) *cBuffer {
	capacity = max(capacity, 64)
	return &cBuffer{p: C.malloc(C.size_t(capacity)), cap: capacity}
}

func (b *cBuffer) Write(data []byte) (int, error) {
	if need := b.len + len(data); need > b.cap {
		newCap := max(need, 2*b.cap)
		p := C.realloc(b.p, C.size_t(newCap))
		if p == nil {
			return 0, fmt.Errorf("out of memory for a %d-byte buffer", newCap)
		}
		b.p, b.cap = p, newCap
	}
	if len(data) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Add(b.p, b.len)), len(data)), data)
		b.len += len(data)
	}
	return len(data), nil
}

func (b *cBuffer) free() {
	C.free(b.p)
	b.p, b.len, b.cap = nil, 0, 0
}

// bytes views the buffer's content (valid until free).
func (b *cBuffer) bytes() []byte { return unsafe.Slice((*byte)(b.p), b.len) }

// cTable encodes t straight into C memory and hands it over through the out pointers.
func cTable(t *arrowio.Table, out *unsafe.Pointer, outLen *C.size_t) error {
	if err := t.Validate(); err != nil {
		return err
	}
	b := newCBuffer(arrowio.SizeHint(t))
	if err := arrowio.EncodeTo(t, b); err != nil {
		b.free()
		return err
	}
	*out, *outLen = b.p, C.size_t(b.len)
	return nil
}

// bulkGC runs f with a loose GC target. Converting a large table allocates what it keeps: with
// the run-time target of 50 the heap's growth triggers collection after collection that free
// nothing, which doubled the cost of the first large conversion in a session.
func bulkGC(f func()) {
	old := debug.SetGCPercent(400)
	defer debug.SetGCPercent(old)
	f()
}
