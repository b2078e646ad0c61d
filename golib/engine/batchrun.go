package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tabscreen/tabscreen/golib/batch"
	"github.com/tabscreen/tabscreen/golib/clock"
	"github.com/tabscreen/tabscreen/golib/guard"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/store"
)

// batchRun is what a run through the provider's batch API keeps besides a synchronous run's.
type batchRun struct {
	api     provider.BatchAPI
	byKey   map[string]int // job key -> job index
	counts  atomic.Pointer[batch.Counts]
	pending atomic.Int64 // jobs left waiting at the provider when the call returned
	later   atomic.Int64 // adaptive repetitions left to a later round when the call returned
}

// BatchState is what R shows of a batch screening.
type BatchState struct {
	batch.Counts
	Pending int64 `json:"pending"`
	// Later: with adaptive repetitions, the jobs of later rounds not sent when the call returned
	// with jobs waiting at the provider (the most the later rounds can send).
	Later int64 `json:"later,omitempty"`
}

// WithAfterSubmit injects a failure right after each batch create call returns (tests).
func WithAfterSubmit(f func() error) StartOption {
	return func(r *Run) { r.afterSubmit = f }
}

// setupBatch prepares a batch run: the provider's batch API, and prices at the batch rate.
func (r *Run) setupBatch(s provider.Settings) error {
	if r.opts.Batch == nil {
		return nil
	}
	if r.descriptor.Batch == nil {
		return fmt.Errorf("%s has no batch API", r.descriptor.Label)
	}
	if r.opts.Store == nil || r.opts.Store.Path == "" {
		return fmt.Errorf("a batch screening needs an answer store")
	}
	st, err := store.Open(r.opts.Store.Path)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.EnsureBatches(); err != nil {
		return err
	}
	r.batch = &batchRun{api: r.descriptor.Batch(s)}
	for i := range r.prices {
		r.prices[i] = r.opts.Models[i].batchPrices()
	}
	return nil
}

func (r *Run) batchState() *BatchState {
	if r.batch == nil {
		return nil
	}
	s := &BatchState{Pending: r.batch.pending.Load(), Later: r.batch.later.Load()}
	if c := r.batch.counts.Load(); c != nil {
		s.Counts = *c
	}
	return s
}

// dispatchBatch runs the jobs not yet answered through the batch pipeline; with adaptive
// repetitions, in rounds (adaptive_batch.go). Options applied after Start (tests'
// WithAfterSubmit) are read here.
func (r *Run) dispatchBatch() {
	var wg sync.WaitGroup
	defer r.finish(&wg)
	defer guard.Recover(r.internalError)
	b := r.batch
	tries, err := r.session.Batches().BatchTries()
	if err != nil {
		r.stopRun(provider.Stop{Class: "tabscreen_error_store", Message: err.Error()})
		return
	}
	b.byKey = make(map[string]int, len(r.jobs))
	// A batch's lines are laid out for the prompt cache as the requests of a run are: providers
	// read their caches within a batch too.
	r.cache = newCacheLayout(r.opts, r.jobs, r.results)
	runner := r.batchRunner()
	if r.adapt != nil {
		r.batchRounds(runner, tries)
		return
	}
	var all []int
	for i := range r.jobs {
		if !r.results[i].done {
			all = append(all, i)
		}
	}
	r.runBatch(runner, all, tries)
}

// batchRunner is the pipeline of the run's batches: max_tries and max_seconds as for a request
// (without either, one try and no retry).
func (r *Run) batchRunner() *batch.Runner {
	maxTries, maxWait := 0, time.Duration(0)
	if r.opts.MaxTries != nil {
		maxTries = *r.opts.MaxTries
	}
	if r.opts.MaxSeconds != nil {
		maxWait = seconds(*r.opts.MaxSeconds)
	}
	if r.opts.MaxTries == nil && r.opts.MaxSeconds == nil {
		maxTries = 1
	}
	poll := batch.DefaultPoll
	if s := r.opts.Batch.PollSeconds; s > 0 {
		poll.First = seconds(s)
	}
	b := r.batch
	return &batch.Runner{API: b.api, Client: r.client, Clock: r.clock, Store: r.session.Batches(), Sink: (*batchSink)(r),
		MaxTries: maxTries, MaxWait: maxWait, Wait: r.opts.Batch.Wait, Poll: poll, AfterSubmit: r.afterSubmit,
		Report: func(c batch.Counts) { b.counts.Store(&c) }}
}

