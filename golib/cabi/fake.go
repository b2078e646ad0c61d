package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"context"
	"os"

	"github.com/tabscreen/tabscreen/golib/fakeprovider"
)

// TsFakeServe runs the fake provider of the tests, examples and demo until the calling process's
// standard input closes. It is served from the core so that the package installs no second
// program: R's fake_provider_start() starts a child R process that loads the package's DLL and
// calls this; the parent holds the child's stdin, so the fake ends with the parent, however that
// ends. Blocks; *doc is "{}" or an error document.
//
//export TsFakeServe
func TsFakeServe(options *C.char, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	var opts fakeprovider.ServeOptions
	if err := decodeStrict("fake provider options", []byte(C.GoString(options)), &opts); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	opts.Stdin = os.Stdin
	if err := fakeprovider.Serve(context.Background(), opts); err != nil {
		return fail(doc, "tabscreen_error_fake", err)
	}
	return succeed(doc, struct{}{})
}
