package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/provider"
)

// testSwitch is the one switch of the core's test-only parts, which a user's session never
// reaches: with it unset, TsRoundTrip and TsAggregate refuse to run and no test provider is
// registered. Each stays in the library because the R tests need it through the library that R
// loads, which a Go test cannot stand in for:
//   - provider.PanicTest, an adapter that panics as a bug would: a panic inside the loaded
//     library must end the run with a classed R error and the answers so far, and leave the R
//     session alive (tests/testthat/test-run.R);
//   - TsRoundTrip, Go's Arrow codec between R's C writer and reader (tests/testthat/test-ipc.R,
//     and the Arrow round trip of bench/run.R);
//   - TsAggregate, spec section 3 on hand-made answer tables (tests/testthat/test-aggregate.R,
//     and the Windows check of tools/windows, which runs the DLL without R).
//
// It is read with C's getenv, since Go's own copy of the environment is taken when the library
// loads, before a test sets it.
const testSwitch = "TABSCREEN_TESTING"

func testSwitchOn() bool {
	name := C.CString(testSwitch)
	defer C.free(unsafe.Pointer(name))
	v := C.getenv(name)
	return v != nil && C.GoString(v) == "1"
}

// testOnly refuses a test-only export while the switch is off.
func testOnly(export string, doc **C.char) (C.int, bool) {
	if testSwitchOn() {
		return statusOK, true
	}
	return fail(doc, "tabscreen_error_internal", fmt.Errorf("%s is a test-only entry point of the Go core (%s=1)", export, testSwitch)), false
}

var testAdapters sync.Once

// registerTestAdapters adds the test-only providers when the switch is on.
func registerTestAdapters() {
	if testSwitchOn() {
		testAdapters.Do(func() { provider.Register(provider.PanicTest) })
	}
}
