package store_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tabscreen/tabscreen/golib/engine"
	"github.com/tabscreen/tabscreen/golib/store"
)

func answerBody() string {
	args, _ := json.Marshal(map[string]string{"decision_llm": "1"})
	b, _ := json.Marshal(map[string]any{"model": "m-1", "object": "chat.completion",
		"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"role": "assistant",
			"tool_calls": []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{
				"name": "inclusion_decision_simple", "arguments": string(args)}}}}}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 2}})
	return string(b)
}

// A commit that fails half way (a full disk) stops the run: every answer received is still in
// the run's result, and what was committed before the failure stays in the store.
func TestWriteFailureStopsTheRunAndKeepsWhatWasStored(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(answerBody()))
	}))
	defer srv.Close()
	var commits atomic.Int64
	store.SetInsertHook(func() error {
		if commits.Add(1) > 5 {
			return errors.New("disk I/O error: no space left on device")
		}
		return nil
	})
	defer store.SetInsertHook(nil)
	// A commit per answer or two, as at a provider's real pace, so that some commits succeed.
	defer store.SetCommitEvery(0)()
	path := filepath.Join(t.TempDir(), "a.sqlite")
	tries := 1
	o := &engine.Options{Provider: "a", APIURL: srv.URL, Prompts: []string{"p"}, Role: "user",
		Models: []engine.ModelOptions{{Name: "m", Reps: 1, RPM: 600000}}, MaxTries: &tries, Timeout: 5, MaxActive: 2, Builtin: engine.BuiltinOptions{Overinclusive: true},
		Store: &engine.StoreOptions{Path: path}}
	n := 400
	recs := engine.Records{Titles: make([]string, n), Abstracts: make([]string, n)}
	r, err := engine.Start(o, recs, "k")
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	state, stop := r.State()
	if state != "stopped" || stop.Class != "tabscreen_error_store" || !strings.Contains(stop.Message, "could not record") {
		t.Fatalf("state %s, stop %+v", state, stop)
	}
	sum := r.Summarise()
	if sum.Answered+sum.Failed != int64(n) || sum.Answered == 0 {
		a, _ := r.Answers()
		d, _ := a.Col("decision_llm")
		t.Fatalf("answered %d + failed %d != %d: %s", sum.Answered, sum.Failed, n, d.Str[0])
	}
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ := st.Runs()
	answered, _ := runs.Col("answered")
	status, _ := runs.Col("status")
	if answered.I32[0] == 0 || int64(answered.I32[0]) > sum.Answered || status.Str[0] != store.StatusStopped {
		t.Fatalf("store holds %d answers (run has %d), status %s", answered.I32[0], sum.Answered, status.Str[0])
	}
}

// A panic in the store's writer goroutine stops the run instead of ending the process: the jobs
// that finish after it are not blocked on the writer's queue, and every job is accounted for.
func TestWriterPanicStopsTheRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(answerBody()))
	}))
	defer srv.Close()
	var commits atomic.Int64
	store.SetInsertHook(func() error {
		if commits.Add(1) == 3 {
			panic("writer bug")
		}
		return nil
	})
	defer store.SetInsertHook(nil)
	tries := 1
	o := &engine.Options{Provider: "a", APIURL: srv.URL, Prompts: []string{"p"}, Role: "user",
		Models: []engine.ModelOptions{{Name: "m", Reps: 1, RPM: 600000}}, MaxTries: &tries, Timeout: 5, MaxActive: 4,
		Builtin: engine.BuiltinOptions{Overinclusive: true}, Store: &engine.StoreOptions{Path: filepath.Join(t.TempDir(), "a.sqlite")}}
	n := 5000 // more than the writer's queue holds
	r, err := engine.Start(o, engine.Records{Titles: make([]string, n), Abstracts: make([]string, n)}, "k")
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	state, stop := r.State()
	if state != "stopped" || stop.Class != "tabscreen_error_internal" || !strings.Contains(stop.Message, "writer bug") {
		t.Fatalf("state %s, stop %+v", state, stop)
	}
	if sum := r.Summarise(); sum.Answered+sum.Failed != int64(n) || sum.Answered == 0 {
		t.Fatalf("answered %d + failed %d != %d", sum.Answered, sum.Failed, n)
	}
}
