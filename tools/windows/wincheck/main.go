// Command wincheck is the Linux side of tools/windows/test-windows.sh: it writes the records that
// the Windows driver (driver.c) screens through the DLL under Wine, and checks what came back.
//
//	wincheck records N FILE          an Arrow IPC stream of N records (title, abstract, studyid)
//	wincheck screen DIR N REPS       the files of a finished screening in DIR
//	wincheck cancel DIR N REPS       the files of a cancelled screening in DIR
//
// DIR holds what the driver wrote: result.json (TsRunResult's metadata), answers.arrow and, for a
// screening, aggregated.arrow (TsAggregate) and runs.arrow (TsStore "runs").
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "wincheck:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: wincheck records N FILE | screen DIR N REPS | cancel DIR N REPS")
	}
	switch args[0] {
	case "records":
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return err
		}
		return writeRecords(n, args[2])
	case "screen", "cancel":
		if len(args) != 4 {
			return fmt.Errorf("%s needs DIR N REPS", args[0])
		}
		n, err1 := strconv.Atoi(args[2])
		reps, err2 := strconv.Atoi(args[3])
		if err1 != nil || err2 != nil {
			return fmt.Errorf("N and REPS must be integers")
		}
		if args[0] == "screen" {
			return checkScreen(args[1], n, reps)
		}
		return checkCancel(args[1], n*reps)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// writeRecords writes records with non-ASCII text, so that UTF-8 crosses the ABI on Windows too.
func writeRecords(n int, path string) error {
	titles, abstracts, ids := make([]string, n), make([]string, n), make([]string, n)
	for i := range n {
		titles[i] = fmt.Sprintf("Effect of intervention %d on outcomes in adults: a randomised trial", i+1)
		abstracts[i] = fmt.Sprintf("Background: study %d (Zürich, São Paulo). Methods: we randomised %d participants. Results: …", i+1, 50+i)
		ids[i] = fmt.Sprintf("S%03d", i+1)
	}
	b, err := arrowio.Encode(arrowio.NewTable(n).AddStr("title", titles, nil).AddStr("abstract", abstracts, nil).AddStr("studyid", ids, nil))
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

type summary struct {
	State     string          `json:"state"`
	Stop      json.RawMessage `json:"stop"`
	Total     int             `json:"total"`
	Answered  int             `json:"answered"`
	Failed    int             `json:"failed"`
	PriceData []struct {
		Model string   `json:"model"`
		In    *float64 `json:"input_price_dollar"`
		Out   *float64 `json:"output_price_dollar"`
	} `json:"price_data"`
	Store *struct {
		RunID string `json:"run_id"`
	} `json:"store"`
}

// checker collects every failed expectation instead of stopping at the first.
type checker struct{ problems []string }

func (c *checker) expect(ok bool, format string, a ...any) {
	if !ok {
		c.problems = append(c.problems, fmt.Sprintf(format, a...))
	}
}

func (c *checker) err() error {
	if len(c.problems) == 0 {
		return nil
	}
	return fmt.Errorf("%d problem(s):\n  %s", len(c.problems), strings.Join(c.problems, "\n  "))
}

func readSummary(dir string) (*summary, error) {
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		return nil, err
	}
	var s summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("result.json: %v", err)
	}
	return &s, nil
}

// readRun reads what the driver wrote of one run: TsRunResult's summary and the answers table.
func readRun(dir string) (*summary, *arrowio.Table, error) {
	s, err := readSummary(dir)
	if err != nil {
		return nil, nil, err
	}
	a, err := readTable(dir, "answers.arrow")
	return s, a, err
}

func readTable(dir, name string) (*arrowio.Table, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	t, err := arrowio.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return t, nil
}

// col returns a column of the expected kind, or a stand-in of n nulls after noting the problem.
func col(c *checker, t *arrowio.Table, name string, kind arrowio.Kind) *arrowio.Column {
	x, ok := t.Col(name)
	if !ok || x.Kind != kind {
		c.expect(false, "no %s column %q", kind, name)
		return &arrowio.Column{Name: name, Kind: kind, Str: make([]string, t.NumRows), I32: make([]int32, t.NumRows),
			F64: make([]float64, t.NumRows), Bool: make([]bool, t.NumRows), Valid: make([]bool, t.NumRows)}
	}
	return x
}

