package engine

import (
	"context"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tabscreen/tabscreen/golib/clock"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/screen"
)

// Token pacing. Providers count tokens per minute in different ways: a bucket refilled
// continuously (Anthropic), any sliding minute (Mistral counts per minute), or a per-minute limit
// enforced over shorter periods (OpenAI: 60,000 a minute may be enforced as 1,000 a second). The
// budget keeps to all of them with an even pace just under the limit, never front-loaded, so that
// each second gets about its sixtieth, and a ledger of the tokens sent, so that no sliding minute
// holds more than the limit. A 429 while tokens set the pace lowers the pace for the rest of the
// run.
const (
	// tokenMargin is the even pace's share of the limit followed, before any 429.
	tokenMargin = 0.98
	// tokenWindowShare is the share of the limit that a sliding minute may hold.
	tokenWindowShare = 0.99
	// tokenLargeShare: a request estimated above this share of a second's tokens needs the whole
	// of a provider's one-second bucket; it goes once the tokens counted last are refilled at the
	// full limit, plus tokenGuard, so that one that reached the provider late, or whose estimate
	// fell short, does not leave the bucket short of full.
	tokenLargeShare = 0.8
	// tokenGuard is added to each period: a request reaches the provider a little after it was let go.
	tokenGuard = 50 * time.Millisecond
	// tokenStep lowers the pace after a 429, down to minTokenShare of the limit.
	tokenStep     = 0.9
	minTokenShare = 0.5
	// firstReplyWait bounds how long requests wait for the first reply to report the limit.
	firstReplyWait = 10 * time.Second
)

// spend is tokens counted by the provider at a time: a request's estimate when it is let go (its
// prompt once answered), and its answer's completion when it arrives.
type spend struct {
	at         time.Time
	tokens     float64
	live       bool      // in the ledger
	stale      bool      // its reservation was taken back: reserve again
	nextBefore time.Time // the even pace's next admission before this one was reserved
}

// tokenBudget paces requests by tokens per minute. Each request takes its estimate before it is
// sent and waits for the earliest time that keeps to the pace and the minute; its answer's
// usage settles the estimate. The limit followed is the user's (option tabscreen.tpm) or the
// provider's (its rate-limit headers), whichever is lower; with neither, the first request goes
// alone and the others wait for its reply's headers, then nothing waits if they report no limit.
type tokenBudget struct {
	mu      sync.Mutex
	clock   clock.Clock
	user    float64 // the user's tokens per minute; 0: none
	limit   float64 // the limit followed; 0: none known yet
	share   float64 // the even pace, as a share of the limit
	ledger  []*spend
	head    int     // ledger[head:] are the tokens counted in the last minute, oldest first
	minute  float64 // their sum
	next    time.Time
	held    time.Time // when the budget last held a request back
	lowered time.Time // when a 429 last lowered the pace
	sent    bool      // a request went before any reply
	first   chan struct{}
	heard   sync.Once
}

func newTokenBudget(tpm float64, c clock.Clock) *tokenBudget {
	return &tokenBudget{clock: c, user: tpm, limit: tpm, share: tokenMargin, first: make(chan struct{})}
}

// take reserves est tokens and waits until they keep to the limit. A 429 or a new limit while it
// waits makes it reserve again under the new rule. A wait that ends early (the run stopped) gives
// the tokens back.
func (b *tokenBudget) take(ctx context.Context, est float64) (*spend, error) {
	e := &spend{tokens: est}
	b.mu.Lock()
	for {
		now := b.clock.Now()
		e.at, e.stale = now, false
		if b.limit > 0 {
			b.prune(now)
			b.reserve(e, now)
		}
		b.mu.Unlock()
		if err := clock.Sleep(ctx, b.clock, e.at.Sub(now)); err != nil {
			b.settle(e, 0, 0)
			return nil, err
		}
		b.mu.Lock()
		if !e.stale {
			b.mu.Unlock()
			return e, nil
		}
	}
}

