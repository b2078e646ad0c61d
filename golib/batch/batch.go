// Package batch runs jobs through a provider's asynchronous batch API: it splits them into batches
// within the provider's limits, records each batch in the answer store before submitting it (so a
// crash between the submit call and our record never orphans a paid batch: its client tag finds it
// again), polls with a growing interval on the injected clock, reconciles every line of an ended
// batch (answered, failed, expired, or missing from both result files) and submits again what may
// pass. What differs between providers is a provider.BatchAPI; the run (golib/engine) turns each
// line's response into an answer or a failure and stores it.
package batch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"

	"github.com/tabscreen/tabscreen/golib/clock"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/store"
)

// Store is what the pipeline keeps of its batches (a store.Session).
type Store interface {
	BatchIntent(tag string, customIDs, keys []string) (int64, error)
	BatchUpdate(id int64, providerID, state string, done, failed int) error
	BatchCollected(id int64) error
	OpenBatches() ([]store.Batch, error)
	KnownBatchIDs() (map[string]bool, error)
}

// Job is one request to send in a batch.
type Job struct {
	Key      string // the job's key in the store
	CustomID string // its line's id (unique within the run's call)
	Line     []byte // the line in the provider's format
	Tries    int    // batches that held it before
	Model    int    // its model (an index): a batch holds one model's lines
}

// Sink is the run: it turns each reconciled line into an answer or a failure.
type Sink interface {
	// Deliver handles the result of a job's line. final: no try is left. It returns true when the
	// line failed for a passing reason and should be sent again (never when final).
	Deliver(key string, line provider.BatchLine, final bool) (retry bool)
	// Pending says that a job waits in a batch at the provider (wait = FALSE, or an interrupt).
	Pending(key string)
}

// Poll is how often the pipeline asks about running batches: First, growing by Factor to Max.
type Poll struct {
	First, Max time.Duration
	Factor     float64
}

// DefaultPoll starts at a quarter second (a small batch may end at once) and settles at a minute.
var DefaultPoll = Poll{First: 250 * time.Millisecond, Max: time.Minute, Factor: 1.5}

// Counts are the pipeline's progress.
type Counts struct {
	Batches   int `json:"batches"`   // open at the provider
	Submitted int `json:"submitted"` // lines submitted by this call
	Waiting   int `json:"waiting"`   // lines in open batches
}

// Runner runs one call's jobs.
type Runner struct {
	API    provider.BatchAPI
	Client *resty.Client
	Clock  clock.Clock
	Store  Store
	Sink   Sink
	// MaxTries caps the batches a job is sent in, the attempts of a refused create and the
	// consecutive passing failures (429, 5xx, network) of asking about a batch or reading its
	// results; MaxWait caps how long one such call is tried again. 0: no cap.
	MaxTries int
	MaxWait  time.Duration
	Wait     bool
	Poll     Poll
	// Report receives the counts whenever they change.
	Report func(Counts)
	// AfterSubmit runs right after a create call returned and before it is recorded (tests inject
	// a crash here).
	AfterSubmit func() error

	open    []*open
	stuck   []*open // batches this call cannot collect (why in their err)
	jobs    map[string]*Job
	counts  Counts
	backoff time.Duration
}

type open struct {
	store.Batch
	info provider.BatchInfo
	// misses are the consecutive passing failures of asking about the batch or reading its
	// results, the first at firstMiss; err is why the batch cannot be collected.
	misses    int
	firstMiss time.Time
	err       error
}

// ErrCrash is what a test's AfterSubmit returns to stop the pipeline as a crash would.
var ErrCrash = errors.New("crash injected after the submit call")

