package engine

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// The answers table read back from the store is the table the run held in memory, and a
// committed answer is no longer held.
func TestAnswersComeBackFromTheStore(t *testing.T) {
	reply := func(n int64, _ map[string]any) (int, map[string]string, string) {
		if n%7 == 0 {
			return 400, nil, `{"error":{"message":"bad"}}`
		}
		return 200, nil, toolReply([]string{"1", "0", "1.1"}[n%3])
	}
	run := func(mutate func(*Options)) (*Run, *arrowio.Table) {
		fk := newFake(t, reply)
		r := runToEnd(t, options(fk.srv.URL, func(o *Options) {
			o.Models[0].Reps = 3
			o.MaxActive = 1 // the same order of replies in both runs
			if mutate != nil {
				mutate(o)
			}
		}), 20)
		return r, mustAnswers(t, r)
	}
	path := filepath.Join(t.TempDir(), "a.sqlite")
	_, memory := run(nil)
	r, stored := run(func(o *Options) { o.Store = &StoreOptions{Path: path, Temporary: true} })
	for i := range r.results {
		if res := r.results[i]; res.attempts > 0 && (!res.stored || res.payload != nil) {
			t.Fatalf("job %d kept in memory after its commit: %+v", i, res)
		}
	}
	if r.StoreInfo() != nil {
		t.Fatal("a temporary store is reported to R")
	}
	for _, name := range []string{"record", "promptid", "model", "top_p", "n", "decision_llm", "detailed_description",
		"decision_binary", "confidence", "prompt_tokens", "completion_tokens", "submodel", "failed", "tool_arguments"} {
		a, _ := memory.Col(name)
		b, _ := stored.Col(name)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("column %s differs:\n%+v\n%+v", name, a, b)
		}
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the temporary store is still there: %v", err)
	}
}

// A repairing call merges the rows it is given with its own jobs, in the answers table's order,
// aggregates them all and adds its spend to the prices it is given.
func TestResultMergesTheRepairedRows(t *testing.T) {
	fk := newFake(t, ok("0"))
	one, in, out, old := 1.0, 1.0, 1.0, 0.5
	r := runToEnd(t, options(fk.srv.URL, func(o *Options) {
		o.Models[0].Reps = 2
		o.Models[0].PriceIn, o.Models[0].PriceOut = &in, &out
		o.Jobs = []JobKey{{Record: 2, PromptID: 1, Model: "m", TopP: &one, N: 2}}
		o.Result = &ResultOptions{Aggregate: true, Repairs: &Repaired{ElapsedSeconds: 100, RunDate: "2026-01-02 03:04:05",
			Price: []PriceRow{{PromptID: 1, Model: "m", Iterations: 2, Input: &old, Output: &old}}}}
	}), 2)
	merge := arrowio.NewTable(3).AddI32("record", []int32{1, 1, 2}, nil).AddI32("promptid", []int32{1, 1, 1}, nil).
		AddStr("model", []string{"m", "m", "m"}, nil).AddF64("top_p", []float64{1, 1, 1}, nil).
		AddI32("n", []int32{2, 1, 1}, nil).AddI32("decision_binary", []int32{1, 1, 1}, nil).
		AddStr("detailed_description", []string{"", "", ""}, []bool{false, false, false}).
		AddF64("confidence", []float64{0, 0, 0}, []bool{false, false, false}).AddStr("submodel", []string{"s", "s", "s"}, nil)
	rows, agg, err := r.Result(merge)
	if err != nil {
		t.Fatal(err)
	}
	oldRow, _ := rows.Col("old_row")
	if rows.NumRows != 4 || !reflect.DeepEqual(oldRow.I32, []int32{2, 1, 3, 0}) || !oldRow.IsNull(3) {
		t.Fatalf("rows %d, old_row %v %v", rows.NumRows, oldRow.I32, oldRow.Valid)
	}
	inclP, _ := agg.Col("incl_p")
	first, _ := agg.Col("first_row")
	if agg.NumRows != 2 || !reflect.DeepEqual(inclP.F64, []float64{1, 0.5}) || !reflect.DeepEqual(first.I32, []int32{1, 3}) {
		t.Fatalf("aggregated: incl_p %v, first_row %v", inclP.F64, first.I32)
	}
	summary := r.Summarise()
	prices := summary.PriceData
	if len(prices) != 1 || *prices[0].Input != old+*prices[0].SpentInput || *prices[0].SpentInput == 0 {
		t.Fatalf("prices %+v", prices)
	}
	// The result's size, time and date are the repaired result's with this call's added.
	if summary.Total != 4 || summary.Elapsed < 100 || summary.Elapsed > 110 || summary.RunDate != "2026-01-02 03:04:05" {
		t.Fatalf("total %d, elapsed %g, run date %q", summary.Total, summary.Elapsed, summary.RunDate)
	}
}

// R puts each question of a result together from its own text, the frame and the reworded fields:
// that must give every question the run sent, and only fields R does not have come back.
func TestRewordedFieldsAndFrameGiveTheQuestions(t *testing.T) {
	fk := newFake(t, ok("1"))
	o := options(fk.srv.URL, func(o *Options) { o.Prompts = []string{"First  prompt?", "Second\nprompt?"} })
	titles := []string{"Plain title", "  Spaced\ttitle ", "NA", "Title"}
	abstracts := []string{"Plain abstract.", "Plain abstract.", "Line\n\nbreaks", ""}
	valid := []bool{true, true, true, false}
	r, err := Start(o, Records{Titles: titles, Abstracts: abstracts, AbstractValid: valid}, "sk-secret-test-key")
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	w := r.Reworded()
	record, _ := w.Col("record")
	title, _ := w.Col("title")
	abstract, _ := w.Col("abstract")
	if got := record.I32; len(got) != 3 || got[0] != 2 || got[1] != 3 || got[2] != 4 {
		t.Fatalf("reworded records %v, want 2, 3, 4", got)
	}
	want := []struct {
		title, abstract *string
	}{{ptr("Spaced title"), nil}, {ptr("No information"), ptr("Line breaks")}, {nil, ptr("No information")}}
	for k, wk := range want {
		for _, c := range []struct {
			col  arrowio.Column
			want *string
		}{{*title, wk.title}, {*abstract, wk.abstract}} {
			if (c.want == nil) != c.col.IsNull(k) || (c.want != nil && c.col.Str[k] != *c.want) {
				t.Errorf("row %d, %s: %q (null %v), want %v", k, c.col.Name, c.col.Str[k], c.col.IsNull(k), c.want)
			}
		}
	}
	frame := r.Summarise().Question
	for p := range o.Prompts {
		for i := range titles {
			tt, aa := titles[i], abstracts[i]
			for k, rec := range record.I32 {
				if int(rec) == i+1 {
					if !title.IsNull(k) {
						tt = title.Str[k]
					}
					if !abstract.IsNull(k) {
						aa = abstract.Str[k]
					}
				}
			}
			got := frame.Heads[p] + tt + frame.Middle + aa + frame.Tail
			if q := r.questions[p*len(titles)+i]; got != q {
				t.Errorf("prompt %d, record %d: %q, the run sent %q", p+1, i+1, got, q)
			}
		}
	}
}

func ptr(s string) *string { return &s }
