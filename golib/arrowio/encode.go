package arrowio

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Encode writes t as an Arrow IPC stream: a schema message, record batches of at most about
// batchBytes of text (one for a small table) and the end-of-stream marker. Strings are utf8
// (int32 offsets).
func Encode(t *Table) ([]byte, error) {
	return EncodeWithAllocator(t, memory.DefaultAllocator)
}

// EncodeWithAllocator is Encode with an explicit allocator for arrow-go's
// buffers (tests pass a memory.CheckedAllocator).
func EncodeWithAllocator(t *Table, mem memory.Allocator) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(SizeHint(t))
	if err := encodeTo(t, &buf, mem); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeTo writes the stream of Encode to w, so that a caller can place it
// where it is needed (C memory, for one copy fewer) instead of in a Go slice.
func EncodeTo(t *Table, w io.Writer) error {
	return encodeTo(t, w, new(batchAllocator))
}

// batchBytes bounds the text of one record batch. arrow-go builds a batch's arrays as copies of
// the table's values before writing them: one batch for a million answers held their text twice
// more (the copy, and the stream), and a large screening's result peaked there.
var batchBytes = 8 << 20

// maxBatchRows bounds the rows of one record batch.
const maxBatchRows = 1 << 16

func encodeTo(t *Table, out io.Writer, mem memory.Allocator) error {
	if err := t.Validate(); err != nil {
		return err
	}
	fields := make([]arrow.Field, len(t.Columns))
	for i := range t.Columns {
		dt, err := dataType(&t.Columns[i])
		if err != nil {
			return err
		}
		fields[i] = arrow.Field{Name: t.Columns[i].Name, Type: dt, Nullable: true}
	}
	return writeStream(out, fields, mem, func(write func([]arrow.Array, int) error) error {
		for lo := 0; ; {
			hi := batchEnd(t, lo)
			arrs := make([]arrow.Array, 0, len(t.Columns))
			for i := range t.Columns {
				part := t.Columns[i].rows(lo, hi)
				a, _, err := buildArray(&part, mem)
				if err != nil {
					releaseAll(arrs)
					return err
				}
				arrs = append(arrs, a)
			}
			if err := write(arrs, hi-lo); err != nil {
				return err
			}
			if lo = hi; lo >= t.NumRows {
				return nil
			}
		}
	})
}

// writeStream is the one writer of IPC streams on the Go side: the schema of fields, the record
// batches that batches writes (write takes over the arrays), and the end-of-stream marker.
func writeStream(out io.Writer, fields []arrow.Field, mem memory.Allocator, batches func(write func(arrs []arrow.Array, rows int) error) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("arrowio: encode: %v", r)
		}
	}()
	schema := arrow.NewSchema(fields, nil)
	w := ipc.NewWriter(out, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	write := func(arrs []arrow.Array, rows int) error {
		defer releaseAll(arrs)
		rec := array.NewRecord(schema, arrs, int64(rows))
		defer rec.Release()
		if err := w.Write(rec); err != nil {
			return fmt.Errorf("arrowio: encode: %w", err)
		}
		return nil
	}
	if err := batches(write); err != nil {
		_ = w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("arrowio: encode: %w", err)
	}
	return nil
}

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		a.Release()
	}
}

// Packed is a column already in Arrow's layout, for a producer that builds its text that way
// (refs): utf8 as Offsets into Data, or int32 as I32 (when Offsets is nil). Valid is nil when
// every value is valid.
type Packed struct {
	Name    string
	Offsets []int32
	Data    []byte
	I32     []int32
	Valid   []bool
}

// WritePacked writes rows rows of cols as an IPC stream of one record batch, whose arrays are
// the columns' own buffers: the writer's copy is the only one.
func WritePacked(w io.Writer, rows int, cols []Packed) error {
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for k := range cols {
		c := &cols[k]
		fields[k] = arrow.Field{Name: c.Name, Type: arrow.PrimitiveTypes.Int32, Nullable: true}
		if c.Offsets == nil {
			arrs[k] = packedArray(fields[k].Type, rows, c.Valid, arrow.Int32Traits.CastToBytes(c.I32))
			continue
		}
		fields[k].Type = arrow.BinaryTypes.String
		arrs[k] = packedArray(fields[k].Type, rows, c.Valid, arrow.Int32Traits.CastToBytes(c.Offsets), c.Data)
	}
	return writeStream(w, fields, memory.DefaultAllocator, func(write func([]arrow.Array, int) error) error {
		return write(arrs, rows)
	})
}

// packedArray is an array of type dt over the given value buffers, with the validity bitmap of valid.
func packedArray(dt arrow.DataType, n int, valid []bool, buffers ...[]byte) arrow.Array {
	bits, nulls := bitmap(valid)
	bufs := []*memory.Buffer{bits}
	for _, b := range buffers {
		bufs = append(bufs, memory.NewBufferBytes(b))
	}
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
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
	bits := make([]byte, bitutil.BytesForBits(int64(len(valid))))
	for i, v := range valid {
		if v {
			bitutil.SetBit(bits, i)
		}
	}
	return memory.NewBufferBytes(bits), nulls
}

