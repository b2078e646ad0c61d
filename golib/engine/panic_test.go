package engine

import (
	"strings"
	"testing"

	"github.com/tabscreen/tabscreen/golib/provider"
)

func init() { provider.Register(provider.PanicTest) }

// A panic in a job's goroutine fails that job and stops the run with an internal error; the jobs
// answered before it keep their answers and every job is accounted for.
func TestPanicInAJobStopsTheRunAndKeepsTheAnswers(t *testing.T) {
	fk := newFake(t, ok("1"))
	o := options(fk.srv.URL, func(o *Options) { o.Provider = "test-panic"; o.MaxActive = 1 })
	titles := []string{"one", "two", "three", "PANIC here", "five", "six"}
	r, err := Start(o, Records{Titles: titles, Abstracts: make([]string, len(titles))}, "k")
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	state, stop := r.State()
	if state != "stopped" || stop.Class != "tabscreen_error_internal" || !strings.Contains(stop.Message, "adapter bug") {
		t.Fatalf("state %s stop %+v", state, stop)
	}
	for i := 0; i < 3; i++ {
		if !r.results[i].ok {
			t.Fatalf("job %d: %+v", i, r.results[i])
		}
	}
	if res := r.results[3]; res.ok || !strings.Contains(res.reason, "internal error in the Go core: adapter bug") {
		t.Fatalf("panicked job: %+v", res)
	}
	if sum := r.Summarise(); sum.Answered+sum.Failed != int64(len(titles)) {
		t.Fatalf("%d + %d jobs", sum.Answered, sum.Failed)
	}
}
