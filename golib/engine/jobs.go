package engine

import (
	"fmt"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// job is one request to make: a record, a prompt, a model, a top_p and a repetition.
type job struct {
	record int32 // 0-based
	prompt int32 // 0-based
	model  int32 // index into Options.Models
	topP   int32 // index into Options.TopP, -1 without a top_p dimension
	n      int32 // 1-based repetition
}

// expandJobs lists the jobs in the order of the answers table: prompt, model (the user's order),
// top_p, record, repetition. With keys, only those jobs are kept (screen_errors()), and the keys are
// returned by job.
func expandJobs(o *Options, records int) ([]job, map[jobID]*JobKey, error) {
	topPs := len(o.TopP)
	topPIndex := []int32{-1}
	if topPs > 0 {
		topPIndex = make([]int32, topPs)
		for i := range topPIndex {
			topPIndex[i] = int32(i)
		}
	}
	want, err := wantedJobs(o)
	if err != nil {
		return nil, nil, err
	}
	var jobs []job
	for p := range o.Prompts {
		for m, mo := range o.Models {
			for _, t := range topPIndex {
				for r := 0; r < records; r++ {
					for n := 1; n <= mo.Reps; n++ {
						j := job{int32(r), int32(p), int32(m), t, int32(n)}
						if want != nil && want[keyOf(o, j)] == nil {
							continue
						}
						jobs = append(jobs, j)
					}
				}
			}
		}
	}
	if want != nil && len(jobs) != len(want) {
		return nil, nil, fmt.Errorf("%d of the %d jobs to re-run do not belong to this run's grid", len(want)-len(jobs), len(want))
	}
	return jobs, want, nil
}

type jobID struct {
	record, prompt int32
	model          string
	topP           float64
	n              int32
}

func keyOf(o *Options, j job) jobID {
	k := jobID{record: j.record, prompt: j.prompt, model: o.Models[j.model].Name, n: j.n}
	if j.topP >= 0 {
		k.topP = o.TopP[j.topP]
	}
	return k
}

func wantedJobs(o *Options) (map[jobID]*JobKey, error) {
	if o.Jobs == nil {
		return nil, nil
	}
	want := make(map[jobID]*JobKey, len(o.Jobs))
	for i := range o.Jobs {
		k := &o.Jobs[i]
		id := jobID{record: k.Record - 1, prompt: k.PromptID - 1, model: k.Model, n: k.N}
		if k.TopP != nil {
			id.topP = *k.TopP
		}
		if want[id] != nil {
			return nil, fmt.Errorf("job %+v is listed twice", *k)
		}
		want[id] = k
	}
	return want, nil
}

// givenUsage is what screen_errors() says a job was billed before: the tokens of its row in
// error_data, if that has token columns (without the split into cached and cache-write tokens).
func givenUsage(k *JobKey) (screen.Usage, bool) {
	if k == nil || (k.PromptTokens == nil && k.CompletionTokens == nil) {
		return screen.Usage{}, false
	}
	var u screen.Usage
	if k.PromptTokens != nil {
		u.Prompt = *k.PromptTokens
	}
	if k.CompletionTokens != nil {
		u.Completion = *k.CompletionTokens
	}
	return u, true
}

// carryGiven starts each re-sent job's tokens with what the earlier calls spent on it.
func (r *Run) carryGiven(given map[jobID]*JobKey) {
	if given == nil {
		return
	}
	for i, j := range r.jobs {
		u, _ := givenUsage(given[keyOf(r.opts, j)])
		r.results[i].carried = packUsage(u)
	}
}
