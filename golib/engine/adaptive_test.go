package engine

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/screen"
)

var adaptiveCutoffs = []screen.Cutoffs{{Upper: 0.1, Lower: 0.1}, {Upper: 0.5, Lower: 0.5}, {Upper: 0.5, Lower: 0.3},
	{Upper: 0.3, Lower: 0.1}, {Upper: 0.8, Lower: 0.2}, {Upper: 1, Lower: 0}, {Upper: 0, Lower: 0}, {Upper: 2.0 / 3, Lower: 1.0 / 3}}

// outcomes: 0 exclude, 1 include, 2 failed.
func groupAnswers(seq []int) []screen.Answer {
	out := make([]screen.Answer, len(seq))
	for i, v := range seq {
		out[i] = screen.Answer{Record: 1, PromptID: 1, Model: "m", N: int32(i + 1), Binary: int32(v), HasBinary: v != 2}
	}
	return out
}

// Every answer sequence of reps 1 to 6 (failures included) under several cut-offs: where the exact
// rule stops a group, the verdict over the answers sent is the full run's over all of them, and
// also the full run's when the failures are answered later either way.
func TestExactRuleNeverDisagreesWithTheFullRun(t *testing.T) {
	checked := 0
	for _, cut := range adaptiveCutoffs {
		for reps := 1; reps <= 6; reps++ {
			total := int(math.Pow(3, float64(reps)))
			for code := 0; code < total; code++ {
				seq := make([]int, reps)
				for i, c := 0, code; i < reps; i, c = i+1, c/3 {
					seq[i] = c % 3
				}
				full := screen.AggregateGroup(groupAnswers(seq), cut).Final
				answered, included, sent := 0, 0, 0
				for sent < reps && !settledExact(cut, reps, answered, included) {
					if seq[sent] != 2 {
						answered++
						included += seq[sent]
					}
					sent++
				}
				if sent == 0 {
					t.Fatalf("cut-offs %+v, reps %d: settled before any answer", cut, reps)
				}
				got := screen.AggregateGroup(groupAnswers(seq[:sent]), cut).Final
				if got != full {
					t.Fatalf("cut-offs %+v, answers %v: settled after %d with %s, the full run says %s", cut, seq, sent, got, full)
				}
				// The failures answered later (screen_errors()), each either way.
				for fill := 0; fill < 2; fill++ {
					repaired := append([]int(nil), seq...)
					for i := range repaired {
						if repaired[i] == 2 {
							repaired[i] = fill
						}
					}
					sentRepaired := append([]int(nil), repaired[:sent]...)
					if a, b := screen.AggregateGroup(groupAnswers(sentRepaired), cut).Final,
						screen.AggregateGroup(groupAnswers(repaired), cut).Final; a != b {
						t.Fatalf("cut-offs %+v, answers %v repaired with %d: %s against %s", cut, seq, fill, a, b)
					}
				}
				checked++
			}
		}
	}
	if checked != len(adaptiveCutoffs)*(3+9+27+81+243+729) {
		t.Fatalf("%d sequences checked", checked)
	}
}

func TestExactRuleSettlesWhenItCan(t *testing.T) {
	def := screen.Cutoffs{Upper: 0.1, Lower: 0.1}
	cases := []struct {
		cut                      screen.Cutoffs
		reps, answered, included int
		want                     bool
	}{
		{def, 10, 1, 1, true},  // one include of 10 is 0.1 already
		{def, 10, 9, 0, false}, // the tenth may include
		{def, 10, 10, 0, true},
		{def, 10, 0, 0, false},
		{screen.Cutoffs{Upper: 0.5, Lower: 0.5}, 6, 3, 3, true},
		{screen.Cutoffs{Upper: 0.5, Lower: 0.5}, 6, 3, 2, false},
		{screen.Cutoffs{Upper: 0.5, Lower: 0.5}, 6, 4, 0, true},
	}
	for _, tc := range cases {
		if got := settledExact(tc.cut, tc.reps, tc.answered, tc.included); got != tc.want {
			t.Errorf("%+v: %v", tc, got)
		}
	}
}

