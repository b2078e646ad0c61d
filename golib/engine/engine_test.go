package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/arrowio"
	"github.com/tabscreen/tabscreen/golib/clock"
	"github.com/tabscreen/tabscreen/golib/screen"
)

// replyFunc decides the answer of the n-th request (1-based) with this body.
type replyFunc func(n int64, body map[string]any) (status int, header map[string]string, payload string)

func toolReply(decision string) string {
	args, _ := json.Marshal(map[string]string{"decision_llm": decision})
	b, _ := json.Marshal(map[string]any{
		"model": "m-2026", "object": "chat.completion",
		"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{
			"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "c", "type": "function", "function": map[string]any{"name": "inclusion_decision_simple", "arguments": string(args)}}}}}},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": map[string]any{"cached_tokens": 20}},
	})
	return string(b)
}

type fake struct {
	srv      *httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	bodies   []map[string]any
	auth     []string
}

func newFake(t *testing.T, f replyFunc) *fake {
	fk := &fake{}
	fk.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := fk.requests.Add(1)
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("client sent invalid JSON: %v", err)
		}
		fk.mu.Lock()
		fk.bodies = append(fk.bodies, body)
		fk.auth = append(fk.auth, r.Header.Get("Authorization"))
		fk.mu.Unlock()
		status, headers, payload := f(n, body)
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, payload)
	}))
	t.Cleanup(fk.srv.Close)
	return fk
}

func options(url string, mutate func(*Options)) *Options {
	tries := 4
	o := &Options{Provider: "a", APIURL: url, Prompts: []string{"Is it about therapy?"}, Role: "user",
		Models: []ModelOptions{{Name: "m", Reps: 1, RPM: 600000}}, TopP: []float64{1},
		Builtin: BuiltinOptions{Overinclusive: true}, MaxTries: &tries, Timeout: 5}
	if mutate != nil {
		mutate(o)
	}
	return o
}

func runToEnd(t *testing.T, o *Options, records int) *Run {
	t.Helper()
	titles, abstracts := make([]string, records), make([]string, records)
	for i := range titles {
		titles[i], abstracts[i] = fmt.Sprintf("Title %d", i+1), fmt.Sprintf("Abstract %d", i+1)
	}
	r, err := Start(o, Records{Titles: titles, Abstracts: abstracts}, "sk-secret-test-key")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { r.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		r.Cancel()
		t.Fatal("run did not finish")
	}
	return r
}

func ok(decision string) replyFunc {
	return func(int64, map[string]any) (int, map[string]string, string) { return 200, nil, toolReply(decision) }
}

func TestRunAnswersEveryJobInGridOrder(t *testing.T) {
	fk := newFake(t, ok("1"))
	o := options(fk.srv.URL, func(o *Options) {
		o.Prompts = []string{"p1", "p2"}
		o.Models = []ModelOptions{{Name: "zeta", Reps: 2, RPM: 600000}, {Name: "alpha", Reps: 1, RPM: 600000}}
	})
	r := runToEnd(t, o, 3)
	a := mustAnswers(t, r)
	if a.NumRows != 2*(3*2+3*1) {
		t.Fatalf("%d rows", a.NumRows)
	}
	model, _ := a.Col("model")
	prompt, _ := a.Col("promptid")
	record, _ := a.Col("record")
	n, _ := a.Col("n")
	// prompt, then model in the user's order (not alphabetical), then record, then rep.
	if model.Str[0] != "zeta" || model.Str[6] != "alpha" || prompt.I32[9] != 2 || record.I32[2] != 2 || n.I32[1] != 2 {
		t.Fatalf("order: %v %v %v %v", model.Str, prompt.I32, record.I32, n.I32)
	}
	if r.answered.Load() != 18 || r.failed.Load() != 0 {
		t.Fatalf("answered %d failed %d", r.answered.Load(), r.failed.Load())
	}
	for _, b := range fk.bodies {
		if b["parallel_tool_calls"] != false || b["tool_choice"] == nil {
			t.Fatalf("built-in tool must be forced, without parallel calls: %v", b)
		}
	}
	if fk.auth[0] != "Bearer sk-secret-test-key" {
		t.Fatal("key not sent as bearer")
	}
}

