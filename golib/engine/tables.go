package engine

import (
	"fmt"

	"github.com/tabscreen/tabscreen/golib/arrowio"
	"github.com/tabscreen/tabscreen/golib/screen"
)

const dateLayout = "2006-01-02 15:04:05"

// Answers is the answers table of ARCHITECTURE.md: one row per job, answered or failed.
func (r *Run) Answers() *arrowio.Table {
	n := len(r.jobs)
	record, promptID, iterations, reps, attempts := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	model, decision, description, submodel, date := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	arguments, argumentsValid := make([]string, n), make([]bool, n)
	topP, confidence, runTime := make([]float64, n), make([]float64, n), make([]float64, n)
	binary, promptTokens, completionTokens := make([]int32, n), make([]int32, n), make([]int32, n)
	failed := make([]bool, n)
	topPValid, descValid, confValid, binaryValid := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
	tokensValid, submodelValid, runTimeValid := make([]bool, n), make([]bool, n), make([]bool, n)
	hasTopP := len(r.opts.TopP) > 0
	for i, j := range r.jobs {
		res := &r.results[i]
		record[i], promptID[i], reps[i] = j.record+1, j.prompt+1, j.n
		model[i] = r.opts.Models[j.model].Name
		iterations[i] = int32(r.opts.Models[j.model].Reps)
		if hasTopP {
			topP[i], topPValid[i] = r.opts.TopP[j.topP], true
		}
		attempts[i] = res.attempts
		if !res.date.IsZero() {
			date[i] = res.date.Format(dateLayout)
		}
		if res.ok {
			d := res.decision
			decision[i], binary[i], binaryValid[i] = d.Raw, d.Binary, true
			description[i], descValid[i] = d.Description, d.HasDescription
			arguments[i], argumentsValid[i] = d.Arguments, d.Arguments != ""
			confidence[i], confValid[i] = d.Confidence, d.HasConfidence
			spent := res.spent()
			promptTokens[i], completionTokens[i], tokensValid[i] = int32(spent.Prompt), int32(spent.Completion), true
			submodel[i], submodelValid[i] = res.submodel, res.submodel != ""
			runTime[i], runTimeValid[i] = res.runTime, true
			continue
		}
		failed[i] = true
		decision[i] = res.reason
		if spent := res.spent(); spent != (screen.Usage{}) {
			// Unusable replies were billed: their tokens stay visible on the failed row.
			promptTokens[i], completionTokens[i], tokensValid[i] = int32(spent.Prompt), int32(spent.Completion), true
		}
	}
	t := arrowio.NewTable(n)
	t.AddI32("record", record, nil).AddI32("promptid", promptID, nil).AddStr("model", model, nil)
	t.AddF64("top_p", topP, topPValid).AddI32("iterations", iterations, nil).AddI32("n", reps, nil)
	t.AddStr("decision_llm", decision, nil).AddStr("detailed_description", description, descValid)
	t.AddI32("decision_binary", binary, binaryValid).AddF64("confidence", confidence, confValid)
	t.AddI32("prompt_tokens", promptTokens, tokensValid).AddI32("completion_tokens", completionTokens, tokensValid)
	t.AddStr("submodel", submodel, submodelValid).AddF64("run_time", runTime, runTimeValid)
	t.AddStr("run_date", date, nil).AddBool("failed", failed, nil).AddI32("attempts", attempts, nil)
	t.AddStr("tool_arguments", arguments, argumentsValid)
	return t
}

// Questions is the questions table: the text each record was sent with, per prompt.
func (r *Run) Questions() *arrowio.Table {
	records := r.records
	n := len(r.questions)
	record, promptID := make([]int32, n), make([]int32, n)
	for i := range r.questions {
		promptID[i], record[i] = int32(i/records)+1, int32(i%records)+1
	}
	return arrowio.NewTable(n).AddI32("record", record, nil).AddI32("promptid", promptID, nil).AddStr("question", r.questions, nil)
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
}

// Prices sums the cost per prompt x model x iterations, without rounding.
func (r *Run) Prices() []PriceRow {
	type key struct {
		prompt, model int32
	}
	index := map[key]int{}
	var rows []PriceRow
	var sums [][4]float64 // input, output, spent input, spent output
	known := []bool{}
	for i, j := range r.jobs {
		k := key{j.prompt, j.model}
		g, ok := index[k]
		if !ok {
			g = len(rows)
			index[k] = g
			rows = append(rows, PriceRow{PromptID: j.prompt + 1, Model: r.opts.Models[j.model].Name,
				Iterations: int32(r.opts.Models[j.model].Reps)})
			sums = append(sums, [4]float64{})
			known = append(known, true)
		}
		res := &r.results[i]
		in, out, ok := r.prices[j.model].Cost(res.spent())
		spentIn, spentOut, _ := r.prices[j.model].Cost(res.billed)
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
		}
	}
	return rows
}

// Summary is the result metadata of ARCHITECTURE.md.
type Summary struct {
	State       string      `json:"state"`
	Stop        interface{} `json:"stop"`
	Total       int         `json:"total"`
	Answered    int64       `json:"answered"`
	Failed      int64       `json:"failed"`
	Elapsed     float64     `json:"elapsed_seconds"`
	RunDate     string      `json:"run_date"`
	PriceData   []PriceRow  `json:"price_data"`
	BlankFields int         `json:"blank_fields"`
	Store       *StoreInfo  `json:"store,omitempty"`
}

// Summarise describes the finished run.
func (r *Run) Summarise() Summary {
	state, stop := r.State()
	s := Summary{State: state, Total: len(r.jobs), Answered: r.answered.Load(), Failed: r.failed.Load(),
		Elapsed: r.elapsed.Seconds(), RunDate: r.clock.Now().Format(dateLayout), PriceData: r.Prices(), BlankFields: r.blankFields,
		Store: r.storeInfo}
	if s.PriceData == nil {
		s.PriceData = []PriceRow{}
	}
	if stop != nil {
		s.Stop = map[string]string{"class": stop.Class, "message": stop.Message}
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
	rows := screen.Aggregate(answers, c)
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
	return out, nil
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