func checkScreen(dir string, records, reps int) error {
	jobs := records * reps
	s, a, err := readRun(dir)
	if err != nil {
		return err
	}
	c := &checker{}
	c.expect(s.State == "done", "state %q, want done (stop: %s)", s.State, s.Stop)
	c.expect(s.Total == jobs && s.Answered == jobs && s.Failed == 0, "total %d answered %d failed %d, want %d answered", s.Total, s.Answered, s.Failed, jobs)
	c.expect(len(s.PriceData) > 0, "no price_data")
	for _, p := range s.PriceData {
		c.expect(p.In != nil && *p.In > 0 && p.Out != nil && *p.Out > 0, "price of %s: input %v output %v", p.Model, p.In, p.Out)
	}

	c.expect(a.NumRows == jobs, "answers has %d rows, want %d", a.NumRows, jobs)
	failed := col(c, a, "failed", arrowio.KindBool)
	record := col(c, a, "record", arrowio.KindInt32)
	n := col(c, a, "n", arrowio.KindInt32)
	decision := col(c, a, "decision_llm", arrowio.KindUtf8)
	binary := col(c, a, "decision_binary", arrowio.KindInt32)
	promptTokens := col(c, a, "prompt_tokens", arrowio.KindInt32)
	completionTokens := col(c, a, "completion_tokens", arrowio.KindInt32)
	seen := map[[2]int32]bool{}
	for i := range a.NumRows {
		c.expect(!failed.IsNull(i) && !failed.Bool[i], "row %d failed: %q", i+1, decision.Str[i])
		c.expect(!decision.IsNull(i) && decision.Str[i] != "", "row %d has no decision", i+1)
		c.expect(!binary.IsNull(i), "row %d has no binary decision", i+1)
		c.expect(!promptTokens.IsNull(i) && promptTokens.I32[i] > 0, "row %d: prompt_tokens missing", i+1)
		c.expect(!completionTokens.IsNull(i) && completionTokens.I32[i] > 0, "row %d: completion_tokens missing", i+1)
		seen[[2]int32{record.I32[i], n.I32[i]}] = true
	}
	c.expect(len(seen) == jobs, "%d distinct (record, n) pairs, want %d", len(seen), jobs)

	agg, err := readTable(dir, "aggregated.arrow")
	c.expect(err == nil, "aggregated: %v", err)
	if err == nil {
		c.expect(agg.NumRows == records, "aggregated has %d rows, want %d", agg.NumRows, records)
		incl := col(c, agg, "incl_p", arrowio.KindFloat64)
		repsCol := col(c, agg, "reps", arrowio.KindInt32)
		for i := range agg.NumRows {
			c.expect(!incl.IsNull(i) && incl.F64[i] >= 0 && incl.F64[i] <= 1, "aggregated row %d: incl_p %v", i+1, incl.F64[i])
			c.expect(repsCol.I32[i] == int32(reps), "aggregated row %d: reps %d", i+1, repsCol.I32[i])
		}
	}

	runs, err := readTable(dir, "runs.arrow")
	c.expect(err == nil, "store runs: %v", err)
	if err == nil {
		c.expect(runs.NumRows == 1, "the store has %d runs, want 1", runs.NumRows)
		if runs.NumRows == 1 {
			id := col(c, runs, "run_id", arrowio.KindUtf8)
			status := col(c, runs, "status", arrowio.KindUtf8)
			answered := col(c, runs, "answered", arrowio.KindInt32)
			c.expect(s.Store != nil && s.Store.RunID == id.Str[0], "the result names run %v, the store %q", s.Store, id.Str[0])
			c.expect(status.Str[0] == "completed" && answered.I32[0] == int32(jobs), "stored run: status %q, %d answered", status.Str[0], answered.I32[0])
		}
	}
	if err := c.err(); err != nil {
		return err
	}
	fmt.Printf("answers: %d rows, none failed, tokens in every row; price_data: %d row(s) priced; aggregated: %d rows; store: 1 run, completed\n",
		a.NumRows, len(s.PriceData), agg.NumRows)
	return nil
}

func checkCancel(dir string, jobs int) error {
	s, a, err := readRun(dir)
	if err != nil {
		return err
	}
	c := &checker{}
	c.expect(s.State == "cancelled", "state %q, want cancelled", s.State)
	c.expect(s.Total == jobs && s.Answered+s.Failed == jobs, "total %d answered %d failed %d, want %d jobs accounted for", s.Total, s.Answered, s.Failed, jobs)
	c.expect(s.Answered > 0 && s.Failed > 0, "answered %d failed %d: the cancel came too early or too late to show", s.Answered, s.Failed)
	c.expect(a.NumRows == jobs, "answers has %d rows, want %d", a.NumRows, jobs)
	failed := col(c, a, "failed", arrowio.KindBool)
	nFailed := 0
	for i := range a.NumRows {
		if failed.Bool[i] {
			nFailed++
		}
	}
	c.expect(nFailed == s.Failed, "%d failed rows, the result says %d", nFailed, s.Failed)
	if err := c.err(); err != nil {
		return err
	}
	fmt.Printf("cancelled: %d answered + %d failed = %d jobs, one row each\n", s.Answered, s.Failed, jobs)
	return nil
}
