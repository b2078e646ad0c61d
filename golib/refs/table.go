package refs

import (
	"strings"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// The named columns every table of a tagged format (RIS, MEDLINE, Web of Science, BibTeX) has, in
// this order, whether or not a record has the field, so that the tables of different exports have
// the same shape (R/refs.R lists the same names).
var namedColumns = []string{
	"title", "abstract", "authors", "year", "journal", "doi", "pmid", "keywords", "type", "database_id",
	"accession_number", "editors", "date", "secondary_title", "journal_full", "journal_abbrev", "volume",
	"issue", "start_page", "end_page", "issn", "publisher", "place", "language", "url", "notes",
}

// Columns that come after the extra ones, when a record has them.
var trailingColumns = []string{colMerged, colRepeated, colDecision, colNote}

const (
	colRepeated = "repeated_tags"
	colDecision = "tabscreen_decision"
	colNote     = "tabscreen_note"
	colMerged   = "merged_ids"
	multiSep    = "; "
)

// Columns that hold several values joined by "; ".
var multiColumns = map[string]bool{"authors": true, "editors": true, "keywords": true}

// A cell of the row being built: a column's values in the order met.
type cell struct {
	col  string
	vals []string
}

// row collects one record's columns before it is added to the table.
type row struct {
	cells []cell
	idx   map[string]int
}

func newRow() *row { return &row{idx: make(map[string]int, 64)} }

func (r *row) reset() {
	r.cells = r.cells[:0]
	clear(r.idx)
}

// add appends a value to col.
func (r *row) add(col, val string) {
	if i, ok := r.idx[col]; ok {
		r.cells[i].vals = append(r.cells[i].vals, val)
		return
	}
	r.idx[col] = len(r.cells)
	if len(r.cells) < cap(r.cells) {
		r.cells = r.cells[:len(r.cells)+1]
		c := &r.cells[len(r.cells)-1]
		c.col, c.vals = col, append(c.vals[:0], val)
		return
	}
	r.cells = append(r.cells, cell{col: col, vals: []string{val}})
}

// has reports whether col has a value.
func (r *row) has(col string) bool {
	i, ok := r.idx[col]
	return ok && len(r.cells[i].vals) > 0
}

// first is col's first value, "" when it has none.
func (r *row) first(col string) string {
	if i, ok := r.idx[col]; ok && len(r.cells[i].vals) > 0 {
		return r.cells[i].vals[0]
	}
	return ""
}

// values are col's values.
func (r *row) values(col string) []string {
	if i, ok := r.idx[col]; ok {
		return r.cells[i].vals
	}
	return nil
}

// set replaces col's values with one.
func (r *row) set(col, val string) {
	if i, ok := r.idx[col]; ok {
		r.cells[i].vals = append(r.cells[i].vals[:0], val)
		return
	}
	r.add(col, val)
}

// drop removes col.
func (r *row) drop(col string) {
	i, ok := r.idx[col]
	if !ok {
		return
	}
	r.cells[i].vals = r.cells[i].vals[:0]
}

type strColumn struct {
	vals  []string
	valid []bool
}

// tableBuilder gathers rows into columns; a column first met at row k gets nulls before it.
type tableBuilder struct {
	n      int
	cols   map[string]*strColumn
	extra  []string // columns that are neither named nor trailing, in order of first appearance
	years  []int32
	yValid []bool
}

func newTableBuilder() *tableBuilder {
	t := &tableBuilder{cols: make(map[string]*strColumn, 64)}
	for _, name := range namedColumns {
		if name != "year" {
			t.cols[name] = &strColumn{}
		}
	}
	return t
}

var isNamed = func() map[string]bool {
	m := make(map[string]bool, len(namedColumns)+len(trailingColumns))
	for _, c := range namedColumns {
		m[c] = true
	}
	for _, c := range trailingColumns {
		m[c] = true
	}
	return m
}()

// addRow appends a row: multi-valued columns are joined by "; ", the trailing ones by line breaks
// (repeated tags and notes are lines), others keep their first value; year is its own column.
func (t *tableBuilder) addRow(r *row, year int32, hasYear bool) {
	for i := range r.cells {
		c := &r.cells[i]
		if len(c.vals) == 0 {
			continue
		}
		col, ok := t.cols[c.col]
		if !ok {
			col = &strColumn{}
			t.cols[c.col] = col
			if !isNamed[c.col] {
				t.extra = append(t.extra, c.col)
			}
		}
		var v string
		switch {
		case len(c.vals) == 1:
			v = c.vals[0]
		case multiColumns[c.col]:
			v = strings.Join(c.vals, multiSep)
		case c.col == colRepeated || c.col == colNote:
			v = strings.Join(c.vals, "\n")
		case c.col == colDecision || c.col == colMerged:
			v = strings.Join(c.vals, multiSep)
		default:
			v = c.vals[0]
		}
		col.pad(t.n)
		col.vals = append(col.vals, v)
		col.valid = append(col.valid, true)
	}
	t.years = append(t.years, year)
	t.yValid = append(t.yValid, hasYear)
	t.n++
}

func (c *strColumn) pad(n int) {
	for len(c.vals) < n {
		c.vals = append(c.vals, "")
		c.valid = append(c.valid, false)
	}
}

// table is the Arrow table of the rows: the named columns, the extra ones, then the trailing ones
// that any record has.
func (t *tableBuilder) table() *arrowio.Table {
	out := arrowio.NewTable(t.n)
	add := func(name string) {
		c := t.cols[name]
		c.pad(t.n)
		out.AddStr(name, c.vals, c.valid)
	}
	for _, name := range namedColumns {
		if name == "year" {
			out.AddI32("year", t.years, t.yValid)
			continue
		}
		add(name)
	}
	for _, name := range t.extra {
		add(name)
	}
	for _, name := range trailingColumns {
		if _, ok := t.cols[name]; ok {
			add(name)
		}
	}
	return out
}
