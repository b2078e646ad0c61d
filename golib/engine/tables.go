package engine

import (
	"fmt"
	"time"

	"github.com/tabscreen/tabscreen/golib/arrowio"
	"github.com/tabscreen/tabscreen/golib/screen"
	"github.com/tabscreen/tabscreen/golib/store"
)

const dateLayout = "2006-01-02 15:04:05"

// answerColumns are the columns of the answers table being built.
type answerColumns struct {
	record, promptID, iterations, reps, attempts      []int32
	model, decision, description, submodel, date      []string
	arguments                                         []string
	topP, confidence, runTime                         []float64
	binary, promptTokens, completionTokens            []int32
	failed                                            []bool
	argumentsValid, topPValid, descValid, confValid   []bool
	binaryValid, tokensValid, submodelValid, runValid []bool
}

func newAnswerColumns(n int) *answerColumns {
	return &answerColumns{
		record: make([]int32, n), promptID: make([]int32, n), iterations: make([]int32, n), reps: make([]int32, n),
		attempts: make([]int32, n), model: make([]string, n), decision: make([]string, n), description: make([]string, n),
		submodel: make([]string, n), date: make([]string, n), arguments: make([]string, n), topP: make([]float64, n),
		confidence: make([]float64, n), runTime: make([]float64, n), binary: make([]int32, n), promptTokens: make([]int32, n),
		completionTokens: make([]int32, n), failed: make([]bool, n), argumentsValid: make([]bool, n), topPValid: make([]bool, n),
		descValid: make([]bool, n), confValid: make([]bool, n), binaryValid: make([]bool, n), tokensValid: make([]bool, n),
		submodelValid: make([]bool, n), runValid: make([]bool, n),
	}
}

// set fills row i with a job's outcome: an answer, or a failure with its reason.
func (c *answerColumns) set(i int, ok bool, d screen.Decision, reason string, spent screen.Usage, submodel string,
	runTime float64, date time.Time) {
	if !date.IsZero() {
		c.date[i] = date.Format(dateLayout)
	}
	if ok {
		c.decision[i], c.binary[i], c.binaryValid[i] = d.Raw, d.Binary, true
		c.description[i], c.descValid[i] = d.Description, d.HasDescription
		c.arguments[i], c.argumentsValid[i] = d.Arguments, d.Arguments != ""
		c.confidence[i], c.confValid[i] = d.Confidence, d.HasConfidence
		c.promptTokens[i], c.completionTokens[i], c.tokensValid[i] = int32(spent.Prompt), int32(spent.Completion), true
		c.submodel[i], c.submodelValid[i] = submodel, submodel != ""
		c.runTime[i], c.runValid[i] = runTime, true
		return
	}
	c.failed[i] = true
	c.decision[i] = reason
	if spent != (screen.Usage{}) {
		// Unusable replies were billed: their tokens stay visible on the failed row.
		c.promptTokens[i], c.completionTokens[i], c.tokensValid[i] = int32(spent.Prompt), int32(spent.Completion), true
	}
}

func (c *answerColumns) table(n int) *arrowio.Table {
	t := arrowio.NewTable(n)
	t.AddI32("record", c.record, nil).AddI32("promptid", c.promptID, nil).AddStr("model", c.model, nil)
	t.AddF64("top_p", c.topP, c.topPValid).AddI32("iterations", c.iterations, nil).AddI32("n", c.reps, nil)
	t.AddStr("decision_llm", c.decision, nil).AddStr("detailed_description", c.description, c.descValid)
	t.AddI32("decision_binary", c.binary, c.binaryValid).AddF64("confidence", c.confidence, c.confValid)
	t.AddI32("prompt_tokens", c.promptTokens, c.tokensValid).AddI32("completion_tokens", c.completionTokens, c.tokensValid)
	t.AddStr("submodel", c.submodel, c.submodelValid).AddF64("run_time", c.runTime, c.runValid)
	t.AddStr("run_date", c.date, nil).AddBool("failed", c.failed, nil).AddI32("attempts", c.attempts, nil)
	t.AddStr("tool_arguments", c.arguments, c.argumentsValid)
	return t
}

// Answers is the answers table of ARCHITECTURE.md: one row per job of this call, answered or
// failed. What the store committed is read back from it; the rest is in memory.
func (r *Run) Answers() (*arrowio.Table, error) {
	n := len(r.jobs)
	c := newAnswerColumns(n)
	hasTopP := len(r.opts.TopP) > 0
	for i, j := range r.jobs {
		c.record[i], c.promptID[i], c.reps[i] = j.record+1, j.prompt+1, j.n
		c.model[i] = r.opts.Models[j.model].Name
		c.iterations[i] = int32(r.opts.Models[j.model].Reps)
		if hasTopP {
			c.topP[i], c.topPValid[i] = r.opts.TopP[j.topP], true
		}
		res := &r.results[i]
		c.attempts[i] = res.attempts
		if res.payload != nil {
			c.set(i, res.ok, res.decision, res.reason, res.spent(), res.submodel, res.runTime, res.date())
		}
	}
	if err := r.readStored(c); err != nil {
		return nil, err
	}
	return c.table(n), nil
}

