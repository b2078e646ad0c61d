package lifeline

import (
	"context"
	"io"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	cases := []struct {
		name   string
		close  bool
		cancel bool
		ends   bool
	}{
		{"the reader ends", true, false, true},
		{"the parent context ends", false, true, true},
		{"neither", false, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, w := io.Pipe()
			defer w.Close()
			parent, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctx, stop := Until(parent, r)
			defer stop()
			if _, err := w.Write([]byte("data before the end is read and ignored")); err != nil {
				t.Fatal(err)
			}
			if c.close {
				w.Close()
			}
			if c.cancel {
				cancel()
			}
			select {
			case <-ctx.Done():
				if !c.ends {
					t.Fatal("ended")
				}
			case <-time.After(200 * time.Millisecond):
				if c.ends {
					t.Fatal("did not end")
				}
			}
		})
	}
}
