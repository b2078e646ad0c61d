package store_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tabscreen/tabscreen/golib/engine"
	"github.com/tabscreen/tabscreen/golib/store"
)

// An adaptive run whose groups settle is completed in the store although it never sent the
// settled jobs; resumed after failures, it sends only what its stored answers leave open, and the
// run completes.
func TestAdaptiveRunCompletesWithSettledJobs(t *testing.T) {
	var failing atomic.Bool
	var requests, failed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		body := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(body)
		if failing.Load() && strings.Contains(string(body), "Title 0") {
			failed.Add(1)
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"bad"}}`))
			return
		}
		_, _ = w.Write([]byte(answerBody())) // always an include: one answer settles a group
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "a.sqlite")
	run := func() *engine.Run {
		o := storeRunOptions(srv.URL, path)
		o.Models[0].Reps = 4
		o.Adaptive = &engine.AdaptiveOptions{Rule: engine.RuleExact}
		r, err := engine.Start(o, distinctRecords(5), "k")
		if err != nil {
			t.Fatal(err)
		}
		r.Wait()
		return r
	}
	failing.Store(true)
	run()
	// Record 0 failed four times (a failure settles nothing); the four others settled at once.
	if requests.Load() != 4+4 || failed.Load() != 4 {
		t.Fatalf("%d requests, %d failed", requests.Load(), failed.Load())
	}
	if answered, status := storedRun(t, path); answered != 4 || status != "incomplete" {
		t.Fatalf("first call: %d answered, %s", answered, status)
	}
	failing.Store(false)
	requests.Store(0)
	r := run()
	if requests.Load() != 1 {
		t.Fatalf("the resumed run sent %d requests, want 1", requests.Load())
	}
	if answered, status := storedRun(t, path); answered != 5 || status != "completed" {
		t.Fatalf("resumed: %d answered, %s", answered, status)
	}
	if s := r.Summarise(); s.SavedRequests == nil || *s.SavedRequests != 5*3 {
		t.Fatalf("saved %v, want 15 (the whole run's)", s.SavedRequests)
	}
	// A recovered copy lost nothing: its settled jobs still make the run complete.
	copied := filepath.Join(t.TempDir(), "recovered.sqlite")
	if _, err := store.Recover(path, copied); err != nil {
		t.Fatal(err)
	}
	if answered, status := storedRun(t, copied); answered != 5 || status != "completed" {
		t.Fatalf("recovered: %d answered, %s", answered, status)
	}
}
