package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A run cancelled half way keeps what it received; the same call then sends only the rest, and the
// result is the whole grid with the first run's answers in it.
func TestStoreResumesAnInterruptedRun(t *testing.T) {
	gate := make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	defer release()
	fk := newFake(t, func(n int64, _ map[string]any) (int, map[string]string, string) {
		if n > 10 {
			<-gate // later requests hang until the test opens the gate
		}
		return 200, nil, toolReply("1")
	})
	path := filepath.Join(t.TempDir(), "answers.sqlite")
	withStore := func(o *Options) {
		o.Store = &StoreOptions{Path: path}
		o.MaxActive = 4
	}
	recs := Records{Titles: make([]string, 30), Abstracts: make([]string, 30)}
	for i := range recs.Titles {
		recs.Titles[i] = "Title " + string(rune('A'+i))
	}
	r, err := Start(options(fk.srv.URL, withStore), recs, "sk-secret-test-key")
	if err != nil {
		t.Fatal(err)
	}
	for r.answered.Load() < 10 {
		time.Sleep(5 * time.Millisecond)
	}
	r.Cancel()
	r.Wait()
	if st, _ := r.State(); st != "cancelled" {
		t.Fatalf("state %s", st)
	}
	first := r.StoreInfo()
	if first == nil || first.Resumed || first.RunID == "" {
		t.Fatalf("store info %+v", first)
	}

	sentBefore := fk.requests.Load()
	r2, err := Start(options(fk.srv.URL, withStore), recs, "sk-secret-test-key")
	if err != nil {
		t.Fatal(err)
	}
	info := r2.StoreInfo()
	if !info.Resumed || info.RunID != first.RunID || info.Stored != 10 || info.Total != 30 {
		t.Fatalf("resume info %+v", info)
	}
	release()
	r2.Wait()
	if r2.answered.Load() != 30 || r2.failed.Load() != 0 {
		t.Fatalf("answered %d failed %d", r2.answered.Load(), r2.failed.Load())
	}
	// The requests hung at the cancel were sent, not answered: they are sent again, nothing else.
	if resent := fk.requests.Load() - sentBefore; resent != 20 {
		t.Fatalf("the resumed run sent %d requests, want 20", resent)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(path + "-wal")
	if bytes.Contains(raw, []byte("sk-secret-test-key")) || bytes.Contains(wal, []byte("sk-secret-test-key")) {
		t.Fatal("the API key is in the store file")
	}
	if !bytes.Contains(append(raw, wal...), []byte("Title A")) {
		t.Fatal("the request bodies are not in the store file")
	}
}

// Changing anything that decides the answers makes another run; retry settings do not.
func TestFingerprint(t *testing.T) {
	recs := Records{Titles: []string{"t1", "t2"}, Abstracts: []string{"a1", "a2"}}
	base := fingerprint(options("http://x/v1/chat/completions", nil), recs)
	tries := 9
	seed := int64(3)
	tests := []struct {
		name   string
		mutate func(*Options)
		recs   Records
		same   bool
	}{
		{"max_tries", func(o *Options) { o.MaxTries = &tries }, recs, true},
		{"rpm", func(o *Options) { o.Models[0].RPM = 5 }, recs, true},
		{"prompt", func(o *Options) { o.Prompts = []string{"other"} }, recs, false},
		{"model", func(o *Options) { o.Models[0].Name = "m2" }, recs, false},
		{"reps", func(o *Options) { o.Models[0].Reps = 2 }, recs, false},
		{"seed", func(o *Options) { o.Seed = &seed }, recs, false},
		{"top_p", func(o *Options) { o.TopP = []float64{0.5} }, recs, false},
		{"endpoint", func(o *Options) { o.APIURL = "http://y/v1/chat/completions" }, recs, false},
		{"record text", nil, Records{Titles: []string{"t1", "t2x"}, Abstracts: []string{"a1", "a2"}}, false},
		{"text moved between fields", nil, Records{Titles: []string{"t1a", "t2"}, Abstracts: []string{"1", "a2"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fingerprint(options("http://x/v1/chat/completions", tc.mutate), tc.recs)
			if (got == base) != tc.same {
				t.Fatalf("same=%v, want %v", got == base, tc.same)
			}
		})
	}
}
