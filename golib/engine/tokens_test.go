package engine

import (
	"context"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/clock"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/screen"
)

// counting is what a provider counted, and when: each request's prompt when it was let go, its
// completion when it was answered.
type counting struct {
	at     []time.Time
	tokens []float64
}

func (c *counting) add(at time.Time, tokens float64) {
	c.at = append(c.at, at)
	c.tokens = append(c.tokens, tokens)
}

// most is the most tokens counted in any sliding period of length span (half-open, as the fake
// provider counts) among those counted at or after from.
func (c *counting) most(span time.Duration, from time.Time) float64 {
	best, sum, j := 0.0, 0.0, 0
	for i := range c.at {
		if c.at[i].Before(from) {
			j = i + 1
			continue
		}
		sum += c.tokens[i]
		for c.at[i].Sub(c.at[j]) >= span {
			sum -= c.tokens[j]
			j++
		}
		best = math.Max(best, sum)
	}
	return best
}

// runBudget lets n requests of est tokens go one after another, each counted at once as prompt
// and completion tokens; after the request numbered refuseAt (-1: none) the provider refuses one.
// It returns what the provider counted and when the refusal came.
func runBudget(t *testing.T, fc *clock.Fake, b *tokenBudget, n int, est, prompt, completion float64, refuseAt int) (*counting, time.Time) {
	t.Helper()
	c := &counting{}
	var refusedAt time.Time
	for i := 0; i < n; i++ {
		var e *spend
		if err := drive(fc, func() (err error) { e, err = b.take(context.Background(), est); return err }); err != nil {
			t.Fatal(err)
		}
		c.add(fc.Now(), prompt+completion)
		b.settle(e, prompt, completion)
		if i == refuseAt {
			refusedAt = fc.Now()
			b.refused()
		}
	}
	return c, refusedAt
}

// The budget against providers that count tokens per minute in any of their ways: no sliding
// minute holds more than the limit, each second about its sixtieth (no more than one request
// beyond it), and over a few minutes the run uses nearly all of the limit.
func TestTokenBudgetKeepsWithinTPM(t *testing.T) {
	tests := []struct {
		name               string
		tpm                float64
		est                float64 // a request's estimate
		prompt, completion float64 // and what its answer reports
		requests           int
	}{
		{"exact estimates", 200000, 800, 750, 50, 800},
		{"estimates too high", 200000, 1000, 750, 50, 800},
		{"estimates too low, corrected by usage", 200000, 700, 750, 50, 800},
		{"small limit", 6000, 150, 140, 10, 120},
		{"requests larger than a second's share", 3000, 120, 100, 20, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
			fc := clock.NewFake(start)
			b := newTokenBudget(tc.tpm, fc)
			c, _ := runBudget(t, fc, b, tc.requests, tc.est, tc.prompt, tc.completion, -1)
			actual := tc.prompt + tc.completion
			if got := c.most(time.Minute, start); got > tc.tpm {
				t.Errorf("a sliding minute counted %.0f tokens, more than %.0f", got, tc.tpm)
			}
			if got, most := c.most(time.Second, start), tc.tpm/60+math.Max(tc.est, actual); got > most {
				t.Errorf("a sliding second counted %.0f tokens, more than %.0f", got, most)
			}
			minutes := c.at[len(c.at)-1].Sub(start).Minutes()
			used := float64(tc.requests-1) * actual // the tokens between the first and the last request
			if got, want := used/(tc.tpm*minutes), 0.95*math.Min(1, actual/tc.est); got < want || got > 1 {
				t.Errorf("used %.3f of the limit over %.2f minutes, want [%.3f, 1]", got, minutes, want)
			}
		})
	}
}

