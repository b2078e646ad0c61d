package fakeprovider

import (
	"math"
	"sync"
	"time"
)

// slidingLimiter admits at most capacity events in any window of length
// window (a half-open interval: events exactly window apart do not share one).
// It keeps the times of the last capacity admitted events in a ring.
type slidingLimiter struct {
	mu       sync.Mutex
	capacity int
	window   time.Duration
	ring     []time.Time
	next     int // index of the oldest entry once the ring is full
	n        int
}

// newRPMLimiter returns the limiter for an rpm limit, nil for no limit.
func newRPMLimiter(rpm float64) *slidingLimiter {
	if rpm <= 0 {
		return nil
	}
	capacity, window := int(math.Floor(rpm/60)), time.Second
	if capacity < 1 {
		capacity, window = 1, time.Duration(float64(time.Minute)/rpm)
	}
	return &slidingLimiter{capacity: capacity, window: window, ring: make([]time.Time, capacity)}
}

// admit records an event at now if the limit allows it; otherwise it returns
// how long until it would.
func (l *slidingLimiter) admit(now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n < l.capacity {
		l.ring[(l.next+l.n)%l.capacity] = now
		l.n++
		return true, 0
	}
	oldest := l.ring[l.next]
	if age := now.Sub(oldest); age < l.window {
		return false, l.window - age
	}
	l.ring[l.next] = now
	l.next = (l.next + 1) % l.capacity
	return true, 0
}

// windowMax tracks the largest number of events seen in any one-second
// window (half-open), over all events since the last reset.
type windowMax struct {
	mu    sync.Mutex
	times []time.Time // FIFO of events in the last second; times[head:] are live
	head  int
	max   int
}

func (w *windowMax) add(now time.Time) {
	w.mu.Lock()
	for w.head < len(w.times) && now.Sub(w.times[w.head]) >= time.Second {
		w.head++
	}
	if w.head > 1024 && w.head*2 > len(w.times) { // compact
		n := copy(w.times, w.times[w.head:])
		w.times = w.times[:n]
		w.head = 0
	}
	w.times = append(w.times, now)
	if live := len(w.times) - w.head; live > w.max {
		w.max = live
	}
	w.mu.Unlock()
}

func (w *windowMax) get() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max
}

func (w *windowMax) reset() {
	w.mu.Lock()
	w.times, w.head, w.max = nil, 0, 0
	w.mu.Unlock()
}

// headerBuckets model the per-minute request and token budgets that the
// rate-limit headers report, as token buckets refilled continuously. The
// token budget is also the one the tpm limit enforces: it may fall below zero
// (an answer's completion is counted after it was admitted), and refills from
// there; the headers report no less than zero.
type headerBuckets struct {
	mu       sync.Mutex
	last     time.Time
	requests float64
	tokens   float64
}

type rateSnapshot struct {
	at                               time.Time // when it was taken
	limitRequests, remainingRequests int64
	resetRequests                    time.Duration
	limitTokens, remainingTokens     int64
	resetTokens                      time.Duration
}

// refill brings the budgets up to now; a time before the last one refills nothing.
func (b *headerBuckets) refill(now time.Time, reqLimit, tokLimit int64) {
	if b.last.IsZero() {
		b.requests, b.tokens = float64(reqLimit), float64(tokLimit)
		b.last = now
		return
	}
	if now.After(b.last) {
		dt := now.Sub(b.last).Minutes()
		b.requests = math.Min(float64(reqLimit), b.requests+dt*float64(reqLimit))
		b.tokens = math.Min(float64(tokLimit), b.tokens+dt*float64(tokLimit))
		b.last = now
	}
}

// take consumes reqs requests and tokens tokens from budgets of reqLimit
// requests and tokLimit tokens per minute, and reports what remains.
func (b *headerBuckets) take(now time.Time, reqLimit, tokLimit int64, reqs, tokens int) rateSnapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now, reqLimit, tokLimit)
	b.requests = math.Max(0, b.requests-float64(reqs))
	b.tokens -= float64(tokens)
	refill := func(level float64, limit int64) time.Duration {
		if limit <= 0 {
			return 0
		}
		d := time.Duration((float64(limit) - level) / float64(limit) * float64(time.Minute))
		return d.Round(time.Millisecond)
	}
	return rateSnapshot{
		at:            now,
		limitRequests: reqLimit, remainingRequests: int64(b.requests), resetRequests: refill(b.requests, reqLimit),
		limitTokens: tokLimit, remainingTokens: int64(math.Max(0, b.tokens)), resetTokens: refill(b.tokens, tokLimit),
	}
}

// admitTokens takes a request's prompt tokens from the token budget when it
// holds at least that many (the tpm limit: its completion is taken when it is
// answered); otherwise it takes nothing and says how long until the budget
// holds them, with the tokens it holds now.
func (b *headerBuckets) admitTokens(now time.Time, reqLimit, tokLimit int64, prompt int) (bool, time.Duration, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now, reqLimit, tokLimit)
	if b.tokens >= float64(prompt) {
		b.tokens -= float64(prompt)
		return true, 0, 0
	}
	missing := float64(prompt) - b.tokens
	wait := time.Duration(math.Ceil(missing / float64(tokLimit) * float64(time.Minute)))
	return false, wait, int64(b.tokens)
}
