package engine

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptrace"
	"time"

	"github.com/tabscreen/tabscreen/golib/clock"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/screen"
	"github.com/tabscreen/tabscreen/golib/store"
)

// attempt is what one HTTP exchange gave.
type attempt struct {
	status  int
	headers http.Header
	body    []byte
	err     error // transport error: no response
	took    time.Duration
	at      time.Time
}

// jobTrace is what the answer store keeps of a job's exchanges besides its result.
type jobTrace struct {
	request []byte
	last    attempt
	retried []store.Attempt
}

// note keeps an attempt that did not end the job, for the audit log.
func (r *Run) note(t *jobTrace, a attempt, n int32, reason string) {
	if r.session == nil {
		return
	}
	t.retried = append(t.retried, store.Attempt{N: int(n), HTTPStatus: a.status, Error: reason, Response: a.body,
		At: a.at, Took: a.took.Seconds()})
}

// work runs one job to its end and hands it to the answer store.
func (r *Run) work(i int) {
	var t jobTrace
	r.runJob(i, &t)
	if res := &r.results[i]; r.adapt != nil && res.ok {
		r.adapt.answer(i, res.decision.Binary)
	}
	r.persist(i, t.request, t.last, t.retried)
}

// runJob runs one job to its end: an answer, or a failure with its reason. The adapter builds
// the request and classifies every response; this loop owns the waits, the retries and the
// user's R policies.
func (r *Run) runJob(i int, t *jobTrace) {
	j := r.jobs[i]
	res := &r.results[i]
	call := r.jobCall(i)
	req, err := r.adapter.Request(call)
	t.request = req.Body
	if err != nil {
		r.fail(res, "the request body could not be built: "+err.Error())
		return
	}
	// The back-off's random numbers: seeded per job, made only when a job backs off (seeding is
	// costly next to a request that succeeds at once).
	var rng *rand.Rand
	jitter := func() *rand.Rand {
		if rng == nil {
			rng = rand.New(rand.NewSource(r.seed() + int64(i)))
		}
		return rng
	}
	var first time.Time
	tries, reasks := 0, 0
	rule := requestRule(req.Body)
	for {
		turn, spent, est, err := r.waitTurn(j, rule)
		if err != nil {
			r.failUnsent(res, "not sent: "+r.causeText())
			return
		}
		if first.IsZero() {
			first = r.clock.Now()
		}
		tries++
		res.attempts++
		a := r.send(req, turn)
		t.last = a
		if !r.reached.Load() {
			if short, cause, bad := endpointProblem(a); bad {
				r.account(j, rule, est, spent, a, false, screen.Usage{})
				if a.err != nil && r.ctx.Err() != nil {
					r.failUnsent(res, "interrupted: "+r.causeText())
					return
				}
				r.problems.add(short)
				if tries >= r.endpointAttempts() {
					// Another job may have had an answer meanwhile: then this is one job's failure.
					if !r.reached.Load() {
						r.stopEndpoint(cause, a)
					}
					r.fail(res, cause)
					return
				}
				r.retries.Add(1)
				r.note(t, a, res.attempts, cause)
				if err := r.sleep(endpointWait); err != nil {
					r.failUnsent(res, cause+"; then "+r.causeText())
					return
				}
				continue
			}
		}
		var out provider.Outcome
		answered := a.err == nil && a.status >= 200 && a.status < 300
		if answered {
			r.reached.Store(true)
			out = r.adapter.Parse(call, provider.Response{Status: a.status, Header: a.headers, Body: a.body}, a.at)
		}
		r.account(j, rule, est, spent, a, answered, out.Usage)
		// A reply that arrived is kept even if the run was cancelled meanwhile: it was paid for.
		if a.err != nil && r.ctx.Err() != nil {
			r.failUnsent(res, "interrupted: "+r.causeText())
			return
		}
		var f provider.Failure
		switch {
		case a.err != nil:
			f = provider.Failure{Verdict: provider.Retry, Message: errorText(a.err)}
			r.problems.add(attemptCause(a, f))
		case answered:
			res.billed.add(out.Usage)
			if out.Failure == nil {
				r.succeed(res, out, a, first)
				return
			}
			f = *out.Failure
			r.problems.add(attemptCause(a, f))
			if f.Verdict == provider.Reask {
				msg, allowed := r.retryAllowed(tries, first, 0)
				if reasks < maxReasks && allowed {
					r.note(t, a, res.attempts, "re-asked: "+f.Message)
					reasks++
					r.retries.Add(1)
					continue
				}
				r.fail(res, fmt.Sprintf("no usable answer in %s: %s%s", count(reasks+1, "reply", "replies"), f.Message, msg))
				return
			}
		default:
			if a.status == http.StatusTooManyRequests {
				r.pacers[j.model].refused()
				r.pacers[j.model].tokens.refused()
			}
			f = r.adapter.Classify(provider.Response{Status: a.status, Header: a.headers, Body: a.body}, a.at)
			r.problems.add(attemptCause(a, f))
			if f.Verdict == provider.StopRun {
				r.stopRun(provider.Stop{Class: f.Class, Message: f.Message, Status: a.status})
				r.fail(res, f.Message)
				return
			}
			transient, err := r.isTransient(a, f)
			if err != nil || !transient {
				r.fail(res, f.Message)
				return
			}
		}
		wait, err := r.retryWait(a, f, tries, jitter)
		if err != nil {
			r.fail(res, f.Message)
			return
		}
		if msg, ok := r.retryAllowed(tries, first, wait); !ok {
			r.fail(res, f.Message+msg)
			return
		}
		r.retries.Add(1)
		r.note(t, a, res.attempts, f.Message)
		if err := r.sleep(wait); err != nil {
			r.failUnsent(res, f.Message+"; then "+r.causeText())
			return
		}
	}
}