// Run submits the jobs not already in an open batch and, with Wait, polls until every batch has
// ended and its lines are reconciled. Without Wait, or when ctx ends, the batches keep running at
// the provider and the next call with the same store collects them. Once it returned with every
// batch collected, Run may be called again with the next jobs (rounds of adaptive repetitions):
// the counts go on.
func (r *Runner) Run(ctx context.Context, jobs []Job) error {
	if r.Poll.First <= 0 {
		r.Poll = DefaultPoll
	}
	r.open, r.stuck, r.backoff = nil, nil, 0
	r.jobs = make(map[string]*Job, len(jobs))
	for i := range jobs {
		r.jobs[jobs[i].Key] = &jobs[i]
	}
	if err := r.recover(ctx); err != nil {
		return err
	}
	inFlight := map[string]bool{}
	for _, b := range r.open {
		for _, k := range b.Jobs {
			inFlight[k] = true
		}
	}
	var pending []*Job
	for i := range jobs {
		if !inFlight[jobs[i].Key] {
			pending = append(pending, &jobs[i])
		}
	}
	if !r.Wait && len(r.open) > 0 {
		// A call that does not wait still collects what an earlier call left at the provider and
		// has ended since: otherwise the same call without waiting would never return the result.
		again, err := r.checkOpen(ctx)
		if err != nil {
			r.leave()
			return err
		}
		pending = append(pending, again...)
	}
	for {
		if err := r.submit(ctx, pending); err != nil {
			r.leave()
			return err
		}
		pending = nil
		if !r.Wait || len(r.open) == 0 {
			r.leave()
			return r.stuckError()
		}
		var err error
		if pending, err = r.pollOnce(ctx); err != nil {
			r.leave()
			return err
		}
	}
}

// leave tells the run which jobs wait at the provider.
func (r *Runner) leave() {
	for _, b := range r.waiting() {
		for _, k := range b.Jobs {
			r.Sink.Pending(k)
		}
	}
}

// waiting are the batches whose lines wait at the provider: open, or set aside by this call.
func (r *Runner) waiting() []*open {
	return append(append(make([]*open, 0, len(r.open)+len(r.stuck)), r.open...), r.stuck...)
}

// stuckError says which batches this call could not collect, and why (nil: none). Their lines
// stay at the provider: the next call asks about them again.
func (r *Runner) stuckError() error {
	if len(r.stuck) == 0 {
		return nil
	}
	why := make([]string, len(r.stuck))
	for i, b := range r.stuck {
		why[i] = fmt.Sprintf("batch %s (%d requests) could not be collected: %v", b.ProviderID, len(b.Jobs), b.err)
	}
	return errors.New(strings.Join(why, "; "))
}

// recover loads the run's open batches. An intent without a provider id was recorded before a
// submit call whose answer was never recorded: the provider's list of batches, matched by the
// client tag, tells whether the batch exists; if not, the intent is void and its jobs are sent.
func (r *Runner) recover(ctx context.Context) error {
	batches, err := r.Store.OpenBatches()
	if err != nil {
		return err
	}
	var unknown []store.Batch
	for _, b := range batches {
		if b.ProviderID == "" {
			unknown = append(unknown, b)
			continue
		}
		r.open = append(r.open, &open{Batch: b})
	}
	if len(unknown) > 0 {
		found, untagged, err := r.listTags(ctx)
		if err != nil {
			return err
		}
		known, err := r.Store.KnownBatchIDs()
		if err != nil {
			return err
		}
		for _, b := range unknown {
			info, ok := found[b.Tag]
			if !ok {
				info, ok = matchUntagged(b, untagged, known)
			}
			if !ok {
				if err := r.Store.BatchUpdate(b.ID, "", store.BatchVoid, 0, 0); err != nil {
					return err
				}
				continue
			}
			b.ProviderID = info.ID
			known[info.ID] = true
			if err := r.Store.BatchUpdate(b.ID, info.ID, info.State, info.Done, info.Fail); err != nil {
				return err
			}
			r.open = append(r.open, &open{Batch: b, info: info})
		}
	}
	r.countOpen()
	return nil
}

