package engine

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"
)

// A group that never settles is asked 1, 1, 2, 4, ... repetitions, all of its reps within
// 1 + ceil(log2(reps)) rounds.
func TestRoundScheduleDoublesWithinTheBound(t *testing.T) {
	for _, c := range []struct {
		reps  int
		sizes []int
	}{
		{1, []int{1}},
		{2, []int{1, 1}},
		{3, []int{1, 1, 1}},
		{4, []int{1, 1, 2}},
		{5, []int{1, 1, 2, 1}},
		{6, []int{1, 1, 2, 2}},
		{8, []int{1, 1, 2, 4}},
		{10, []int{1, 1, 2, 4, 2}},
		{16, []int{1, 1, 2, 4, 8}},
		{17, []int{1, 1, 2, 4, 8, 1}},
		{100, []int{1, 1, 2, 4, 8, 16, 32, 36}},
	} {
		var sizes []int
		for sent := 0; sent < c.reps; {
			n := roundSize(sent, c.reps-sent)
			sizes = append(sizes, n)
			sent += n
		}
		if !reflect.DeepEqual(sizes, c.sizes) {
			t.Fatalf("reps %d: rounds of %v, want %v", c.reps, sizes, c.sizes)
		}
		bound := 1 + int(math.Ceil(math.Log2(float64(c.reps))))
		if maxRounds(c.reps) != len(sizes) || maxRounds(c.reps) != bound {
			t.Fatalf("reps %d: maxRounds %d, %d rounds, bound %d", c.reps, maxRounds(c.reps), len(sizes), bound)
		}
	}
	for reps := 1; reps <= 1000; reps++ {
		rounds := 0
		for sent := 0; sent < reps; rounds++ {
			sent += roundSize(sent, reps-sent)
		}
		if rounds != maxRounds(reps) {
			t.Fatalf("reps %d: %d rounds, maxRounds %d", reps, rounds, maxRounds(reps))
		}
	}
}

func TestRoundSize(t *testing.T) {
	for _, c := range []struct{ ended, left, want int }{
		{0, 6, 1},  // the first repetition
		{1, 5, 1},  // one more after the first answer
		{2, 4, 2},  // doubling
		{4, 2, 2},  // no more than are left
		{3, 0, 0},  // nothing left
		{0, 0, 0},  // nothing at all
		{5, 10, 5}, // failures count as ended
	} {
		if got := roundSize(c.ended, c.left); got != c.want {
			t.Fatalf("roundSize(%d, %d) = %d, want %d", c.ended, c.left, got, c.want)
		}
	}
}

// nextRound: settled groups are dropped, open ones get their next repetitions, a failure counts
// as an ended repetition, and a group with a job in flight waits for it.
func TestNextRound(t *testing.T) {
	o := options("http://x", func(o *Options) {
		o.Models[0].Reps = 4
		o.Adaptive = &AdaptiveOptions{Rule: RuleExact}
	})
	jobs, _, err := expandJobs(o, 3) // jobs 0-3 record 1, 4-7 record 2, 8-11 record 3
	if err != nil {
		t.Fatal(err)
	}
	results := make([]result, len(jobs))
	drop := func(i int) { results[i] = result{done: true, settled: true} }
	a := newAdaptive(o, jobs)
	if got := a.nextRound(results, nil, drop); !reflect.DeepEqual(got, []int{0, 4, 8}) {
		t.Fatalf("round 1: %v", got)
	}
	answer := func(i int, binary int32) {
		results[i] = result{done: true, ok: true}
		a.answer(i, binary)
	}
	answer(0, 1)                    // an include settles record 1 under the default cut-off
	answer(4, 0)                    // record 2 stays open
	results[8] = result{done: true} // record 3's first repetition failed for good
	if got := a.nextRound(results, nil, drop); !reflect.DeepEqual(got, []int{5, 9}) {
		t.Fatalf("round 2: %v", got)
	}
	if !results[1].settled || !results[3].settled || a.settledJobs() != 3 {
		t.Fatalf("record 1 not settled: %+v, %d settled", results[:4], a.settledJobs())
	}
	answer(5, 0)
	answer(9, 0)
	if got := a.nextRound(results, nil, drop); !reflect.DeepEqual(got, []int{6, 7, 10, 11}) {
		t.Fatalf("round 3: %v", got)
	}
	// A call that finds record 2's job 6 in a batch still open waits for it; record 3 goes on.
	b := newAdaptive(o, jobs)
	for _, i := range []int{4, 5, 9} {
		b.known(b.group[i], 0)
	}
	b.known(b.group[0], 1)
	fresh := make([]result, len(jobs))
	for _, i := range []int{0, 4, 5, 9} {
		fresh[i] = result{done: true, ok: true, stored: true}
	}
	got := b.nextRound(fresh, map[int]bool{6: true}, func(i int) { fresh[i] = result{done: true, settled: true} })
	// Record 3: its failed first repetition was not stored, so it is sent again, as the one more
	// its single answer gives it.
	if !reflect.DeepEqual(got, []int{6, 8}) {
		t.Fatalf("resumed round: %v", got)
	}
}

