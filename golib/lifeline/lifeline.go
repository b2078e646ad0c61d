// Package lifeline ties a server in a child process to the process that started it: the parent
// holds the child's standard input, so its end (the parent closed the pipe, exited or was killed)
// is the child's signal to stop. The fake provider and the review app both serve this way.
package lifeline

import (
	"context"
	"io"

	"github.com/tabscreen/tabscreen/golib/guard"
)

// Until returns a context that ends with ctx or when r reaches its end; nil r never ends it.
func Until(ctx context.Context, r io.Reader) (context.Context, context.CancelFunc) {
	ctx, stop := context.WithCancel(ctx)
	if r != nil {
		// A panic while reading only ends the server early; it must not end the process.
		guard.Go(func(error) { stop() }, func() {
			_, _ = io.Copy(io.Discard, r)
			stop()
		})
	}
	return ctx, stop
}