// listTags lists the account's batches: by client tag, and those without one.
func (r *Runner) listTags(ctx context.Context) (map[string]provider.BatchInfo, []provider.BatchInfo, error) {
	out := map[string]provider.BatchInfo{}
	var untagged []provider.BatchInfo
	after := ""
	for page := 0; page < 1000; page++ {
		resp, err := r.do(ctx, r.API.List(after))
		if err != nil {
			return nil, nil, err
		}
		infos, next, err := r.API.ParseList(resp, after)
		if err != nil {
			return nil, nil, err
		}
		for _, b := range infos {
			if b.Tag != "" {
				out[b.Tag] = b
			} else {
				untagged = append(untagged, b)
			}
		}
		if next == "" {
			break
		}
		after = next
	}
	return out, untagged, nil
}

// matchUntagged finds the batch of an intent at a provider whose batches carry no metadata
// (Anthropic's): the earliest batch created after the intent was recorded (a minute of clock skew
// allowed) with as many requests, that no batch of the store already claims.
func matchUntagged(b store.Batch, untagged []provider.BatchInfo, known map[string]bool) (provider.BatchInfo, bool) {
	var best provider.BatchInfo
	found := false
	for _, u := range untagged {
		if known[u.ID] || u.Total != b.Lines || u.Created.IsZero() || u.Created.Before(b.Created.Add(-time.Minute)) {
			continue
		}
		if !found || u.Created.Before(best.Created) {
			best, found = u, true
		}
	}
	return best, found
}

// submit splits the jobs into batches within the provider's limits and submits each.
func (r *Runner) submit(ctx context.Context, jobs []*Job) error {
	if len(jobs) == 0 {
		return nil
	}
	// One model per batch: Mistral's batch jobs take one, and OpenAI's queue limits are per model.
	sort.Slice(jobs, func(a, b int) bool {
		if jobs[a].Model != jobs[b].Model {
			return jobs[a].Model < jobs[b].Model
		}
		return jobs[a].CustomID < jobs[b].CustomID
	})
	lines := make([][]byte, len(jobs))
	for i, j := range jobs {
		lines[i] = j.Line
	}
	for lo := 0; lo < len(jobs); {
		hi := lo + 1
		for hi < len(jobs) && jobs[hi].Model == jobs[lo].Model {
			hi++
		}
		for _, c := range Chunk(lines[lo:hi], r.API.Limits()) {
			if err := r.submitOne(ctx, jobs[lo+c[0]:lo+c[1]], lines[lo+c[0]:lo+c[1]]); err != nil {
				return err
			}
		}
		lo = hi
	}
	r.backoff = 0
	return nil
}

// submitOne records the intent, uploads and creates the batch (waiting and trying again when the
// provider refuses the create for now), then records its id.
func (r *Runner) submitOne(ctx context.Context, jobs []*Job, lines [][]byte) error {
	tag, err := newTag()
	if err != nil {
		return err
	}
	ids, keys := make([]string, len(jobs)), make([]string, len(jobs))
	for i, j := range jobs {
		ids[i], keys[i] = j.CustomID, j.Key
	}
	id, err := r.Store.BatchIntent(tag, ids, keys)
	if err != nil {
		return err
	}
	info, err := r.createBatch(ctx, lines, tag)
	if err != nil {
		return err
	}
	if r.AfterSubmit != nil {
		if err := r.AfterSubmit(); err != nil {
			return err
		}
	}
	if err := r.Store.BatchUpdate(id, info.ID, info.State, info.Done, info.Fail); err != nil {
		return err
	}
	jobMap := make(map[string]string, len(jobs))
	for i := range ids {
		jobMap[ids[i]] = keys[i]
	}
	r.open = append(r.open, &open{Batch: store.Batch{ID: id, Tag: tag, ProviderID: info.ID, State: info.State,
		Lines: len(jobs), Jobs: jobMap}, info: info})
	r.counts.Submitted += len(jobs)
	r.countOpen()
	return nil
}

// refusal is a call the provider refused for now (a 429, a 5xx; when asking about a batch, a
// network error too): it is made again after a wait. A create's intent stays meanwhile, so nothing
// is lost if we crash.
type refusal struct{ err error }

