package batch

import (
	"context"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-resty/resty/v2"

	"github.com/tabscreen/tabscreen/golib/clock"
	"github.com/tabscreen/tabscreen/golib/fakeprovider"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/store"
)

// memStore keeps batches in memory.
type memStore struct {
	mu      sync.Mutex
	batches []store.Batch
}

func (m *memStore) BatchIntent(tag string, ids, keys []string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	jobs := map[string]string{}
	for i := range ids {
		jobs[ids[i]] = keys[i]
	}
	m.batches = append(m.batches, store.Batch{ID: int64(len(m.batches) + 1), Tag: tag, State: store.BatchIntent,
		Lines: len(ids), Jobs: jobs})
	return int64(len(m.batches)), nil
}

func (m *memStore) BatchUpdate(id int64, providerID, state string, _, _ int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := &m.batches[id-1]
	if providerID != "" {
		b.ProviderID = providerID
	}
	b.State = state
	return nil
}

func (m *memStore) BatchCollected(int64) error                    { return nil }
func (m *memStore) OpenBatches() ([]store.Batch, error)           { return nil, nil }
func (m *memStore) KnownBatchIDs() (map[string]bool, error)       { return map[string]bool{}, nil }
func (m *memStore) Deliver(string, provider.BatchLine, bool) bool { return false }
func (m *memStore) Pending(string)                                {}

// recordingClock records the length of every wait.
type recordingClock struct {
	*clock.Fake
	mu    sync.Mutex
	waits []time.Duration
}

func (c *recordingClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	return c.Fake.NewTimer(d)
}

// fakeBatchAPI is the batch API of provider letter at a fake with the configuration patch, and
// the line of one request.
func fakeBatchAPI(t *testing.T, letter, patch string) (*fakeprovider.Server, provider.BatchAPI, []byte) {
	t.Helper()
	srv, err := fakeprovider.New(fakeprovider.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.UpdateConfig([]byte(patch), false); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	d, _ := provider.Lookup(letter)
	url := map[string]string{"a": hs.URL + "/v1/chat/completions", "c": hs.URL + "/mistral/v1/chat/completions"}[letter]
	model := map[string]string{"a": "gpt-6-luna", "c": "mistral-small-latest"}[letter]
	api := d.Batch(provider.Settings{URL: url, APIKey: "sk-batch-test"})
	line, _ := api.Line("j0", provider.Request{Body: []byte(`{"model":"` + model + `","messages":[{"role":"user","content":"Include?"}]}`)})
	return srv, api, line
}

// A refused create waits a second and is tried again; then the polls wait a quarter second,
// growing by half each time, on the injected clock.
func TestCreateRetryAndPollBackoffAreOnTheClock(t *testing.T) {
	srv, api, line := fakeBatchAPI(t, "a", `{"batches": true, "batch_delay_ms": 3600000, "batch_create_fail_once": true}`)
	fc := &recordingClock{Fake: clock.NewFake(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))}
	ms := &memStore{}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{API: api, Client: resty.New(), Clock: fc, Store: ms, Sink: ms, Wait: true, Poll: DefaultPoll}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, []Job{{Key: "k0", CustomID: "j0", Line: line}}) }()
	for {
		fc.mu.Lock()
		n := len(fc.waits)
		fc.mu.Unlock()
		if n >= 8 {
			cancel()
			break
		}
		if next, ok := fc.NextDeadline(); ok {
			fc.Advance(next.Sub(fc.Now()))
		} else {
			runtime.Gosched()
		}
	}
	<-done
	want := []time.Duration{time.Second, 250 * time.Millisecond, 375 * time.Millisecond, 562500 * time.Microsecond}
	for i, w := range want {
		if fc.waits[i] != w {
			t.Fatalf("waits %v, want them to start with %v", fc.waits, want)
		}
	}
	for i := 2; i < len(fc.waits); i++ {
		if fc.waits[i] <= fc.waits[i-1] || fc.waits[i] > time.Minute {
			t.Fatalf("waits %v do not grow to a minute", fc.waits)
		}
	}
	if st := srv.Stats().Batch; st.Created != 1 || st.CreateRefused != 1 || st.LinesReceived != 1 {
		t.Fatalf("stats %+v", st)
	}
	if ms.batches[0].ProviderID == "" {
		t.Fatal("the batch's id was not recorded")
	}
}

// A create refused every time is tried again with the file uploaded once, until max_seconds: after
// waits of 1 s and 2 s, the next wait (4 s) would pass 5 s.
func TestCreateRefusedAlwaysStopsAtMaxSeconds(t *testing.T) {
	srv, api, line := fakeBatchAPI(t, "c", `{"batches": true, "batch_create_fail_always": true}`)
	fc := &recordingClock{Fake: clock.NewFake(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))}
	ms := &memStore{}
	r := &Runner{API: api, Client: resty.New(), Clock: fc, Store: ms, Sink: ms, Wait: true, MaxWait: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background(), []Job{{Key: "k0", CustomID: "j0", Line: line}}) }()
	var runErr error
	for running := true; running; {
		select {
		case runErr = <-done:
			running = false
		default:
			if next, ok := fc.NextDeadline(); ok {
				fc.Advance(next.Sub(fc.Now()))
			} else {
				runtime.Gosched()
			}
		}
	}
	if runErr == nil || !strings.Contains(runErr.Error(), "max_seconds = 5 reached") || !strings.Contains(runErr.Error(), "HTTP 429") {
		t.Fatalf("error %v", runErr)
	}
	if st := srv.Stats().Batch; st.CreateRefused != 3 || st.FilesUploaded != 1 || st.Created != 0 {
		t.Fatalf("stats %+v", st)
	}
	if want := []time.Duration{time.Second, 2 * time.Second}; !reflect.DeepEqual(fc.waits, want) {
		t.Fatalf("waits %v, want %v", fc.waits, want)
	}
}
