package refs

import (
	"io"
	"sync"

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

// columns numbers the columns of one file's table, so that a row and a chunk find a column by
// its number, not by hashing its name for every value of the file.
type columns struct {
	ids   map[string]int
	names []string
}

func newColumns() *columns { return &columns{ids: make(map[string]int, 64)} }

// id is the number of the column name, given one when it is new.
func (g *columns) id(name string) int {
	if i, ok := g.ids[name]; ok {
		return i
	}
	i := len(g.names)
	g.ids[name] = i
	g.names = append(g.names, name)
	return i
}

// row collects one record's columns before it is added to the table: each column's values in
// the order met, by column number.
type row struct {
	g    *columns
	vals [][]string
	used []int // the columns with values, in the order of their first value
}

func newRow(g *columns) *row { return &row{g: g} }

func (r *row) reset() {
	for _, id := range r.used {
		r.vals[id] = r.vals[id][:0]
	}
	r.used = r.used[:0]
}

// addID appends a value to column id.
func (r *row) addID(id int, val string) {
	for id >= len(r.vals) {
		r.vals = append(r.vals, nil)
	}
	if len(r.vals[id]) == 0 {
		r.used = append(r.used, id)
	}
	r.vals[id] = append(r.vals[id], val)
}

// add appends a value to col.
func (r *row) add(col, val string) { r.addID(r.g.id(col), val) }

func (r *row) hasID(id int) bool { return id < len(r.vals) && len(r.vals[id]) > 0 }

// has reports whether col has a value.
func (r *row) has(col string) bool {
	id, ok := r.g.ids[col]
	return ok && r.hasID(id)
}

// values are col's values.
func (r *row) values(col string) []string {
	if id, ok := r.g.ids[col]; ok && id < len(r.vals) {
		return r.vals[id]
	}
	return nil
}

// first is col's first value, "" when it has none.
func (r *row) first(col string) string {
	if v := r.values(col); len(v) > 0 {
		return v[0]
	}
	return ""
}

// set replaces col's values with one.
func (r *row) set(col, val string) {
	id := r.g.id(col)
	if r.hasID(id) {
		r.vals[id] = append(r.vals[id][:0], val)
		return
	}
	r.addID(id, val)
}

// colBuf is a text column in Arrow's layout, value i being data[offsets[i]:offsets[i+1]]: no Go
// string per value, and nothing for the garbage collector to scan, however large the file.
type colBuf struct {
	id      int // the column's number
	offsets []int32
	data    []byte
	valid   []bool
}

// newColBuf is column id's buffer with room for rows values and dataCap bytes (the size of the
// same column in the chunk before: the chunks of a file are alike), so that it is not copied as
// it grows. It reuses the column's buffer of a released chunk of the same file when there is
// one: a file's reading then allocates about three chunks' worth, not the file's size, and the
// collector has little to do.
func (p *bufPool) newColBuf(id, rows, dataCap int) *colBuf {
	p.mu.Lock()
	free := p.free[id]
	var c *colBuf
	if n := len(free); n > 0 {
		c, p.free[id] = free[n-1], free[:n-1]
	}
	p.mu.Unlock()
	if c == nil {
		return &colBuf{id: id, offsets: make([]int32, 1, rows+1), data: make([]byte, 0, dataCap), valid: make([]bool, 0, rows)}
	}
	c.offsets, c.data, c.valid = append(c.offsets[:0], 0), c.data[:0], c.valid[:0]
	if cap(c.data) < dataCap {
		c.data = make([]byte, 0, dataCap)
	}
	return c
}

// bufPool holds the column buffers of a file's released chunks (it goes with the reading).
type bufPool struct {
	mu   sync.Mutex
	free map[int][]*colBuf
}

func newBufPool() *bufPool { return &bufPool{free: map[int][]*colBuf{}} }

// Release hands the chunk's buffers back for the file's next chunks; the chunk must not be used
// after.
func (c *Chunk) Release() {
	c.pool.mu.Lock()
	for _, b := range c.cols {
		if b != nil {
			c.pool.free[b.id] = append(c.pool.free[b.id], b)
		}
	}
	c.pool.mu.Unlock()
	c.cols, c.names = nil, nil
}

// padTo adds nulls up to n values.
func (c *colBuf) padTo(n int) {
	for len(c.valid) < n {
		c.offsets = append(c.offsets, int32(len(c.data)))
		c.valid = append(c.valid, false)
	}
}

// push adds a value made of parts joined by sep.
func (c *colBuf) push(parts []string, sep string) {
	for k, p := range parts {
		if k > 0 {
			c.data = append(c.data, sep...)
		}
		c.data = append(c.data, p...)
	}
	c.offsets = append(c.offsets, int32(len(c.data)))
	c.valid = append(c.valid, true)
}

// Chunk is a block of rows of a file's table, as the reader hands them on: R receives a file in
// chunks, so that neither side ever holds the whole file twice.
type Chunk struct {
	Rows   int
	pool   *bufPool
	names  []string
	cols   []*colBuf // nil for the year column
	years  []int32
	yValid []bool
}

// Bytes is about the size of the chunk's IPC stream: its buffers and their metadata.
func (c *Chunk) Bytes() int {
	n := 4096 + len(c.names)*256 + 4*len(c.years) + c.Rows
	for _, b := range c.cols {
		if b != nil {
			n += len(b.data) + 4*len(b.offsets) + len(b.valid)/8 + 64
		}
	}
	return n
}

// Names are the chunk's column names.
func (c *Chunk) Names() []string { return c.names }

// Value is the text of column name in row i (the year as text), and whether it is not null.
func (c *Chunk) Value(name string, i int) (string, bool) {
	for k, n := range c.names {
		if n != name {
			continue
		}
		if c.cols[k] == nil {
			if !c.yValid[i] {
				return "", false
			}
			return itoa(int(c.years[i])), true
		}
		b := c.cols[k]
		return string(b.data[b.offsets[i]:b.offsets[i+1]]), b.valid[i]
	}
	return "", false
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// WriteIPC writes the chunk as an Arrow IPC stream (one record batch): utf8 columns, and year as
// int32, written from the column buffers without copying them first.
func (c *Chunk) WriteIPC(w io.Writer) error {
	cols := make([]arrowio.Packed, len(c.names))
	for k, name := range c.names {
		if b := c.cols[k]; b != nil {
			cols[k] = arrowio.Packed{Name: name, Offsets: b.offsets, Data: b.data, Valid: b.valid}
		} else {
			cols[k] = arrowio.Packed{Name: name, I32: c.years, Valid: c.yValid}
		}
	}
	return arrowio.WritePacked(w, c.Rows, cols)
}

// How a column's several values of a record are joined.
const (
	joinFirst = iota // a single-valued column keeps its first value
	joinSemi         // multi-valued columns, the decisions and merged ids: "; "
	joinLines        // repeated tags and notes, which are lines: "\n"
)

func joinOf(name string) int {
	switch {
	case multiColumns[name] || name == colDecision || name == colMerged:
		return joinSemi
	case name == colRepeated || name == colNote:
		return joinLines
	}
	return joinFirst
}

// chunkBuilder gathers rows into column buffers; a column first met at row k gets nulls before
// it. Tagged formats always have the named columns (the year an integer); a CSV has its own.
type chunkBuilder struct {
	tagged bool
	g      *columns
	pool   *bufPool
	rows   int         // the rows a chunk holds
	sizes  map[int]int // each column's bytes in the chunk before
	n      int
	cols   []*colBuf // by column number; nil for the columns the chunk has not met
	joins  []int
	order  []int // the columns in the order the chunk has them (the extra ones by first appearance)
	years  []int32
	yValid []bool
}

func newChunkBuilder(tagged bool, g *columns, pool *bufPool, rows int, sizes map[int]int) *chunkBuilder {
	t := &chunkBuilder{tagged: tagged, g: g, pool: pool, rows: rows, sizes: sizes}
	if tagged {
		for _, name := range namedColumns {
			if name != "year" {
				t.column(g.id(name))
			}
		}
		t.years, t.yValid = make([]int32, 0, rows), make([]bool, 0, rows)
	}
	return t
}

// next is the builder of the chunk after this one.
func (t *chunkBuilder) next() *chunkBuilder {
	sizes := make(map[int]int, len(t.cols))
	for id, c := range t.cols {
		if c != nil {
			sizes[id] = len(c.data)
		}
	}
	return newChunkBuilder(t.tagged, t.g, t.pool, t.rows, sizes)
}

// column is the buffer of column id, made when the chunk first meets it.
func (t *chunkBuilder) column(id int) *colBuf {
	for id >= len(t.cols) {
		t.cols = append(t.cols, nil)
		t.joins = append(t.joins, joinFirst)
	}
	if c := t.cols[id]; c != nil {
		return c
	}
	size := t.sizes[id]
	c := t.pool.newColBuf(id, t.rows, size+size/8)
	t.cols[id] = c
	name := t.g.names[id]
	t.joins[id] = joinOf(name)
	if !t.tagged || !isNamed[name] {
		t.order = append(t.order, id)
	}
	return c
}

// addRow appends a row: multi-valued columns are joined by "; ", repeated tags and notes by line
// breaks (they are lines), the decisions and merged ids by "; "; others keep their first value.
func (t *chunkBuilder) addRow(r *row, year int32, hasYear bool) {
	for _, id := range r.used {
		vals := r.vals[id]
		col := t.column(id)
		col.padTo(t.n)
		switch {
		case len(vals) == 1:
			col.push(vals, "")
		case t.joins[id] == joinSemi:
			col.push(vals, multiSep)
		case t.joins[id] == joinLines:
			col.push(vals, "\n")
		default:
			col.push(vals[:1], "")
		}
	}
	if t.tagged {
		t.years = append(t.years, year)
		t.yValid = append(t.yValid, hasYear)
	}
	t.n++
}

// chunk is the rows so far: the named columns, the extra ones, then the trailing ones that any
// record has (tagged formats), or the columns in their order (CSV).
func (t *chunkBuilder) chunk() *Chunk {
	ch := &Chunk{Rows: t.n, pool: t.pool}
	add := func(id int) {
		c := t.cols[id]
		c.padTo(t.n)
		ch.names = append(ch.names, t.g.names[id])
		ch.cols = append(ch.cols, c)
	}
	if !t.tagged {
		for _, id := range t.order {
			add(id)
		}
		return ch
	}
	for _, name := range namedColumns {
		if name == "year" {
			ch.names = append(ch.names, "year")
			ch.cols = append(ch.cols, nil)
			ch.years, ch.yValid = t.years, t.yValid
			continue
		}
		add(t.g.id(name))
	}
	for _, id := range t.order {
		add(id)
	}
	for _, name := range trailingColumns {
		if id, ok := t.g.ids[name]; ok && id < len(t.cols) && t.cols[id] != nil {
			add(id)
		}
	}
	return ch
}
