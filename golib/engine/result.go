package engine

import (
	"fmt"
	"sort"

	"github.com/tabscreen/tabscreen/golib/arrowio"
	"github.com/tabscreen/tabscreen/golib/screen"
)

// The result of a call, built in Go from what the run holds: the rows of every job in the order
// of the answers table (with, for screen_errors(), the answered rows of the result it repairs
// merged in), their aggregation (spec section 3), and the prices. R adds only what is R's: the
// user's columns and text, by record.

// mergeRow is an answered row of the result being repaired, as R hands it over.
type mergeRow struct {
	record, prompt, model, topP, n int32 // record: position in the run; model, topP: indices
	answer                         screen.Answer
}

// readMerge reads the rows R hands over (columns record, promptid, model, top_p, n,
// decision_binary, detailed_description, confidence, submodel).
func (r *Run) readMerge(t *arrowio.Table) ([]mergeRow, error) {
	if t == nil || t.NumRows == 0 {
		return nil, nil
	}
	answers, err := answersFrom(t)
	if err != nil {
		return nil, fmt.Errorf("the rows to merge: %v", err)
	}
	models := make(map[string]int32, len(r.opts.Models))
	for m, mo := range r.opts.Models {
		models[mo.Name] = int32(m)
	}
	out := make([]mergeRow, len(answers))
	for i, a := range answers {
		m, ok := models[a.Model]
		if !ok {
			return nil, fmt.Errorf("the rows to merge name model %q, which is not one of the run's", a.Model)
		}
		t := int32(-1)
		if len(r.opts.TopP) > 0 {
			t = int32(indexOf(r.opts.TopP, a.TopP))
			if t < 0 {
				return nil, fmt.Errorf("the rows to merge have top_p %g, which is not one of the run's", a.TopP)
			}
		}
		out[i] = mergeRow{record: a.Record, prompt: a.PromptID - 1, model: m, topP: t, n: a.N, answer: a}
	}
	return out, nil
}

func indexOf(values []float64, v float64) int {
	for i, x := range values {
		if x == v {
			return i
		}
	}
	return -1
}

// Result builds the call's result tables: the rows (this call's jobs, and the merged rows, each
// of which has old_row, its 1-based place among the rows merged), and, when the options ask for
// it, their aggregation with first_row, the 1-based row each aggregated row takes its record's
// text from.
func (r *Run) Result(merge *arrowio.Table) (rows, aggregated *arrowio.Table, err error) {
	r.dropSettled()
	answers, err := r.Answers()
	if err != nil {
		return nil, nil, err
	}
	old, err := r.readMerge(merge)
	if err != nil {
		return nil, nil, err
	}
	r.mergedRows = len(old)
	order := r.rowOrder(old)
	if old != nil {
		answers = withMerged(answers, old, order)
	}
	if r.opts.Result == nil || !r.opts.Result.Aggregate {
		return answers, nil, nil
	}
	return answers, r.aggregate(answers, old, order), nil
}

// dropSettled takes the jobs adaptive repetitions never sent out of the run's jobs: they were
// never requests, so they have no row.
func (r *Run) dropSettled() {
	if r.adapt == nil || r.compacted {
		return
	}
	r.compacted = true
	kept := 0
	for i := range r.jobs {
		if !r.results[i].settled {
			r.jobs[kept], r.results[kept] = r.jobs[i], r.results[i]
			kept++
		}
	}
	r.jobs, r.results = r.jobs[:kept], r.results[:kept]
}

// rowRef is one row of the result: a job of this call (job >= 0) or a merged row.
type rowRef struct {
	job, old int
}

// rowOrder is the order of the result's rows: prompt, model, top_p (the user's orders), record
// (its position in the run), repetition. A call's own jobs are in that order already.
func (r *Run) rowOrder(old []mergeRow) []rowRef {
	refs := make([]rowRef, 0, len(r.jobs)+len(old))
	for i := range r.jobs {
		refs = append(refs, rowRef{job: i, old: -1})
	}
	if len(old) == 0 {
		return refs
	}
	for k := range old {
		refs = append(refs, rowRef{job: -1, old: k})
	}
	key := func(ref rowRef) [5]int32 {
		if ref.job >= 0 {
			j := r.jobs[ref.job]
			return [5]int32{j.prompt, j.model, j.topP, r.recordInRun(j.record), j.n}
		}
		o := old[ref.old]
		return [5]int32{o.prompt, o.model, o.topP, o.record, o.n}
	}
	sort.SliceStable(refs, func(a, b int) bool {
		ka, kb := key(refs[a]), key(refs[b])
		for i := range ka {
			if ka[i] != kb[i] {
				return ka[i] < kb[i]
			}
		}
		return false
	})
	return refs
}

// withMerged puts this call's rows and the merged ones in the result's order; a merged row
// carries its place (old_row) and its job's keys, R keeping the rest of it.
func withMerged(answers *arrowio.Table, old []mergeRow, order []rowRef) *arrowio.Table {
	n := len(order)
	out := arrowio.NewTable(n)
	oldRow, oldValid := make([]int32, n), make([]bool, n)
	for i, ref := range order {
		if ref.old >= 0 {
			oldRow[i], oldValid[i] = int32(ref.old+1), true
		}
	}
	for ci := range answers.Columns {
		c := &answers.Columns[ci]
		nc := arrowio.Column{Name: c.Name, Kind: c.Kind, Valid: make([]bool, n)}
		switch c.Kind {
		case arrowio.KindUtf8:
			nc.Str = make([]string, n)
		case arrowio.KindInt32:
			nc.I32 = make([]int32, n)
		case arrowio.KindFloat64:
			nc.F64 = make([]float64, n)
		case arrowio.KindBool:
			nc.Bool = make([]bool, n)
		}
		for i, ref := range order {
			if ref.old >= 0 {
				continue
			}
			j := ref.job
			nc.Valid[i] = !c.IsNull(j)
			switch c.Kind {
			case arrowio.KindUtf8:
				nc.Str[i] = c.Str[j]
			case arrowio.KindInt32:
				nc.I32[i] = c.I32[j]
			case arrowio.KindFloat64:
				nc.F64[i] = c.F64[j]
			case arrowio.KindBool:
				nc.Bool[i] = c.Bool[j]
			}
		}
		out.Columns = append(out.Columns, nc)
	}
	return out.AddI32("old_row", oldRow, oldValid)
}

