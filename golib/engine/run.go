package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-resty/resty/v2"
	"golang.org/x/sync/semaphore"

	"github.com/tabscreen/tabscreen/golib/clock"
	"github.com/tabscreen/tabscreen/golib/guard"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/screen"
	"github.com/tabscreen/tabscreen/golib/store"
)

// rateMargin keeps the even pace just under the user's rpm, so that the window check of the pacer
// rarely has to hold a request back.
const rateMargin = 0.995

// maxReasks caps the re-asks after a 200 reply without a usable decision. Such replies are billed,
// so the cap is small; a re-ask is an attempt, so it also counts within max_tries.
const maxReasks = 2

// ErrCancelled is the cause of a run cancelled by the user.
var ErrCancelled = errors.New("cancelled by the user")

// stopError is the cause of a run stopped by a failure no retry can fix.
type stopError struct{ provider.Stop }

func (e *stopError) Error() string { return e.Message }

// Run is one screening in progress.
type Run struct {
	clock      clock.Clock
	opts       *Options
	descriptor provider.Descriptor
	adapter    provider.Adapter
	client     *resty.Client
	transport  *http.Transport
	models     []*provider.Model
	prices     []screen.Prices
	pacers     []*pacer
	estimators []*estimator // per model: the tokens of a request before it is sent
	sem        *semaphore.Weighted

	records     int
	questions   []string // prompt-major: questions[p*records+r]
	reworded    reworded
	cache       *cacheLayout
	jobs        []job
	results     []result
	blankFields int
	mergedRows  int // the answered rows of a repaired result that Result merged in

	// ctx ends the dispatch of jobs and every wait; wire, its parent, also the requests on the
	// wire: a failed store stops only the dispatch, since a reply in flight is billed.
	ctx        context.Context
	cancel     context.CancelCauseFunc
	wire       context.Context
	cancelWire context.CancelCauseFunc

	stopMu sync.Mutex
	stop   *provider.Stop

	pauseUntil atomic.Int64 // unix nanoseconds before which no request starts
	callbacks  *callbackQueue

	session   *store.Session // nil without an answer store
	storeInfo *StoreInfo
	studyIDs  []string

	adapt       *adaptive    // nil unless the run has adaptive repetitions
	compacted   bool         // the settled jobs are out of jobs and results (Result)
	batch       *batchRun    // nil unless the run goes through the provider's batch API
	afterSubmit func() error // batch.Runner.AfterSubmit (tests)

	// reached: the endpoint has answered once (see endpoint.go); problems: the causes of failed
	// attempts, for the progress line.
	reached  atomic.Bool
	problems problems

	// unsent counts the jobs failed because the run was cancelled or stopped before they ended.
	done, answered, failed, unsent, retries, inFlight atomic.Int64
	started                                           time.Time
	elapsed                                           time.Duration
	finished                                          chan struct{}
}

// result is the outcome of one job. What the answer store holds of it (the decision, the
// reason of a failure) is dropped once the store has committed it: the result tables read it
// back from there, so that a large run does not keep every answer in memory.
type result struct {
	ok, done bool
	settled  bool // never sent: its group's verdict was settled (adaptive.go)
	stored   bool // committed to the store; payload is nil
	attempts int32
	billed   usage32 // of every 200 reply of this call, re-asks included
	carried  usage32 // billed by earlier calls of the run (the store, or screen_errors())
	runTime  float64 // seconds from the first attempt to the answer
	at       int64   // when it ended, Unix nanoseconds (a time.Time holds a pointer the GC would scan)
	*payload
}

// usage32 is a job's token count as a run holds it: a million jobs keep two each, and a job's
// tokens fit in 32 bits many times over (a larger count saturates rather than wraps).
type usage32 struct{ prompt, cached, cacheWrite, completion int32 }

func packUsage(u screen.Usage) usage32 {
	return usage32{clamp32(u.Prompt), clamp32(u.Cached), clamp32(u.CacheWrite), clamp32(u.Completion)}
}

func (u usage32) unpack() screen.Usage {
	return screen.Usage{Prompt: int64(u.prompt), Cached: int64(u.cached), CacheWrite: int64(u.cacheWrite), Completion: int64(u.completion)}
}

func (u *usage32) add(v screen.Usage) {
	sum := u.unpack()
	sum.Add(v)
	*u = packUsage(sum)
}

func clamp32(v int64) int32 { return int32(max(min(v, math.MaxInt32), math.MinInt32)) }

// date is when the job ended, in local time; zero when it never did.
func (res *result) date() time.Time {
	if res.at == 0 {
		return time.Time{}
	}
	return time.Unix(0, res.at)
}

