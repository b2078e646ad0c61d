package engine

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/tabscreen/tabscreen/golib/clock"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/screen"
)

// tokenMargin keeps the token pace just under the limit followed, as rateMargin does for requests.
const tokenMargin = 0.98

// tokenBudget paces requests by tokens per minute, the way providers count them: a bucket of one
// minute's tokens, refilled continuously. Each request takes its estimate before it is sent, and
// waits while the bucket is in debt; its answer's usage corrects the estimate. The limit followed
// is the user's (option tabscreen.tpm) or the provider's (its rate-limit headers), whichever is
// lower; with neither known, nothing waits.
type tokenBudget struct {
	mu       sync.Mutex
	clock    clock.Clock
	user     float64 // the user's tokens per minute; 0: none
	limit    float64 // the limit followed; 0: none known yet
	level    float64 // tokens the bucket holds; below zero while requests wait
	last     time.Time
	inFlight float64 // estimates of the requests sent and not yet settled
}

func newTokenBudget(tpm float64, c clock.Clock) *tokenBudget {
	return &tokenBudget{clock: c, user: tpm, limit: tpm, level: tpm, last: c.Now()}
}

// refill adds the tokens earned since the last call (b.mu held).
func (b *tokenBudget) refill(now time.Time) {
	if now.After(b.last) {
		if b.limit > 0 {
			b.level = math.Min(b.limit, b.level+now.Sub(b.last).Minutes()*b.limit*tokenMargin)
		}
		b.last = now
	}
}

// take reserves est tokens and waits until the bucket holds them. A wait that ends early (the run
// stopped) gives them back.
func (b *tokenBudget) take(ctx context.Context, est float64) error {
	b.mu.Lock()
	b.refill(b.clock.Now())
	b.inFlight += est
	var wait time.Duration
	if b.limit > 0 {
		b.level -= est
		if b.level < 0 {
			wait = time.Duration(math.Ceil(-b.level / (b.limit * tokenMargin) * float64(time.Minute)))
		}
	}
	b.mu.Unlock()
	if err := clock.Sleep(ctx, b.clock, wait); err != nil {
		b.settle(est, 0)
		return err
	}
	return nil
}

// settle replaces a sent request's estimate by the tokens it was counted (0 for a refused request).
func (b *tokenBudget) settle(est, actual float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(b.clock.Now())
	b.inFlight -= est
	if b.limit > 0 {
		b.level -= actual - est
	}
}

// follow takes the provider's reported limit (and, when known, what remains of it): the budget
// follows the lower of it and the user's. A limit learned for the first time starts from what the
// provider says remains, less the requests on their way; a changed limit keeps the bucket within it.
func (b *tokenBudget) follow(limit, remaining float64, hasRemaining bool) {
	if limit <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.user > 0 {
		limit = math.Min(limit, b.user)
	}
	if limit == b.limit {
		return
	}
	b.refill(b.clock.Now())
	if b.limit == 0 {
		b.level = limit
		if hasRemaining {
			b.level = math.Min(limit, remaining) - b.inFlight
		}
	} else {
		b.level = math.Min(b.level, limit)
	}
	b.limit = limit
}

// followed is the limit the budget follows (tests).
func (b *tokenBudget) followed() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// estimator guesses a request's tokens before it is sent: the input by the price estimate's rule
// (screen.CharTokens) on the request's body, scaled by how the answers' reported prompt tokens compared with the rule
// so far, plus the mean completion of the answers so far (before the first: the price estimate's
// allowance).
type estimator struct {
	mu         sync.Mutex
	allowance  float64
	rule       float64 // the rule's count of the answered requests
	prompt     float64 // their reported prompt tokens
	completion float64 // their reported completion tokens
	answers    float64
}

// requestRule is the rule's input tokens of a request body.
func requestRule(body []byte) float64 { return screen.CharTokens(runeCount(body)) }

func (e *estimator) estimate(rule float64) float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.answers == 0 {
		return rule + e.allowance
	}
	return rule*e.prompt/e.rule + e.completion/e.answers
}

// learn corrects the estimates by the usage a reply reported.
func (e *estimator) learn(rule float64, u screen.Usage) {
	if u.Prompt <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rule += rule
	e.prompt += float64(u.Prompt)
	e.completion += float64(u.Completion)
	e.answers++
}

// counted is what a provider counts against its tokens per minute: every prompt and completion token.
func counted(u screen.Usage) float64 { return float64(u.Prompt + u.Completion) }

// headerNumber reads a limit from a rate-limit header's value ("" or unreadable: not known).
func headerNumber(v string) (float64, bool) {
	x, err := strconv.ParseFloat(v, 64)
	return x, err == nil && x >= 0 && !math.IsInf(x, 0)
}

// followHeaders lets the pacer follow the limits a response reported.
func (p *pacer) followHeaders(info provider.RateInfo) {
	if rpm, ok := headerNumber(info.RequestsPerMinute); ok && rpm > 0 {
		p.follow(rpm)
	}
	if tpm, ok := headerNumber(info.TokensPerMinute); ok {
		remaining, has := headerNumber(info.RemainingTokens)
		p.tokens.follow(tpm, remaining, has)
	}
}
