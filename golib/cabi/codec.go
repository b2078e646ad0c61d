package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
	"runtime/debug"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// roundTrip reads an IPC stream with arrowio (in place: nothing of it outlives the call) and
// encodes the table again into a C buffer of the size it needs.
func roundTrip(in []byte) (*cBuffer, error) {
	t, err := arrowio.View(in)
	if err != nil {
		return nil, err
	}
	b := newCBuffer(arrowio.SizeHint(t))
	if err := arrowio.EncodeTo(t, b); err != nil {
		b.free()
		return nil, err
	}
	return b, nil
}

// TsRoundTrip decodes the IPC stream (in, len) and re-encodes it into *out, *outLen (malloc'ed,
// freed with TsFree); *out is NULL on error, when *doc holds an error of class tabscreen_error_ipc.
// Test-only (testSwitch): the codec tests and the bench.
//
//export TsRoundTrip
func TsRoundTrip(in unsafe.Pointer, inLen C.size_t, out *unsafe.Pointer, outLen *C.size_t, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	if out == nil || outLen == nil {
		return fail(doc, "tabscreen_error_ipc", fmt.Errorf("TsRoundTrip: NULL output pointer"))
	}
	*out, *outLen = nil, 0
	if status, ok := testOnly("TsRoundTrip", doc); !ok {
		return status
	}
	if in == nil && inLen > 0 {
		return fail(doc, "tabscreen_error_ipc", fmt.Errorf("TsRoundTrip: NULL input with a non-zero length"))
	}
	// Read in place (roundTrip's View): nothing holds on to the slice after the call.
	var inBytes []byte
	if inLen > 0 {
		inBytes = unsafe.Slice((*byte)(in), int(inLen))
	}
	var b *cBuffer
	var err error
	bulkGC(func() { b, err = roundTrip(inBytes) })
	if err != nil {
		return fail(doc, "tabscreen_error_ipc", err)
	}
	*out, *outLen = b.p, C.size_t(b.len)
	return succeed(doc, struct{}{})
}

// TsFree frees anything the exports returned (JSON documents and buffers).
//
//export TsFree
func TsFree(p unsafe.Pointer) {
	defer func() { _ = recover() }()
	C.free(p)
}

// TsQuiesce finishes the garbage collector's work (a collection, its sweep, and the return of
// free memory) so that no goroutine runs until the next call. C calls it before it lets R's
// profiling timer run again (src/signals.c): R's SIGPROF handler, which R re-installs without
// SA_ONSTACK, must not land on a goroutine's small stack, and the background sweeper of a
// collection started in a call would otherwise go on running beside R's code.
//
//export TsQuiesce
func TsQuiesce() {
	defer func() { _ = recover() }()
	debug.FreeOSMemory()
}
