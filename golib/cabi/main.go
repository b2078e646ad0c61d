// Command cabi is the C ABI of tabscreen's Go core, built with -buildmode=c-shared. Exports take
// C scalars and (pointer, length) buffers, never R objects; every buffer they return is allocated
// with C malloc and freed by the caller with TsFree; errors come back as JSON values, never as
// panics or signals. No goroutine here ever calls into R.
package main

import (
	"os"
	"runtime/debug"
)

// A screening's heap is mostly short-lived garbage (request and response bodies) around a small
// live set, and the work waits on the network, so a tighter GC target costs little CPU and keeps
// the memory of large runs down. GOGC, when set, still wins.
func init() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(50)
	}
}

func main() {}