// readStored fills the rows of the jobs the store holds.
func (r *Run) readStored(c *answerColumns) error {
	if r.session == nil {
		return nil
	}
	st, err := store.Open(r.storeInfo.Path)
	if err != nil {
		return err
	}
	defer st.Close()
	index := r.jobIndex()
	// Most rows share their decision, submodel and second: one string each, not one per row.
	interned := map[string]string{}
	intern := func(s string) string {
		if v, ok := interned[s]; ok {
			return v
		}
		if len(interned) < 1<<16 {
			interned[s] = s
		}
		return s
	}
	err = st.ScanRun(r.session.RunID, func(row *store.Row) {
		i, ok := index(row)
		if !ok || !r.results[i].stored {
			return
		}
		date := row.ReceivedAt
		if !date.IsZero() {
			date = date.Local()
		}
		d := row.Decision
		d.Raw = intern(d.Raw)
		c.set(i, row.Answered, d, row.Error, row.Billed, intern(row.Submodel), row.RunTime, date)
		c.date[i] = intern(c.date[i])
	})
	return err
}

// jobIndex maps a stored job to its place in this call's jobs. The jobs of a whole run follow one
// another in a fixed order, so a job's place is a sum; a call that re-sends some jobs
// (screen_errors()) looks them up.
func (r *Run) jobIndex() func(*store.Row) (int, bool) {
	o := r.opts
	models := make(map[string]int, len(o.Models))
	for m, mo := range o.Models {
		models[mo.Name] = m
	}
	topPs := make(map[float64]int, len(o.TopP))
	for t, v := range o.TopP {
		topPs[v] = t
	}
	var local map[int32]int32 // record of the run -> record of this call
	if idx := o.Store.RecordIndex; idx != nil {
		local = make(map[int32]int32, len(idx))
		for i, v := range idx {
			local[v] = int32(i)
		}
	}
	key := func(row *store.Row) (job, bool) {
		m, ok := models[row.Model]
		if !ok || row.PromptID < 1 || int(row.PromptID) > len(o.Prompts) || row.N < 1 || int(row.N) > o.Models[m].Reps {
			return job{}, false
		}
		j := job{record: row.Record - 1, prompt: row.PromptID - 1, model: int32(m), topP: -1, n: row.N}
		if local != nil {
			if j.record, ok = local[row.Record]; !ok {
				return job{}, false
			}
		}
		if j.record < 0 || int(j.record) >= r.records {
			return job{}, false
		}
		if len(o.TopP) > 0 {
			t, ok := topPs[row.TopP]
			if !ok || !row.HasTopP {
				return job{}, false
			}
			j.topP = int32(t)
		}
		return j, true
	}
	if o.Jobs != nil || r.compacted {
		byJob := make(map[job]int, len(r.jobs))
		for i, j := range r.jobs {
			byJob[j] = i
		}
		return func(row *store.Row) (int, bool) {
			j, ok := key(row)
			if !ok {
				return 0, false
			}
			i, ok := byJob[j]
			return i, ok
		}
	}
	tops := max(len(o.TopP), 1)
	perPrompt, before := 0, make([]int, len(o.Models))
	for m, mo := range o.Models {
		before[m] = perPrompt
		perPrompt += tops * r.records * mo.Reps
	}
	return func(row *store.Row) (int, bool) {
		j, ok := key(row)
		if !ok {
			return 0, false
		}
		reps := o.Models[j.model].Reps
		t := max(j.topP, 0)
		return int(j.prompt)*perPrompt + before[j.model] + (int(t)*r.records+int(j.record))*reps + int(j.n) - 1, true
	}
}

// Reworded is the table of the fields the questions hold otherwise than R sent them: record, and
// title and abstract as the questions hold them (null where they are R's). With QuestionFrame, it
// is what R needs to put every question of the result together from its own text.
func (r *Run) Reworded() *arrowio.Table {
	w := &r.reworded
	return arrowio.NewTable(len(w.record)).AddI32("record", w.record, nil).
		AddStr("title", w.title, w.titleSet).AddStr("abstract", w.abstract, w.abstractSet)
}

// QuestionFrame is what a question holds besides its record's fields: a head per prompt, then the
// title, the middle, the abstract and the tail.
type QuestionFrame struct {
	Heads  []string `json:"heads"`
	Middle string   `json:"middle"`
	Tail   string   `json:"tail"`
}