// payload is what a result holds until the store has it.
type payload struct {
	decision screen.Decision
	usage    screen.Usage // of the answer
	submodel string
	reason   string
}

// spent is everything the job was billed, in this call and earlier ones: its token columns and
// its share of price_data.
func (res *result) spent() screen.Usage {
	u := res.carried.unpack()
	u.Add(res.billed.unpack())
	return u
}

// Records are the texts a run screens; a nil validity slice means every value is present, and
// the study ids (optional) only label the stored answers.
type Records struct {
	Titles, Abstracts         []string
	TitleValid, AbstractValid []bool
	StudyIDs                  []string
}

// StartOption changes how a run is set up, for tests.
type StartOption func(*Run)

// WithClock runs the engine on c instead of the system clock.
func WithClock(c clock.Clock) StartOption { return func(r *Run) { r.clock = c } }

// Start checks the options, builds the jobs, claims the run in the answer store (taking the jobs
// it already answered from there) and starts the run in the background.
func Start(opts *Options, recs Records, apiKey string, with ...StartOption) (*Run, error) {
	if len(recs.Abstracts) != len(recs.Titles) || (recs.StudyIDs != nil && len(recs.StudyIDs) != len(recs.Titles)) {
		return nil, fmt.Errorf("the records' columns differ in length")
	}
	descriptor, ok := provider.Lookup(opts.Provider)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q", opts.Provider)
	}
	settings := opts.settings()
	settings.APIKey = apiKey
	adapter, err := descriptor.New(settings)
	if err != nil {
		return nil, err
	}
	r := &Run{clock: clock.Real(), descriptor: descriptor, opts: opts, adapter: adapter, callbacks: newCallbackQueue(),
		finished: make(chan struct{})}
	for _, w := range with {
		w(r)
	}
	r.prepareRecords(recs.Titles, recs.Abstracts, recs.TitleValid, recs.AbstractValid)
	var given map[jobID]*JobKey
	if r.jobs, given, err = expandJobs(opts, len(recs.Titles)); err != nil {
		return nil, err
	}
	r.results = make([]result, len(r.jobs))
	r.adapt = newAdaptive(opts, r.jobs)
	for i, m := range opts.Models {
		pm := m.model()
		if i < len(opts.CacheMinTokens) && opts.CacheMinTokens[i] != nil {
			pm.CacheMinTokens = *opts.CacheMinTokens[i]
		}
		r.models = append(r.models, pm)
		r.prices = append(r.prices, m.prices())
		r.estimators = append(r.estimators, m.estimator(opts.Builtin.DecisionDescription))
	}
	if err := r.setupBatch(settings); err != nil {
		return nil, err
	}
	r.pacers = newPacers(opts, r.clock, descriptor.WindowedRequests)
	active := opts.MaxActive
	if active <= 0 {
		active = defaultMaxActive(opts)
	}
	r.sem = semaphore.NewWeighted(int64(active))
	r.client, r.transport = newClient(seconds(opts.Timeout), active)
	r.wire, r.cancelWire = context.WithCancelCause(context.Background())
	r.ctx, r.cancel = context.WithCancelCause(r.wire)
	r.carryGiven(given)
	if err := r.openStore(recs, given); err != nil {
		r.cancelWire(err)
		return nil, err
	}
	r.started = r.clock.Now()
	if r.batch != nil {
		go r.dispatchBatch()
		return r, nil
	}
	go r.dispatch()
	return r, nil
}

// prepareRecords builds every question once; the normalised fields are not kept, since the
// questions hold them and a large screening should not carry its text twice. Of a field the
// question holds otherwise than R sent it, a slice of the question is kept for the result.
// A field that R's text stands for is the same bytes as R's text, or it could not be pasted back.
func (r *Run) prepareRecords(titles, abstracts []string, titleValid, abstractValid []bool) {
	n := len(titles)
	r.records = n
	r.questions = make([]string, len(r.opts.Prompts)*n)
	head := len(screen.QuestionHead(r.opts.Prompts[0]))
	for i := 0; i < n; i++ {
		tValid, aValid := titleValid == nil || titleValid[i], abstractValid == nil || abstractValid[i]
		if screen.IsBlank(titles[i], tValid) {
			r.blankFields++
		}
		if screen.IsBlank(abstracts[i], aValid) {
			r.blankFields++
		}
		for p, prompt := range r.opts.Prompts {
			r.questions[p*n+i] = screen.QuestionOf(prompt, titles[i], tValid, abstracts[i], aValid)
		}
		// A field is R's text when the question holds it byte for byte: comparing is far cheaper
		// than deciding it from the rules again.
		t, a := screen.QuestionFields(r.questions[i], head)
		tSame, aSame := tValid && t == titles[i], aValid && a == abstracts[i]
		if !tSame || !aSame {
			r.reworded.add(int32(i+1), t, !tSame, a, !aSame)
		}
	}
}

