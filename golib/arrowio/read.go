package arrowio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
)

// Decode reads an Arrow IPC stream (schema, any number of record batches, end-of-stream marker)
// into a Table, concatenating the batches. Columns must be utf8 (or large_utf8), int32, float64
// or bool; anything else, and any corrupt or truncated input, is an error, never a panic.
//
// The table holds Go memory only: arrow-go copies each buffer out of the stream (so b may be
// memory that C owns and frees once the call returns), and the strings are views of those copies,
// which the garbage collector keeps for as long as a string points into them (a large
// screening's text would otherwise be held twice while it is read).
func Decode(b []byte) (t *Table, err error) {
	// arrow-go trusts the flatbuffer metadata: a broken stream makes it panic.
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("arrowio: invalid IPC stream: %v", r)
		}
	}()
	alloc := &boundedAllocator{Allocator: memory.NewGoAllocator(), left: 5*len(b) + 4096}
	rdr, err := ipc.NewReaderFromMessageReader(&messages{b: b}, ipc.WithAllocator(alloc))
	if err != nil {
		return nil, fmt.Errorf("arrowio: invalid IPC stream: %w", err)
	}
	defer rdr.Release()

	schema := rdr.Schema()
	t = &Table{Columns: make([]Column, schema.NumFields())}
	for i, f := range schema.Fields() {
		c := &t.Columns[i]
		c.Name = f.Name
		// a column of no rows is an empty slice, not nil
		switch f.Type.ID() {
		case arrow.STRING, arrow.LARGE_STRING:
			c.Kind, c.Str = KindUtf8, []string{}
		case arrow.INT32:
			c.Kind, c.I32 = KindInt32, []int32{}
		case arrow.FLOAT64:
			c.Kind, c.F64 = KindFloat64, []float64{}
		case arrow.BOOL:
			c.Kind, c.Bool = KindBool, []bool{}
		default:
			return nil, fmt.Errorf("arrowio: column %q has unsupported Arrow type %s", f.Name, f.Type)
		}
	}

	for rdr.Next() {
		rec := rdr.Record()
		n := int(rec.NumRows())
		// A row takes at least a bit of each column: more rows than that is a corrupt length, and
		// would be allocated for.
		if int64(n) != rec.NumRows() || n < 0 || n > 8*len(b) {
			return nil, errors.New("arrowio: record batch length out of range")
		}
		for i := range t.Columns {
			if err := appendArray(&t.Columns[i], rec.Column(i), t.NumRows, n); err != nil {
				return nil, fmt.Errorf("arrowio: column %q: %w", t.Columns[i].Name, err)
			}
		}
		t.NumRows += n
	}
	if err := rdr.Err(); err != nil {
		return nil, fmt.Errorf("arrowio: invalid IPC stream: %w", err)
	}
	return t, nil
}

// messages hands arrow-go the messages of an IPC stream held in memory, as slices of it: arrow-go's
// own message reader copies each body before its buffers are copied out of it again, and takes a
// stream cut at a message boundary for a whole one. Lengths are checked against the input here,
// and the schema's vectors before arrow-go allocates for them (see checkSchema).
type messages struct {
	b   []byte
	pos int
	n   int
}

var _ ipc.MessageReader = (*messages)(nil)

func (s *messages) Retain()  {}
func (s *messages) Release() {}

func (s *messages) Message() (*ipc.Message, error) {
	b := s.b
	if len(b)-s.pos < 4 {
		return nil, errors.New("truncated stream: no end-of-stream marker")
	}
	metaLen := int64(int32(binary.LittleEndian.Uint32(b[s.pos:])))
	if metaLen == -1 { // the continuation marker of the current framing
		if len(b)-s.pos < 8 {
			return nil, errors.New("truncated stream: message length missing")
		}
		metaLen = int64(int32(binary.LittleEndian.Uint32(b[s.pos+4:])))
		s.pos += 8
	} else {
		s.pos += 4 // pre-0.15 framing: the length without a continuation marker
	}
	if metaLen == 0 {
		if s.n == 0 {
			return nil, errors.New("stream has no schema")
		}
		return nil, io.EOF
	}
	if metaLen < 8 || metaLen > int64(len(b)-s.pos) {
		return nil, fmt.Errorf("message %d: metadata length %d out of range", s.n, metaLen)
	}
	meta := b[s.pos : s.pos+int(metaLen)]
	s.pos += int(metaLen)
	msg := ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(nil))
	bodyLen := msg.BodyLen()
	if bodyLen < 0 || bodyLen > int64(len(b)-s.pos) {
		return nil, fmt.Errorf("message %d: body length %d exceeds the %d bytes left", s.n, bodyLen, len(b)-s.pos)
	}
	if msg.Type() == ipc.MessageSchema {
		if err := checkSchema(meta); err != nil {
			return nil, fmt.Errorf("message %d: %w", s.n, err)
		}
	}
	body := b[s.pos : s.pos+int(bodyLen)]
	s.pos += int(bodyLen)
	s.n++
	return ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(body)), nil
}

