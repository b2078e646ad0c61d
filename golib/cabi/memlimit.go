package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// While runs are under way the Go heap is held near what they keep alive. A large screening's
// live heap is its questions and a few counters per job (hundreds of MB at a million jobs); the GC target
// of 50 % let garbage grow the heap by half of that again while the run waited on the network. A
// soft limit a little above the live heap makes the collector run a little more often instead.
var runLimit struct {
	mu           sync.Mutex
	live         map[int64]uint64 // per run: its live heap when it started
	saved        int64
	savedPercent int
	setPercent   bool
}

// runGCPercent is the GC target while runs are under way. The soft limit above bounds the heap
// already; under it, the target of 50 % of a small run's live heap (its questions) collected every
// few megabytes of request and response garbage, a tenth of a zero-latency run's client CPU. With
// the larger target, a small run is collected when its garbage reaches the limit's slack instead,
// and a large run, whose limit is below its heap's 400 % target, is collected exactly as before.
// GOGC, when set, still wins.
const runGCPercent = 400

// runSlack is the garbage a run may leave between collections. Each collection marks the whole
// live heap, so at a million jobs a small slack meant hundreds of collections a run and a
// noticeable share of its CPU (docs/decisions/0017-gc-tuning.md). A larger slack does not raise
// the peak, which is the result's, not the run's.
const runSlack = 256 << 20

// limitRunHeap records run h's heap (its live heap for a large run, whose start was collected) and sets the
// limit for all runs under way.
func limitRunHeap(h int64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	runLimit.mu.Lock()
	defer runLimit.mu.Unlock()
	if runLimit.live == nil {
		runLimit.live = map[int64]uint64{}
	}
	if len(runLimit.live) == 0 {
		runLimit.saved = debug.SetMemoryLimit(-1)
		if _, set := os.LookupEnv("GOGC"); !set {
			runLimit.savedPercent, runLimit.setPercent = debug.SetGCPercent(runGCPercent), true
		}
	}
	runLimit.live[h] = m.HeapAlloc
	setRunLimit()
}

// unlimitRunHeap lifts run h's part of the limit (before its result is built: the result tables
// are new live data and must not meet a limit made for the run).
func unlimitRunHeap(h int64) {
	runLimit.mu.Lock()
	defer runLimit.mu.Unlock()
	if _, ok := runLimit.live[h]; !ok {
		return
	}
	delete(runLimit.live, h)
	if len(runLimit.live) == 0 {
		debug.SetMemoryLimit(runLimit.saved)
		if runLimit.setPercent {
			debug.SetGCPercent(runLimit.savedPercent)
			runLimit.setPercent = false
		}
		return
	}
	setRunLimit()
}

func setRunLimit() {
	var live uint64
	for _, v := range runLimit.live {
		live += v
	}
	limit := live + live/8 + runSlack
	if limit > math.MaxInt64 || (runLimit.saved > 0 && int64(limit) > runLimit.saved) {
		debug.SetMemoryLimit(runLimit.saved)
		return
	}
	debug.SetMemoryLimit(int64(limit))
}