// reworded are the records whose title or abstract a question holds otherwise than R sent it
// (white space collapsed, NoInformation for a blank field), with those fields as the questions
// hold them (nothing where R's text is the question's).
type reworded struct {
	record                []int32
	title, abstract       []string
	titleSet, abstractSet []bool
}

func (w *reworded) add(record int32, title string, titleSet bool, abstract string, abstractSet bool) {
	if !titleSet {
		title = ""
	}
	if !abstractSet {
		abstract = ""
	}
	w.record = append(w.record, record)
	w.title, w.titleSet = append(w.title, title), append(w.titleSet, titleSet)
	w.abstract, w.abstractSet = append(w.abstract, abstract), append(w.abstractSet, abstractSet)
}

// newPacers gives one pacer per model when rpm was given per model, else one shared by all. Each
// paces by tokens too: the user's tpm, else the limit the provider reports.
func newPacers(o *Options, c clock.Clock, windowed bool) []*pacer {
	out := make([]*pacer, len(o.Models))
	withTokens := func(p *pacer) *pacer {
		if o.TPM != nil {
			p.tokens = newTokenBudget(*o.TPM, c)
		}
		return p
	}
	if o.RPM != nil {
		shared := withTokens(newPacer(*o.RPM, c, windowed))
		for i := range out {
			out[i] = shared
		}
		return out
	}
	for i, m := range o.Models {
		out[i] = withTokens(newPacer(m.RPM, c, windowed))
	}
	return out
}

// defaultMaxActive allows about two seconds of requests in flight at the full rate: enough to
// keep the pace through slow answers, bounded so a default rpm does not open thousands of sockets.
func defaultMaxActive(o *Options) int {
	total := 0.0
	if o.RPM != nil {
		total = *o.RPM
	} else {
		for _, m := range o.Models {
			total += m.RPM
		}
	}
	n := int(math.Ceil(total / 60 * 2))
	return min(max(n, 4), 256)
}

// dispatch starts every job within the concurrency cap, then closes the run. A panic here or in a
// job stops the run (tabscreen_error_internal) instead of ending the R session; the run still
// accounts for every job and reaches R with the answers it has.
func (r *Run) dispatch() {
	var wg sync.WaitGroup
	defer r.finish(&wg)
	defer guard.Recover(r.internalError)
	// Jobs answered in the store by an earlier call are not sent (newDispatchQueue leaves them out).
	r.cache = newCacheLayout(r.opts, r.jobs, r.results)
	var chained []bool
	if r.adapt != nil {
		chained = r.adapt.chain(r.results, r.settle)
	}
	q := newDispatchQueue(r.jobs, r.results, r.cache, r.opts.caching(), chained, r.adapt)
	// A job is handed to a goroutine that has finished one and waits for the next, else to a new
	// one: a fresh goroutine per job grew its stack anew for every request (decoding and the HTTP
	// exchange need more than the first 8 KB), a cost in each job's profile.
	idle := make(chan int)
	defer close(idle)
	run := func(i int) {
		defer wg.Done()
		defer guard.Recover(func(err error) { r.jobPanicked(i, err) })
		defer r.sem.Release(1)
		defer q.ended(i)
		r.work(i)
	}
	worker := func(i int) {
		defer guard.Recover(r.internalError)
		for ok := true; ok; i, ok = <-idle {
			run(i)
		}
	}
	for {
		if err := r.sem.Acquire(r.ctx, 1); err != nil {
			break
		}
		i, ok := q.take(r.ctx)
		if !ok {
			r.sem.Release(1)
			break
		}
		wg.Add(1)
		select {
		case idle <- i:
		default:
			go worker(i)
		}
	}
}

// settle ends a job its group's settled verdict leaves unsent.
func (r *Run) settle(i int) {
	r.results[i] = result{done: true, settled: true}
	r.done.Add(1)
}

// finish waits for the jobs, fails those never finished, closes the store and marks the run done.
func (r *Run) finish(wg *sync.WaitGroup) {
	wg.Wait()
	defer close(r.finished)
	defer func() { r.elapsed = r.clock.Now().Sub(r.started) }()
	defer guard.Recover(r.internalError)
	r.closeUnfinished()
	r.closeStore()
	r.transport.CloseIdleConnections()
}

// internalError stops the run after a panic.
func (r *Run) internalError(err error) {
	r.stopRun(provider.Stop{Class: "tabscreen_error_internal", Message: err.Error()})
}

