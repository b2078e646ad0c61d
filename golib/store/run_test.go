package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// countingServer answers every request after a delay, counting the requests of each body.
type countingServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies map[string]int
}

func newCountingServer(t *testing.T, delay time.Duration) *countingServer {
	s := &countingServer{bodies: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies[string(b)]++
		s.mu.Unlock()
		time.Sleep(delay)
		w.Write([]byte(answerBody()))
	}))
	t.Cleanup(s.Close)
	return s
}

// sent is how many requests arrived, and how many bodies came more than once.
func (s *countingServer) sent() (requests, again int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.bodies {
		requests += n
		if n > 1 {
			again++
		}
	}
	return requests, again
}

func storeRunOptions(url, path string) *engine.Options {
	tries := 1
	return &engine.Options{Provider: "a", APIURL: url, Prompts: []string{"p"}, Role: "user",
		Models: []engine.ModelOptions{{Name: "m", Reps: 1, RPM: 600000}}, MaxTries: &tries, Timeout: 5, MaxActive: 16,
		Builtin: engine.BuiltinOptions{Overinclusive: true}, Store: &engine.StoreOptions{Path: path}}
}

func distinctRecords(n int) engine.Records {
	recs := engine.Records{Titles: make([]string, n), Abstracts: make([]string, n)}
	for i := range recs.Titles {
		recs.Titles[i] = fmt.Sprintf("Title %d", i)
	}
	return recs
}

func storedRun(t *testing.T, path string) (answered int32, status string) {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs()
	if err != nil || runs.NumRows != 1 {
		t.Fatalf("runs: %v, %v", runs, err)
	}
	a, _ := runs.Col("answered")
	s, _ := runs.Col("status")
	return a.I32[0], s.Str[0]
}

// When the store fails mid-run, the requests in flight end and their answers, with those of the
// commit that failed, are kept (in the journal beside the store when it can be written, else in
// memory); the next call on the store writes them in before it sends anything, sends only the
// jobs never answered, and the run is completed with every answer stored once.
func TestFailedWriteKeepsEveryAnswerForTheNextCall(t *testing.T) {
	for _, tc := range []struct {
		name         string
		journalFails bool
		where        string
	}{
		{"journal", false, "journal"},
		{"memory", true, "memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newCountingServer(t, 20*time.Millisecond)
			path := filepath.Join(t.TempDir(), "a.sqlite")
			if tc.journalFails {
				if runtime.GOOS == "windows" {
					// Wine writes through a link into a missing folder: the journal cannot be made to fail there.
					t.Skip("needs a journal path that refuses writes (a link into a missing folder)")
				}
				// The journal leads into a folder that does not exist: it cannot be written.
				if err := os.Symlink(filepath.Join(t.TempDir(), "gone", "journal"), store.JournalPath(path)); err != nil {
					t.Fatal(err)
				}
			}
			var commits atomic.Int64
			store.SetInsertHook(func() error {
				if commits.Add(1) > 8 {
					return errors.New("database or disk is full")
				}
				return nil
			})
			defer store.SetInsertHook(nil)
			defer store.SetCommitEvery(0)()
			n := 600
			r, err := engine.Start(storeRunOptions(srv.URL, path), distinctRecords(n), "k")
			if err != nil {
				t.Fatal(err)
			}
			r.Wait()
			state, stop := r.State()
			if state != "stopped" || stop.Class != "tabscreen_error_store" {
				t.Fatalf("state %s, stop %+v", state, stop)
			}
			sum := r.Summarise()
			requests, _ := srv.sent()
			// Every request sent was answered: none in flight was cut off.
			if int64(requests) != sum.Answered || sum.Answered == int64(n) {
				t.Fatalf("%d requests sent, %d answers in the result (of %d jobs)", requests, sum.Answered, n)
			}
			stored, status := storedRun(t, path)
			info := sum.Store
			if status != store.StatusStopped || info.Kept != int(sum.Answered)-int(stored) || info.Kept == 0 || info.KeptIn != tc.where {
				t.Fatalf("status %s, %d stored of %d answers, kept %d in %q", status, stored, sum.Answered, info.Kept, info.KeptIn)
			}

			// While the store still fails, the same call is refused before it sends anything.
			var refused *store.Error
			if _, err := engine.Start(storeRunOptions(srv.URL, path), distinctRecords(n), "k"); !errors.As(err, &refused) ||
				refused.Class != "tabscreen_error_store_kept" || !strings.Contains(err.Error(), "could not write") {
				t.Fatalf("a call on the failing store: %v", err)
			}
			if again, _ := srv.sent(); again != requests {
				t.Fatalf("%d requests sent by the refused call", again-requests)
			}

			// The store works again: the same call writes the kept answers first and sends the rest.
			store.SetInsertHook(nil)
			if tc.journalFails {
				os.Remove(store.JournalPath(path))
			} else {
				store.ForgetKept() // the journal alone, as a new R session finds it
			}
			r2, err := engine.Start(storeRunOptions(srv.URL, path), distinctRecords(n), "k")
			if err != nil {
				t.Fatal(err)
			}
			info2 := r2.StoreInfo()
			if !info2.Resumed || info2.Written != info.Kept || info2.Stored != int(sum.Answered) {
				t.Fatalf("second call: %+v (first kept %d of %d answers)", info2, info.Kept, sum.Answered)
			}
			r2.Wait()
			if sum2 := r2.Summarise(); sum2.Answered != int64(n) || sum2.State != "done" {
				t.Fatalf("second call: %+v", sum2)
			}
			requests, again := srv.sent()
			if requests != n || again != 0 {
				t.Fatalf("%d requests for %d jobs, %d bodies sent more than once", requests, n, again)
			}
			if stored, status := storedRun(t, path); stored != int32(n) || status != store.StatusCompleted {
				t.Fatalf("store holds %d answers, status %s", stored, status)
			}
			if _, err := os.Stat(store.JournalPath(path)); !os.IsNotExist(err) {
				t.Fatalf("the journal is still there: %v", err)
			}
		})
	}
}
