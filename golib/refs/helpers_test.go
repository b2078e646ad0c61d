package refs

import (
	"errors"
	"testing"
)

// testTable is a file's chunks joined: each column's values and whether they are not null.
type testTable struct {
	format string
	rows   int
	names  []string
	vals   map[string][]string
	valid  map[string][]bool
	text   []string
}

func (tt *testTable) col(name string) ([]string, []bool) { return tt.vals[name], tt.valid[name] }

// value is row i of column name ("" for a null or a missing column).
func (tt *testTable) value(name string, i int) string {
	if v := tt.vals[name]; v != nil && tt.valid[name][i] {
		return v[i]
	}
	return ""
}

func collect(rd *Reader) (*testTable, error) {
	chunks, err := ReadAll(rd)
	if err != nil {
		return nil, err
	}
	tt := &testTable{format: rd.Format, vals: map[string][]string{}, valid: map[string][]bool{}, text: rd.TextColumns}
	for _, ch := range chunks {
		for _, name := range ch.Names() {
			if _, ok := tt.vals[name]; !ok {
				tt.names = append(tt.names, name)
				tt.vals[name] = make([]string, tt.rows)
				tt.valid[name] = make([]bool, tt.rows)
			}
		}
		for _, name := range tt.names {
			for i := 0; i < ch.Rows; i++ {
				v, ok := ch.Value(name, i)
				tt.vals[name] = append(tt.vals[name], v)
				tt.valid[name] = append(tt.valid[name], ok)
			}
		}
		tt.rows += ch.Rows
	}
	return tt, nil
}

func readTestFile(path string, opt Options) (*testTable, error) {
	rd, err := Open(path, opt)
	if err != nil {
		return nil, err
	}
	return collect(rd)
}

// readText reads a file's content given as text, in chunks of 2 rows (so that tests cross chunks).
func readText(t *testing.T, text string, opt Options) (*testTable, *Error) {
	t.Helper()
	if opt.NA == nil {
		opt.NA = []string{"", "NA"}
	}
	rd, err := OpenBytes([]byte(text), opt, 2)
	if err == nil {
		var tt *testTable
		if tt, err = collect(rd); err == nil {
			return tt, nil
		}
	}
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("not a refs.Error: %v", err)
	}
	return nil, re
}
