package engine

import (
	"fmt"
	"sync"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// Adaptive repetitions (screen_adaptive(), docs/decisions/0023-adaptive-repetitions.md): a model's
// reps are the most a record is asked. The repetitions of a group (record x prompt x model x
// top_p) are sent one after another, repetition k+1 once repetition k has ended, and the group is
// asked no more once its verdict is settled. Jobs never sent because their group settled are not
// requests: they are in neither table of the result and are not stored.
//
// Through a batch API the repetitions go in rounds instead (adaptive_batch.go), decided by the
// same rules.
//
// Both rules count every repetition not answered as one that may still be answered: a failed one
// is re-sent by a resumed run or by screen_errors(), so a verdict settled while some failed holds
// whichever of them is answered later.

// Adaptive rules.
const (
	RuleExact       = "exact"
	RuleStatistical = "statistical"
)

// AdaptiveOptions ask for adaptive repetitions; nil sends every repetition.
type AdaptiveOptions struct {
	Rule string `json:"rule"`
	// Level is the statistical rule's bound on the probability that the repetitions not sent would
	// have changed the verdict.
	Level float64 `json:"level,omitempty"`
}

// DefaultLevel is the statistical rule's level when the options leave it out.
const DefaultLevel = 0.01

func (a *AdaptiveOptions) check() error {
	if a == nil {
		return nil
	}
	switch a.Rule {
	case RuleExact:
	case RuleStatistical:
		if a.Level < 0 || a.Level >= 1 {
			return fmt.Errorf("adaptive level must be in [0, 1), not %g", a.Level)
		}
	default:
		return fmt.Errorf("adaptive rule %q is not %q or %q", a.Rule, RuleExact, RuleStatistical)
	}
	return nil
}

// settledExact reports whether no outcome of the reps - answered repetitions not answered yet can
// change the verdict of a group with `included` of its `answered` answers including. incl_p can
// only end between included/reps and (included+left)/reps (fewer answers stay between the two),
// and the verdict regions of the cut-offs are intervals, so the group is settled when both ends
// get the same verdict; the verdict over the answers so far lies between them. A group without an
// answer is never settled: it keeps at least one row.
func settledExact(c screen.Cutoffs, reps, answered, included int) bool {
	left := reps - answered
	if left <= 0 {
		return true
	}
	if answered == 0 {
		return false
	}
	lo, _ := c.Label(float64(included)/float64(reps), true)
	hi, _ := c.Label(float64(included+left)/float64(reps), true)
	return lo == hi
}

// adaptive is a run's state of adaptive repetitions: each group's answers and its chain of jobs.
type adaptive struct {
	mu    sync.Mutex
	opts  AdaptiveOptions
	cut   screen.Cutoffs
	group []int32 // by job
	next  []int32 // by job: the next job of its group to send, -1 at the end
	head  []int32 // by group: the first job to send, -1 when none
	// by group: reps asked, answers known (from the store and this call), includes among them,
	// and prompt*models+model
	reps, answered, included, pm []int32
	spreads                      []*spread // by prompt*models+model, for the statistical rule
	drop                         func(job int)
	settled                      int64 // jobs never sent because their group settled
}

// newAdaptive groups the jobs (a group's jobs follow one another in repetition order). A call that
// re-sends some jobs only (screen_errors()) needs the run's other answers from the store to settle
// a group; without them it sends every job it was given.
func newAdaptive(o *Options, jobs []job) *adaptive {
	if o.Adaptive == nil || (o.Jobs != nil && (o.Store == nil || o.Store.RunID == "")) {
		return nil
	}
	var cut screen.Cutoffs
	if o.Result != nil {
		cut = screen.EffectiveCutoffs(o.Result.Upper, o.Result.Lower)
	} else {
		cut = screen.EffectiveCutoffs(nil, nil)
	}
	a := &adaptive{opts: *o.Adaptive, cut: cut, group: make([]int32, len(jobs)), next: make([]int32, len(jobs)),
		spreads: make([]*spread, len(o.Prompts)*len(o.Models))}
	if a.opts.Rule == RuleStatistical && a.opts.Level == 0 {
		a.opts.Level = DefaultLevel
	}
	type key struct{ record, prompt, model, topP int32 }
	var last key
	for i, j := range jobs {
		k := key{j.record, j.prompt, j.model, j.topP}
		if i == 0 || k != last {
			a.reps = append(a.reps, int32(o.Models[j.model].Reps))
			a.pm = append(a.pm, j.prompt*int32(len(o.Models))+j.model)
			last = k
		}
		a.group[i] = int32(len(a.reps) - 1)
		a.next[i] = -1
	}
	n := len(a.reps)
	a.head, a.answered, a.included = make([]int32, n), make([]int32, n), make([]int32, n)
	return a
}

// known counts an answer the store holds of a group.
func (a *adaptive) known(g int32, binary int32) {
	k0 := a.included[g]
	a.answered[g]++
	if binary == 1 {
		a.included[g]++
	}
	if a.opts.Rule == RuleStatistical {
		s := a.spreads[a.pm[g]]
		if s == nil {
			s = newSpread(int(a.reps[g]))
			a.spreads[a.pm[g]] = s
		}
		s.count(int(a.answered[g]), int(k0), int(a.included[g]))
	}
}

// chain links the jobs still to send of each group; a group settled by the answers known is sent
// nothing (drop). It returns whether job i waits for an earlier job of its group.
func (a *adaptive) chain(results []result, drop func(int)) []bool {
	a.drop = drop
	for g := range a.head {
		a.head[g] = -1
	}
	waits := make([]bool, len(a.group))
	prev := make([]int32, len(a.head))
	for g := range prev {
		prev[g] = -1
	}
	for i := range a.group {
		if results[i].done {
			continue
		}
		g := a.group[i]
		if p := prev[g]; p >= 0 {
			a.next[p] = int32(i)
			waits[i] = true
		} else {
			a.head[g] = int32(i)
		}
		prev[g] = int32(i)
	}
	for g := range a.head {
		if a.decide(int32(g)) {
			for i := a.head[g]; i >= 0; i = a.next[i] {
				a.dropJob(i)
			}
		}
	}
	return waits
}

// answer counts an answer of this call.
func (a *adaptive) answer(i int, binary int32) {
	a.mu.Lock()
	a.known(a.group[i], binary)
	a.mu.Unlock()
}

// after is the job to send once job i has ended (-1: none), and how many waiting jobs its group
// settled instead.
func (a *adaptive) after(i int) (next int, dropped int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.group[i]
	n := a.next[i]
	if n < 0 {
		return -1, 0
	}
	if !a.decide(g) {
		return int(n), 0
	}
	for ; n >= 0; n = a.next[n] {
		a.dropJob(n)
		dropped++
	}
	return -1, dropped
}

func (a *adaptive) dropJob(i int32) {
	a.settled++
	a.drop(int(i))
}

// decide tells whether group g is settled.
func (a *adaptive) decide(g int32) bool {
	reps, answered, included := int(a.reps[g]), int(a.answered[g]), int(a.included[g])
	if settledExact(a.cut, reps, answered, included) {
		return true
	}
	if a.opts.Rule != RuleStatistical || answered == 0 {
		return false
	}
	p, ok := a.spreads[a.pm[g]].changeProbability(a.cut, answered, included)
	return ok && p < a.opts.Level
}

// settledJobs is how many jobs the run never sent because their group settled.
func (a *adaptive) settledJobs() int64 {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.settled
}
