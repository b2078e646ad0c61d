// Package guard recovers panics in the goroutines the library starts. In a c-shared library an
// unrecovered panic on any goroutine ends the process, and the process is the user's R session:
// every goroutine defers Recover first, which turns a panic into an error its owner reports (a
// failed job, a stopped run).
package guard

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a recovered panic.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("internal error in the Go core: %v", e.Value) }

// Recover, deferred, hands a panic of the goroutine to report. recover() only stops a panic when
// the deferred function calls it itself, so Recover must be deferred directly, not wrapped.
func Recover(report func(error)) {
	if v := recover(); v != nil {
		report(&PanicError{Value: v, Stack: debug.Stack()})
	}
}

// Go runs f on a new goroutine that reports a panic instead of crashing.
func Go(report func(error), f func()) {
	go func() {
		defer Recover(report)
		f()
	}()
}
