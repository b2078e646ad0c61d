package engine

import (
	"time"

	"github.com/tabscreen/tabscreen/golib/batch"
	"github.com/tabscreen/tabscreen/golib/provider"
)

// Adaptive repetitions through a batch API (screen_batch(screen_adaptive, ...),
// docs/decisions/0024-adaptive-batches.md). A batch answers within hours, so a group's
// repetitions cannot wait for one another one at a time: they go in rounds. Round 1 sends each
// group's first repetition; once every batch of a round is collected, each group is decided with
// the rules of adaptive.go (decide), a settled group's repetitions not sent are dropped, and every
// other group gets as many more repetitions as have ended, doubling what it was asked: 1, 1, 2, 4,
// ... A group that never settles is asked all of its reps within maxRounds(reps) rounds, as long
// as none of its requests fails for good (a failure ends a repetition, so it counts in the
// doubling too). Within a round the batch pipeline sends failed and expired lines again.

// roundSize is how many more repetitions a group not settled gets in the next round, with `ended`
// of its repetitions ended (answered, or failed for good) and `left` not sent yet.
func roundSize(ended, left int) int { return min(left, max(ended, 1)) }

// maxRounds is the most rounds of roundSize a group of reps repetitions takes when every request
// it sends ends in its round: 1 + ceil(log2(reps)).
func maxRounds(reps int) int {
	n := 1
	for sent := 1; sent < reps; sent *= 2 {
		n++
	}
	return n
}

// nextRound decides every group whose jobs are all ended or not sent, drops the jobs not sent of
// each group settled (drop, counted as settled), and returns the jobs of the next round in job
// order: the jobs inFlight (by job: in a batch an earlier call submitted, which their groups wait
// for, undecided), then for each other group not settled the next roundSize of its jobs not sent,
// in repetition order. An empty round ends the run.
func (a *adaptive) nextRound(results []result, inFlight map[int]bool, drop func(int)) []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.drop = drop
	var round []int
	// A group's jobs follow one another (newAdaptive).
	for lo := 0; lo < len(a.group); {
		g, hi := a.group[lo], lo
		for hi < len(a.group) && a.group[hi] == g {
			hi++
		}
		ended, waiting := 0, false
		var left []int
		for i := lo; i < hi; i++ {
			switch {
			case inFlight[i] && !results[i].done:
				waiting = true
			case results[i].done:
				if !results[i].settled {
					ended++
				}
			default:
				left = append(left, i)
			}
		}
		switch {
		case waiting:
			for i := lo; i < hi; i++ {
				if inFlight[i] && !results[i].done {
					round = append(round, i)
				}
			}
		case a.decide(g):
			for _, i := range left {
				a.dropJob(int32(i))
			}
		case len(left) == 0: // every repetition has ended
		default:
			round = append(round, left[:roundSize(ended, len(left))]...)
		}
		lo = hi
	}
	return round
}

// batchRounds runs adaptive repetitions through the batch pipeline, a round at a time, until no
// group is left open, a round leaves jobs waiting at the provider (wait = FALSE, an interrupt),
// or the run stops. The first round of a call collects the batches an earlier call left open.
func (r *Run) batchRounds(runner *batch.Runner, tries map[string]int) {
	inFlight, err := r.jobsInOpenBatches()
	if err != nil {
		r.stopRun(provider.Stop{Class: "tabscreen_error_store", Message: err.Error()})
		return
	}
	for {
		round := r.adapt.nextRound(r.results, inFlight, r.settle)
		if len(round) == 0 || !r.runBatch(runner, round, tries) {
			break
		}
		inFlight = nil
	}
	if r.batch.pending.Load() > 0 {
		r.leaveLater()
	}
}

// jobsInOpenBatches are the jobs (by index) of the run's batches not yet collected.
func (r *Run) jobsInOpenBatches() (map[int]bool, error) {
	open, err := r.session.Batches().OpenBatches()
	if err != nil {
		return nil, err
	}
	index := make(map[string]int, len(r.jobs))
	for i, j := range r.jobs {
		index[r.storeKey(j)] = i
	}
	out := map[int]bool{}
	for _, b := range open {
		for _, key := range b.Jobs {
			if i, ok := index[key]; ok {
				out[i] = true
			}
		}
	}
	return out, nil
}

// leaveLater ends the jobs of later rounds when the call returns with jobs waiting at the
// provider: the same call sends those its groups' answers leave open. They are not stored.
func (r *Run) leaveLater() {
	for i := range r.results {
		if !r.results[i].done {
			r.batch.later.Add(1)
			r.results[i] = result{done: true, at: time.Now().UnixNano(),
				payload: &payload{reason: "not sent yet: a later round of adaptive repetitions, which the same call sends unless its record is settled"}}
			r.failed.Add(1)
			r.done.Add(1)
		}
	}
}
