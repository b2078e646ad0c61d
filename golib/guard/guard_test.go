package guard

import (
	"errors"
	"strings"
	"testing"
)

func TestRecoverTurnsAPanicIntoAnError(t *testing.T) {
	tests := []struct {
		name  string
		panic func()
		want  string
	}{
		{"value", func() { panic("boom") }, "boom"},
		{"error", func() { panic(errors.New("bad state")) }, "bad state"},
		{"runtime", func() { var m map[string]int; m["x"] = 1 }, "nil map"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan error, 1)
			Go(func(err error) { got <- err }, tc.panic)
			err := <-got
			var pe *PanicError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || len(pe.Stack) == 0 {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestRecoverIsSilentWithoutAPanic(t *testing.T) {
	called := false
	func() {
		defer Recover(func(error) { called = true })
	}()
	if called {
		t.Fatal("reported without a panic")
	}
}
