package store

import (
	"fmt"
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
