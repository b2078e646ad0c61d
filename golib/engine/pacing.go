package engine

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/tabscreen/tabscreen/golib/clock"
)

// windowGuard is the margin added to the provider's one-second window: a request admitted exactly
// one window after another may arrive a little closer to it, delayed by scheduling on the way out.
const windowGuard = 20 * time.Millisecond

// pacer keeps requests within an rpm limit the way providers count it: at most rpm/60 requests in
// any one-second window. The token bucket spreads requests evenly; the window check stops the
// bunching that follows a delayed goroutine, which the bucket alone would let through.
type pacer struct {
	clock   clock.Clock
	limiter *rate.Limiter
	mu      sync.Mutex
	sent    []time.Time // admission times of the last len(sent) requests, as a ring
	next    int
	window  time.Duration
	user    float64 // the user's rpm
	rpm     float64 // the rpm followed: the user's, or the provider's when it reports a lower limit
	// tokens paces by tokens per minute.
	tokens *tokenBudget
	// observe, when set (tests), sees each admission time under the lock.
	observe func(time.Time)
}

func newPacer(rpm float64, c clock.Clock) *pacer {
	perWindow, window := pacerWindow(rpm)
	return &pacer{
		clock:   c,
		limiter: rate.NewLimiter(rate.Limit(rpm/60*rateMargin), 1),
		sent:    make([]time.Time, perWindow),
		window:  window,
		user:    rpm,
		rpm:     rpm,
		tokens:  newTokenBudget(0, c),
	}
}

// pacerWindow is how many requests an rpm limit admits in one window, and the window's length.
func pacerWindow(rpm float64) (int, time.Duration) {
	perWindow := math.Max(1, math.Floor(rpm/60))
	return int(perWindow), time.Duration(perWindow*60/rpm*float64(time.Second)) + windowGuard
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
	p.limiter.SetLimitAt(p.clock.Now(), rate.Limit(rpm/60*rateMargin))
	perWindow, window := pacerWindow(rpm)
	// The ring keeps the latest admissions that fit, oldest first.
	old := make([]time.Time, 0, len(p.sent))
	for i := range p.sent {
		if t := p.sent[(p.next+i)%len(p.sent)]; !t.IsZero() {
			old = append(old, t)
		}
	}
	if len(old) > perWindow {
		old = old[len(old)-perWindow:]
	}
	p.sent = make([]time.Time, perWindow)
	copy(p.sent, old)
	p.next = len(old) % perWindow
	p.window = window
}

// followed is the rpm the pacer follows (tests).
func (p *pacer) followed() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rpm
}

// wait blocks until one more request may start.
func (p *pacer) wait(ctx context.Context) error {
	now := p.clock.Now()
	res := p.limiter.ReserveN(now, 1)
	if err := clock.Sleep(ctx, p.clock, res.DelayFrom(now)); err != nil {
		res.CancelAt(p.clock.Now())
		return err
	}
	for {
		p.mu.Lock()
		now := p.clock.Now()
		oldest := p.sent[p.next]
		if oldest.IsZero() || now.Sub(oldest) >= p.window {
			p.sent[p.next] = now
			p.next = (p.next + 1) % len(p.sent)
			if p.observe != nil {
				p.observe(now)
			}
			p.mu.Unlock()
			return nil
		}
		d := p.window - now.Sub(oldest)
		p.mu.Unlock()
		if err := clock.Sleep(ctx, p.clock, d); err != nil {
			return err
		}
	}
}
