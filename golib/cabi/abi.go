package main

/*
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"unsafe"
)

// cJSON marshals v into a malloc'ed NUL-terminated string.
func cJSON(v any) *C.char {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(abiError("tabscreen_error_internal", err.Error()))
	}
	return C.CString(string(b))
}

type errorBody struct {
	Class   string `json:"class"`
	Message string `json:"message"`
}

func abiError(class, message string) map[string]errorBody {
	return map[string]errorBody{"error": {Class: class, Message: message}}
}

// cError is the JSON document of an error.
func cError(class string, err error) *C.char {
	return cJSON(abiError(class, err.Error()))
}

// cBytes copies b into a malloc'ed buffer and stores its address and length in the out pointers.
func cBytes(b []byte, out *unsafe.Pointer, outLen *C.size_t) {
	p := C.malloc(C.size_t(max(len(b), 1)))
	if len(b) > 0 {
		C.memcpy(p, unsafe.Pointer(&b[0]), C.size_t(len(b)))
	}
	*out, *outLen = p, C.size_t(len(b))
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

// recovered turns a panic in an export into an error document instead of crashing R.
func recovered(result **C.char) {
	if r := recover(); r != nil {
		*result = cError("tabscreen_error_internal", fmt.Errorf("internal error in the Go core: %v", r))
	}
}
