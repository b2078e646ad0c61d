package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// The order in which jobs are sent, for the providers' prompt caches. A provider caches a prefix
// of a request once an answer to it has been produced; the repetitions of a record (and its other
// top_p values) repeat the whole request, so they are sent only after the record's first answer
// has arrived, and the first requests of other records keep the rate at its ceiling meanwhile.
// A record's later jobs are queued when its first job ends, answered or failed, and go before
// the next first job. No job is ever left out: a cancelled or stopped run fails what it never
// sent (closeUnfinished). With adaptive repetitions (adaptive.go) a group's later repetitions are
// sent one after another, each once the one before it has ended, and not at all once the group is
// settled.

// cacheLayout is what every call of a run needs for the cache: the length of each prompt's part
// of the question, its cache key, and how many requests share a prompt or a whole question.
type cacheLayout struct {
	prefixLen   []int    // by prompt
	keys        []string // by prompt
	promptReuse []int32  // by prompt*models+model
	group       []int32  // by job: its record's group (record, prompt, model)
	groupSize   []int32  // by group
}

// groupKey names the jobs that send the same question to the same model.
type groupKey struct{ record, prompt, model int32 }

// newCacheLayout counts the jobs still to send (answered ones are not sent again).
func newCacheLayout(o *Options, jobs []job, results []result) *cacheLayout {
	l := &cacheLayout{prefixLen: make([]int, len(o.Prompts)), keys: make([]string, len(o.Prompts)),
		promptReuse: make([]int32, len(o.Prompts)*len(o.Models)), group: make([]int32, len(jobs))}
	for p, prompt := range o.Prompts {
		text := screen.PromptText(prompt)
		l.prefixLen[p] = len(text)
		sum := sha256.Sum256([]byte(text))
		l.keys[p] = "tabscreen-" + hex.EncodeToString(sum[:10])
	}
	groups := make(map[groupKey]int32)
	for i, j := range jobs {
		k := groupKey{j.record, j.prompt, j.model}
		g, ok := groups[k]
		if !ok {
			g = int32(len(l.groupSize))
			groups[k] = g
			l.groupSize = append(l.groupSize, 0)
		}
		l.group[i] = g
		if !results[i].done {
			l.groupSize[g]++
			l.promptReuse[int(j.prompt)*len(o.Models)+int(j.model)]++
		}
	}
	return l
}

// dispatchQueue hands out the jobs to send: a record's later jobs, once its first has ended,
// before the next first job.
type dispatchQueue struct {
	mu     sync.Mutex
	firsts []int         // first jobs (and every job when the run does not cache), in order
	next   int           // the next of firsts
	later  map[int][]int // by first job: the jobs of its group sent after it
	ready  []int         // later jobs whose first has ended
	wait   int           // later jobs not yet ready
	wake   chan struct{}
	adapt  *adaptive // nil unless the run has adaptive repetitions
}

// newDispatchQueue orders the jobs not yet answered. Without caching, or in a group of which a
// job is already answered (its cache may be warm), every job is a first job. A job that waits for
// an earlier repetition of its group (chained, by job; nil without adaptive repetitions) is
// handed out by that repetition's end alone.
func newDispatchQueue(jobs []job, results []result, l *cacheLayout, caching bool, chained []bool, adapt *adaptive) *dispatchQueue {
	q := &dispatchQueue{later: make(map[int][]int), wake: make(chan struct{}, 1), adapt: adapt}
	firstOf := make(map[int32]int)
	anyDone := make(map[int32]bool)
	if caching {
		for i := range jobs {
			if results[i].done {
				anyDone[l.group[i]] = true
			}
		}
	}
	for i := range jobs {
		if results[i].done {
			continue
		}
		if chained != nil && chained[i] {
			q.wait++
			continue
		}
		g := l.group[i]
		if !caching || anyDone[g] {
			q.firsts = append(q.firsts, i)
			continue
		}
		if f, ok := firstOf[g]; ok {
			q.later[f] = append(q.later[f], i)
			q.wait++
			continue
		}
		firstOf[g] = i
		q.firsts = append(q.firsts, i)
	}
	return q
}

// take returns the next job to send; ok is false when every job has been handed out or ctx ended.
func (q *dispatchQueue) take(ctx context.Context) (int, bool) {
	for {
		q.mu.Lock()
		switch {
		case len(q.ready) > 0:
			i := q.ready[0]
			q.ready = q.ready[1:]
			q.mu.Unlock()
			return i, true
		case q.next < len(q.firsts):
			i := q.firsts[q.next]
			q.next++
			q.mu.Unlock()
			return i, true
		case q.wait == 0:
			q.mu.Unlock()
			return 0, false
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// ended queues the later jobs of a job that has ended, and the next repetition of its group unless
// the group is settled.
func (q *dispatchQueue) ended(i int) {
	q.mu.Lock()
	later := q.later[i]
	delete(q.later, i)
	dropped := 0
	if q.adapt != nil {
		var next int
		next, dropped = q.adapt.after(i)
		q.wait -= dropped
		if next >= 0 {
			later = append(later, next)
		}
	}
	q.ready = append(q.ready, later...)
	q.wait -= len(later)
	q.mu.Unlock()
	// Jobs dropped may have been the last ones waiting: take() must see that too.
	if len(later) > 0 || dropped > 0 {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}
