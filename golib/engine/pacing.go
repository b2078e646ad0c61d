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
	// observe, when set (tests), sees each admission time under the lock.
	observe func(time.Time)
}

func newPacer(rpm float64, c clock.Clock) *pacer {
	perWindow := math.Max(1, math.Floor(rpm/60))
	window := time.Duration(perWindow*60/rpm*float64(time.Second)) + windowGuard
	return &pacer{
		clock:   c,
		limiter: rate.NewLimiter(rate.Limit(rpm/60*rateMargin), 1),
		sent:    make([]time.Time, int(perWindow)),
		window:  window,
	}
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