func (e *refusal) Error() string { return e.err.Error() }
func (e *refusal) Unwrap() error { return e.err }

// createBatch uploads the lines (once) and creates their batch, trying the create again with the
// same file after a wait (1 s doubling to a minute) while the provider refuses it for now, within
// MaxTries attempts and MaxWait. A network error is not tried again: the create may have reached
// the provider, and the next call finds it by its tag.
func (r *Runner) createBatch(ctx context.Context, lines [][]byte, tag string) (provider.BatchInfo, error) {
	fileID, uploaded := "", false
	first := r.Clock.Now()
	wait := time.Second
	for try := 1; ; try++ {
		var info provider.BatchInfo
		var err error
		if !uploaded {
			fileID, uploaded, err = r.upload(ctx, lines, tag)
		}
		if err == nil {
			if info, err = r.create(ctx, fileID, lines, tag); err == nil {
				return info, nil
			}
		}
		var refused *refusal
		if !errors.As(err, &refused) {
			return info, err
		}
		if why := r.giveUp(try, first, wait); why != "" {
			return info, fmt.Errorf("the provider refused to create a batch of %d requests: %w%s", len(lines), err, why)
		}
		if err := clock.Sleep(ctx, r.Clock, wait); err != nil {
			return info, err
		}
		wait = min(2*wait, time.Minute)
	}
}

// upload uploads the lines as the batch's file, when the provider takes them so; it reports
// whether they need no upload any more.
func (r *Runner) upload(ctx context.Context, lines [][]byte, tag string) (string, bool, error) {
	up, ok := r.API.Upload(lines, tag)
	if !ok {
		return "", true, nil
	}
	resp, err := r.do(ctx, up)
	if err != nil {
		return "", false, err
	}
	if passing(resp.Status) {
		return "", false, &refusal{provider.BatchError("file upload", resp)}
	}
	id, err := r.API.ParseUpload(resp)
	return id, err == nil, err
}

func (r *Runner) create(ctx context.Context, fileID string, lines [][]byte, tag string) (provider.BatchInfo, error) {
	resp, err := r.do(ctx, r.API.Create(fileID, lines, tag))
	if err != nil {
		return provider.BatchInfo{}, err
	}
	if passing(resp.Status) {
		return provider.BatchInfo{}, &refusal{provider.BatchError("batch create", resp)}
	}
	return r.API.ParseBatch(resp)
}

// giveUp says why a refused call is not made again after tries attempts, the first at first,
// before a wait of wait ("": it is made again).
func (r *Runner) giveUp(tries int, first time.Time, wait time.Duration) string {
	if r.MaxTries > 0 && tries >= r.MaxTries {
		return fmt.Sprintf(" (gave up after %d attempts: max_tries = %d)", tries, r.MaxTries)
	}
	if r.MaxWait > 0 && r.Clock.Now().Sub(first)+wait > r.MaxWait {
		return fmt.Sprintf(" (gave up after %d attempts: max_seconds = %g reached)", tries, r.MaxWait.Seconds())
	}
	return ""
}

// passing: the status of a refusal that a later try may not meet.
func passing(status int) bool {
	return status == http.StatusTooManyRequests || status == 0 || status >= 500
}

// pollOnce waits, then asks about every open batch and collects those that ended.
func (r *Runner) pollOnce(ctx context.Context) ([]*Job, error) {
	if r.backoff == 0 {
		r.backoff = r.Poll.First
	} else {
		r.backoff = min(time.Duration(float64(r.backoff)*r.Poll.Factor), r.Poll.Max)
	}
	if err := clock.Sleep(ctx, r.Clock, r.backoff); err != nil {
		return nil, err
	}
	return r.checkOpen(ctx)
}