// aggregate runs spec section 3 over the result's rows, answered and failed, merged ones
// included. The rows of a record x prompt x model x top_p follow one another (the rows are ordered
// by prompt, model, top_p, record, then repetition), so each group is aggregated as it ends,
// without a copy of every row.
func (r *Run) aggregate(rows *arrowio.Table, old []mergeRow, order []rowRef) *arrowio.Table {
	o := r.opts.Result
	cut := screen.EffectiveCutoffs(o.Upper, o.Lower)
	col := func(name string) *arrowio.Column { c, _ := rows.Col(name); return c }
	binary, desc, conf, sub, failed := col("decision_binary"), col("detailed_description"), col("confidence"),
		col("submodel"), col("failed")
	answer := func(i int, ref rowRef) screen.Answer {
		if ref.old >= 0 {
			return old[ref.old].answer
		}
		j := r.jobs[ref.job]
		a := screen.Answer{Record: r.recordInRun(j.record), PromptID: j.prompt + 1, Model: r.opts.Models[j.model].Name, N: j.n,
			Binary: binary.I32[i], HasBinary: !binary.IsNull(i) && !failed.Bool[i],
			Description: desc.Str[i], HasDescription: !desc.IsNull(i),
			Confidence: conf.F64[i], HasConfidence: !conf.IsNull(i), Submodel: sub.Str[i], HasSubmodel: !sub.IsNull(i)}
		if j.topP >= 0 {
			a.TopP, a.HasTopP = r.opts.TopP[j.topP], true
		}
		return a
	}
	var groups []screen.Aggregated
	var first, sent []int32
	var group []screen.Answer
	flush := func() {
		g := screen.AggregateGroup(group, cut)
		if r.opts.Adaptive != nil {
			// reps stays what was asked; reps_sent says how many of them were requests.
			sent = append(sent, g.Reps)
			g.Reps = int32(r.opts.Models[r.modelIndex(g.Model)].Reps)
		}
		groups = append(groups, g)
		group = group[:0]
	}
	for i, ref := range order {
		a := answer(i, ref)
		if len(group) > 0 && !sameGroup(group[0], a) {
			flush()
		}
		if len(group) == 0 {
			first = append(first, int32(i+1))
		}
		group = append(group, a)
	}
	if len(group) > 0 {
		flush()
	}
	out := aggregatedTable(groups)
	if r.opts.Adaptive != nil {
		out.AddI32("reps_sent", sent, nil)
	}
	return out.AddI32("first_row", first, nil)
}

func (r *Run) modelIndex(name string) int {
	for m, mo := range r.opts.Models {
		if mo.Name == name {
			return m
		}
	}
	return 0
}

func sameGroup(a, b screen.Answer) bool {
	return a.Record == b.Record && a.PromptID == b.PromptID && a.Model == b.Model && a.TopP == b.TopP && a.HasTopP == b.HasTopP
}

// Cutoffs are the run's effective inclusion cut-offs.
func (r *Run) Cutoffs() *screen.Cutoffs {
	if r.opts.Result == nil {
		return nil
	}
	c := screen.EffectiveCutoffs(r.opts.Result.Upper, r.opts.Result.Lower)
	return &c
}

// mergePrices adds this call's spend to the price rows of the result it repairs, keyed by prompt,
// model and repetitions, in order of first appearance; an unknown price stays unknown. What this
// call spent stays its own.
func mergePrices(old, call []PriceRow) []PriceRow {
	type key struct {
		prompt     int32
		model      string
		iterations int32
	}
	add := func(a, b *float64) *float64 {
		if a == nil || b == nil {
			return nil
		}
		s := *a + *b
		return &s
	}
	index := map[key]int{}
	out := make([]PriceRow, 0, len(old)+len(call))
	for _, p := range old {
		index[key{p.PromptID, p.Model, p.Iterations}] = len(out)
		out = append(out, PriceRow{PromptID: p.PromptID, Model: p.Model, Iterations: p.Iterations, Input: p.Input, Output: p.Output,
			CachedTokens: p.CachedTokens, CacheWriteTokens: p.CacheWriteTokens, CacheSaving: p.CacheSaving})
	}
	for _, p := range call {
		k := key{p.PromptID, p.Model, p.Iterations}
		g, ok := index[k]
		if !ok {
			g = len(out)
			index[k] = g
			zero := 0.0
			saving := 0.0
			out = append(out, PriceRow{PromptID: p.PromptID, Model: p.Model, Iterations: p.Iterations, Input: &zero, Output: &zero,
				CacheSaving: &saving})
		}
		// The cache tokens of the jobs this call re-sent (the tokens screen_errors() carries over
		// from error_data have no cache split, so only this call's count).
		out[g].CachedTokens += p.CachedTokens
		out[g].CacheWriteTokens += p.CacheWriteTokens
		out[g].CacheSaving = add(out[g].CacheSaving, p.CacheSaving)
		out[g].Input, out[g].Output = add(out[g].Input, p.SpentInput), add(out[g].Output, p.SpentOutput)
		out[g].SpentInput, out[g].SpentOutput = p.SpentInput, p.SpentOutput
	}
	return out
}
