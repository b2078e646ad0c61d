package clock

import (
	"sort"
	"sync"
	"time"
)

// Fake is a clock that moves only when told to. Timers fire, in the order of their deadlines,
// when Advance passes them.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	changed chan struct{} // closed and replaced whenever a timer is made or stopped
}

// NewFake starts a fake clock at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t, changed: make(chan struct{})} }

type fakeTimer struct {
	f        *Fake
	deadline time.Time
	c        chan time.Time
	fired    bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	if t.fired {
		return false
	}
	t.fired = true
	t.f.remove(t)
	return true
}

// Now is the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer makes a timer that fires once the clock has advanced by d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, deadline: f.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.fired = true
		t.c <- f.now
		return t
	}
	f.timers = append(f.timers, t)
	f.notify()
	return t
}

// Advance moves the clock by d and fires every timer whose deadline it passes.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].deadline.Before(f.timers[j].deadline) })
	kept := f.timers[:0]
	for _, t := range f.timers {
		if t.deadline.After(f.now) {
			kept = append(kept, t)
			continue
		}
		t.fired = true
		t.c <- t.deadline
	}
	clear(f.timers[len(kept):])
	f.timers = kept
	f.notify()
}

// Waiting is how many timers have not fired yet.
func (f *Fake) Waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// NextDeadline is the time the first pending timer fires at, if any.
func (f *Fake) NextDeadline() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.timers) == 0 {
		return time.Time{}, false
	}
	next := f.timers[0].deadline
	for _, t := range f.timers[1:] {
		if t.deadline.Before(next) {
			next = t.deadline
		}
	}
	return next, true
}

// BlockUntil waits until at least n timers are pending: the goroutines under test have reached
// their waits, so that Advance moves them.
func (f *Fake) BlockUntil(n int) {
	for {
		f.mu.Lock()
		if len(f.timers) >= n {
			f.mu.Unlock()
			return
		}
		ch := f.changed
		f.mu.Unlock()
		<-ch
	}
}

func (f *Fake) remove(t *fakeTimer) {
	for i, x := range f.timers {
		if x == t {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			break
		}
	}
	f.notify()
}

// notify wakes BlockUntil; called with the lock held.
func (f *Fake) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}