// Flatbuffer slots (vtable offsets) of the Arrow schema (format/Schema.fbs, format/Message.fbs).
const (
	slotMessageHeader  = 8  // Message.header
	slotSchemaFields   = 6  // Schema.fields
	slotSchemaMetadata = 8  // Schema.custom_metadata
	slotFieldName      = 4  // Field.name
	slotFieldTypeType  = 8  // Field.type_type
	slotFieldDict      = 12 // Field.dictionary
	slotFieldChildren  = 14 // Field.children
	slotFieldMetadata  = 16 // Field.custom_metadata
)

// checkSchema refuses what would make arrow-go fail fatally rather than panic while it reads the
// schema: a vector length it allocates for (up to 4 G elements, a fatal out-of-memory), and
// children (a cycle of them recurses until the stack overflows). tabscreen's columns have no
// children and no dictionary, so a field with either is refused by name. The reads panic on
// offsets outside meta, which Decode recovers.
func checkSchema(meta []byte) error {
	msg := &flatbuffers.Table{Bytes: meta, Pos: flatbuffers.GetUOffsetT(meta)}
	o := flatbuffers.UOffsetT(msg.Offset(slotMessageHeader))
	if o == 0 {
		return errors.New("schema message without a schema")
	}
	sc := &flatbuffers.Table{Bytes: meta, Pos: msg.Indirect(o + msg.Pos)}
	vector := func(t *flatbuffers.Table, slot flatbuffers.VOffsetT) (start flatbuffers.UOffsetT, n int, err error) {
		o := flatbuffers.UOffsetT(t.Offset(slot))
		if o == 0 {
			return 0, 0, nil
		}
		start, n = t.Vector(o), t.VectorLen(o)
		if n < 0 || int64(start)+4*int64(n) > int64(len(meta)) {
			return 0, 0, errors.New("schema vector longer than its message")
		}
		return start, n, nil
	}
	if _, _, err := vector(sc, slotSchemaMetadata); err != nil {
		return err
	}
	fields, n, err := vector(sc, slotSchemaFields)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		f := &flatbuffers.Table{Bytes: meta}
		f.Pos = f.Indirect(fields + flatbuffers.UOffsetT(4*i))
		name := ""
		if o := flatbuffers.UOffsetT(f.Offset(slotFieldName)); o != 0 {
			name = f.String(o + f.Pos)
		}
		if _, kids, err := vector(f, slotFieldChildren); err != nil || kids > 0 || f.Offset(slotFieldDict) != 0 {
			return fmt.Errorf("column %q has an unsupported Arrow type (nested or dictionary-encoded, type %d)",
				name, f.GetUint8Slot(slotFieldTypeType, 0))
		}
		if _, _, err := vector(f, slotFieldMetadata); err != nil {
			return fmt.Errorf("column %q: %w", name, err)
		}
	}
	return nil
}

// boundedAllocator refuses, by panicking (Decode recovers it), to allocate more in all than a
// stream's buffers can hold: a corrupt buffer length would otherwise be allocated before it is
// found to lie outside the stream, and asking the runtime for terabytes is fatal.
type boundedAllocator struct {
	memory.Allocator
	left int
}

func (a *boundedAllocator) take(size int) {
	if size < 0 || size > a.left {
		panic(fmt.Sprintf("a buffer of %d bytes lies outside the stream", size))
	}
	a.left -= size
}

func (a *boundedAllocator) Allocate(size int) []byte {
	a.take(size)
	return a.Allocator.Allocate(size)
}

func (a *boundedAllocator) Reallocate(size int, b []byte) []byte {
	a.take(max(size-len(b), 0))
	return a.Allocator.Reallocate(size, b)
}

// valueBuffer is the whole data buffer of a string array (its offsets index it).
func valueBuffer(arr arrow.Array) []byte {
	if bufs := arr.Data().Buffers(); len(bufs) > 2 && bufs[2] != nil {
		return bufs[2].Bytes()
	}
	return nil
}

