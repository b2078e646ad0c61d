package refs

import (
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
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

// colBuf is a text column in Arrow's layout, value i being data[offsets[i]:offsets[i+1]]: no Go
// string per value, and nothing for the garbage collector to scan, however large the file.
type colBuf struct {
	offsets []int32
	data    []byte
	valid   []bool
}

// newColBufCap is a column with room for rows values and dataCap bytes (the size of the same
// column in the chunk before: the chunks of a file are alike), so that it is not copied as it
// grows.
func newColBufCap(rows, dataCap int) *colBuf {
	c := &colBuf{offsets: make([]int32, 1, rows+1), data: make([]byte, 0, dataCap), valid: make([]bool, 0, rows)}
	return c
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
// int32. The arrays are made over the column buffers without copying them.
func (c *Chunk) WriteIPC(w io.Writer) error {
	fields := make([]arrow.Field, len(c.names))
	arrs := make([]arrow.Array, len(c.names))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for k, name := range c.names {
		fields[k] = arrow.Field{Name: name, Nullable: true}
		if c.cols[k] == nil {
			fields[k].Type = arrow.PrimitiveTypes.Int32
			bits, nulls := bitmap(c.yValid)
			data := array.NewData(arrow.PrimitiveTypes.Int32, c.Rows,
				[]*memory.Buffer{bits, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(c.years))}, nil, nulls, 0)
			arrs[k] = array.NewInt32Data(data)
			data.Release()
			continue
		}
		b := c.cols[k]
		fields[k].Type = arrow.BinaryTypes.String
		bits, nulls := bitmap(b.valid)
		data := array.NewData(arrow.BinaryTypes.String, c.Rows,
			[]*memory.Buffer{bits, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(b.offsets)), memory.NewBufferBytes(b.data)},
			nil, nulls, 0)
		arrs[k] = array.NewStringData(data)
		data.Release()
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecord(schema, arrs, int64(c.Rows))
	defer rec.Release()
	iw := ipc.NewWriter(w, ipc.WithSchema(schema))
	if err := iw.Write(rec); err != nil {
		return err
	}
	return iw.Close()
}

// bitmap is Arrow's validity bitmap of valid (nil when every value is valid) and its null count.
func bitmap(valid []bool) (*memory.Buffer, int) {
	nulls := 0
	for _, v := range valid {
		if !v {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	bits := make([]byte, (len(valid)+7)/8)
	for i, v := range valid {
		if v {
			bits[i/8] |= 1 << (i % 8)
		}
	}
	return memory.NewBufferBytes(bits), nulls
}

// chunkBuilder gathers rows into column buffers; a column first met at row k gets nulls before
// it. Tagged formats always have the named columns (the year an integer); a CSV has its own.
type chunkBuilder struct {
	tagged bool
	rows   int            // the rows a chunk holds
	sizes  map[string]int // each column's bytes in the chunk before
	n      int
	cols   map[string]*colBuf
	order  []string // columns in the order the chunk has them (the extra ones by first appearance)
	years  []int32
	yValid []bool
}

func newChunkBuilder(tagged bool, rows int, sizes map[string]int) *chunkBuilder {
	t := &chunkBuilder{tagged: tagged, rows: rows, sizes: sizes, cols: make(map[string]*colBuf, 64)}
	if tagged {
		for _, name := range namedColumns {
			if name != "year" {
				t.cols[name] = t.newCol(name)
			}
		}
		t.years, t.yValid = make([]int32, 0, rows), make([]bool, 0, rows)
	}
	return t
}

func (t *chunkBuilder) newCol(name string) *colBuf {
	if size, ok := t.sizes[name]; ok {
		return newColBufCap(t.rows, size+size/8)
	}
	return newColBufCap(t.rows, 0)
}

// next is the builder of the chunk after this one.
func (t *chunkBuilder) next() *chunkBuilder {
	sizes := make(map[string]int, len(t.cols))
	for name, c := range t.cols {
		sizes[name] = len(c.data)
	}
	return newChunkBuilder(t.tagged, t.rows, sizes)
}

func (t *chunkBuilder) column(name string) *colBuf {
	c, ok := t.cols[name]
	if !ok {
		c = t.newCol(name)
		t.cols[name] = c
		if !t.tagged || !isNamed[name] {
			t.order = append(t.order, name)
		}
	}
	return c
}

// addRow appends a row: multi-valued columns are joined by "; ", repeated tags and notes by line
// breaks (they are lines), the decisions and merged ids by "; "; others keep their first value.
func (t *chunkBuilder) addRow(r *row, year int32, hasYear bool) {
	for i := range r.cells {
		c := &r.cells[i]
		if len(c.vals) == 0 {
			continue
		}
		col := t.column(c.col)
		col.padTo(t.n)
		switch {
		case len(c.vals) == 1:
			col.push(c.vals, "")
		case c.col == "authors" || c.col == "keywords" || c.col == "editors" || c.col == colDecision || c.col == colMerged:
			col.push(c.vals, multiSep)
		case c.col == colRepeated || c.col == colNote:
			col.push(c.vals, "\n")
		default:
			col.push(c.vals[:1], "")
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
	ch := &Chunk{Rows: t.n}
	add := func(name string) {
		c := t.cols[name]
		c.padTo(t.n)
		ch.names = append(ch.names, name)
		ch.cols = append(ch.cols, c)
	}
	if !t.tagged {
		for _, name := range t.order {
			add(name)
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
		add(name)
	}
	for _, name := range t.order {
		add(name)
	}
	for _, name := range trailingColumns {
		if _, ok := t.cols[name]; ok {
			add(name)
		}
	}
	return ch
}
