package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// BenchmarkSave stores b.N answers of a zero-latency run's size (a 1.7 KB request, a 0.7 KB
// response) through one session: the writer's cost per answer, commits included.
func BenchmarkSave(b *testing.B) {
	st, err := Open(filepath.Join(b.TempDir(), "bench.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	s, err := st.Claim(RunSpec{Fingerprint: "fp", Provider: "a", Endpoint: "http://x", Models: []string{"m"}, Prompts: 1,
		Records: b.N, Jobs: b.N, Settings: []byte("{}")})
	if err != nil {
		b.Fatal(err)
	}
	s.Start(func(err error) { b.Error(err) }, nil)
	request := []byte(`{"model":"gpt-6-luna","messages":[{"content":"` + strings.Repeat("Randomised trial of family therapy. ", 45) + `","role":"user"}]}`)
	response := []byte(`{"id":"chatcmpl-1","model":"gpt-6-luna","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"inclusion_decision","arguments":"{\"decision_llm\":\"1\",\"detailed_description\":\"` + strings.Repeat("reason ", 40) + `\"}"}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":420,"completion_tokens":40}}`)
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Save(Answer{Index: i, Key: JobKey(int32(i+1), 1, "m", 1, true, 1), Record: int32(i + 1), StudyID: fmt.Sprint(i + 1), PromptID: 1,
			Model: "m", TopP: 1, HasTopP: true, N: 1, Answered: true,
			Decision: screen.Decision{Raw: "1", Binary: 1, Description: strings.Repeat("reason ", 40), HasDescription: true},
			Usage:    screen.Usage{Prompt: 420, Completion: 40}, Billed: screen.Usage{Prompt: 420, Completion: 40}, Price: 0.001, HasPrice: true,
			Submodel: "gpt-6-luna", HTTPStatus: 200, Attempts: 1, RunTime: 0.01, Took: 0.01, ReceivedAt: now, Request: request, Response: response})
	}
	if err := s.Close(StatusCompleted); err != nil {
		b.Fatal(err)
	}
}

// millionStore is a store shaped like the million-job bench's (100,000 records x 10 repetitions:
// each record's request body stored once, a 0.7 KB response per answer), built once at the path
// TABSCREEN_BENCH_STORE names (it takes about a minute) and kept there for later runs.
func millionStore(b *testing.B) string {
	path := os.Getenv("TABSCREEN_BENCH_STORE")
	if path == "" {
		b.Skip("TABSCREEN_BENCH_STORE names the million-answer store to build or reuse")
	}
	if _, err := os.Stat(path); err == nil {
		return path
	}
	st, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	const records, reps = 100_000, 10
	s, err := st.Claim(RunSpec{Fingerprint: "fp", Provider: "a", Endpoint: "http://x", Models: []string{"m"}, Prompts: 1,
		Records: records, Jobs: records * reps, Settings: []byte("{}")})
	if err != nil {
		b.Fatal(err)
	}
	s.Start(func(err error) { b.Error(err) }, nil)
	response := []byte(`{"id":"chatcmpl-1","model":"gpt-6-luna","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"inclusion_decision","arguments":"{\"decision_llm\":\"1\",\"detailed_description\":\"` + strings.Repeat("reason ", 70) + `\"}"}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":420,"completion_tokens":40}}`)
	now := time.Now()
	for r := 1; r <= records; r++ {
		request := []byte(fmt.Sprintf(`{"model":"gpt-6-luna","messages":[{"content":"%d %s","role":"user"}]}`, r, strings.Repeat("Randomised trial of family therapy. ", 95)))
		for n := 1; n <= reps; n++ {
			s.Save(Answer{Index: r, Key: JobKey(int32(r), 1, "m", 1, true, int32(n)), Record: int32(r), StudyID: fmt.Sprint(r), PromptID: 1,
				Model: "m", TopP: 1, HasTopP: true, N: int32(n), Answered: true,
				Decision: screen.Decision{Raw: "1", Binary: 1, Description: strings.Repeat("reason ", 40), HasDescription: true},
				Usage:    screen.Usage{Prompt: 420, Completion: 40}, Billed: screen.Usage{Prompt: 420, Completion: 40}, Price: 0.001, HasPrice: true,
				Submodel: "gpt-6-luna", HTTPStatus: 200, Attempts: 1, RunTime: 0.01, Took: 0.01, ReceivedAt: now, Request: request, Response: response})
		}
	}
	if err := s.Close(StatusCompleted); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkIntegrityCheck is the check a run's first open of a file makes (integrity.go), on the
// million-answer store of millionStore: TABSCREEN_BENCH_STORE=/tmp/million.sqlite go test
// -run '^$' -bench IntegrityCheck -benchtime 5x ./golib/store/ (bench/README.md).
func BenchmarkIntegrityCheck(b *testing.B) {
	path := millionStore(b)
	abs, _ := filepath.Abs(path)
	fi, _ := os.Stat(abs)
	b.SetBytes(fi.Size())
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		distrust(abs)
		if err := verify(abs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
}
