package engine

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/batch"
	"github.com/tabscreen/tabscreen/golib/clock"
	"github.com/tabscreen/tabscreen/golib/fakeprovider"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/store"
)

type batchFakeServer struct {
	*fakeprovider.Server
	URL string
}

func batchFake(t *testing.T, patch string) batchFakeServer {
	t.Helper()
	srv, err := fakeprovider.New(fakeprovider.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.UpdateConfig([]byte(`{"batches": true}`), false); err != nil {
		t.Fatal(err)
	}
	if patch != "" {
		if _, err := srv.UpdateConfig([]byte(patch), false); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return batchFakeServer{srv, hs.URL}
}

func batchOptions(url, path string, wait bool) *Options { return batchOptionsOf("a", url, path, wait) }

// batchOptionsOf are a batch run's options for provider a, b or c of the fake at url.
func batchOptionsOf(letter, url, path string, wait bool) *Options {
	endpoint := map[string]string{"a": url + "/v1/chat/completions", "b": url, "c": url + "/mistral/v1/chat/completions"}[letter]
	return options(endpoint, func(o *Options) {
		o.Provider = letter
		o.Models[0].Name = map[string]string{"a": "gpt-6-luna", "b": "claude-haiku-4-5", "c": "mistral-small-latest"}[letter]
		if letter == "b" {
			o.TopP, o.MaxTokens = nil, 1024
		}
		o.Store = &StoreOptions{Path: path}
		o.Batch = &BatchOptions{Wait: wait, PollSeconds: 0.01}
	})
}

func batchRecords(n int) Records {
	recs := Records{Titles: make([]string, n), Abstracts: make([]string, n)}
	for i := range recs.Titles {
		recs.Titles[i], recs.Abstracts[i] = fmt.Sprintf("Batch title %d", i), fmt.Sprintf("Abstract %d", i)
	}
	return recs
}

func startBatch(t *testing.T, o *Options, recs Records, with ...StartOption) *Run {
	t.Helper()
	r, err := Start(o, recs, "sk-secret-test-key", with...)
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	return r
}

// Failed, status-0, expired and vanished lines are submitted again until every job is answered,
// and no job is answered twice.
func TestBatchResubmitsUntilEveryJobIsAnswered(t *testing.T) {
	for _, letter := range batchProviders() {
		t.Run(letter, func(t *testing.T) { testBatchResubmits(t, letter) })
	}
}

// batchProviders are the providers with a batch API.
func batchProviders() []string {
	var out []string
	for _, d := range provider.All() {
		if d.Batch != nil {
			out = append(out, d.Letter)
		}
	}
	return out
}

func testBatchResubmits(t *testing.T, letter string) {
	fk := batchFake(t, `{"batch_fail": 0.05, "batch_fail_zero": 0.02, "batch_expire": 0.03, "batch_vanish": 0.02,
		"batch_create_fail_once": true}`)
	path := filepath.Join(t.TempDir(), "answers.sqlite")
	r := startBatch(t, batchOptionsOf(letter, fk.URL, path, true), batchRecords(400))
	if st, stop := r.State(); st != "done" {
		t.Fatalf("state %s %+v", st, stop)
	}
	if r.answered.Load() != 400 || r.failed.Load() != 0 {
		t.Fatalf("answered %d failed %d", r.answered.Load(), r.failed.Load())
	}
	bs := fk.Stats().Batch
	redo := bs.LinesFailed + bs.LinesExpired + bs.LinesVanished
	if redo == 0 || bs.LinesReceived != 400+redo || bs.LinesAnswered != 400 || bs.CreateRefused != 1 {
		t.Fatalf("batch stats %+v", bs)
	}
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows := 0
	if err := st.ScanRun(r.StoreInfo().RunID, func(*store.Row) { rows++ }); err != nil {
		t.Fatal(err)
	}
	if rows != 400 {
		t.Fatalf("%d stored rows", rows)
	}
}

// A crash right after the submit call returned, before its answer is recorded: the next call finds
// the batch by its tag and submits nothing again.
func TestBatchIntentIsRecordedBeforeSubmit(t *testing.T) {
	for _, letter := range batchProviders() {
		t.Run(letter, func(t *testing.T) { testBatchIntent(t, letter) })
	}
}

func testBatchIntent(t *testing.T, letter string) {
	fk := batchFake(t, `{"batch_delay_ms": 50}`)
	path := filepath.Join(t.TempDir(), "answers.sqlite")
	recs := batchRecords(30)
	r := startBatch(t, batchOptionsOf(letter, fk.URL, path, true), recs, WithAfterSubmit(func() error { return batch.ErrCrash }))
	if st, _ := r.State(); st != "stopped" {
		t.Fatalf("state %s", st)
	}
	if bs := fk.Stats().Batch; bs.Created != 1 || bs.LinesReceived != 30 {
		t.Fatalf("batch stats %+v", bs)
	}
	r2 := startBatch(t, batchOptionsOf(letter, fk.URL, path, true), recs)
	if r2.answered.Load() != 30 {
		t.Fatalf("answered %d, state %v", r2.answered.Load(), r2.stop)
	}
	if bs := fk.Stats().Batch; bs.Created != 1 || bs.LinesReceived != 30 {
		t.Fatalf("the batch was submitted again: %+v", bs)
	}
}

// wait = false submits and returns; the same call later collects without submitting again.
func TestBatchWithoutWaitingIsCollectedByTheNextCall(t *testing.T) {
	fk := batchFake(t, `{"batch_delay_ms": 100}`)
	path := filepath.Join(t.TempDir(), "answers.sqlite")
	recs := batchRecords(20)
	r := startBatch(t, batchOptions(fk.URL, path, false), recs)
	s := r.Summarise()
	if s.Batch == nil || s.Batch.Pending != 20 || s.Batch.Batches != 1 || r.answered.Load() != 0 {
		b, _ := json.Marshal(s)
		t.Fatalf("summary %s", b)
	}
	r2 := startBatch(t, batchOptions(fk.URL, path, true), recs)
	if r2.answered.Load() != 20 || r2.failed.Load() != 0 {
		t.Fatalf("answered %d failed %d", r2.answered.Load(), r2.failed.Load())
	}
	if bs := fk.Stats().Batch; bs.Created != 1 || bs.LinesReceived != 20 {
		t.Fatalf("batch stats %+v", bs)
	}
}

// A resumed call counts the batches a job was in once they are collected: with max_tries = 2 a line
// that failed in the batch the first call submitted is submitted once more, and answered.
func TestBatchTriesCountAcrossCalls(t *testing.T) {
	fk := batchFake(t, `{"batch_delay_ms": 100, "batch_fail": 0.3}`)
	path := filepath.Join(t.TempDir(), "answers.sqlite")
	recs := batchRecords(40)
	two := 2
	o := batchOptions(fk.URL, path, false)
	o.MaxTries = &two
	startBatch(t, o, recs)
	o2 := batchOptions(fk.URL, path, true)
	o2.MaxTries = &two
	r := startBatch(t, o2, recs)
	bs := fk.Stats().Batch
	if bs.LinesFailed == 0 || bs.LinesReceived != 40+bs.LinesFailed || r.answered.Load() != 40 {
		t.Fatalf("answered %d failed %d, stats %+v", r.answered.Load(), r.failed.Load(), bs)
	}
}

// A batch holds one model's lines: Mistral's batch jobs take one model, and OpenAI's queue limits
// are per model.
func TestBatchHoldsOneModel(t *testing.T) {
	for _, letter := range batchProviders() {
		t.Run(letter, func(t *testing.T) {
			fk := batchFake(t, "")
			path := filepath.Join(t.TempDir(), "answers.sqlite")
			o := batchOptionsOf(letter, fk.URL, path, true)
			second := o.Models[0]
			second.Name += "-2"
			o.Models = append(o.Models, second)
			r := startBatch(t, o, batchRecords(7))
			if st, stop := r.State(); st != "done" || r.answered.Load() != 14 {
				t.Fatalf("state %s %+v, answered %d", st, stop, r.answered.Load())
			}
			st, err := store.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			tab, err := st.Batches(r.StoreInfo().RunID)
			if err != nil {
				t.Fatal(err)
			}
			lines, _ := tab.Col("lines")
			if tab.NumRows != 2 || lines.I32[0] != 7 || lines.I32[1] != 7 {
				t.Fatalf("%d batches, lines %v", tab.NumRows, lines.I32)
			}
		})
	}
}

// storedRows are the stored jobs of a run: answered, and the reasons of the others.
func storedRows(t *testing.T, path, runID string) (answered int, reasons []string) {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.ScanRun(runID, func(row *store.Row) {
		if row.Answered {
			answered++
		} else {
			reasons = append(reasons, row.Error)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return answered, reasons
}

// Result lines with numeric error codes, status_code 0, fields no client knows, or cut in the
// middle: each line stands alone. With retries every job is answered; with max_tries = 1 every job
// ends answered or failed with its reason.
func TestBatchOddLinesEachStandAlone(t *testing.T) {
	const odd = `{"batch_fail_numeric": 0.15, "batch_garbled": 0.15, "batch_fail_zero": 0.05, "batch_unknown_fields": true}`
	for _, letter := range batchProviders() {
		t.Run(letter, func(t *testing.T) {
			fk := batchFake(t, odd)
			path := filepath.Join(t.TempDir(), "answers.sqlite")
			r := startBatch(t, batchOptionsOf(letter, fk.URL, path, true), batchRecords(100))
			bs := fk.Stats().Batch
			if st, stop := r.State(); st != "done" || r.answered.Load() != 100 {
				t.Fatalf("state %s %+v, answered %d, stats %+v", st, stop, r.answered.Load(), bs)
			}
			if bs.LinesGarbled == 0 || bs.LinesFailed == 0 || bs.LinesReceived != 100+bs.LinesGarbled+bs.LinesFailed {
				t.Fatalf("stats %+v", bs)
			}

			fk = batchFake(t, odd)
			path = filepath.Join(t.TempDir(), "answers.sqlite")
			one := 1
			o := batchOptionsOf(letter, fk.URL, path, true)
			o.MaxTries = &one
			r = startBatch(t, o, batchRecords(100))
			bs = fk.Stats().Batch
			answered, reasons := storedRows(t, path, r.StoreInfo().RunID)
			if answered != int(bs.LinesAnswered) || answered+len(reasons) != 100 || int64(len(reasons)) != bs.LinesGarbled+bs.LinesFailed {
				t.Fatalf("answered %d, failed %d, stats %+v", answered, len(reasons), bs)
			}
			unread := 0
			for _, why := range reasons {
				if strings.Contains(why, "could not be read") {
					unread++
				}
				if !strings.Contains(why, "gave up after 1 batch") {
					t.Fatalf("reason %q", why)
				}
			}
			if unread != int(bs.LinesGarbled) {
				t.Fatalf("%d of %d garbled lines failed as unreadable: %q", unread, bs.LinesGarbled, reasons)
			}
		})
	}
}

// A batch whose results cannot be read stops the call with a reason naming it, once the other
// batches are collected; its lines stay at the provider, and the next call collects them without
// submitting anything again.
func TestBatchThatCannotBeCollectedSaysWhy(t *testing.T) {
	for _, letter := range batchProviders() {
		t.Run(letter, func(t *testing.T) {
			fk := batchFake(t, "")
			// The first request for results is refused, and so is every later one for the same URL.
			var mu sync.Mutex
			gone := ""
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				if req.Method == http.MethodGet && (strings.HasSuffix(req.URL.Path, "/content") || strings.HasSuffix(req.URL.Path, "/results")) {
					mu.Lock()
					if gone == "" {
						gone = req.URL.Path
					}
					refuse := gone == req.URL.Path
					mu.Unlock()
					if refuse {
						http.Error(w, `{"error":{"message":"No such File object","type":"invalid_request_error"}}`, http.StatusNotFound)
						return
					}
				}
				fk.ServeHTTP(w, req)
			}))
			defer hs.Close()
			path := filepath.Join(t.TempDir(), "answers.sqlite")
			o := batchOptionsOf(letter, hs.URL, path, true)
			second := o.Models[0]
			second.Name += "-2"
			o.Models = append(o.Models, second)
			r := startBatch(t, o, batchRecords(6)) // two batches of 6, one per model
			st, stop := r.State()
			if st != "stopped" || stop == nil || stop.Class != "tabscreen_error_batch" ||
				!strings.Contains(stop.Message, "could not be collected") || !strings.Contains(stop.Message, "HTTP 404") {
				t.Fatalf("state %s %+v", st, stop)
			}
			if r.answered.Load() != 6 || r.Summarise().Batch.Pending != 6 {
				t.Fatalf("answered %d, pending %d: the other batch was not collected", r.answered.Load(), r.Summarise().Batch.Pending)
			}
			mu.Lock()
			gone = "(none)"
			mu.Unlock()
			r2 := startBatch(t, o, batchRecords(6))
			if st, stop := r2.State(); st != "done" || r2.answered.Load() != 12 {
				t.Fatalf("second call: state %s %+v, answered %d", st, stop, r2.answered.Load())
			}
			if bs := fk.Stats().Batch; bs.Created != 2 || bs.LinesReceived != 12 {
				t.Fatalf("lines were submitted again: %+v", bs)
			}
		})
	}
}

// A create the provider refuses every time is tried again with the same uploaded file, and the
// call stops at max_tries with the batch error class.
func TestBatchCreateRefusedAlwaysStopsAtMaxTries(t *testing.T) {
	for _, letter := range batchProviders() {
		t.Run(letter, func(t *testing.T) {
			fk := batchFake(t, `{"batch_create_fail_always": true}`)
			path := filepath.Join(t.TempDir(), "answers.sqlite")
			three := 3
			o := batchOptionsOf(letter, fk.URL, path, true)
			o.MaxTries = &three
			// The waits between the creates (1 s, 2 s) take no time on a fake clock.
			clk := clock.NewFake(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))
			var r *Run
			if err := drive(clk, func() (err error) {
				if r, err = Start(o, batchRecords(5), "sk-secret-test-key", WithClock(clk)); err == nil {
					r.Wait()
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			st, stop := r.State()
			if st != "stopped" || stop == nil || stop.Class != "tabscreen_error_batch" || !strings.Contains(stop.Message, "max_tries = 3") {
				t.Fatalf("state %s %+v", st, stop)
			}
			bs := fk.Stats().Batch
			uploads := int64(1)
			if letter == "b" { // its requests travel inline
				uploads = 0
			}
			if bs.CreateRefused != 3 || bs.Created != 0 || bs.FilesUploaded != uploads {
				t.Fatalf("stats %+v", bs)
			}
		})
	}
}