// checkOpen asks about every open batch and collects those that ended. It returns the jobs to
// send again. A batch that cannot be read is set aside with its reason, and the others are
// collected.
func (r *Runner) checkOpen(ctx context.Context) ([]*Job, error) {
	var again []*Job
	// A new slice: on an error part way, r.open still holds every open batch (leave() needs them).
	still := make([]*open, 0, len(r.open))
	for _, b := range r.open {
		more, ended, err := r.check(ctx, b)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var refused *refusal
		switch {
		case errors.As(err, &refused):
			if b.misses++; b.misses == 1 {
				b.firstMiss = r.Clock.Now()
			}
			if why := r.giveUp(b.misses, b.firstMiss, r.backoff); why != "" {
				b.err = fmt.Errorf("%v%s", err, why)
				r.stuck = append(r.stuck, b)
				continue
			}
			still = append(still, b)
		case errors.As(err, new(*unreadable)):
			b.err = err
			r.stuck = append(r.stuck, b)
		case err != nil:
			return nil, err
		case !ended:
			b.misses = 0
			still = append(still, b)
		default:
			again = append(again, more...)
		}
	}
	r.open = still
	r.countOpen()
	return again, nil
}

// unreadable is why a batch cannot be read (a 4xx, an answer we cannot read): asking again now
// would give the same.
type unreadable struct{ err error }

func (e *unreadable) Error() string { return e.err.Error() }
func (e *unreadable) Unwrap() error { return e.err }

// check asks about a batch and, when it has ended, collects it. A *refusal (429, 5xx, a network
// error) or an *unreadable error concerns the batch alone; any other error stops the call.
func (r *Runner) check(ctx context.Context, b *open) ([]*Job, bool, error) {
	resp, err := r.call(ctx, r.API.Get(b.ProviderID), "batch request")
	if err != nil {
		return nil, false, err
	}
	info, err := r.API.ParseBatch(resp)
	if err != nil {
		return nil, false, &unreadable{err}
	}
	b.info = info
	if err := r.Store.BatchUpdate(b.ID, "", info.State, info.Done, info.Fail); err != nil {
		return nil, false, err
	}
	if !info.Ended {
		return nil, false, nil
	}
	more, err := r.collect(ctx, b)
	return more, true, err
}

// call makes a call whose failure concerns one batch: a network error or a passing status is a
// *refusal, another status than 200 is *unreadable.
func (r *Runner) call(ctx context.Context, c provider.HTTPCall, what string) (provider.Response, error) {
	resp, err := r.do(ctx, c)
	switch {
	case err != nil && ctx.Err() == nil:
		return resp, &refusal{err}
	case err != nil:
		return resp, err
	case passing(resp.Status):
		return resp, &refusal{provider.BatchError(what, resp)}
	case resp.Status != http.StatusOK:
		return resp, &unreadable{provider.BatchError(what, resp)}
	}
	return resp, nil
}

// collect reads an ended batch's results, reconciles every line and hands each to the run. Each
// line is read on its own: one that cannot be read fails alone, with its reason.
func (r *Runner) collect(ctx context.Context, b *open) ([]*Job, error) {
	var lines []provider.BatchLine
	if !b.info.Refused {
		for _, call := range r.API.Results(b.info) {
			resp, err := r.call(ctx, call, "its results")
			if err != nil {
				return nil, err
			}
			lines = append(lines, r.API.ParseResults(resp.Body)...)
		}
	}
	var again []*Job
	for _, l := range Reconcile(b.Jobs, lines, b.info.Refused) {
		key := b.Jobs[l.CustomID]
		j := r.jobs[key]
		if j == nil { // answered meanwhile, or not a job of this call
			continue
		}
		if !b.info.Refused {
			j.Tries++
		}
		final := r.MaxTries > 0 && j.Tries >= r.MaxTries
		if r.Sink.Deliver(key, l, final) {
			again = append(again, j)
		} else {
			delete(r.jobs, key)
		}
	}
	if err := r.Store.BatchCollected(b.ID); err != nil {
		return nil, err
	}
	return again, nil
}

