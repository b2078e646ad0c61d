// Package clock is the time source of the engine. Pacing, retry waits, time-outs of a run and the
// times it records all read one Clock, so that a test can drive them with a Fake and check exact
// waits instead of sleeping and measuring.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer fires once on C, like time.Timer.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// Real is the system clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }

// Sleep waits d on c, or until ctx ends; it then returns the context's cause.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return context.Cause(ctx)
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