// runBatch runs the jobs (indices; tries: the batches that held each job's key before) through the
// pipeline: those in a batch already open are collected, the others submitted. A job whose line
// cannot be built fails at once. It reports whether every job ended in this call: the run has not
// stopped, and no job waits at the provider.
func (r *Run) runBatch(runner *batch.Runner, indices []int, tries map[string]int) bool {
	b := r.batch
	var jobs []batch.Job
	for _, i := range indices {
		j := r.jobs[i]
		key := r.storeKey(j)
		b.byKey[key] = i
		req, err := r.adapter.Request(r.jobCall(i))
		if err == nil {
			var line []byte
			if line, err = b.api.Line(fmt.Sprintf("j%d", i), req); err == nil {
				jobs = append(jobs, batch.Job{Key: key, CustomID: fmt.Sprintf("j%d", i), Line: line, Tries: tries[key],
					Model: int(j.model)})
				continue
			}
		}
		r.results[i].attempts = 1
		r.fail(&r.results[i], "the request body could not be built: "+err.Error())
		r.persist(i, nil, attempt{}, nil)
	}
	if err := runner.Run(r.ctx, jobs); err != nil {
		if r.ctx.Err() == nil {
			stop := provider.Stop{Class: "tabscreen_error_batch", Message: err.Error()}
			var he *provider.HTTPError
			if errors.As(err, &he) {
				stop.Status = he.Status
			}
			r.stopRun(stop)
		}
		return false
	}
	return r.ctx.Err() == nil && b.pending.Load() == 0
}

// batchSink turns the reconciled lines of a batch into the run's answers and failures.
type batchSink Run

func (s *batchSink) Deliver(key string, l provider.BatchLine, final bool) bool {
	r := (*Run)(s)
	i, ok := r.batch.byKey[key]
	if !ok || r.results[i].done {
		return false
	}
	res := &r.results[i]
	res.attempts++
	now := r.clock.Now()
	a := attempt{status: l.Status, body: l.Body, at: now}
	var f provider.Failure
	switch {
	case l.Kind == provider.LineResponse && l.Status >= 200 && l.Status < 300:
		out := r.adapter.Parse(r.call(r.jobs[i]), provider.Response{Status: l.Status, Header: http.Header{}, Body: l.Body}, now)
		res.billed.add(out.Usage)
		if out.Failure == nil {
			r.succeed(res, out, a, now)
			if r.adapt != nil {
				r.adapt.answer(i, res.decision.Binary)
			}
			r.persist(i, nil, a, nil)
			return false
		}
		f = *out.Failure
	case l.Kind == provider.LineResponse:
		f = r.adapter.Classify(provider.Response{Status: l.Status, Header: http.Header{}, Body: l.Body}, now)
	case l.Kind == provider.LineExpired:
		f = provider.Failure{Verdict: provider.Retry, Message: "expired: " + l.Message}
	default:
		f = provider.Failure{Verdict: provider.Retry, Message: "failed in its batch: " + l.Message}
	}
	passing := f.Verdict == provider.Retry || f.Verdict == provider.Reask
	if passing && !final {
		r.retries.Add(1)
		return true
	}
	reason := f.Message
	if passing {
		reason += fmt.Sprintf(" (gave up after %s)", count(int(res.attempts), "batch", "batches"))
	}
	r.fail(res, reason)
	r.persist(i, nil, a, nil)
	return false
}

// Pending leaves a job to the next call: it waits in a batch at the provider. It is not stored.
func (s *batchSink) Pending(key string) {
	r := (*Run)(s)
	i, ok := r.batch.byKey[key]
	if !ok || r.results[i].done {
		return
	}
	r.batch.pending.Add(1)
	r.results[i] = result{done: true, at: time.Now().UnixNano(),
		payload: &payload{reason: "waiting in a batch at the provider: the same call collects it"}}
	r.failed.Add(1)
	r.done.Add(1)
}

// CancelBatches asks the provider to cancel the open batches of a run of the store at path. The
// lines that ended before the cancel are collected by the next call, like any ended batch.
func CancelBatches(ctx context.Context, path, runID, apiKey string) (int, error) {
	st, err := store.Open(path)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	if err := st.EnsureBatches(); err != nil {
		return 0, err
	}
	letter, endpoint, err := st.RunEndpoint(runID)
	if err != nil {
		return 0, err
	}
	d, ok := provider.Lookup(letter)
	if !ok || d.Batch == nil {
		return 0, fmt.Errorf("run %s was not screened through a batch API", runID)
	}
	client, transport := newClient(60*time.Second, 1)
	defer transport.CloseIdleConnections()
	r := &batch.Runner{API: d.Batch(provider.Settings{URL: endpoint, APIKey: apiKey}), Client: client, Clock: clock.Real(),
		Store: st.RunBatches(runID)}
	return r.Cancel(ctx)
}