// An adaptive run sends a group's repetitions one at a time and none after its verdict settled:
// under the default cut-off (0.1) an include settles a group at once, an exclude never before
// the last repetition.
func TestAdaptiveDispatchStopsSettledGroups(t *testing.T) {
	for _, rule := range []string{RuleExact, RuleStatistical} {
		t.Run(rule, func(t *testing.T) {
			var mu sync.Mutex
			inFlight, perRecord := map[string]int{}, map[string]int{}
			overlap := false
			fk := newFake(t, func(_ int64, body map[string]any) (int, map[string]string, string) {
				rec, _ := recordOf(body)
				mu.Lock()
				inFlight[rec]++
				perRecord[rec]++
				if inFlight[rec] > 1 {
					overlap = true
				}
				mu.Unlock()
				defer func() { mu.Lock(); inFlight[rec]--; mu.Unlock() }()
				var n int
				fmt.Sscan(rec, &n)
				return 200, nil, toolReply(fmt.Sprint(n % 2))
			})
			seed := int64(100)
			o := options(fk.srv.URL, func(o *Options) {
				o.Models[0].Reps = 6
				o.Seed = &seed
				o.MaxActive = 8
				o.Adaptive = &AdaptiveOptions{Rule: rule}
				o.Result = &ResultOptions{Aggregate: true}
			})
			r := runToEnd(t, o, 8)
			if overlap {
				t.Fatal("two repetitions of a record were in flight at once")
			}
			for rec, n := range perRecord {
				var k int
				fmt.Sscan(rec, &k)
				want := 6
				if k%2 == 1 {
					want = 1
				}
				if n != want {
					t.Fatalf("record %s: %d requests, want %d", rec, n, want)
				}
			}
			rows, agg, err := r.Result(nil)
			if err != nil {
				t.Fatal(err)
			}
			if rows.NumRows != 4*1+4*6 || agg.NumRows != 8 {
				t.Fatalf("%d rows, %d aggregated", rows.NumRows, agg.NumRows)
			}
			reps, _ := agg.Col("reps")
			sent, _ := agg.Col("reps_sent")
			final, _ := agg.Col("final_decision_llm")
			for i := 0; i < 8; i++ {
				wantSent, wantFinal := int32(6), "Exclude"
				if i%2 == 0 { // record i+1 is odd
					wantSent, wantFinal = 1, "Include"
				}
				if reps.I32[i] != 6 || sent.I32[i] != wantSent || final.Str[i] != wantFinal {
					t.Fatalf("row %d: reps %d, reps_sent %d, %s", i, reps.I32[i], sent.I32[i], final.Str[i])
				}
			}
			if s := r.Summarise(); s.SavedRequests == nil || *s.SavedRequests != 4*5 || s.Total != 28 {
				t.Fatalf("summary: saved %v, total %d", s.SavedRequests, s.Total)
			}
		})
	}
}

func TestAdaptiveOptionsChecked(t *testing.T) {
	for _, a := range []*AdaptiveOptions{{Rule: "fast"}, {Rule: RuleStatistical, Level: 1}, {Rule: RuleStatistical, Level: -0.1}} {
		o := options("http://x", func(o *Options) { o.Adaptive = a })
		if err := o.Check(); err == nil {
			t.Fatalf("%+v accepted", *a)
		}
	}
	o := options("http://x", func(o *Options) { o.Adaptive = &AdaptiveOptions{Rule: RuleExact}; o.Batch = &BatchOptions{} })
	if err := o.Check(); err != nil {
		t.Fatalf("adaptive batch refused: %v", err)
	}
}

// The last waiting jobs dropped by a settled group end the dispatch: nothing is left to wait for.
func TestDispatchEndsWhenTheLastWaitingJobsSettle(t *testing.T) {
	o := options("http://x", func(o *Options) {
		o.Models[0].Reps = 4
		o.Adaptive = &AdaptiveOptions{Rule: RuleExact}
	})
	jobs, _, err := expandJobs(o, 1)
	if err != nil {
		t.Fatal(err)
	}
	results := make([]result, len(jobs))
	a := newAdaptive(o, jobs)
	chained := a.chain(results, func(i int) { results[i] = result{done: true, settled: true} })
	q := newDispatchQueue(jobs, results, newCacheLayout(o, jobs, results), true, chained, a)
	i, ok := q.take(context.Background())
	if !ok || i != 0 || q.wait != 3 {
		t.Fatalf("first job %d %v, %d waiting", i, ok, q.wait)
	}
	// The dispatcher already waits for the next job when the group settles.
	done := make(chan bool)
	go func() { _, ok := q.take(context.Background()); done <- ok }()
	time.Sleep(50 * time.Millisecond)
	a.answer(i, 1) // an include settles the group under the default cut-off
	q.ended(i)
	select {
	case ok := <-done:
		if ok {
			t.Fatal("a settled job was handed out")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("take() still waits after the last waiting jobs settled")
	}
	if q.wait != 0 || !results[1].settled || !results[3].settled {
		t.Fatalf("%d waiting, results %+v", q.wait, results)
	}
}
