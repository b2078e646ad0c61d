package engine

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/clock"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/screen"
)

// The budget against a provider that counts tokens the same way (a bucket of one minute's tokens,
// refilled continuously, as the fake provider enforces tpm): the provider's bucket always holds
// a request's estimate when it arrives, and the run uses nearly all the provider allows.
func TestTokenBudgetKeepsWithinTPM(t *testing.T) {
	tests := []struct {
		name        string
		tpm         float64
		est, actual float64 // a request's estimate, and the tokens its answer reports
		requests    int
	}{
		{"exact estimates", 200000, 1000, 1000, 1000},
		{"estimates too high", 200000, 1200, 1000, 1000},
		{"estimates too low, corrected by usage", 200000, 1000, 1300, 1000},
		{"small limit", 3000, 700, 700, 60},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
			fc := clock.NewFake(start)
			b := newTokenBudget(tc.tpm, fc)
			provLevel, provLast := tc.tpm, start
			used := 0.0
			for i := 0; i < tc.requests; i++ {
				if err := drive(fc, func() error { return b.take(context.Background(), tc.est) }); err != nil {
					t.Fatal(err)
				}
				now := fc.Now()
				provLevel = math.Min(tc.tpm, provLevel+now.Sub(provLast).Minutes()*tc.tpm)
				provLast = now
				if provLevel < tc.est-1e-6 {
					t.Fatalf("request %d at %v: the provider holds %.1f tokens, less than %.0f", i, now.Sub(start), provLevel, tc.est)
				}
				provLevel -= tc.actual
				used += tc.actual
				b.settle(tc.est, tc.actual)
			}
			// The provider allows one minute's tokens at once, then tpm per minute.
			allowed := tc.tpm + tc.tpm*fc.Now().Sub(start).Minutes()
			want := 0.95 * math.Min(1, tc.actual/tc.est)
			if got := used / allowed; got < want {
				t.Fatalf("used %.3f of the tokens the provider allows, want >= %.3f", got, want)
			}
		})
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
		want    float64
		waits   []time.Duration // of takes of 1000 tokens after the reports
	}{
		{"learned from the headers, starting from what remains", 0, []report{{60000, 1000, true}}, 60000,
			[]time.Duration{0, 1020408164 * time.Nanosecond}}, // 1000 tokens at 60000 * tokenMargin per minute
		{"no limit known: no wait", 0, nil, 0, []time.Duration{0, 0, 0}},
		{"the user's lower limit wins", 50000, []report{{60000, 60000, true}}, 50000, nil},
		{"a lower reported limit wins", 100000, []report{{30000, 30000, true}}, 30000, nil},
		{"a changed limit is followed", 0, []report{{60000, 60000, true}, {30000, 30000, true}}, 30000, nil},
		{"a raised limit is followed up to the user's", 100000,
			[]report{{30000, 30000, true}, {60000, 60000, true}, {500000, 500000, true}}, 100000, nil},
		{"without what remains, the bucket starts full", 0, []report{{60000, 0, false}}, 60000,
			[]time.Duration{0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fc := clock.NewFake(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
			b := newTokenBudget(tc.user, fc)
			for _, r := range tc.reports {
				b.follow(r.limit, r.remaining, r.has)
			}
			if got := b.followed(); got != tc.want {
				t.Fatalf("follows %v, want %v", got, tc.want)
			}
			for i, want := range tc.waits {
				before := fc.Now()
				if err := drive(fc, func() error { return b.take(context.Background(), 1000) }); err != nil {
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
	type step struct {
		rule  float64
		usage screen.Usage
	}
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
			p.tokens.mu.Lock()
			defer p.tokens.mu.Unlock()
			if p.tokens.inFlight > 1e-9 || p.tokens.inFlight < -1e-9 {
				t.Fatalf("estimates left unsettled: %v", p.tokens.inFlight)
			}
		})
	}
	if _, err := ParseOptions([]byte(`{"api_url":"http://x","prompts":["p"],"models":[{"name":"m","reps":1,"rpm":1}],"tpm":0}`)); err == nil {
		t.Fatal("tpm 0 accepted")
	}
}
