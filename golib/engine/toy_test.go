package engine_test

// A provider is one place: this test registers a toy protocol, its adapter and descriptor written
// here and nowhere else, and screens through the engine (pacing, retries, the answer store, the
// tables) with no other change.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/engine"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/screen"
	"github.com/tabscreen/tabscreen/golib/store"
)

// The toy protocol: POST {"model", "question"} with header X-Toy-Key; the answer is
// {"verdict": "1", "in": n, "out": n}; errors are {"problem": "..."}.
type toyAdapter struct {
	s    provider.Settings
	tool screen.Tool
}

func (a *toyAdapter) Protocol() string { return "toy" }

func (a *toyAdapter) Request(c *provider.Call) (provider.Request, error) {
	body, err := json.Marshal(map[string]string{"model": c.Model.Name, "question": c.Question})
	h := http.Header{}
	h.Set("X-Toy-Key", a.s.APIKey)
	return provider.Request{URL: a.s.URL, Header: h, Body: body}, err
}

func (a *toyAdapter) Parse(c *provider.Call, r provider.Response, now time.Time) provider.Outcome {
	var v struct {
		Verdict string `json:"verdict"`
		In, Out int64
	}
	if err := json.Unmarshal(r.Body, &v); err != nil {
		return provider.Outcome{Failure: &provider.Failure{Verdict: provider.Reask, Message: err.Error()}}
	}
	o := provider.Outcome{Usage: screen.Usage{Prompt: v.In, Completion: v.Out}, Submodel: c.Model.Name + "-toy"}
	d, err := screen.ReadDecision(map[string]any{screen.DecisionField: v.Verdict}, &a.tool)
	if err != nil {
		o.Failure = &provider.Failure{Verdict: provider.Reask, Message: err.Error()}
	}
	o.Decision = d
	return o
}

func (a *toyAdapter) Classify(r provider.Response, now time.Time) provider.Failure {
	var e struct{ Problem string }
	_ = json.Unmarshal(r.Body, &e)
	msg := fmt.Sprintf("HTTP %d: %s", r.Status, e.Problem)
	if r.Status == http.StatusUnauthorized {
		return provider.Failure{Verdict: provider.StopRun, Class: "tabscreen_error_auth", Message: msg}
	}
	f := provider.Failure{Verdict: provider.FailJob, Message: msg}
	if provider.IsTransient(r.Status, r.Header, r.Body) {
		f.Verdict = provider.Retry
	}
	f.Wait, f.HasWait = provider.RetryAfter(r.Header, now)
	return f
}

func (a *toyAdapter) RateState(h http.Header, now time.Time) provider.RateState {
	return provider.RateState{}
}

var toy = provider.Descriptor{
	Protocol: "toy", Letter: "t", Label: "the toy provider", DefaultURL: "http://127.0.0.1/toy",
	DefaultModel: "toy-1", KeyVar: "TOY_API_KEY", ToolFormat: "chat",
	ModelFields: []string{"price_in", "price_out"}, SettingFields: []string{"reasoning_effort"},
	Hidden: true, // a test's provider: not offered to R
	New: func(s provider.Settings) (provider.Adapter, error) {
		return &toyAdapter{s: s, tool: s.Builtin}, nil
	},
	Policy: toyPolicy,
	Probe:  func(m provider.PolicyModel) (any, error) { return map[string]string{"model": m.Name}, nil },
}

// toyRule is a row of the toy's rules file: columns no other provider has, decoded by the toy's
// own policy.
type toyRule struct {
	Moods  []string `json:"toy_moods"`
	Sleepy bool     `json:"toy_sleepy"`
}

func toyPolicy(m provider.PolicyModel, a provider.PolicyArgs) (provider.ModelSettings, error) {
	if len(m.Rules) == 0 {
		return provider.ModelSettings{}, nil
	}
	var r toyRule
	if err := provider.DecodeRules(m, &r); err != nil {
		return provider.ModelSettings{}, err
	}
	effort := r.Moods[0]
	if r.Sleepy {
		effort = "none"
	}
	return provider.ModelSettings{ReasoningEffort: &effort}, nil
}

func init() { provider.Register(toy) }

func TestToyProviderDecodesItsOwnRules(t *testing.T) {
	d, _ := provider.Lookup("t")
	got, err := d.Settings([]provider.PolicyModel{{Name: "toy-1", Rules: json.RawMessage(`{"toy_moods":"calm|keen","toy_sleepy":"FALSE"}`)}},
		provider.PolicyArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if js, err := d.SettingsJSON(got[0]); err != nil || string(js) != `{"reasoning_effort":"calm"}` {
		t.Fatalf("settings %s (%v)", js, err)
	}
	if _, err := d.Settings([]provider.PolicyModel{{Name: "toy-1", Rules: json.RawMessage(`{"toy_moods":"calm","top_p_ok":"TRUE"}`)}},
		provider.PolicyArgs{}); err == nil {
		t.Fatal("a column of another provider was taken")
	}
}

func TestToyProviderScreensThroughTheEngine(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.Header.Get("X-Toy-Key") != "toy-secret" {
			w.WriteHeader(401)
			_, _ = io.WriteString(w, `{"problem":"who are you?"}`)
			return
		}
		var q struct{ Question string }
		_ = json.NewDecoder(r.Body).Decode(&q)
		if n == 2 { // one passing failure, retried by the engine
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(503)
			_, _ = io.WriteString(w, `{"problem":"busy"}`)
			return
		}
		_, _ = fmt.Fprintf(w, `{"verdict":"%d","in":%d,"out":3}`, len(q.Question)%2, len(q.Question))
	}))
	defer srv.Close()
	tries, rpm, in, out := 3, 600000.0, 1.0, 2.0
	path := filepath.Join(t.TempDir(), "toy.sqlite")
	o := &engine.Options{Provider: "t", APIURL: srv.URL, Prompts: []string{"Toy?"}, Role: "user", RPM: &rpm,
		Models:   []engine.ModelOptions{{Name: "toy-1", Reps: 2, RPM: rpm, ModelPrices: screen.ModelPrices{PriceIn: &in, PriceOut: &out}}},
		Builtin:  engine.BuiltinOptions{Overinclusive: true},
		MaxTries: &tries, Timeout: 5, Store: &engine.StoreOptions{Path: path}}
	recs := engine.Records{Titles: []string{"a", "bb", "ccc"}, Abstracts: []string{"x", "y", "z"}}
	r, err := engine.Start(o, recs, "toy-secret")
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	sum := r.Summarise()
	if sum.State != "done" || sum.Answered != 6 || sum.Failed != 0 || calls.Load() != 7 {
		t.Fatalf("state %s, %d answered, %d failed, %d calls", sum.State, sum.Answered, sum.Failed, calls.Load())
	}
	a, _ := r.Answers()
	sub, _ := a.Col("submodel")
	if sub.Str[0] != "toy-1-toy" || len(sum.PriceData) != 1 || sum.PriceData[0].Input == nil {
		t.Fatalf("submodel %q, prices %+v", sub.Str[0], sum.PriceData)
	}
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ := st.Runs()
	prov, _ := runs.Col("provider")
	answered, _ := runs.Col("answered")
	if prov.Str[0] != "t" || answered.I32[0] != 6 {
		t.Fatalf("store: provider %q, %d answered", prov.Str[0], answered.I32[0])
	}
	// a refused key stops the run, as the toy adapter classifies it
	r, err = engine.Start(o, recs, "wrong")
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	if state, stop := r.State(); state != "stopped" || stop.Class != "tabscreen_error_auth" {
		t.Fatalf("state %s stop %+v", state, stop)
	}
}
