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

// The ways the tpm limit counts tokens (Config.TPMMode).
const (
	// TPMBucket: a bucket of tpm tokens refilled continuously, as Anthropic documents its limits.
	TPMBucket = "bucket"
	// TPMWindow: at most tpm tokens in any sliding minute.
	TPMWindow = "window"
	// TPMSecond: the per-minute limit enforced over seconds, as OpenAI documents it may be ("60,000
	// a minute may be enforced as 1,000 a second"): a bucket refilled continuously at tpm a minute
	// that holds only one second's tokens, so that no burst above a second's share passes.
	TPMSecond = "second"
)

// secondBucket holds at most a second's share of a per-minute limit (TPMSecond). It admits a
// prompt when it holds that many tokens, or is full for a prompt larger than it holds; what it
// admits and each answer's completion are taken from it, and it may fall below zero.
type secondBucket struct {
	mu    sync.Mutex
	last  time.Time
	level float64
}

// refill brings the bucket up to now (the lock held).
func (b *secondBucket) refill(now time.Time, capacity float64) {
	if b.last.IsZero() {
		b.level, b.last = capacity, now
		return
	}
	if now.After(b.last) {
		b.level = math.Min(capacity, b.level+now.Sub(b.last).Seconds()*capacity)
		b.last = now
	}
}

// admit takes prompt tokens at now from a bucket of tpm/60 if it holds them; otherwise it takes
// nothing and says how long until it would, with the tokens it lacks from full.
func (b *secondBucket) admit(now time.Time, prompt, tpm int64) (bool, time.Duration, int64) {
	capacity := float64(tpm) / 60
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now, capacity)
	need := math.Min(float64(prompt), capacity)
	if b.level >= need {
		b.level -= float64(prompt)
		return true, 0, 0
	}
	wait := time.Duration(math.Ceil((need - b.level) / capacity * float64(time.Second)))
	return false, wait, int64(capacity - b.level)
}

// take counts tokens at now (an answer's completion).
func (b *secondBucket) take(now time.Time, tokens, tpm int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now, float64(tpm)/60)
	b.level -= float64(tokens)
}

// tokenWindow counts tokens in time for the window mode (and, in the second mode, for the
// headers): each admitted prompt and each answer's completion, at the time it was counted, kept
// for a minute.
type tokenWindow struct {
	mu      sync.Mutex
	entries []tokenEntry // oldest first; entries[head:] are live
	head    int
}

type tokenEntry struct {
	at     time.Time
	tokens int64
}

// add appends tokens counted at now (the lock held); a time before the latest entry's is taken as
// that entry's, so that the entries stay in order.
func (w *tokenWindow) add(now time.Time, tokens int64) {
	if n := len(w.entries); n > w.head && now.Before(w.entries[n-1].at) {
		now = w.entries[n-1].at
	}
	w.entries = append(w.entries, tokenEntry{at: now, tokens: tokens})
}

// prune drops the entries a minute old or more (the lock held).
func (w *tokenWindow) prune(now time.Time) {
	for w.head < len(w.entries) && now.Sub(w.entries[w.head].at) >= time.Minute {
		w.head++
	}
	if w.head > 1024 && w.head*2 > len(w.entries) {
		w.entries = w.entries[:copy(w.entries, w.entries[w.head:])]
		w.head = 0
	}
}

// first is the index of the oldest entry counted in the span (now - span, now] (the lock held).
func (w *tokenWindow) first(now time.Time, span time.Duration) int {
	i := len(w.entries)
	for i > w.head && now.Sub(w.entries[i-1].at) < span {
		i--
	}
	return i
}

// admit counts a request's prompt tokens at now if the span before it, with them, holds at most
// capacity tokens, or if the span counted nothing (a request larger than the capacity goes alone);
// otherwise it counts nothing, and says how long until the request would fit and the tokens the
// span holds.
func (w *tokenWindow) admit(now time.Time, prompt int64, span time.Duration, capacity int64) (bool, time.Duration, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.prune(now)
	i := w.first(now, span)
	used := int64(0)
	for _, e := range w.entries[i:] {
		used += e.tokens
	}
	if used == 0 || used+prompt <= capacity {
		w.add(now, prompt)
		return true, 0, 0
	}
	// The request fits once enough of the oldest entries have left the span.
	freed := int64(0)
	for _, e := range w.entries[i:] {
		freed += e.tokens
		if used-freed+prompt <= capacity || freed == used {
			return false, max(e.at.Add(span).Sub(now), time.Millisecond), used
		}
	}
	return false, span, used
}

// count adds tokens counted at now (an answer's completion).
func (w *tokenWindow) count(now time.Time, tokens int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.prune(now)
	w.add(now, tokens)
}

// minute is the tokens counted in the last minute.
func (w *tokenWindow) minute(now time.Time) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.prune(now)
	used := int64(0)
	for _, e := range w.entries[w.head:] {
		used += e.tokens
	}
	return used
}