func (r *Run) questionFrame() QuestionFrame {
	f := QuestionFrame{Heads: make([]string, len(r.opts.Prompts)), Middle: screen.QuestionMiddle, Tail: screen.QuestionTail}
	for i, p := range r.opts.Prompts {
		f.Heads[i] = screen.QuestionHead(p)
	}
	return f
}

// PriceRow is one row of price_data: every billed token, re-asked and failed replies included, of
// the whole run (earlier calls' included: the tokens of the answers table), and the part of it
// this call spent.
type PriceRow struct {
	PromptID    int32    `json:"promptid"`
	Model       string   `json:"model"`
	Iterations  int32    `json:"iterations"`
	Input       *float64 `json:"input_price_dollar"`
	Output      *float64 `json:"output_price_dollar"`
	SpentInput  *float64 `json:"spent_input_price_dollar"`
	SpentOutput *float64 `json:"spent_output_price_dollar"`
	// The whole run's input tokens read from and written to the provider's prompt cache, and what
	// the cache saved (null when the input price is unknown).
	CachedTokens     int64    `json:"cached_input_tokens"`
	CacheWriteTokens int64    `json:"cache_write_tokens"`
	CacheSaving      *float64 `json:"cache_saving_dollar"`
}

// Prices sums the cost per prompt x model x iterations, without rounding.
func (r *Run) Prices() []PriceRow {
	type key struct {
		prompt, model int32
	}
	index := map[key]int{}
	var rows []PriceRow
	var sums [][5]float64 // input, output, spent input, spent output, cache saving
	known := []bool{}
	for i, j := range r.jobs {
		k := key{j.prompt, j.model}
		g, ok := index[k]
		if !ok {
			g = len(rows)
			index[k] = g
			rows = append(rows, PriceRow{PromptID: j.prompt + 1, Model: r.opts.Models[j.model].Name,
				Iterations: int32(r.opts.Models[j.model].Reps)})
			sums = append(sums, [5]float64{})
			known = append(known, true)
		}
		res := &r.results[i]
		spent := res.spent()
		rows[g].CachedTokens += spent.Cached
		rows[g].CacheWriteTokens += spent.CacheWrite
		saving, _ := r.prices[j.model].CacheSaving(spent)
		sums[g][4] += saving
		in, out, ok := r.prices[j.model].Cost(spent)
		spentIn, spentOut, _ := r.prices[j.model].Cost(res.billed.unpack())
		if !ok {
			known[g] = false
			continue
		}
		sums[g][0] += in
		sums[g][1] += out
		sums[g][2] += spentIn
		sums[g][3] += spentOut
	}
	for g := range rows {
		if known[g] {
			s := sums[g]
			rows[g].Input, rows[g].Output, rows[g].SpentInput, rows[g].SpentOutput = &s[0], &s[1], &s[2], &s[3]
			rows[g].CacheSaving = &s[4]
		}
	}
	return rows
}

// Summary is the result metadata of ARCHITECTURE.md.
type Summary struct {
	State string      `json:"state"`
	Stop  interface{} `json:"stop"`
	// Total, Elapsed, RunDate and PriceData are the result's: a repairing call adds its own to
	// the repaired result's (ResultOptions.Repairs).
	Total       int        `json:"total"`
	Answered    int64      `json:"answered"`
	Failed      int64      `json:"failed"`
	Unsent      int64      `json:"unsent"`
	Elapsed     float64    `json:"elapsed_seconds"`
	RunDate     string     `json:"run_date"`
	PriceData   []PriceRow `json:"price_data"`
	BlankFields int        `json:"blank_fields"`
	// Question is the frame of the questions (see Reworded).
	Question QuestionFrame `json:"question"`
	Store    *StoreInfo    `json:"store,omitempty"`
	// Cutoffs are the effective inclusion cut-offs of the aggregation, when the options ask for it.
	Cutoffs *screen.Cutoffs `json:"cutoffs,omitempty"`
	// Batch is a batch screening's state: its open batches and the jobs waiting in them.
	Batch *BatchState `json:"batch,omitempty"`
	// SavedRequests: the jobs adaptive repetitions never sent, their groups' verdicts being settled
	// (null without adaptive repetitions).
	SavedRequests *int64 `json:"saved_requests,omitempty"`
}