// bufLen returns the byte length of buffer i of arr (0 if absent).
func bufLen(arr arrow.Array, i int) int {
	bufs := arr.Data().Buffers()
	if i >= len(bufs) || bufs[i] == nil {
		return 0
	}
	return bufs[i].Len()
}

// checkBuffers checks that arr's buffers hold its n values before anything is allocated for them.
func checkBuffers(arr arrow.Array, n int) error {
	if arr.Len() != n {
		return fmt.Errorf("array length %d differs from the batch length %d", arr.Len(), n)
	}
	if arr.Data().Offset() != 0 {
		return errors.New("unexpected array offset")
	}
	bits := (n + 7) / 8
	if arr.NullN() > 0 && bufLen(arr, 0) < bits {
		return errors.New("validity bitmap too short")
	}
	need := 0
	switch arr.(type) {
	case *array.String:
		need = 4 * (n + 1)
	case *array.LargeString:
		need = 8 * (n + 1)
	case *array.Int32:
		need = 4 * n
	case *array.Float64:
		need = 8 * n
	case *array.Boolean:
		need = bits
	default:
		return fmt.Errorf("unexpected array type %s", arr.DataType())
	}
	if n > 0 && bufLen(arr, 1) < need {
		return errors.New("data buffer too short")
	}
	return nil
}

// appendArray appends the n values of arr to c, whose first prev rows are already filled; strings
// point into arr's data buffer.
func appendArray(c *Column, arr arrow.Array, prev, n int) error {
	if err := checkBuffers(arr, n); err != nil {
		return err
	}
	nulls := arr.NullN()
	if nulls > 0 {
		if c.Valid == nil {
			c.Valid = make([]bool, prev, prev+n)
			for i := range c.Valid {
				c.Valid[i] = true
			}
		}
		for i := 0; i < n; i++ {
			c.Valid = append(c.Valid, arr.IsValid(i))
		}
	} else if c.Valid != nil {
		for i := 0; i < n; i++ {
			c.Valid = append(c.Valid, true)
		}
	}
	valid := func(i int) bool { return nulls == 0 || arr.IsValid(i) }

	switch a := arr.(type) {
	case *array.String:
		if n > 0 {
			offs := a.ValueOffsets()
			return appendStrings(c, prev, n, valueBuffer(arr), func(i int) int64 { return int64(offs[i]) }, valid)
		}
	case *array.LargeString:
		if n > 0 {
			offs := a.ValueOffsets()
			return appendStrings(c, prev, n, valueBuffer(arr), func(i int) int64 { return offs[i] }, valid)
		}
	case *array.Int32:
		c.I32 = appendValues(c.I32, a.Int32Values(), valid)
	case *array.Float64:
		c.F64 = appendValues(c.F64, a.Float64Values(), valid)
	case *array.Boolean:
		for i := 0; i < n; i++ {
			c.Bool = append(c.Bool, valid(i) && a.Value(i))
		}
	}
	return nil
}

// appendValues appends v to dst, with the zero value for a null.
func appendValues[T int32 | float64](dst, v []T, valid func(int) bool) []T {
	start := len(dst)
	dst = append(dst, v...)
	for i := range v {
		if !valid(i) {
			dst[start+i] = 0
		}
	}
	return dst
}

// appendStrings validates offsets (monotone, inside the data buffer) and UTF-8, then appends the
// strings, views of the buffer (arrow-go's copy, never written again). The column remembers the
// buffer when it is the column's only one, so that encoding the table again writes the text from
// it in place (adjacentStrings).
func appendStrings(c *Column, prev, n int, data []byte, off func(int) int64, valid func(int) bool) error {
	first, last := off(0), off(n)
	if first < 0 || last < first || last > int64(len(data)) {
		return fmt.Errorf("string offsets [%d, %d] outside the %d-byte data buffer", first, last, len(data))
	}
	prevOff := first
	for i := 1; i <= n; i++ {
		o := off(i)
		if o < prevOff || o > last {
			return fmt.Errorf("string offsets not monotone at row %d of the batch", i)
		}
		prevOff = o
	}
	all := ""
	if last > first {
		all = unsafe.String(&data[first], last-first)
	}
	for i := 0; i < n; i++ {
		if !valid(i) {
			c.Str = append(c.Str, "")
			continue
		}
		s := all[off(i)-first : off(i+1)-first]
		if !utf8.ValidString(s) {
			return fmt.Errorf("invalid UTF-8 in row %d of the batch", i+1)
		}
		c.Str = append(c.Str, s)
	}
	if c.view = nil; prev == 0 {
		c.view = data
	}
	return nil
}