// A 429 while tokens set the pace lowers the even pace by a tenth, at most once a second; a 429
// while tokens did not set the pace (the requests limit's) changes nothing.
func TestTokenBudgetA429LowersThePace(t *testing.T) {
	start := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	fc := clock.NewFake(start)
	b := newTokenBudget(200000, fc)
	c, _ := runBudget(t, fc, b, 1200, 800, 750, 50, 300)
	if got := c.most(time.Minute, start); got > 200000 {
		t.Errorf("a sliding minute counted %.0f tokens", got)
	}
	rate := func(from, to int) float64 { // tokens a minute between two requests
		return float64(to-from) * 800 / c.at[to].Sub(c.at[from]).Minutes()
	}
	if before, after := rate(1, 300), rate(301, 1199); math.Abs(after/before-tokenStep) > 0.01 {
		t.Errorf("tokens a minute %.0f before the 429, %.0f after: not lowered by a tenth", before, after)
	}
	if math.Abs(b.share-tokenMargin*tokenStep) > 1e-9 {
		t.Errorf("a 429 left the even pace at %v", b.share)
	}
	fc.Advance(time.Second)
	b.refused()
	b.refused()
	if math.Abs(b.share-tokenMargin*tokenStep*tokenStep) > 1e-9 {
		t.Errorf("two more 429s at once left the even pace at %v", b.share)
	}
	fc.Advance(time.Second)
	b.refused()
	if math.Abs(b.share-tokenMargin*tokenStep*tokenStep*tokenStep) > 1e-9 {
		t.Errorf("a 429 a second later left the even pace at %v", b.share)
	}
	for i := 0; i < 20; i++ {
		fc.Advance(time.Second)
		b.refused()
	}
	if b.share != minTokenShare {
		t.Errorf("many 429s left the even pace at %v, want its floor %v", b.share, minTokenShare)
	}

	// requests a second apart never waited for tokens: a 429 is the requests limit's
	fc = clock.NewFake(start)
	b = newTokenBudget(200000, fc)
	for i := 0; i < 3; i++ {
		e, err := b.take(context.Background(), 800)
		if err != nil || fc.Now() != start.Add(time.Duration(i)*time.Second) {
			t.Fatalf("take %d: %v at %v", i, err, fc.Now())
		}
		b.settle(e, 750, 50)
		fc.Advance(time.Second)
	}
	b.refused()
	if b.share != tokenMargin {
		t.Errorf("a 429 while tokens set no pace changed it to %v", b.share)
	}
}