// Summarise describes the finished run.
func (r *Run) Summarise() Summary {
	state, stop := r.State()
	s := Summary{State: state, Total: len(r.jobs), Answered: r.answered.Load(), Failed: r.failed.Load(),
		Unsent: r.unsent.Load(), Elapsed: r.elapsed.Seconds(), RunDate: r.clock.Now().Format(dateLayout), PriceData: r.Prices(), BlankFields: r.blankFields,
		Question: r.questionFrame(), Store: r.StoreInfo(), Cutoffs: r.Cutoffs(), Batch: r.batchState()}
	if r.opts.Adaptive != nil {
		saved := r.adapt.settledJobs()
		if o := r.opts.Result; o != nil && o.Repairs != nil {
			saved += o.Repairs.SavedRequests
		}
		s.SavedRequests = &saved
	}
	if o := r.opts.Result; o != nil && o.Repairs != nil {
		s.PriceData = mergePrices(o.Repairs.Price, s.PriceData)
		s.Total += r.mergedRows
		s.Elapsed += o.Repairs.ElapsedSeconds
		if o.Repairs.RunDate != "" {
			s.RunDate = o.Repairs.RunDate
		}
	}
	if s.PriceData == nil {
		s.PriceData = []PriceRow{}
	}
	if stop != nil {
		s.Stop = map[string]any{"class": stop.Class, "message": stop.Message, "hint": stop.Hint, "status": stop.Status}
	}
	return s
}

// AggregateTable runs spec section 3 over an answers table (from a run, or merged by
// screen_errors()).
func AggregateTable(t *arrowio.Table, c screen.Cutoffs) (*arrowio.Table, error) {
	answers, err := answersFrom(t)
	if err != nil {
		return nil, err
	}
	return aggregatedTable(screen.Aggregate(answers, c)), nil
}

// aggregatedTable is the aggregated table of ARCHITECTURE.md.
func aggregatedTable(rows []screen.Aggregated) *arrowio.Table {
	n := len(rows)
	out := arrowio.NewTable(n)
	record, prompt, finalNum, reps, missing := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	model, final, longest, submodel := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	topP, inclP, meanConf := make([]float64, n), make([]float64, n), make([]float64, n)
	topPValid, inclValid, longestValid, confValid, subValid := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
	for i, g := range rows {
		record[i], prompt[i], model[i] = g.Record, g.PromptID, g.Model
		topP[i], topPValid[i] = g.TopP, g.HasTopP
		inclP[i], inclValid[i] = g.InclP, g.HasInclP
		final[i], finalNum[i] = g.Final, g.FinalNum
		longest[i], longestValid[i] = g.LongestAnswer, g.HasLongestAnswer
		meanConf[i], confValid[i] = g.MeanConfidence, g.HasMeanConfidence
		reps[i], missing[i] = g.Reps, g.MissingCount
		submodel[i], subValid[i] = g.Submodel, g.HasSubmodel
	}
	out.AddI32("record", record, nil).AddI32("promptid", prompt, nil).AddStr("model", model, nil)
	out.AddF64("top_p", topP, topPValid).AddF64("incl_p", inclP, inclValid)
	out.AddStr("final_decision_llm", final, nil).AddI32("final_decision_llm_num", finalNum, nil)
	out.AddStr("longest_answer", longest, longestValid).AddF64("mean_confidence", meanConf, confValid)
	out.AddI32("reps", reps, nil).AddI32("n_mis_answers", missing, nil).AddStr("submodel", submodel, subValid)
	return out
}

func answersFrom(t *arrowio.Table) ([]screen.Answer, error) {
	col := func(name string, kind arrowio.Kind) (*arrowio.Column, error) {
		c, ok := t.Col(name)
		if !ok {
			return nil, fmt.Errorf("the answers table has no column %q", name)
		}
		if c.Kind != kind {
			return nil, fmt.Errorf("column %q is %s, not %s", name, c.Kind, kind)
		}
		return c, nil
	}
	var cols [9]*arrowio.Column
	specs := []struct {
		name string
		kind arrowio.Kind
	}{{"record", arrowio.KindInt32}, {"promptid", arrowio.KindInt32}, {"model", arrowio.KindUtf8},
		{"top_p", arrowio.KindFloat64}, {"n", arrowio.KindInt32}, {"decision_binary", arrowio.KindInt32},
		{"detailed_description", arrowio.KindUtf8}, {"confidence", arrowio.KindFloat64}, {"submodel", arrowio.KindUtf8}}
	for i, s := range specs {
		c, err := col(s.name, s.kind)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	record, prompt, model, topP, n, binary, desc, conf, sub := cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], cols[8]
	out := make([]screen.Answer, t.NumRows)
	for i := range out {
		out[i] = screen.Answer{Record: record.I32[i], PromptID: prompt.I32[i], Model: model.Str[i],
			TopP: topP.F64[i], HasTopP: !topP.IsNull(i), N: n.I32[i],
			Binary: binary.I32[i], HasBinary: !binary.IsNull(i),
			Description: desc.Str[i], HasDescription: !desc.IsNull(i),
			Confidence: conf.F64[i], HasConfidence: !conf.IsNull(i),
			Submodel: sub.Str[i], HasSubmodel: !sub.IsNull(i)}
	}
	return out, nil
}