// reserve puts e in the ledger at the earliest time that keeps to the limit (b.mu held).
func (b *tokenBudget) reserve(e *spend, now time.Time) {
	e.at = b.admission(now, e.tokens)
	e.live = true
	e.nextBefore = b.next
	b.insert(e)
	b.minute += e.tokens
	b.next = e.at.Add(b.interval(e.tokens))
	if e.at.After(now) {
		b.held = now
	}
}

// reschedule takes the reservations still to come out of the ledger: their requests reserve
// again when they wake, under the rule now in force (b.mu held).
func (b *tokenBudget) reschedule(now time.Time) {
	n := len(b.ledger)
	for n > b.head && b.ledger[n-1].at.After(now) {
		e := b.ledger[n-1]
		b.minute -= e.tokens
		b.next = e.nextBefore
		e.live, e.stale = false, true
		b.ledger[n-1] = nil
		n--
	}
	b.ledger = b.ledger[:n]
}

// awaitFirst lets the first request go, and holds the others until its reply reported the limit
// (or firstReplyWait passed), when neither the user nor a reply has given one. A request calls it
// once, before it estimates its tokens: the reply also corrects the estimates.
func (b *tokenBudget) awaitFirst(ctx context.Context) error {
	b.mu.Lock()
	open := b.user > 0 || !b.sent
	b.sent = true
	b.mu.Unlock()
	if open {
		return nil
	}
	select {
	case <-b.first:
		return nil
	default:
	}
	t := b.clock.NewTimer(firstReplyWait)
	defer t.Stop()
	select {
	case <-b.first:
	case <-t.C():
		b.replied() // the others need not wait again
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// replied notes that a reply (or its failure) was read.
func (b *tokenBudget) replied() { b.heard.Do(func() { close(b.first) }) }

// admission is the earliest time, from now and after the requests already let go, at which est
// tokens keep to the even pace and the last minute (b.mu held).
func (b *tokenBudget) admission(now time.Time, est float64) time.Time {
	at := now
	if n := len(b.ledger); n > b.head {
		at = later(at, b.ledger[n-1].at)
	}
	at = later(at, b.next)
	if n := len(b.ledger); n > b.head && est > tokenLargeShare*b.limit/60 {
		last := b.ledger[n-1]
		refilled := time.Duration(last.tokens / b.limit * float64(time.Minute))
		at = later(at, last.at.Add(refilled+tokenGuard))
	}
	// The oldest entries leave the minute one by one until est fits.
	sum, capacity, span := b.minute, b.limit*tokenWindowShare, time.Minute+tokenGuard
	k := b.head
	for ; k < len(b.ledger) && at.Sub(b.ledger[k].at) >= span; k++ {
		sum -= b.ledger[k].tokens
	}
	for ; sum > 0.5 && sum+est > capacity && k < len(b.ledger); k++ {
		sum -= b.ledger[k].tokens
		at = later(at, b.ledger[k].at.Add(span))
	}
	return at
}

// interval is the even pace's time for est tokens (b.mu held).
func (b *tokenBudget) interval(est float64) time.Duration {
	return time.Duration(est / (b.limit * b.share) * float64(time.Minute))
}

// insert puts e in the ledger in time order (b.mu held).
func (b *tokenBudget) insert(e *spend) {
	j := len(b.ledger)
	for j > b.head && b.ledger[j-1].at.After(e.at) {
		j--
	}
	b.ledger = slices.Insert(b.ledger, j, e)
}

// prune drops the entries older than any period the budget checks (b.mu held).
func (b *tokenBudget) prune(now time.Time) {
	for b.head < len(b.ledger) && now.Sub(b.ledger[b.head].at) >= time.Minute+tokenGuard {
		e := b.ledger[b.head]
		b.minute -= e.tokens
		e.live = false
		b.ledger[b.head] = nil
		b.head++
	}
	if b.head > 1024 && b.head*2 > len(b.ledger) {
		b.ledger = b.ledger[:copy(b.ledger, b.ledger[b.head:])]
		b.head = 0
	}
}

// settle replaces a request's estimate by what the provider counted: prompt tokens at the time it
// was let go, completion tokens now (0 and 0 for a refused request).
func (b *tokenBudget) settle(e *spend, prompt, completion float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e == nil || !e.live {
		return
	}
	b.next = b.next.Add(b.interval(prompt + completion - e.tokens))
	b.minute += prompt - e.tokens
	e.tokens = prompt
	if completion > 0 {
		now := b.clock.Now()
		b.prune(now)
		b.insert(&spend{at: now, tokens: completion, live: true})
		b.minute += completion
	}
}

// refused is a 429. While tokens set the pace (the budget held a request back in the last
// minute), it may be theirs: it lowers the even pace by a tenth, at most once a second (one
// overrun refuses the requests in flight together).
func (b *tokenBudget) refused() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	if b.limit == 0 || b.held.IsZero() || now.Sub(b.held) > time.Minute ||
		(!b.lowered.IsZero() && now.Sub(b.lowered) < time.Second) {
		return
	}
	b.share = math.Max(minTokenShare, b.share*tokenStep)
	b.lowered = now
	b.reschedule(now)
}

// follow takes the provider's reported limit (and, when known, what remains of it): the budget
// follows the lower of it and the user's. A limit learned for the first time counts what the
// provider says it counted so far.
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
	now := b.clock.Now()
	if b.limit == 0 && hasRemaining && remaining < limit {
		b.prune(now)
		b.insert(&spend{at: now, tokens: limit - remaining, live: true})
		b.minute += limit - remaining
	}
	b.limit = limit
	b.reschedule(now)
}