// jobCall is the call of job i, with how many requests share its whole question (the cache).
func (r *Run) jobCall(i int) *provider.Call {
	c := r.call(r.jobs[i])
	if r.cache != nil {
		c.RecordReuse = int(r.cache.groupSize[r.cache.group[i]])
	}
	return c
}

func (r *Run) call(j job) *provider.Call {
	c := &provider.Call{Model: r.models[j.model], Question: r.questions[int(j.prompt)*r.records+int(j.record)]}
	if l := r.cache; l != nil {
		c.PrefixLen, c.CacheKey = l.prefixLen[j.prompt], l.keys[j.prompt]
		c.PromptReuse = int(l.promptReuse[int(j.prompt)*len(r.models)+int(j.model)])
	}
	if j.topP >= 0 {
		c.TopP, c.HasTopP = r.opts.TopP[j.topP], true
	}
	if r.opts.Seed != nil {
		// Each repetition gets its own seed: one seed for all would make the repetitions copies.
		c.Seed, c.HasSeed = *r.opts.Seed+int64(j.n-1), true
	}
	return c
}

func (r *Run) seed() int64 {
	if r.opts.Seed != nil {
		return *r.opts.Seed
	}
	return r.clock.Now().UnixNano()
}

// waitTurn waits out a run-wide pause (a 429 told us to hold off), then the pacer's tokens (the
// request's estimate, from the rule's count of its body: returned) and requests.
func (r *Run) waitTurn(j job, rule float64) (ticket, *spend, float64, error) {
	if until := r.pauseUntil.Load(); until > 0 {
		if d := time.Unix(0, until).Sub(r.clock.Now()); d > 0 {
			if err := r.sleepCtx(d); err != nil {
				return ticket{}, nil, 0, err
			}
		}
	}
	p := r.pacers[j.model]
	if err := p.tokens.awaitFirst(r.ctx); err != nil {
		return ticket{}, nil, 0, err
	}
	est := r.estimators[j.model].estimate(rule)
	spent, err := p.tokens.take(r.ctx, est)
	if err != nil {
		return ticket{}, nil, 0, err
	}
	t, err := p.wait(r.ctx)
	if err != nil {
		p.tokens.settle(spent, 0, 0)
	}
	return t, spent, est, err
}

// account settles an attempt's token estimate (est, of rule input tokens by the estimate's rule)
// with what the provider counted: the usage of a reply, nothing for a refusal, the estimate when
// no response came; the answer's usage corrects the next estimates, and the pacer follows the
// limits the response's headers report.
func (r *Run) account(j job, rule, est float64, spent *spend, a attempt, answered bool, u screen.Usage) {
	p := r.pacers[j.model]
	defer p.tokens.replied()
	switch {
	case a.err != nil:
		p.tokens.settle(spent, est, 0)
		return
	case answered:
		p.tokens.settle(spent, float64(u.Prompt), float64(u.Completion))
		r.estimators[j.model].learn(rule, u)
	default:
		p.tokens.settle(spent, 0, 0)
	}
	p.followHeaders(r.adapter.RateState(a.headers, a.at).Info)
}

// send posts a request; the pacer learns when it was written, where the provider's window starts.
func (r *Run) send(req provider.Request, turn ticket) attempt {
	r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	start := r.clock.Now()
	ctx := httptrace.WithClientTrace(r.wire, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { turn.wrote() }})
	status, header, body, err := post(ctx, r.client, req)
	at := r.clock.Now()
	a := attempt{took: at.Sub(start), at: at, err: err}
	if err == nil {
		a.status, a.headers, a.body = status, header, body
	}
	return a
}

