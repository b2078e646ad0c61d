package engine

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/tabscreen/tabscreen/golib/clock"
)

// The guard is the margin added to the provider's one-second window: a request written exactly one
// window after another may arrive a little closer to it, delayed on the way in (the provider's
// scheduling, a pause of its collector, the network). It starts wide, narrows by a fifth with each
// window of requests that the provider refused none of, down to minWindowGuard (half a percent of
// the limit), and doubles with each 429, up to maxWindowGuard: a provider (or a machine) that
// delays requests unevenly keeps a wide margin, a steady one loses little of its limit.
const (
	windowGuard    = 20 * time.Millisecond
	minWindowGuard = 5 * time.Millisecond
	maxWindowGuard = 80 * time.Millisecond
)

// pacer keeps requests within an rpm limit the way providers count it: at most rpm/60 requests in
// any one-second window. The token bucket spreads requests evenly; the window check stops the
// bunching that follows a delayed goroutine, which the bucket alone would let through. The window
// is measured from when each request was written to its connection, not from when it was let go:
// a request that first had to open a connection, or whose goroutine waited for a thread, reaches
// the provider later than its admission, and the window must start there.
//
// A provider that counts requests in windows (Descriptor.WindowedRequests) gets each window's
// requests at frontLoadPace times the even pace, in the first third of the window: the window check
// then holds the rest of the window back, which saves most of a window over a long run at the
// ceiling. They still leave one at a time, a few milliseconds apart, so the provider meets
// them as it meets an even pace; a whole window sent at once instead reaches it unevenly, and a
// late burst is refused whole. The first 429 ends the faster pace for the run (a provider may count in shorter windows
// than it says), as the providers whose limits refill continuously always have it.
//
// The window check repeats the previous window's pattern, and the bucket does not undo it (a
// request that waited for the window finds the bucket's one token ready). So once a front-loaded
// pace falls back to even, admissions are also kept at least minGapShare of the even pace apart:
// that spreads the pattern out within one window, and still lets a request held up on its way
// catch up. (Not before: each such wait oversleeps a little, and at the faster pace that adds up.)
type pacer struct {
	clock   clock.Clock
	limiter *rate.Limiter
	// frontLoad is the pace within a window, as a multiple of the even pace: 1, or frontLoadPace
	// until the provider refuses a request.
	frontLoad float64
	turn      chan struct{} // held by the one request that waits for the window
	mu        sync.Mutex
	last      time.Time     // the latest admission
	gap       time.Duration // the least time between two admissions, once a front-loaded pace fell back
	sent      []sentAt      // the last len(sent) requests, as a ring
	next      int
	seq       uint64        // admissions so far; a ticket's seq finds its entry until the ring reuses it
	window    time.Duration // the provider's window plus guard
	guard     time.Duration
	clean     int     // admissions since the guard last changed or a 429
	user      float64 // the user's rpm
	rpm       float64 // the rpm followed: the user's, or the provider's when it reports a lower limit
	// tokens paces by tokens per minute.
	tokens *tokenBudget
	// observe, when set (tests), sees each admission time under the lock.
	observe func(time.Time)
}

// sentAt is when a request was admitted, moved to when it was written once that is known.
type sentAt struct {
	at  time.Time
	seq uint64
}

// ticket names an admitted request, to tell the pacer when it was written.
type ticket struct {
	p   *pacer
	seq uint64
}

const (
	// frontLoadPace is the pace within a window for providers that count requests in windows.
	frontLoadPace = 3
	// minGapShare is the least time between two admissions after a fall back, as a share of the
	// even pace's interval.
	minGapShare = 0.9
)

func newPacer(rpm float64, c clock.Clock, windowed bool) *pacer {
	perWindow, window := pacerWindow(rpm)
	frontLoad := 1.0
	if windowed {
		frontLoad = frontLoadPace
	}
	return &pacer{
		clock:     c,
		frontLoad: frontLoad,
		turn:      make(chan struct{}, 1),
		limiter:   rate.NewLimiter(admissionRate(rpm, frontLoad), 1),
		sent:      make([]sentAt, perWindow),
		window:    window + windowGuard,
		guard:     windowGuard,
		user:      rpm,
		rpm:       rpm,
		tokens:    newTokenBudget(0, c),
	}
}

// pacerWindow is how many requests an rpm limit admits in one window, and the window's length.
func pacerWindow(rpm float64) (int, time.Duration) {
	perWindow := math.Max(1, math.Floor(rpm/60))
	return int(perWindow), time.Duration(perWindow * 60 / rpm * float64(time.Second))
}

