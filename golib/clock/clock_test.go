package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestFakeFiresTimersInOrderWhenPassed(t *testing.T) {
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	f := NewFake(start)
	a, b := f.NewTimer(3*time.Second), f.NewTimer(time.Second)
	tests := []struct {
		advance      time.Duration
		aFired       bool
		bFired       bool
		waitingAfter int
	}{
		{500 * time.Millisecond, false, false, 2},
		{500 * time.Millisecond, false, true, 1},
		{time.Second, false, true, 1},
		{time.Second, true, true, 0},
	}
	fired := func(tm Timer) bool { return len(tm.C()) > 0 }
	var aSeen, bSeen bool
	for i, tc := range tests {
		f.Advance(tc.advance)
		aSeen = aSeen || fired(a)
		bSeen = bSeen || fired(b)
		if aSeen != tc.aFired || bSeen != tc.bFired || f.Waiting() != tc.waitingAfter {
			t.Fatalf("step %d: a %v b %v waiting %d", i, aSeen, bSeen, f.Waiting())
		}
	}
	if got := <-a.C(); !got.Equal(start.Add(3 * time.Second)) {
		t.Fatalf("a fired at %v", got)
	}
	if !f.Now().Equal(start.Add(3 * time.Second)) {
		t.Fatalf("now %v", f.Now())
	}
}

func TestFakeStopAndZeroTimers(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	tm := f.NewTimer(time.Second)
	if !tm.Stop() || tm.Stop() {
		t.Fatal("Stop should succeed once")
	}
	if f.Waiting() != 0 {
		t.Fatal("a stopped timer is still pending")
	}
	if z := f.NewTimer(0); len(z.C()) != 1 {
		t.Fatal("a zero timer fires at once")
	}
}

func TestSleepReturnsTheCauseOfCancellation(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("stopped")
	done := make(chan error, 1)
	go func() { done <- Sleep(ctx, f, time.Minute) }()
	f.BlockUntil(1)
	cancel(cause)
	if err := <-done; !errors.Is(err, cause) {
		t.Fatalf("got %v", err)
	}
	go func() { done <- Sleep(context.Background(), f, time.Minute) }()
	f.BlockUntil(1)
	f.Advance(time.Minute)
	if err := <-done; err != nil {
		t.Fatalf("got %v", err)
	}
}

func TestRealClock(t *testing.T) {
	c := Real()
	before := time.Now()
	if c.Now().Before(before) {
		t.Fatal("real clock runs backwards")
	}
	if err := Sleep(context.Background(), c, time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