// isTransient is the adapter's verdict, unless the user gave an is_transient function.
func (r *Run) isTransient(a attempt, f provider.Failure) (bool, error) {
	if !r.opts.Callbacks.IsTransient {
		return f.Verdict == provider.Retry, nil
	}
	v, err := r.askR(&Callback{Kind: "is_transient", Status: a.status, Headers: headerMap(a.headers), Body: string(a.body)})
	if err != nil || v == nil {
		return false, err
	}
	return *v != 0, nil
}

// retryWait is the server's wait when it gave one (the adapter reads it; through `after` when
// that is an R function), else the backoff. A rate-limit wait pauses the whole run, not just this
// job.
func (r *Run) retryWait(a attempt, f provider.Failure, failures int, rng func() *rand.Rand) (time.Duration, error) {
	var wait time.Duration
	found := false
	if a.err == nil {
		if r.opts.Callbacks.After {
			v, err := r.askR(&Callback{Kind: "after", Status: a.status, Headers: headerMap(a.headers), Body: string(a.body)})
			if err != nil {
				return 0, err
			}
			if v != nil {
				wait, found = provider.CapWait(seconds(*v)), true
			}
		} else {
			wait, found = f.Wait, f.HasWait
		}
		if found && a.status == http.StatusTooManyRequests {
			r.pause(wait)
		}
	}
	if found {
		return wait, nil
	}
	if r.opts.Callbacks.Backoff {
		v, err := r.askR(&Callback{Kind: "backoff", Attempts: failures})
		if err != nil {
			return 0, err
		}
		if v != nil {
			return provider.CapWait(seconds(*v)), nil
		}
	}
	return defaultBackoff(failures, rng()), nil
}

// retryAllowed applies max_tries and max_seconds. Without either there is one attempt and no
// retry (spec 7.3); max_seconds counts from the job's first attempt, as in httr2.
func (r *Run) retryAllowed(tries int, first time.Time, wait time.Duration) (string, bool) {
	o := r.opts
	if o.MaxTries == nil && o.MaxSeconds == nil {
		return "", false
	}
	if o.MaxTries != nil && tries >= *o.MaxTries {
		return fmt.Sprintf(" (gave up after %s)", count(tries, "attempt", "attempts")), false
	}
	if o.MaxSeconds != nil && r.clock.Now().Sub(first)+wait > seconds(*o.MaxSeconds) {
		return fmt.Sprintf(" (gave up: max_seconds = %g reached)", *o.MaxSeconds), false
	}
	return "", true
}

func (r *Run) askR(c *Callback) (*float64, error) {
	reply, err := r.callbacks.ask(r.ctx, c)
	if err != nil {
		return nil, err
	}
	if reply.Error != "" {
		r.stopRun(provider.Stop{Class: "tabscreen_error_callback", Message: fmt.Sprintf("the %s() function failed: %s", c.Kind, reply.Error)})
		return nil, fmt.Errorf("%s", reply.Error)
	}
	return reply.Value, nil
}

func (r *Run) pause(d time.Duration) {
	until := r.clock.Now().Add(d).UnixNano()
	for {
		old := r.pauseUntil.Load()
		if old >= until || r.pauseUntil.CompareAndSwap(old, until) {
			return
		}
	}
}

// sleep waits between attempts without holding a concurrency slot, so waiting jobs do not keep
// ready ones from running.
func (r *Run) sleep(d time.Duration) error {
	r.sem.Release(1)
	err := r.sleepCtx(d)
	if acqErr := r.sem.Acquire(context.WithoutCancel(r.ctx), 1); acqErr != nil && err == nil {
		err = acqErr
	}
	return err
}

func (r *Run) sleepCtx(d time.Duration) error { return clock.Sleep(r.ctx, r.clock, d) }

// succeed records an answer. Its run time is the whole job's, from the first attempt to this
// answer with every retry and wait between (spec 2.3: "the time taken to obtain the response").
func (r *Run) succeed(res *result, out provider.Outcome, a attempt, first time.Time) {
	res.ok, res.done = true, true
	res.payload = &payload{decision: out.Decision, usage: out.Usage, submodel: out.Submodel}
	res.runTime, res.at = a.at.Sub(first).Seconds(), a.at.UnixNano()
	r.answered.Add(1)
	r.done.Add(1)
}

// failUnsent fails a job the run called off before it was answered or failed on its own (not
// sent, or waiting to be sent again): the run was cancelled or stopped.
func (r *Run) failUnsent(res *result, reason string) {
	r.fail(res, reason)
	r.unsent.Add(1)
}

func (r *Run) fail(res *result, reason string) {
	res.ok, res.done = false, true
	res.payload = &payload{reason: reason}
	res.at = r.clock.Now().UnixNano()
	r.failed.Add(1)
	r.done.Add(1)
}

// count writes "1 reply", "3 replies".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