func TestRetriesAndFailures(t *testing.T) {
	cases := []struct {
		name       string
		reply      replyFunc
		mutate     func(*Options)
		wantOK     bool
		wantReason string
		wantState  string
		maxReqs    int64
	}{
		{"500 then success", func(n int64, _ map[string]any) (int, map[string]string, string) {
			if n < 3 {
				return 500, map[string]string{"retry-after-ms": "1"}, `{"error":{"message":"boom"}}`
			}
			return 200, nil, toolReply("0")
		}, nil, true, "", "done", 3},
		{"429 honours retry-after-ms", func(n int64, _ map[string]any) (int, map[string]string, string) {
			if n == 1 {
				return 429, map[string]string{"retry-after-ms": "5"}, `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`
			}
			return 200, nil, toolReply("1")
		}, nil, true, "", "done", 2},
		{"400 is not retried", func(int64, map[string]any) (int, map[string]string, string) {
			return 400, nil, `{"error":{"message":"bad field"}}`
		}, nil, false, "HTTP 400: bad field", "done", 1},
		{"transient gives up after max_tries", func(int64, map[string]any) (int, map[string]string, string) {
			return 503, map[string]string{"retry-after": "0"}, `{"error":{"message":"busy"}}`
		}, nil, false, "gave up after 4 attempts", "done", 4},
		{"no max_tries and no max_seconds means one attempt", func(int64, map[string]any) (int, map[string]string, string) {
			return 503, nil, `{"error":{"message":"busy"}}`
		}, func(o *Options) { o.MaxTries = nil }, false, "HTTP 503", "done", 1},
		{"max_seconds caps the job", func(int64, map[string]any) (int, map[string]string, string) {
			return 503, map[string]string{"retry-after-ms": "60"}, `{}`
		}, func(o *Options) { o.MaxTries = nil; s := 0.2; o.MaxSeconds = &s }, false, "max_seconds", "done", 10},
		{"x-should-retry false wins", func(int64, map[string]any) (int, map[string]string, string) {
			return 500, map[string]string{"x-should-retry": "false"}, `{}`
		}, nil, false, "HTTP 500", "done", 1},
		{"no tool call is re-asked", func(n int64, _ map[string]any) (int, map[string]string, string) {
			if n < 3 {
				return 200, nil, `{"model":"m","choices":[{"finish_reason":"stop","message":{"content":"I think include"}}],"usage":{"prompt_tokens":10,"completion_tokens":3}}`
			}
			return 200, nil, toolReply("1")
		}, nil, true, "", "done", 3},
		{"invalid arguments fail after two re-asks", func(int64, map[string]any) (int, map[string]string, string) {
			return 200, nil, `{"model":"m","choices":[{"finish_reason":"stop","message":{"tool_calls":[{"function":{"name":"inclusion_decision_simple","arguments":"{\"decision_llm\":"}}]}}],"usage":{"prompt_tokens":10,"completion_tokens":3}}`
		}, nil, false, "no usable answer in 3 replies", "done", 3},
		{"value outside the enum fails", func(int64, map[string]any) (int, map[string]string, string) {
			return 200, nil, toolReply("2")
		}, nil, false, "not in the tool's enum", "done", 3},
		{"401 stops the run", func(int64, map[string]any) (int, map[string]string, string) {
			return 401, nil, `{"error":{"message":"Incorrect API key","code":"invalid_api_key"}}`
		}, nil, false, "refused the API key", "stopped", 1},
		{"quota 429 stops the run", func(int64, map[string]any) (int, map[string]string, string) {
			return 429, nil, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`
		}, nil, false, "quota", "stopped", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fk := newFake(t, c.reply)
			r := runToEnd(t, options(fk.srv.URL, c.mutate), 1)
			res := r.results[0]
			state, _ := r.State()
			if res.ok != c.wantOK || !strings.Contains(res.reason, c.wantReason) || state != c.wantState {
				t.Fatalf("ok %v reason %q state %s", res.ok, res.reason, state)
			}
			if got := fk.requests.Load(); got > c.maxReqs {
				t.Fatalf("%d requests, want at most %d", got, c.maxReqs)
			}
			if strings.Contains(res.reason, "sk-secret") {
				t.Fatal("the key leaked into a reason")
			}
		})
	}
}

func TestBilledTokensOfUnusableRepliesArePriced(t *testing.T) {
	fk := newFake(t, func(n int64, _ map[string]any) (int, map[string]string, string) {
		if n == 1 {
			return 200, nil, `{"model":"m","choices":[{"finish_reason":"stop","message":{"content":"x"}}],"usage":{"prompt_tokens":1000000,"completion_tokens":0}}`
		}
		return 200, nil, toolReply("1")
	})
	in, cached, out := 1.0, 0.5, 2.0
	r := runToEnd(t, options(fk.srv.URL, func(o *Options) {
		o.Models[0].PriceIn, o.Models[0].PriceCachedIn, o.Models[0].PriceOut = &in, &cached, &out
	}), 1)
	p := r.Prices()
	want := 1.0 + (80*1.0+20*0.5)/1e6
	if len(p) != 1 || p[0].Input == nil || *p[0].Input < want-1e-12 || *p[0].Input > want+1e-12 {
		t.Fatalf("price %+v, want input %g", p, want)
	}
}

func TestAuthFailureStopsEveryJobAtOnce(t *testing.T) {
	fk := newFake(t, func(int64, map[string]any) (int, map[string]string, string) {
		time.Sleep(5 * time.Millisecond)
		return 401, nil, `{"error":{"message":"bad key"}}`
	})
	r := runToEnd(t, options(fk.srv.URL, func(o *Options) { o.MaxActive = 2 }), 200)
	if got := fk.requests.Load(); got > 10 {
		t.Fatalf("%d requests after an auth failure", got)
	}
	if r.failed.Load() != 200 || r.done.Load() != 200 {
		t.Fatalf("every job must be accounted for: failed %d done %d", r.failed.Load(), r.done.Load())
	}
	if !strings.Contains(r.results[199].reason, "not sent: the run stopped") {
		t.Fatalf("reason %q", r.results[199].reason)
	}
}

func TestCancelKeepsAnswersAndFailsTheRest(t *testing.T) {
	fk := newFake(t, func(n int64, _ map[string]any) (int, map[string]string, string) {
		if n > 5 {
			time.Sleep(3 * time.Second)
		}
		return 200, nil, toolReply("1")
	})
	o := options(fk.srv.URL, func(o *Options) { o.MaxActive = 1 })
	r, err := Start(o, Records{Titles: make([]string, 50), Abstracts: make([]string, 50)}, "k")
	if err != nil {
		t.Fatal(err)
	}
	for r.answered.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	r.Cancel()
	r.Wait()
	// The server holds each request for 3 s: ending well before that shows that cancelling does
	// not wait for requests in flight (the one-second requirement is checked from R).
	if time.Since(start) > 2*time.Second {
		t.Fatalf("cancel took %v", time.Since(start))
	}
	state, _ := r.State()
	if state != "cancelled" || r.answered.Load() != 5 || r.failed.Load() != 45 {
		t.Fatalf("state %s answered %d failed %d", state, r.answered.Load(), r.failed.Load())
	}
}

func TestPacingKeepsToRPM(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	fk := newFake(t, func(int64, map[string]any) (int, map[string]string, string) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		return 200, nil, toolReply("0")
	})
	rpm := 6000.0 // 100 per second
	r := runToEnd(t, options(fk.srv.URL, func(o *Options) { o.RPM = &rpm; o.Models[0].RPM = rpm }), 150)
	if r.answered.Load() != 150 {
		t.Fatal("not all answered")
	}
	// The pacer's own guarantee is tested exactly on admission times below; here, at the server,
	// arrivals may jitter by a request or two on a loaded machine, while a burst would be far over.
	for i := range times {
		k := 0
		for j := i; j < len(times) && times[j].Sub(times[i]) < time.Second; j++ {
			k++
		}
		if k > 103 {
			t.Fatalf("%d requests within one second at rpm %g", k, rpm)
		}
	}
}

func TestRCallbacksAreAskedAndObeyed(t *testing.T) {
	fk := newFake(t, func(n int64, _ map[string]any) (int, map[string]string, string) {
		if n == 1 {
			return 418, nil, `{"error":{"message":"teapot"}}`
		}
		return 200, nil, toolReply("1")
	})
	o := options(fk.srv.URL, func(o *Options) { o.Callbacks = CallbackOptions{IsTransient: true, Backoff: true} })
	r, err := Start(o, Records{Titles: []string{"t"}, Abstracts: []string{"a"}}, "k")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	deadline := time.Now().Add(10 * time.Second)
	for !r.Finished() && time.Now().Before(deadline) {
		for _, cb := range r.Poll().Callbacks {
			kinds = append(kinds, cb.Kind)
			one, small := 1.0, 0.01
			switch cb.Kind {
			case "is_transient":
				if cb.Status != 418 {
					t.Errorf("status %d", cb.Status)
				}
				r.Reply([]CallbackReply{{ID: cb.ID, Value: &one}})
			case "backoff":
				r.Reply([]CallbackReply{{ID: cb.ID, Value: &small}})
			}
		}
		time.Sleep(time.Millisecond)
	}
	if !r.results[0].ok || strings.Join(kinds, ",") != "is_transient,backoff" {
		t.Fatalf("ok %v kinds %v", r.results[0].ok, kinds)
	}
}

func TestRerunOnlyListedJobs(t *testing.T) {
	fk := newFake(t, ok("1"))
	one := 1.0
	r := runToEnd(t, options(fk.srv.URL, func(o *Options) {
		o.Models[0].Reps = 3
		o.Jobs = []JobKey{{Record: 2, PromptID: 1, Model: "m", TopP: &one, N: 3}}
	}), 4)
	a := mustAnswers(t, r)
	rec, _ := a.Col("record")
	n, _ := a.Col("n")
	if a.NumRows != 1 || rec.I32[0] != 2 || n.I32[0] != 3 || fk.requests.Load() != 1 {
		t.Fatalf("rows %d", a.NumRows)
	}
}

func TestPacerNeverExceedsTheWindowAfterADelay(t *testing.T) {
	fc := clock.NewFake(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
	p := newPacer(6000, fc, false) // 100 per second
	var times []time.Time
	p.observe = func(at time.Time) { times = append(times, at) }
	ctx := context.Background()
	for i := 0; i < 250; i++ {
		if i == 50 {
			fc.Advance(80 * time.Millisecond) // a stalled sender, then a rush to catch up
		}
		if err := drive(fc, func() error { _, err := p.wait(ctx); return err }); err != nil {
			t.Fatal(err)
		}
	}
	for i := range times {
		k := 0
		for j := i; j < len(times) && times[j].Sub(times[i]) < time.Second; j++ {
			k++
		}
		if k > 100 {
			t.Fatalf("%d requests in one second at rpm 6000", k)
		}
	}
	// On the fake clock the window is exact: the 101st admission never within 1 s + guard of the first.
	for i := 100; i < len(times); i++ {
		if d := times[i].Sub(times[i-100]); d < time.Second+minWindowGuard {
			t.Fatalf("admissions %d and %d are %v apart", i-100, i, d)
		}
	}
	// and the pacer holds nothing back beyond that: 250 admissions at 99.5 per second, plus the stall.
	if got := times[249].Sub(times[0]); got > 2600*time.Millisecond {
		t.Fatalf("250 admissions took %v", got)
	}
}

// drive runs fn while moving the fake clock to each deadline it waits for, so that a wait of an
// hour takes no time and every time fn reads is exact.
func drive(fc *clock.Fake, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	for {
		select {
		case err := <-done:
			return err
		default:
		}
		if next, ok := fc.NextDeadline(); ok {
			fc.Advance(next.Sub(fc.Now()))
		} else {
			runtime.Gosched()
		}
	}
}

func TestRetryWaitsAreExactOnTheClock(t *testing.T) {
	var mu sync.Mutex
	var seen []time.Time
	fc := clock.NewFake(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
	fk := newFake(t, func(n int64, _ map[string]any) (int, map[string]string, string) {
		mu.Lock()
		seen = append(seen, fc.Now())
		mu.Unlock()
		switch n {
		case 1:
			return 429, map[string]string{"Retry-After": "7"}, `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`
		case 2:
			return 503, map[string]string{"retry-after-ms": "1500"}, `{"error":{"message":"busy"}}`
		}
		return 200, nil, toolReply("1")
	})
	var r *Run
	err := drive(fc, func() error {
		var err error
		r, err = Start(options(fk.srv.URL, nil), Records{Titles: []string{"t"}, Abstracts: []string{"a"}}, "k", WithClock(fc))
		if err != nil {
			return err
		}
		r.Wait()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || !r.results[0].ok {
		t.Fatalf("%d requests, ok %v", len(seen), r.results[0].ok)
	}
	if d1, d2 := seen[1].Sub(seen[0]), seen[2].Sub(seen[1]); d1 != 7*time.Second || d2 != 1500*time.Millisecond {
		t.Fatalf("waits %v and %v, want 7s and 1.5s", d1, d2)
	}
	if rt := r.results[0].runTime; rt != 8.5 {
		t.Fatalf("run time %v, want 8.5 s", rt)
	}
}

func TestFailedAttemptsAndUnforcedModelsRetryWithinMaxTries(t *testing.T) {
	noTool := `{"model":"m","content":[{"type":"text","text":"include"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`
	quick := map[string]string{"retry-after-ms": "1"} // keeps the test's waits short
	withTool := `{"model":"m","content":[{"type":"tool_use","name":"inclusion_decision_simple","input":{"decision_llm":"1"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":1}}`
	cases := []struct {
		name     string
		provider string
		forced   bool
		reply    replyFunc
		wantOK   bool
		requests int64
	}{
		{"B: no call from an unforced model is retried up to max_tries", "b", false,
			func(int64, map[string]any) (int, map[string]string, string) { return 200, quick, noTool }, false, 4},
		{"B: an unforced model that calls on the third try", "b", false,
			func(n int64, _ map[string]any) (int, map[string]string, string) {
				if n < 3 {
					return 200, quick, noTool
				}
				return 200, nil, withTool
			}, true, 3},
		{"B: a forced model without the call uses the re-ask budget", "b", true,
			func(int64, map[string]any) (int, map[string]string, string) { return 200, nil, noTool }, false, 3},
		{"C: finish_reason error is a failed attempt", "c", true,
			func(n int64, _ map[string]any) (int, map[string]string, string) {
				if n == 1 {
					return 200, nil, `{"choices":[{"finish_reason":"error","message":{}}]}`
				}
				return 200, nil, toolReply("0")
			}, true, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fk := newFake(t, c.reply)
			forced := c.forced
			r := runToEnd(t, options(fk.srv.URL, func(o *Options) {
				o.Provider = c.provider
				o.Models[0].ForcedTool = &forced
				o.Callbacks = CallbackOptions{}
				if c.provider == "b" {
					o.TopP = nil
				}
			}), 1)
			if r.results[0].ok != c.wantOK || fk.requests.Load() != c.requests {
				t.Fatalf("ok %v (%s), %d requests", r.results[0].ok, r.results[0].reason, fk.requests.Load())
			}
		})
	}
}

// run_time is the whole job's: from its first attempt to its answer, the waits between included.
func TestRunTimeCountsTheWholeJob(t *testing.T) {
	cases := []struct {
		name    string
		status  int // of the first request; 200 answers at once
		waitMS  int // the server's Retry-After on it
		atLeast time.Duration
	}{
		{"answered at once", 200, 0, 0},
		{"answered after a 429 and its wait", 429, 150, 150 * time.Millisecond},
		{"answered after a 503 and its wait", 503, 100, 100 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fk := newFake(t, func(n int64, _ map[string]any) (int, map[string]string, string) {
				if n == 1 && c.status != 200 {
					return c.status, map[string]string{"retry-after-ms": fmt.Sprint(c.waitMS)}, `{"error":{"message":"later"}}`
				}
				return 200, nil, toolReply("1")
			})
			r := runToEnd(t, options(fk.srv.URL, nil), 1)
			res := r.results[0]
			if !res.ok || seconds(res.runTime) < c.atLeast || seconds(res.runTime) > r.elapsed {
				t.Fatalf("ok %v, run time %gs, want at least %v and at most the run's %v", res.ok, res.runTime, c.atLeast, r.elapsed)
			}
		})
	}
}

// A re-ask is an attempt: it counts within max_tries, and the re-ask cap of two stays on top.
func TestReasksCountWithinMaxTries(t *testing.T) {
	noTool := `{"model":"m","choices":[{"finish_reason":"stop","message":{"content":"include"}}],"usage":{"prompt_tokens":10,"completion_tokens":3}}`
	tries := func(n int) *int { return &n }
	cases := []struct {
		name       string
		maxTries   *int
		usableFrom int64 // the first request with a usable answer; 0: none
		wantOK     bool
		requests   int64
		wantReason string
	}{
		{"max_tries 1 sends one request", tries(1), 2, false, 1, "gave up after 1 attempt)"},
		{"max_tries 2 allows one re-ask", tries(2), 2, true, 2, ""},
		{"max_tries 2 ends after one re-ask", tries(2), 0, false, 2, "no usable answer in 2 replies"},
		{"the re-ask cap stays below a large max_tries", tries(16), 0, false, 3, "no usable answer in 3 replies"},
		{"without max_tries and max_seconds nothing is re-sent", nil, 2, false, 1, "no usable answer in 1 reply:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fk := newFake(t, func(n int64, _ map[string]any) (int, map[string]string, string) {
				if c.usableFrom > 0 && n >= c.usableFrom {
					return 200, nil, toolReply("1")
				}
				return 200, nil, noTool
			})
			r := runToEnd(t, options(fk.srv.URL, func(o *Options) { o.MaxTries = c.maxTries }), 1)
			res := r.results[0]
			if res.ok != c.wantOK || fk.requests.Load() != c.requests || int64(res.attempts) != c.requests ||
				!strings.Contains(res.reason, c.wantReason) {
				t.Fatalf("ok %v (%q), %d requests, %d attempts", res.ok, res.reason, fk.requests.Load(), res.attempts)
			}
		})
	}
}

// Every billed token is in the token columns of the job it was spent on, so that the columns
// priced at the model's prices are price_data: re-asked replies, failed jobs, and the tokens an
// earlier call spent on a re-sent job (screen_errors()) included; the spent part is this call's.
func TestTokensAddUpToThePrice(t *testing.T) {
	noTool := `{"model":"m","choices":[{"finish_reason":"stop","message":{"content":"include"}}],"usage":{"prompt_tokens":70,"completion_tokens":4}}`
	one := 1.0
	earlier, earlierOut := int64(500), int64(9)
	cases := []struct {
		name   string
		reply  replyFunc
		jobs   []JobKey
		before screen.Usage // billed by an earlier call
	}{
		{"answered at once", ok("1"), nil, screen.Usage{}},
		{"answered after two re-asks", func(n int64, _ map[string]any) (int, map[string]string, string) {
			if n%3 != 0 {
				return 200, nil, noTool
			}
			return 200, nil, toolReply("1")
		}, nil, screen.Usage{}},
		{"failed after its re-asks", func(int64, map[string]any) (int, map[string]string, string) { return 200, nil, noTool },
			nil, screen.Usage{}},
		{"re-sent with the tokens of an earlier call", ok("0"),
			[]JobKey{{Record: 1, PromptID: 1, Model: "m", TopP: &one, N: 1, PromptTokens: &earlier, CompletionTokens: &earlierOut}},
			screen.Usage{Prompt: earlier, Completion: earlierOut}},
	}
	in, out := 2.0, 8.0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fk := newFake(t, c.reply)
			r := runToEnd(t, options(fk.srv.URL, func(o *Options) {
				o.Models[0].PriceIn, o.Models[0].PriceOut = &in, &out
				o.Jobs = c.jobs
			}), 1)
			a := mustAnswers(t, r)
			pt, _ := a.Col("prompt_tokens")
			ct, _ := a.Col("completion_tokens")
			if pt.IsNull(0) {
				t.Fatal("no tokens on the job's row")
			}
			p := r.Prices()
			whole := (float64(pt.I32[0])*in + float64(ct.I32[0])*out) / 1e6
			spent := whole - (float64(c.before.Prompt)*in+float64(c.before.Completion)*out)/1e6
			if len(p) != 1 || math.Abs(*p[0].Input+*p[0].Output-whole) > 1e-15 ||
				math.Abs(*p[0].SpentInput+*p[0].SpentOutput-spent) > 1e-15 {
				t.Fatalf("tokens %d + %d priced at %g (this call %g), price_data %+v", pt.I32[0], ct.I32[0], whole, spent, p[0])
			}
			if sent := fk.requests.Load(); pt.I32[0] < int32(sent)*70 || spent <= 0 {
				t.Fatalf("%d requests, but %d prompt tokens and %g spent", sent, pt.I32[0], spent)
			}
		})
	}
}

// A custom tool's call is kept whole in tool_arguments, in the order the model wrote it; the
// built-in tools' arguments are the answer's own columns.
func TestCustomToolArgumentsAreKept(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"judge","parameters":{"type":"object","properties":{` +
		`"verdict":{"type":"string","enum":["1","0"]},"reason":{"type":"string"},"pages":{"type":"array","items":{"type":"integer"}}}}}}]`
	reply := func(name, args string) string {
		b, _ := json.Marshal(map[string]any{"model": "m-1", "choices": []any{map[string]any{"finish_reason": "tool_calls",
			"message": map[string]any{"tool_calls": []any{map[string]any{"function": map[string]any{"name": name, "arguments": args}}}}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5}})
		return string(b)
	}
	cases := []struct {
		name, tools, reply string
		want, description  string
		has                bool
	}{
		{"custom tool", tools, reply("judge", `{"verdict": "0", "reason": "not a trial", "pages": [2, 3]}`),
			`{"verdict":"0","reason":"not a trial","pages":[2,3]}`, "not a trial", true},
		{"built-in tool", "", toolReply("1"), "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fk := newFake(t, func(int64, map[string]any) (int, map[string]string, string) { return 200, nil, c.reply })
			r := runToEnd(t, options(fk.srv.URL, func(o *Options) {
				if c.tools != "" {
					o.Tools = json.RawMessage(c.tools)
				}
			}), 1)
			a := mustAnswers(t, r)
			args, _ := a.Col("tool_arguments")
			desc, _ := a.Col("detailed_description")
			if !r.results[0].ok || args.Str[0] != c.want || args.IsNull(0) == c.has || desc.Str[0] != c.description {
				t.Fatalf("ok %v (%s): tool_arguments %q (null %v), description %q", r.results[0].ok, r.results[0].reason,
					args.Str[0], args.IsNull(0), desc.Str[0])
			}
		})
	}
}

func mustAnswers(t *testing.T, r *Run) *arrowio.Table {
	t.Helper()
	a, err := r.Answers()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The window starts when a request was written, not when it was let go: a request that had to
// open a connection first reaches the provider later, and the request a window after it must too.
func TestPacerCountsTheWindowFromTheWrite(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	fc := clock.NewFake(t0)
	p := newPacer(600, fc, false) // 10 per second
	var tickets []ticket
	var times []time.Time
	p.observe = func(at time.Time) { times = append(times, at) }
	admit := func() {
		if err := drive(fc, func() error {
			tk, err := p.wait(context.Background())
			tickets = append(tickets, tk)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	admit()
	fc.Advance(50 * time.Millisecond)
	tickets[0].wrote() // written 50 ms after its admission
	for i := 1; i < 10; i++ {
		admit()
	}
	guard := p.guard
	admit()
	if want := t0.Add(50*time.Millisecond + time.Second + guard); !times[10].Equal(want) {
		t.Errorf("admission 10 at %v, want %v", times[10].Sub(t0), want.Sub(t0))
	}
	// A ticket whose entry the ring has reused changes nothing.
	before := append([]sentAt(nil), p.sent...)
	tickets[0].wrote()
	for i := range before {
		if before[i] != p.sent[i] {
			t.Fatalf("a stale ticket moved entry %d", i)
		}
	}
}

// The guard narrows by a fifth with each window of requests the provider refused none of, down to
// its floor; each 429 doubles it, up to its cap. The window never gets shorter than one second and
// the floor.
func TestPacerGuardNarrowsAndWidens(t *testing.T) {
	fc := clock.NewFake(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
	p := newPacer(6000, fc, false) // 100 per second
	var times []time.Time
	p.observe = func(at time.Time) { times = append(times, at) }
	var guards []time.Duration
	for i := 0; i < 1000; i++ {
		if err := drive(fc, func() error { _, err := p.wait(context.Background()); return err }); err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			guards = append(guards, p.guard)
		}
	}
	want := []time.Duration{16 * time.Millisecond, 12800 * time.Microsecond, 10240 * time.Microsecond, 8192 * time.Microsecond,
		6553600, 5242880, minWindowGuard, minWindowGuard}
	for i, w := range want {
		if guards[i] != w {
			t.Fatalf("guard after %d windows: %v, want %v (all: %v)", i+1, guards[i], w, guards)
		}
	}
	for i := 100; i < len(times); i++ {
		if d := times[i].Sub(times[i-100]); d < time.Second+minWindowGuard {
			t.Fatalf("admissions %d and %d are %v apart", i-100, i, d)
		}
	}
	for i, w := range []time.Duration{2 * minWindowGuard, 4 * minWindowGuard, 8 * minWindowGuard, maxWindowGuard, maxWindowGuard} {
		p.refused()
		if p.guard != w || p.window != time.Second+w {
			t.Fatalf("after %d refusals: guard %v window %v, want %v", i+1, p.guard, p.window, w)
		}
	}
	p.follow(600) // a new limit keeps the guard
	if p.window != time.Second+maxWindowGuard {
		t.Fatalf("after follow: window %v", p.window)
	}
}

// R's poll waits in Go: it returns as soon as the run has ended every job or has a callback for R,
// and otherwise after its wait.
func TestPollWithinReturnsAtTheEndOrACallback(t *testing.T) {
	release := make(chan struct{})
	fk := newFake(t, func(n int64, _ map[string]any) (int, map[string]string, string) {
		if n == 1 {
			<-release
			return 418, nil, `{"error":{"message":"teapot"}}`
		}
		return 200, nil, toolReply("1")
	})
	o := options(fk.srv.URL, func(o *Options) { o.Callbacks = CallbackOptions{IsTransient: true} })
	r, err := Start(o, Records{Titles: []string{"t"}, Abstracts: []string{"a"}}, "k")
	if err != nil {
		t.Fatal(err)
	}
	// Nothing to report while the request hangs: the poll waits its whole time.
	if p := r.PollWithin(20 * time.Millisecond); p.State != "running" || len(p.Callbacks) != 0 {
		t.Fatalf("poll while hanging: %+v", p)
	}
	// A poll of a minute that does not return at once fails the test within 10 s.
	early := func() Progress {
		got := make(chan Progress, 1)
		go func() { got <- r.PollWithin(time.Minute) }()
		select {
		case p := <-got:
			return p
		case <-time.After(10 * time.Second):
			t.Fatal("the poll did not return when the run had news")
			return Progress{}
		}
	}
	close(release)
	p := early()
	if len(p.Callbacks) != 1 || p.Callbacks[0].Kind != "is_transient" {
		t.Fatalf("poll after the failure: %+v", p)
	}
	one := 1.0
	r.Reply([]CallbackReply{{ID: p.Callbacks[0].ID, Value: &one}})
	for p.State != "finished" {
		p = early()
	}
	r.Wait()
	if !r.results[0].ok {
		t.Fatal("the retried job was not answered")
	}
}

// windowedPacer is a pacer at 100 requests a second for a provider that counts them per second,
// on a fake clock.
func windowedPacer() (*pacer, *clock.Fake, time.Time) {
	t0 := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	fc := clock.NewFake(t0)
	return newPacer(6000, fc, true), fc, t0
}

// keptToTheWindow fails unless every perWindow+1 admissions span more than a second and the
// narrowest guard.
func keptToTheWindow(t *testing.T, times []time.Time, perWindow int) {
	t.Helper()
	for i := perWindow; i < len(times); i++ {
		if d := times[i].Sub(times[i-perWindow]); d < time.Second+minWindowGuard {
			t.Fatalf("admissions %d and %d are %v apart", i-perWindow, i, d)
		}
	}
}

// A provider that counts requests per second gets each window's requests in the window's first
// part (1/frontLoadPace of it), one at a time, never more than a window's worth within a window and
// its guard; after a 429 its requests are spread evenly.
func TestWindowedPacerFrontLoadsEachWindowUntilARefusal(t *testing.T) {
	p, fc, t0 := windowedPacer()
	var times []time.Time
	p.observe = func(at time.Time) { times = append(times, at) }
	admit := func(n int) {
		for i := 0; i < n; i++ {
			if err := drive(fc, func() error { _, err := p.wait(context.Background()); return err }); err != nil {
				t.Fatal(err)
			}
		}
	}
	admit(300)
	even := time.Second / 100
	fast := time.Duration(float64(even) / frontLoadPace / rateMargin)
	for w := 0; w < 3; w++ {
		first, last := times[100*w], times[100*w+99]
		if span := last.Sub(first); span < fast*99*99/100 || span > fast*99*101/100 {
			t.Errorf("window %d: its requests took %v, want %v", w, span, fast*99)
		}
	}
	if d := times[100].Sub(t0); d < time.Second+minWindowGuard || d > time.Second+windowGuard {
		t.Errorf("the second window began %v after the first", d)
	}
	p.refused()
	from := len(times)
	admit(200)
	// the next window's requests are spread out, not sent in the first window's pattern
	for i := from + 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d < time.Duration(minGapShare*float64(even))*99/100 {
			t.Fatalf("after a 429, admissions %d and %d are %v apart", i-1, i, d)
		}
	}
	keptToTheWindow(t, times, 100)
}

// Many requests waiting at once, as a run's job goroutines do, one of them at a time for the
// window: every one is let go, and never more than a window's worth within a window and its guard.
// (How fast they go under concurrency is bench/run.R's ceiling row, not a test's.)
func TestWindowedPacerUnderConcurrentWaiters(t *testing.T) {
	p, fc, _ := windowedPacer()
	var times []time.Time
	p.observe = func(at time.Time) { times = append(times, at) }
	const waiters = 400
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for i := 0; i < waiters; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.wait(context.Background()); err != nil {
				errs <- err
			}
		}()
	}
	// all but the first wait for their turn in the bucket before the clock moves
	fc.BlockUntil(waiters - 1)
	if err := drive(fc, func() error { wg.Wait(); return nil }); err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(times) != waiters {
		t.Fatalf("%d admissions, want %d", len(times), waiters)
	}
	keptToTheWindow(t, times, 100)
}
