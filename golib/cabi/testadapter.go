package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/provider"
)

var testAdapters sync.Once

// registerTestAdapters adds the test-only providers when the R tests ask for them. The variable is
// read with C's getenv, since Go's own copy of the environment is taken when the library loads,
// before a test sets it.
func registerTestAdapters() {
	name := C.CString("TABSCREEN_TEST_ADAPTERS")
	defer C.free(unsafe.Pointer(name))
	if v := C.getenv(name); v == nil || C.GoString(v) != "1" {
		return
	}
	testAdapters.Do(func() { provider.Register(provider.PanicTest) })
}