// batchEnd is the end of the record batch that starts at row lo: at least one row, at most
// maxBatchRows, and no more than batchBytes of text after the first row.
func batchEnd(t *Table, lo int) int {
	hi := min(t.NumRows, lo+maxBatchRows)
	text := 0
	for r := lo; r < hi; r++ {
		for i := range t.Columns {
			if c := &t.Columns[i]; c.Kind == KindUtf8 {
				text += len(c.Str[r])
			}
		}
		if text > batchBytes && r > lo {
			return r
		}
	}
	return hi
}

// rows is the column's rows lo to hi, sharing its values.
func (c *Column) rows(lo, hi int) Column {
	part := Column{Name: c.Name, Kind: c.Kind}
	switch c.Kind {
	case KindUtf8:
		part.Str = c.Str[lo:hi]
		part.view = c.view
	case KindInt32:
		part.I32 = c.I32[lo:hi]
	case KindFloat64:
		part.F64 = c.F64[lo:hi]
	case KindBool:
		part.Bool = c.Bool[lo:hi]
	}
	if c.Valid != nil {
		part.Valid = c.Valid[lo:hi]
	}
	return part
}

func dataType(c *Column) (arrow.DataType, error) {
	switch c.Kind {
	case KindUtf8:
		return arrow.BinaryTypes.String, nil
	case KindInt32:
		return arrow.PrimitiveTypes.Int32, nil
	case KindFloat64:
		return arrow.PrimitiveTypes.Float64, nil
	case KindBool:
		return arrow.FixedWidthTypes.Boolean, nil
	}
	return nil, fmt.Errorf("arrowio: column %q has invalid kind %d", c.Name, uint8(c.Kind))
}

func buildArray(c *Column, mem memory.Allocator) (arrow.Array, arrow.DataType, error) {
	n := c.Len()
	switch c.Kind {
	case KindUtf8:
		total := 0
		for i, s := range c.Str {
			if !c.IsNull(i) {
				total += len(s)
			}
		}
		if total > math.MaxInt32 {
			return nil, nil, fmt.Errorf("arrowio: column %q holds %d bytes of text, more than utf8 (int32 offsets) allows", c.Name, total)
		}
		if a := adjacentStrings(c, total); a != nil {
			return a, arrow.BinaryTypes.String, nil
		}
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.Reserve(n)
		b.ReserveData(total)
		for i, s := range c.Str {
			if c.IsNull(i) {
				b.AppendNull()
			} else {
				b.Append(s)
			}
		}
		return b.NewArray(), arrow.BinaryTypes.String, nil
	case KindInt32:
		b := array.NewInt32Builder(mem)
		defer b.Release()
		b.AppendValues(c.I32, c.Valid)
		return b.NewArray(), arrow.PrimitiveTypes.Int32, nil
	case KindFloat64:
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.AppendValues(c.F64, c.Valid)
		return b.NewArray(), arrow.PrimitiveTypes.Float64, nil
	case KindBool:
		b := array.NewBooleanBuilder(mem)
		defer b.Release()
		b.AppendValues(c.Bool, c.Valid)
		return b.NewArray(), arrow.FixedWidthTypes.Boolean, nil
	}
	return nil, nil, fmt.Errorf("arrowio: column %q has invalid kind %d", c.Name, uint8(c.Kind))
}

// SizeHint estimates the stream size so that the output buffer is allocated
// once (growing a large bytes.Buffer by doubling costs more than the encoding).
func SizeHint(t *Table) int {
	n := 1024 + 256*len(t.Columns)
	rows := t.NumRows
	text := 0
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Valid != nil {
			n += rows/8 + 72
		}
		switch c.Kind {
		case KindUtf8:
			n += 4*rows + 72
			for _, s := range c.Str {
				text += len(s)
			}
		case KindInt32:
			n += 4*rows + 64
		case KindFloat64:
			n += 8*rows + 64
		case KindBool:
			n += rows/8 + 64
		}
	}
	// Each record batch has its own metadata and padding (a buffer that grows past the hint is
	// copied whole).
	batches := 1 + text/batchBytes + rows/maxBatchRows
	return n + text + batches*(128+72*len(t.Columns))
}

// adjacentStrings is the column as an array whose data buffer is the one Decode read its strings
// into, when they (but nulls and empty ones) lie end to end there, as they do within a record
// batch. Copying the text into a builder and then again into the stream was most of a
// round trip's Go time; the writer copies it once. nil when that cannot be done.
func adjacentStrings(c *Column, total int) arrow.Array {
	if total == 0 || len(c.view) == 0 {
		return nil
	}
	n := c.Len()
	base := uintptr(unsafe.Pointer(unsafe.SliceData(c.view)))
	limit := base + uintptr(len(c.view))
	var start, end uintptr
	for i, s := range c.Str {
		if len(s) == 0 || c.IsNull(i) {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		if p < base || p > limit || uintptr(len(s)) > limit-p {
			return nil // not a string Decode made (changed since)
		}
		if start == 0 {
			start = p
		} else if p != end {
			return nil
		}
		end = p + uintptr(len(s))
	}
	if end-start != uintptr(total) {
		return nil
	}
	from := int(start - base)
	offsets := make([]int32, n+1)
	pos := int32(0)
	for i, s := range c.Str {
		if !c.IsNull(i) {
			pos += int32(len(s))
		}
		offsets[i+1] = pos
	}
	return packedArray(arrow.BinaryTypes.String, n, c.Valid, arrow.Int32Traits.CastToBytes(offsets), c.view[from:from+total])
}
