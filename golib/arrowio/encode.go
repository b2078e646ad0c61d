package arrowio

import (
	"bytes"
	"encoding/binary"
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

func encodeTo(t *Table, out io.Writer, mem memory.Allocator) (err error) {
	if err := t.Validate(); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("arrowio: encode: %v", r)
		}
	}()
	fields := make([]arrow.Field, len(t.Columns))
	for i := range t.Columns {
		dt, err := dataType(&t.Columns[i])
		if err != nil {
			return err
		}
		fields[i] = arrow.Field{Name: t.Columns[i].Name, Type: dt, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	w := ipc.NewWriter(out, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	for lo := 0; ; {
		hi := batchEnd(t, lo)
		if err := writeBatch(w, schema, t, lo, hi, mem); err != nil {
			_ = w.Close()
			return err
		}
		if lo = hi; lo >= t.NumRows {
			break
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("arrowio: encode: %w", err)
	}
	return nil
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

func writeBatch(w *ipc.Writer, schema *arrow.Schema, t *Table, lo, hi int, mem memory.Allocator) error {
	arrs := make([]arrow.Array, 0, len(t.Columns))
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	for i := range t.Columns {
		part := t.Columns[i].rows(lo, hi)
		a, _, err := buildArray(&part, mem)
		if err != nil {
			return err
		}
		arrs = append(arrs, a)
	}
	rec := array.NewRecord(schema, arrs, int64(hi-lo))
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		return fmt.Errorf("arrowio: encode: %w", err)
	}
	return nil
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

// adjacentStrings is the column as an array whose data buffer is part of the stream View read
// it from, when its strings (but nulls and empty ones) lie end to end there, as they do within a
// record batch. Copying the text into a builder and then again into the stream was most of a
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
			return nil // not a string View made (changed since)
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
	offsets := make([]byte, 4*(n+1))
	var bitmap []byte
	nulls := 0
	if c.Valid != nil {
		bitmap = make([]byte, bitutil.BytesForBits(int64(n)))
	}
	pos := uint32(0)
	for i, s := range c.Str {
		if c.IsNull(i) {
			nulls++
		} else {
			pos += uint32(len(s))
			if bitmap != nil {
				bitutil.SetBit(bitmap, i)
			}
		}
		binary.LittleEndian.PutUint32(offsets[4*(i+1):], pos)
	}
	var valid *memory.Buffer
	if nulls > 0 {
		valid = memory.NewBufferBytes(bitmap)
	}
	data := array.NewData(arrow.BinaryTypes.String, n,
		[]*memory.Buffer{valid, memory.NewBufferBytes(offsets), memory.NewBufferBytes(c.view[from : from+total])},
		nil, nulls, 0)
	defer data.Release()
	return array.NewStringData(data)
}