// refused widens the window's guard after a 429: requests reach this provider less evenly than
// they leave.
func (p *pacer) refused() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clean = 0
	p.setGuard(min(2*p.guard, maxWindowGuard))
	if p.frontLoad != 1 {
		p.frontLoad = 1
		p.limiter.SetLimitAt(p.clock.Now(), admissionRate(p.rpm, 1))
		p.gap = minGap(p.rpm)
	}
}

// admissionRate is the limiter's rate: just under rpm/60 a second, times the pace within a window.
func admissionRate(rpm, frontLoad float64) rate.Limit {
	return rate.Limit(rpm / 60 * rateMargin * frontLoad)
}

// minGap is the least time between two admissions once a front-loaded pace fell back to even.
func minGap(rpm float64) time.Duration {
	return time.Duration(minGapShare / float64(admissionRate(rpm, 1)) * float64(time.Second))
}

// setGuard changes the guard; the caller holds the lock.
func (p *pacer) setGuard(g time.Duration) {
	p.window += g - p.guard
	p.guard = g
}

// follow paces by the lower of the user's rpm and the limit the provider reports, as it changes.
func (p *pacer) follow(reported float64) {
	rpm := math.Min(p.user, reported)
	p.mu.Lock()
	defer p.mu.Unlock()
	if rpm == p.rpm {
		return
	}
	p.rpm = rpm
	p.limiter.SetLimitAt(p.clock.Now(), admissionRate(rpm, p.frontLoad))
	if p.gap > 0 {
		p.gap = minGap(rpm)
	}
	perWindow, window := pacerWindow(rpm)
	// The ring keeps the latest admissions that fit, oldest first.
	old := make([]sentAt, 0, len(p.sent))
	for i := range p.sent {
		if e := p.sent[(p.next+i)%len(p.sent)]; !e.at.IsZero() {
			old = append(old, e)
		}
	}
	if len(old) > perWindow {
		old = old[len(old)-perWindow:]
	}
	p.sent = make([]sentAt, perWindow)
	copy(p.sent, old)
	p.next = len(old) % perWindow
	p.window = window + p.guard
}

// followed is the rpm the pacer follows (tests).
func (p *pacer) followed() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rpm
}

// wait blocks until one more request may start.
func (p *pacer) wait(ctx context.Context) (ticket, error) {
	now := p.clock.Now()
	res := p.limiter.ReserveN(now, 1)
	if err := clock.Sleep(ctx, p.clock, res.DelayFrom(now)); err != nil {
		res.CancelAt(p.clock.Now())
		return ticket{}, err
	}
	// One request at a time waits for the window, in the order they came: were all to wait, each
	// would wake for every request let go before it, and at a few hundred waiting requests that
	// churn delays the writes the window is measured from.
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return ticket{}, context.Cause(ctx)
	}
	defer func() { <-p.turn }()
	for {
		p.mu.Lock()
		now := p.clock.Now()
		oldest := p.sent[p.next].at
		d := p.gap - now.Sub(p.last)
		if !oldest.IsZero() {
			d = max(d, p.window-now.Sub(oldest))
		}
		if d <= 0 {
			p.last = now
			p.seq++
			seq := p.seq
			p.sent[p.next] = sentAt{at: now, seq: seq}
			p.next = (p.next + 1) % len(p.sent)
			if p.clean++; p.clean >= len(p.sent) && p.guard > minWindowGuard {
				p.clean = 0
				p.setGuard(max(p.guard*4/5, minWindowGuard))
			}
			if p.observe != nil {
				p.observe(now)
			}
			p.mu.Unlock()
			return ticket{p: p, seq: seq}, nil
		}
		p.mu.Unlock()
		if err := clock.Sleep(ctx, p.clock, d); err != nil {
			return ticket{}, err
		}
	}
}

// wrote moves the request's entry to the time it was written, while the ring still holds it.
func (t ticket) wrote() {
	p := t.p
	if p == nil {
		return
	}
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	n := uint64(len(p.sent))
	if p.seq-t.seq >= n {
		return
	}
	// The latest admission sits just before next; admission seq, p.seq-seq places before that.
	i := (p.next + len(p.sent) - int(p.seq-t.seq) - 1) % len(p.sent)
	if e := &p.sent[i]; e.seq == t.seq && now.After(e.at) {
		e.at = now
	}
}