// Through the fake's batch APIs, with a per-record tendency: the exact rule's verdicts are the
// full batch run's, in fewer lines and within the bound on rounds, and a call with wait = false
// leaves the later rounds to the same call again.
func TestAdaptiveBatchRuns(t *testing.T) {
	for _, letter := range batchProviders() {
		t.Run(letter, func(t *testing.T) { testAdaptiveBatch(t, letter) })
	}
}

const adaptiveBatchRecords, adaptiveBatchReps = 24, 6

// runAdaptiveBatch runs the batch screening of adaptiveBatchRecords records at adaptiveBatchReps
// repetitions by provider letter of the fake at url, adaptive (exact rule) or not, into the store
// at path, and waits for it.
func runAdaptiveBatch(t *testing.T, letter, url string, adaptive, wait bool, path string) *Run {
	t.Helper()
	o := batchOptionsOf(letter, url, path, wait)
	o.Models[0].Reps = adaptiveBatchReps
	o.Result = &ResultOptions{Aggregate: true}
	if adaptive {
		o.Adaptive = &AdaptiveOptions{Rule: RuleExact}
	}
	return startBatch(t, o, batchRecords(adaptiveBatchRecords))
}

// verdicts are the final decisions of a run, by record.
func verdicts(t *testing.T, r *Run) []string {
	t.Helper()
	_, agg, err := r.Result(nil)
	if err != nil {
		t.Fatal(err)
	}
	final, _ := agg.Col("final_decision_llm")
	return append([]string(nil), final.Str...)
}

func testAdaptiveBatch(t *testing.T, letter string) {
	const records, reps = adaptiveBatchRecords, adaptiveBatchReps
	fk := batchFake(t, `{"seed": 7, "tendency": true}`)
	dir := t.TempDir()
	run := func(adaptive bool, wait bool, path string) *Run {
		return runAdaptiveBatch(t, letter, fk.URL, adaptive, wait, path)
	}
	full := verdicts(t, run(false, true, filepath.Join(dir, "full.sqlite")))
	for _, split := range []bool{false, true} {
		fk.Reset()
		before := fk.Stats().Batch
		path := filepath.Join(dir, fmt.Sprintf("adaptive-%v.sqlite", split))
		if split {
			r := run(true, false, path)
			st := r.batchState()
			if st.Pending != records || st.Later != records*(reps-1) || r.answered.Load() != 0 {
				t.Fatalf("wait = false: %+v, %d answered", st, r.answered.Load())
			}
		}
		r := run(true, true, path)
		if state, stop := r.State(); state != "done" || r.failed.Load() != 0 {
			t.Fatalf("split %v: state %s %+v, %d failed", split, state, stop, r.failed.Load())
		}
		got := verdicts(t, r)
		if !reflect.DeepEqual(got, full) {
			t.Fatalf("split %v: verdicts %v, the full run's %v", split, got, full)
		}
		after := fk.Stats().Batch
		lines, batches := after.LinesReceived-before.LinesReceived, after.Created-before.Created
		saved := r.adapt.settledJobs()
		if saved == 0 || lines+saved != records*reps || batches > int64(maxRounds(reps)) || batches < 2 {
			t.Fatalf("split %v: %d lines, %d saved, %d batches (bound %d)", split, lines, saved, batches, maxRounds(reps))
		}
		t.Logf("split %v: %d lines, %d saved, %d batches", split, lines, saved, batches)
		if s := r.Summarise(); s.SavedRequests == nil || *s.SavedRequests != saved {
			t.Fatalf("summary: saved %v", s.SavedRequests)
		}
	}
}

// Lines that fail, expire or vanish in their batch are sent again within their round: the run
// ends with every job it sent answered and the full run's verdicts.
func TestAdaptiveBatchResendsFailedLinesWithinARound(t *testing.T) {
	fk := batchFake(t, `{"seed": 7, "tendency": true, "batch_fail": 0.1, "batch_expire": 0.05, "batch_vanish": 0.05}`)
	dir := t.TempDir()
	// The adaptive run first: the fake answers a line it failed once when it comes again, so the
	// full run after it sees no failure, and failed lines take no answer from a record's sequence.
	r := runAdaptiveBatch(t, "a", fk.URL, true, true, filepath.Join(dir, "adaptive.sqlite"))
	bs := fk.Stats().Batch
	if state, stop := r.State(); state != "done" || r.failed.Load() != 0 {
		t.Fatalf("state %s %+v, %d failed", state, stop, r.failed.Load())
	}
	saved := r.adapt.settledJobs()
	redo := bs.LinesFailed + bs.LinesExpired + bs.LinesVanished
	if redo == 0 || saved == 0 || bs.LinesAnswered+saved != adaptiveBatchRecords*adaptiveBatchReps ||
		bs.LinesReceived != bs.LinesAnswered+redo || r.answered.Load() != bs.LinesAnswered {
		t.Fatalf("batch stats %+v, %d saved, %d answered", bs, saved, r.answered.Load())
	}
	got := verdicts(t, r)
	fk.Reset()
	full := verdicts(t, runAdaptiveBatch(t, "a", fk.URL, false, true, filepath.Join(dir, "full.sqlite")))
	if !reflect.DeepEqual(got, full) {
		t.Fatalf("verdicts %v, the full run's %v", got, full)
	}
}
