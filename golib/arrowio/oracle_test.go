package arrowio

import (
	"bytes"
	"errors"
	"fmt"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The tests' oracle: arrow-go's own reader, which the package read R's tables with before the
// in-place reader became the only one. The tests check that View reads every stream as it does.
func arrowGoDecode(b []byte) (*Table, error) {
	return arrowGoDecodeWith(b, memory.DefaultAllocator)
}

func arrowGoDecodeWith(b []byte, mem memory.Allocator) (t *Table, err error) {
	if err := checkStream(b); err != nil {
		return nil, fmt.Errorf("arrowio: invalid IPC stream: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("arrowio: invalid IPC stream: %v", r)
		}
	}()
	rdr, err := ipc.NewReader(bytes.NewReader(b), ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("arrowio: invalid IPC stream: %w", err)
	}
	defer rdr.Release()

	// With a Go allocator the batches' buffers are Go memory, which the garbage collector keeps for
	// as long as a string points into it: the strings then share the data buffer instead of
	// copying every value (a large screening's text would otherwise be held twice while it is read).
	_, share := mem.(*memory.GoAllocator)
	schema := rdr.Schema()
	t = &Table{Columns: make([]Column, schema.NumFields())}
	for i, f := range schema.Fields() {
		c := &t.Columns[i]
		c.Name = f.Name
		switch f.Type.ID() {
		case arrow.STRING, arrow.LARGE_STRING:
			c.Kind = KindUtf8
		case arrow.INT32:
			c.Kind = KindInt32
		case arrow.FLOAT64:
			c.Kind = KindFloat64
		case arrow.BOOL:
			c.Kind = KindBool
		default:
			return nil, fmt.Errorf("arrowio: column %q has unsupported Arrow type %s", f.Name, f.Type)
		}
	}

	for rdr.Next() {
		rec := rdr.Record()
		n := int(rec.NumRows())
		if int64(n) != rec.NumRows() || n < 0 {
			return nil, errors.New("arrowio: record batch too long")
		}
		for i := range t.Columns {
			if err := appendArray(&t.Columns[i], rec.Column(i), t.NumRows, n, share); err != nil {
				return nil, fmt.Errorf("arrowio: column %q: %w", t.Columns[i].Name, err)
			}
		}
		t.NumRows += n
	}
	if err := rdr.Err(); err != nil {
		return nil, fmt.Errorf("arrowio: invalid IPC stream: %w", err)
	}
	for i := range t.Columns {
		// zero-row and all-batches-empty columns still get a non-nil slice
		c := &t.Columns[i]
		switch c.Kind {
		case KindUtf8:
			if c.Str == nil {
				c.Str = []string{}
			}
		case KindInt32:
			if c.I32 == nil {
				c.I32 = []int32{}
			}
		case KindFloat64:
			if c.F64 == nil {
				c.F64 = []float64{}
			}
		case KindBool:
			if c.Bool == nil {
				c.Bool = []bool{}
			}
		}
	}
	return t, nil
}

// substring reads value bytes [lo, hi) of a string array's data buffer: a copy, or with share the
// bytes themselves seen as a string (they are never written again).
func substring(arr arrow.Array, share bool) func(lo, hi int64) string {
	var data []byte
	if bufs := arr.Data().Buffers(); len(bufs) > 2 && bufs[2] != nil {
		data = bufs[2].Bytes()
	}
	if !share {
		return func(lo, hi int64) string { return string(data[lo:hi]) }
	}
	return func(lo, hi int64) string {
		if hi == lo {
			return ""
		}
		return unsafe.String(&data[lo], hi-lo)
	}
}

// bufLen returns the byte length of buffer i of arr (0 if absent).
func bufLen(arr arrow.Array, i int) int {
	bufs := arr.Data().Buffers()
	if i >= len(bufs) || bufs[i] == nil {
		return 0
	}
	return bufs[i].Len()
}

// appendArray appends the n values of arr to c, whose first prev rows are
// already filled. Every buffer length is checked before it is touched. With share, strings point
// into arr's data buffer (Go memory) instead of copies of it.
func appendArray(c *Column, arr arrow.Array, prev, n int, share bool) error {
	if arr.Len() != n {
		return fmt.Errorf("array length %d differs from the batch length %d", arr.Len(), n)
	}
	if arr.Data().Offset() != 0 {
		return errors.New("unexpected array offset")
	}
	nulls := arr.NullN()
	if nulls > 0 {
		if bufLen(arr, 0) < int(bitutil.BytesForBits(int64(n))) {
			return errors.New("validity bitmap too short")
		}
		if c.Valid == nil {
			c.Valid = make([]bool, prev, prev+n)
			for i := range c.Valid {
				c.Valid[i] = true
			}
		}
		bm := arr.NullBitmapBytes()
		for i := 0; i < n; i++ {
			c.Valid = append(c.Valid, bitutil.BitIsSet(bm, i))
		}
	} else if c.Valid != nil {
		for i := 0; i < n; i++ {
			c.Valid = append(c.Valid, true)
		}
	}
	valid := func(i int) bool { return nulls == 0 || arr.IsValid(i) }

	switch a := arr.(type) {
	case *array.String:
		if n > 0 && bufLen(arr, 1) < 4*(n+1) {
			return errors.New("offsets buffer too short")
		}
		if n == 0 {
			return nil
		}
		offs := a.ValueOffsets()
		return appendStrings(c, n, bufLen(arr, 2), func(i int) int64 { return int64(offs[i]) }, substring(arr, share), valid)
	case *array.LargeString:
		if n > 0 && bufLen(arr, 1) < 8*(n+1) {
			return errors.New("offsets buffer too short")
		}
		if n == 0 {
			return nil
		}
		offs := a.ValueOffsets()
		return appendStrings(c, n, bufLen(arr, 2), func(i int) int64 { return offs[i] }, substring(arr, share), valid)
	case *array.Int32:
		if bufLen(arr, 1) < 4*n {
			return errors.New("data buffer too short")
		}
		v := a.Int32Values()
		start := len(c.I32)
		c.I32 = append(c.I32, v...)
		for i := 0; i < n; i++ {
			if !valid(i) {
				c.I32[start+i] = 0
			}
		}
	case *array.Float64:
		if bufLen(arr, 1) < 8*n {
			return errors.New("data buffer too short")
		}
		v := a.Float64Values()
		start := len(c.F64)
		c.F64 = append(c.F64, v...)
		for i := 0; i < n; i++ {
			if !valid(i) {
				c.F64[start+i] = 0
			}
		}
	case *array.Boolean:
		if bufLen(arr, 1) < int(bitutil.BytesForBits(int64(n))) {
			return errors.New("data buffer too short")
		}
		for i := 0; i < n; i++ {
			c.Bool = append(c.Bool, valid(i) && a.Value(i))
		}
	default:
		return fmt.Errorf("unexpected array type %s", arr.DataType())
	}
	return nil
}