// jobPanicked fails the job whose goroutine panicked (it runs on that goroutine, which alone
// writes the job's result) and stops the run: a bug, which the next jobs would likely hit too.
func (r *Run) jobPanicked(i int, err error) {
	if res := &r.results[i]; !res.done {
		r.fail(res, err.Error())
	}
	r.internalError(err)
}

// closeUnfinished fails every job the run never finished, so that no job is missing from the
// result: a cancelled or stopped run still accounts for every job.
func (r *Run) closeUnfinished() {
	reason := "not sent: " + r.causeText()
	for i := range r.results {
		if !r.results[i].done {
			r.results[i] = result{done: true, payload: &payload{reason: reason}}
			r.failed.Add(1)
			r.unsent.Add(1)
			r.done.Add(1)
		}
	}
}

func (r *Run) causeText() string {
	cause := context.Cause(r.ctx)
	var s *stopError
	switch {
	case errors.As(cause, &s):
		return "the run stopped: " + s.Message
	case errors.Is(cause, ErrCancelled):
		return ErrCancelled.Error()
	case cause != nil:
		return cause.Error()
	}
	return "the run ended"
}

// stopRun stops every job after a failure that no retry can fix.
func (r *Run) stopRun(s provider.Stop) {
	r.stopDispatch(s)
	r.cancelWire(&stopError{s})
}

// stopDispatch sends no further request, and lets those in flight end: their replies are billed.
func (r *Run) stopDispatch(s provider.Stop) {
	r.stopMu.Lock()
	if r.stop == nil {
		r.stop = &s
	}
	r.stopMu.Unlock()
	r.cancel(&stopError{s})
}

// Cancel stops the run at the user's request; finished answers are kept.
func (r *Run) Cancel() { r.cancelWire(ErrCancelled) }

// Jobs is the number of jobs the run accounts for.
func (r *Run) Jobs() int { return len(r.jobs) }

// Wait blocks until every job has ended.
func (r *Run) Wait() { <-r.finished }

// Finished reports whether every job has ended.
func (r *Run) Finished() bool {
	select {
	case <-r.finished:
		return true
	default:
		return false
	}
}

// Progress is what R's poll loop shows.
type Progress struct {
	State    string `json:"state"`
	Total    int    `json:"total"`
	Done     int64  `json:"done"`
	Answered int64  `json:"answered"`
	Failed   int64  `json:"failed"`
	// Unsent of the failed jobs were called off by a cancel or a stop; Problem is the commonest
	// cause of the failed attempts so far ("" when none failed).
	Unsent    int64       `json:"unsent"`
	Problem   string      `json:"problem"`
	Retries   int64       `json:"retries"`
	InFlight  int64       `json:"in_flight"`
	Callbacks []*Callback `json:"callbacks"`
	Batch     *BatchState `json:"batch,omitempty"`
}

// PollWithin polls the run once it has ended every job or has a callback for R, or after d.
func (r *Run) PollWithin(d time.Duration) Progress {
	deadline := time.Now().Add(d)
	for !r.Finished() && r.done.Load() != int64(len(r.jobs)) && !r.callbacks.waiting() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return r.Poll()
}

// Poll reports progress and hands R the callbacks waiting for it.
func (r *Run) Poll() Progress {
	// "finished" once every job has ended: R then takes the result, which waits for the run's
	// last few milliseconds of closing down.
	state := "running"
	if r.Finished() || r.done.Load() == int64(len(r.jobs)) {
		state = "finished"
	}
	cbs := r.callbacks.take()
	if cbs == nil {
		cbs = []*Callback{}
	}
	return Progress{State: state, Total: len(r.jobs), Done: r.done.Load(), Answered: r.answered.Load(),
		Failed: r.failed.Load(), Unsent: r.unsent.Load(), Problem: r.problems.commonest(), Retries: r.retries.Load(), InFlight: r.inFlight.Load(), Callbacks: cbs, Batch: r.batchState()}
}

// Reply delivers R's answers to callbacks.
func (r *Run) Reply(replies []CallbackReply) { r.callbacks.answer(replies) }

// State is "done", "cancelled" or "stopped", and the stop when the run was stopped.
func (r *Run) State() (string, *provider.Stop) {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	switch {
	case r.stop != nil:
		return "stopped", r.stop
	case errors.Is(context.Cause(r.ctx), ErrCancelled):
		return "cancelled", nil
	}
	return "done", nil
}

// errorText describes a transport error without anything from the request headers.
func errorText(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "the request timed out"
	}
	return fmt.Sprintf("network error: %v", err)
}
