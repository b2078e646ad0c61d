package engine_test

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tabscreen/tabscreen/golib/engine"
	"github.com/tabscreen/tabscreen/golib/fakeprovider"
)

// BenchmarkRun screens b.N records through the engine, with the answer store, against the fake
// provider in this process: the engine's own cost per request (profile it with -cpuprofile).
func BenchmarkRun(b *testing.B) {
	fake, err := fakeprovider.New(fakeprovider.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	abstract := strings.Repeat("Randomised trial of family therapy for adolescents. ", 40)
	recs := engine.Records{Titles: make([]string, b.N), Abstracts: make([]string, b.N)}
	for i := range recs.Titles {
		recs.Titles[i], recs.Abstracts[i] = fmt.Sprintf("Title %d", i), abstract
	}
	rpm, tries := 1e7, 16
	o := &engine.Options{Provider: "a", APIURL: srv.URL + "/v1/chat/completions", Prompts: []string{"Include?"}, Role: "user",
		Models: []engine.ModelOptions{{Name: "gpt-6-luna", Reps: 1, RPM: rpm}}, RPM: &rpm, TopP: []float64{1},
		Builtin: engine.BuiltinOptions{Overinclusive: true}, MaxTries: &tries, Timeout: 60,
		Store: &engine.StoreOptions{Path: filepath.Join(b.TempDir(), "bench.sqlite")}}
	b.ResetTimer()
	r, err := engine.Start(o, recs, "sk-bench")
	if err != nil {
		b.Fatal(err)
	}
	r.Wait()
	if _, _, err := r.Result(nil); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if s := r.Summarise(); s.Answered != int64(b.N) {
		b.Fatalf("%d of %d answered", s.Answered, b.N)
	}
}