// followed is the limit the budget follows (tests).
func (b *tokenBudget) followed() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// estimator guesses a request's tokens before it is sent: its input by the price estimate's rule
// (screen.CharTokens) on the request's body, mapped to prompt tokens by a line fitted to the
// answers so far (the body holds a fixed part that the provider counts differently from the text:
// a ratio alone got long records wrong by hundreds of tokens), plus the answers' mean completion
// (before the first answer: the price estimate's allowance).
type estimator struct {
	mu         sync.Mutex
	allowance  float64
	answers    float64
	rule       float64 // the sums, over the answered requests, of the rule's count,
	prompt     float64 // of their reported prompt tokens,
	rule2      float64 // of the rule's count squared,
	rulePrompt float64 // of the two multiplied,
	completion float64 // and of their reported completion tokens
}

// requestRule is the rule's input tokens of a request body, counting the text the body holds: an
// escape counts as the one character it stands for (abstracts with markup hold thousands of <, >
// and &, each six characters in JSON, and counted as written they doubled the estimate).
func requestRule(body []byte) float64 { return screen.CharTokens(jsonTextChars(body)) }

// jsonTextChars counts the characters of a JSON document with each escape decoded.
func jsonTextChars(body []byte) int {
	n := 0
	for i := 0; i < len(body); n++ {
		switch {
		case body[i] == '\\' && i+1 < len(body) && body[i+1] == 'u':
			i += 6
		case body[i] == '\\':
			i += 2
		case body[i] < utf8.RuneSelf:
			i++
		default:
			_, size := utf8.DecodeRune(body[i:])
			i += size
		}
	}
	return n
}

func (e *estimator) estimate(rule float64) float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.answers == 0 {
		return rule + e.allowance
	}
	completion := e.completion / e.answers
	// The least-squares line through the answers, once they spread enough to fit one (records of
	// one length do not); otherwise, and for a line that does not rise, the ratio.
	meanRule, meanPrompt := e.rule/e.answers, e.prompt/e.answers
	variance := e.rule2/e.answers - meanRule*meanRule
	if e.answers >= 10 && variance > 1 {
		slope := (e.rulePrompt/e.answers - meanRule*meanPrompt) / variance
		if slope > 0 {
			return math.Max(0, meanPrompt+slope*(rule-meanRule)) + completion
		}
	}
	return rule*e.prompt/e.rule + completion
}

// learn corrects the estimates by the usage a reply reported.
func (e *estimator) learn(rule float64, u screen.Usage) {
	if u.Prompt <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	p := float64(u.Prompt)
	e.answers++
	e.rule += rule
	e.prompt += p
	e.rule2 += rule * rule
	e.rulePrompt += rule * p
	e.completion += float64(u.Completion)
}

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