// Reconcile gives exactly one result to every line of a batch, in custom-id order: the line's
// result when the files hold one (a response wins over a failure when both appear), an expiry
// when the batch was refused or when the line is in neither file.
func Reconcile(jobs map[string]string, lines []provider.BatchLine, refused bool) []provider.BatchLine {
	got := make(map[string]provider.BatchLine, len(jobs))
	unread, firstUnread := 0, ""
	for _, l := range lines {
		if _, ours := jobs[l.CustomID]; !ours {
			if l.CustomID == "" {
				if unread++; unread == 1 {
					firstUnread = l.Message
				}
			}
			continue
		}
		if prev, seen := got[l.CustomID]; seen && prev.Kind == provider.LineResponse {
			continue
		}
		got[l.CustomID] = l
	}
	ids := make([]string, 0, len(jobs))
	for id := range jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]provider.BatchLine, len(ids))
	for i, id := range ids {
		l, ok := got[id]
		switch {
		case refused:
			l = provider.BatchLine{CustomID: id, Kind: provider.LineExpired, Message: "the provider refused the batch"}
		case !ok:
			l = provider.BatchLine{CustomID: id, Kind: provider.LineExpired,
				Message: "in neither the output nor the error file of its batch (counted as expired)"}
			switch {
			case unread == 1:
				l.Message += "; 1 result line of the batch names no request: " + firstUnread
			case unread > 1:
				l.Message += fmt.Sprintf("; %d result lines of the batch name no request, the first: %s", unread, firstUnread)
			}
		}
		out[i] = l
	}
	return out
}

// Chunk splits lines into [from, to) ranges within the limits (a line counts with its newline;
// a margin of 1% of the bytes is kept for the file's envelope).
func Chunk(lines [][]byte, lim provider.BatchLimits) [][2]int {
	maxBytes := lim.MaxBytes - lim.MaxBytes/100
	var out [][2]int
	from, size := 0, int64(0)
	for i, l := range lines {
		n := int64(len(l) + 1)
		if i > from && ((lim.MaxLines > 0 && i-from >= lim.MaxLines) || (maxBytes > 0 && size+n > maxBytes)) {
			out = append(out, [2]int{from, i})
			from, size = i, 0
		}
		size += n
	}
	if from < len(lines) {
		out = append(out, [2]int{from, len(lines)})
	}
	return out
}

// Cancel asks the provider to cancel every open batch of the run (what ended meanwhile is
// collected by the next call).
func (r *Runner) Cancel(ctx context.Context) (int, error) {
	if err := r.recover(ctx); err != nil {
		return 0, err
	}
	n := 0
	for _, b := range r.open {
		resp, err := r.do(ctx, r.API.Cancel(b.ProviderID))
		if err != nil {
			return n, err
		}
		info, err := r.API.ParseBatch(resp)
		if err != nil {
			return n, err
		}
		if err := r.Store.BatchUpdate(b.ID, "", info.State, info.Done, info.Fail); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (r *Runner) countOpen() {
	r.counts.Batches, r.counts.Waiting = len(r.open)+len(r.stuck), 0
	for _, b := range r.waiting() {
		r.counts.Waiting += len(b.Jobs)
	}
	if r.Report != nil {
		r.Report(r.counts)
	}
}

// do sends one call through the run's HTTP client; a transport error is an error of the call.
func (r *Runner) do(ctx context.Context, c provider.HTTPCall) (provider.Response, error) {
	req := r.Client.R().SetContext(ctx).SetHeaderMultiValues(c.Header)
	if c.Body != nil {
		req.SetBody(c.Body)
	}
	resp, err := req.Execute(c.Method, c.URL)
	if err != nil {
		if ctx.Err() != nil {
			return provider.Response{}, ctx.Err()
		}
		return provider.Response{}, fmt.Errorf("batch API: %v", err)
	}
	return provider.Response{Status: resp.StatusCode(), Header: resp.Header(), Body: resp.Body()}, nil
}

func newTag() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "tabscreen-" + hex.EncodeToString(b[:]), nil
}