// Without the user's tpm the budget learns the provider's limit from the headers and follows it as
// it changes; with it, the lower of the two.
func TestTokenBudgetFollowsReportedLimits(t *testing.T) {
	type report struct {
		limit, remaining float64
		has              bool
	}
	tests := []struct {
		name    string
		user    float64
		reports []report
		replied bool
		want    float64
		waits   []time.Duration // of takes of 500 tokens after the reports
	}{
		{"learned from the headers, the tokens counted so far kept", 0, []report{{60000, 59000, true}}, true, 60000,
			[]time.Duration{0, 510204082 * time.Nanosecond}}, // 500 tokens at 60000 * tokenMargin per minute
		{"little remaining: the tokens counted leave the minute first", 0, []report{{60000, 1000, true}}, true, 60000,
			[]time.Duration{time.Minute + tokenGuard}},
		{"no limit reported: no wait", 0, nil, true, 0, []time.Duration{0, 0, 0}},
		{"before any reply the first request goes alone", 0, nil, false, 0, []time.Duration{0, firstReplyWait, 0}},
		{"the user's lower limit wins", 50000, []report{{60000, 60000, true}}, false, 50000,
			[]time.Duration{0, 612244898 * time.Nanosecond}}, // 500 tokens at 50000 * tokenMargin per minute
		{"a lower reported limit wins", 100000, []report{{30000, 30000, true}}, false, 30000, nil},
		{"a changed limit is followed", 0, []report{{60000, 60000, true}, {30000, 30000, true}}, true, 30000, nil},
		{"a raised limit is followed up to the user's", 100000,
			[]report{{30000, 30000, true}, {60000, 60000, true}, {500000, 500000, true}}, false, 100000, nil},
		{"without what remains, nothing counted so far", 0, []report{{60000, 0, false}}, true, 60000,
			[]time.Duration{0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fc := clock.NewFake(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
			b := newTokenBudget(tc.user, fc)
			for _, r := range tc.reports {
				b.follow(r.limit, r.remaining, r.has)
			}
			if tc.replied {
				b.sent = true
				b.replied()
			}
			if got := b.followed(); got != tc.want {
				t.Fatalf("follows %v, want %v", got, tc.want)
			}
			for i, want := range tc.waits {
				before := fc.Now()
				if err := drive(fc, func() error {
					if err := b.awaitFirst(context.Background()); err != nil {
						return err
					}
					_, err := b.take(context.Background(), 500)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if got := fc.Now().Sub(before); got.Round(time.Millisecond) != want.Round(time.Millisecond) {
					t.Fatalf("take %d waited %v, want %v", i, got, want)
				}
			}
		})
	}
}

// The pacer follows a requests limit the provider reports below the user's rpm, and its changes.
func TestPacerFollowsReportedRequestLimits(t *testing.T) {
	tests := []struct {
		reported []string
		want     float64
	}{
		{[]string{"600"}, 600},
		{[]string{"600", "1200"}, 1200},
		{[]string{"600", "60000"}, 6000},
		{[]string{"", "x"}, 6000},
	}
	for _, tc := range tests {
		fc := clock.NewFake(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
		p := newPacer(6000, fc, false)
		var times []time.Time
		p.observe = func(at time.Time) { times = append(times, at) }
		for _, v := range tc.reported {
			p.followHeaders(provider.RateInfo{RequestsPerMinute: v})
		}
		if got := p.followed(); got != tc.want {
			t.Fatalf("%v: follows %v, want %v", tc.reported, got, tc.want)
		}
		for i := 0; i < 3*int(tc.want/60); i++ {
			if err := drive(fc, func() error { _, err := p.wait(context.Background()); return err }); err != nil {
				t.Fatal(err)
			}
		}
		per := int(tc.want / 60)
		for i := per; i < len(times); i++ {
			if d := times[i].Sub(times[i-per]); d < time.Second+minWindowGuard {
				t.Fatalf("%v: admissions %d and %d are %v apart", tc.reported, i-per, i, d)
			}
		}
	}
}

// A lower limit reported mid-run keeps the latest admissions in the pacer's window.
func TestPacerKeepsItsWindowWhenTheLimitDrops(t *testing.T) {
	fc := clock.NewFake(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
	p := newPacer(6000, fc, false)
	var times []time.Time
	p.observe = func(at time.Time) { times = append(times, at) }
	for i := 0; i < 150; i++ {
		if i == 120 {
			p.follow(600)
		}
		if err := drive(fc, func() error { _, err := p.wait(context.Background()); return err }); err != nil {
			t.Fatal(err)
		}
	}
	// after the drop, at most 10 admissions in any window of one second (+ guard), the first
	// ones counted with the admissions before the drop
	for i := 120; i < len(times); i++ {
		if d := times[i].Sub(times[i-10]); d < time.Second+minWindowGuard {
			t.Fatalf("admissions %d and %d are %v apart", i-10, i, d)
		}
	}
}

// The estimate starts from the rule and the completion allowance, then scales the rule by the
// prompt tokens the answers reported and takes their mean completion.
func TestEstimateCorrectedByUsage(t *testing.T) {
	type step = answered
	tests := []struct {
		name    string
		learned []step
		rule    float64
		want    float64
	}{
		{"before any answer", nil, 100, 110},
		{"one answer", []step{{100, screen.Usage{Prompt: 200, Completion: 30}}}, 50, 130},
		{"two answers", []step{{100, screen.Usage{Prompt: 200, Completion: 30}}, {100, screen.Usage{Prompt: 100, Completion: 10}}},
			100, 170},
		{"a reply without usage teaches nothing", []step{{100, screen.Usage{}}}, 100, 110},
		// the body's fixed 50 rule tokens are not counted, its text twice: a ratio would say 3636
		{"records of many lengths: the line", line(10, func(x float64) float64 { return 2 * (x - 50) }), 2000, 3900},
		{"records of one length: the ratio", line(12, func(float64) float64 { return 300 }), 200, 600},
	}
	for _, tc := range tests {
		e := &estimator{allowance: 10}
		for _, s := range tc.learned {
			e.learn(s.rule, s.usage)
		}
		if got := e.estimate(tc.rule); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: estimate %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := requestRule([]byte(`{"é":"abcd"}`)); got != 3 {
		t.Errorf("rule %v", got)
	}
	// an escape is the one character it stands for
	if got := requestRule([]byte(`{"a":"\u003c\n<\"x"}`)); got != 3.25 {
		t.Errorf("rule with escapes %v", got)
	}
}

// answered is a request's count by the rule and the usage its answer reported.
type answered struct {
	rule  float64
	usage screen.Usage
}

// line is n answers to requests of 100, 200, ... rule tokens (100 each when prompt does not
// depend on it), with prompt(rule) prompt tokens and no completion.
func line(n int, prompt func(float64) float64) []answered {
	steps := make([]answered, n)
	for i := range steps {
		x := float64(100 * (i + 1))
		if prompt(x) == prompt(2*x) {
			x = 100
		}
		steps[i].rule, steps[i].usage = x, screen.Usage{Prompt: int64(prompt(x))}
	}
	return steps
}

// Through a run: the pacer follows the limits the responses report, the user's tpm caps the
// provider's, and every estimate is settled by the end.
func TestRunFollowsTheReportedLimits(t *testing.T) {
	headers := map[string]string{"x-ratelimit-limit-requests": "6000", "x-ratelimit-remaining-requests": "5999",
		"x-ratelimit-limit-tokens": "90000", "x-ratelimit-remaining-tokens": "89000"}
	tests := []struct {
		name     string
		tpm      *float64
		wantRPM  float64
		wantTPM  float64
		requests int64
	}{
		{"from the headers", nil, 6000, 90000, 5},
		{"the user's tpm", func() *float64 { v := 50000.0; return &v }(), 6000, 50000, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fk := newFake(t, func(int64, map[string]any) (int, map[string]string, string) {
				return 200, headers, toolReply("1")
			})
			r := runToEnd(t, options(fk.srv.URL, func(o *Options) { o.TPM = tc.tpm }), int(tc.requests))
			p := r.pacers[0]
			if r.answered.Load() != tc.requests || p.followed() != tc.wantRPM || p.tokens.followed() != tc.wantTPM {
				t.Fatalf("answered %d, rpm %v, tpm %v", r.answered.Load(), p.followed(), p.tokens.followed())
			}
		})
	}
	o, zero := NewOptions(), 0.0
	o.APIURL, o.Prompts, o.Models, o.TPM = "http://x", []string{"p"}, []ModelOptions{{Name: "m", Reps: 1, RPM: 1}}, &zero
	if err := o.Check(); err == nil {
		t.Fatal("tpm 0 accepted")
	}
}

// With many requests waiting for their reserved times, a 429 takes the reservations back: the
// requests reserve again at the lowered pace, and none goes on the old schedule.
func TestTokenBudgetA429ReschedulesTheWaitingRequests(t *testing.T) {
	start := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	fc := clock.NewFake(start)
	b := newTokenBudget(200000, fc)
	var (
		mu        sync.Mutex
		c         counting
		count     int
		refusedAt time.Time
		wg        sync.WaitGroup
	)
	var live atomic.Int32 // workers still taking
	for w := 0; w < 16; w++ {
		wg.Add(1)
		live.Add(1)
		go func() {
			defer wg.Done()
			defer live.Add(-1)
			for {
				e, err := b.take(context.Background(), 800)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if count == 600 {
					mu.Unlock()
					b.settle(e, 0, 0)
					return
				}
				count++
				c.add(e.at, 800)
				if count == 150 {
					refusedAt = fc.Now()
					b.refused()
				}
				mu.Unlock()
				b.settle(e, 750, 50)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// The clock moves once every worker waits: all of them hold a reservation when the 429 comes.
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			if next, ok := fc.NextDeadline(); ok && fc.Waiting() >= int(live.Load()) {
				fc.Advance(next.Sub(fc.Now()))
			} else {
				runtime.Gosched()
			}
		}
	}
	sort.Sort(byTime(c))
	if waiting := c.at[len(c.at)-1].Sub(refusedAt); waiting < 10*time.Second {
		t.Fatalf("the requests after the 429 took %v: few were waiting", waiting)
	}
	minutes := 800 / (200000 * tokenMargin * tokenStep)
	gap := time.Duration(minutes*float64(time.Minute)) - time.Microsecond
	for i := 1; i < len(c.at); i++ {
		if c.at[i-1].After(refusedAt) && c.at[i].Sub(c.at[i-1]) < gap {
			t.Fatalf("after the 429, requests %v apart: the lowered pace's gap is %v", c.at[i].Sub(c.at[i-1]), gap)
		}
	}
	if got := c.most(time.Minute, start); got > 200000 {
		t.Errorf("a sliding minute counted %.0f tokens", got)
	}
}

// byTime sorts what a provider counted by time.
type byTime counting

func (c byTime) Len() int           { return len(c.at) }
func (c byTime) Less(i, j int) bool { return c.at[i].Before(c.at[j]) }
func (c byTime) Swap(i, j int) {
	c.at[i], c.at[j] = c.at[j], c.at[i]
	c.tokens[i], c.tokens[j] = c.tokens[j], c.tokens[i]
}

// A request estimated above most of a second's tokens goes tokenGuard after its even-pace time:
// a provider counting by the second admits it only once the second before it is refilled.
func TestTokenBudgetALargeRequestWaitsAGuard(t *testing.T) {
	start := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	fc := clock.NewFake(start)
	b := newTokenBudget(6000, fc) // 100 tokens a second
	step := func(est float64) time.Duration {
		return time.Duration(est / (6000 * tokenMargin) * float64(time.Minute))
	}
	for i, tc := range []struct {
		est  float64
		wait time.Duration
	}{
		{10, 0},
		{90, 100*time.Millisecond + tokenGuard}, // above 0.8 of 100: once the 10 are refilled
		{50, step(90)},                          // the even pace only
	} {
		before := fc.Now()
		var e *spend
		if err := drive(fc, func() (err error) { e, err = b.take(context.Background(), tc.est); return err }); err != nil {
			t.Fatal(err)
		}
		b.settle(e, tc.est, 0) // answered at once, as estimated
		if got := fc.Now().Sub(before); got != tc.wait {
			t.Errorf("take %d of %v tokens waited %v, want %v", i, tc.est, got, tc.wait)
		}
	}
}
