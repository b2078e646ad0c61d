package arrowio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
	"unsafe"
)

// Go reads every table R sends with this one hand-written reader, not arrow-go's: arrow-go copies
// each buffer out of the stream into fresh memory, which put the round trip of 100,000 records at
// 0.58 s warm and 1.17 s on a session's first call, against 0.40 s and 0.44 s read in place, and
// held a screening's text once more while it started (bench/README.md). checkStream (framing.go)
// validates the whole stream first, so the reader below trusts every offset it follows.

// Decode reads an IPC stream (schema, record batches, end-of-stream marker) into a table that owns
// its memory: View over one copy of b, so the table may be kept after b is freed. Columns are
// utf8 (or large_utf8), int32, float64 or bool; anything else, and any corrupt or truncated input,
// is an error.
func Decode(b []byte) (*Table, error) {
	return View(bytes.Clone(b))
}

// View reads an IPC stream as Decode does, without a copy: the table's strings point into b. It
// is for a call that reads R's memory and returns before R can free it (the records of a
// screening, the round trip). A string kept beyond the call must be cloned.
func View(b []byte) (*Table, error) {
	if err := checkStream(b); err != nil {
		return nil, fmt.Errorf("arrowio: invalid IPC stream: %w", err)
	}
	var t *Table
	var kinds []Kind
	pos := 0
	for {
		metaLen := int64(0)
		if binary.LittleEndian.Uint32(b[pos:]) == 0xFFFFFFFF {
			metaLen = int64(int32(binary.LittleEndian.Uint32(b[pos+4:])))
			pos += 8
		} else {
			metaLen = int64(int32(binary.LittleEndian.Uint32(b[pos:])))
			pos += 4
		}
		if metaLen == 0 {
			break
		}
		m := fbuf(b[pos : pos+int(metaLen)])
		pos += int(metaLen)
		root, _ := m.root()
		htype, _ := m.u8(root, 1, 0)
		bodyLen, _ := m.i64(root, 3, 0)
		hdr, _, _ := m.table(root, 2)
		body := b[pos : pos+int(bodyLen)]
		pos += int(bodyLen)
		if htype == hdrSchema {
			var err error
			if t, kinds, err = viewSchema(m, hdr); err != nil {
				return nil, err
			}
			continue
		}
		if err := viewBatch(t, kinds, m, hdr, body); err != nil {
			return nil, err
		}
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Kind == KindUtf8 {
			c.view = b
		}
		if c.Kind == KindUtf8 && c.Str == nil {
			c.Str = []string{}
		}
		if c.Kind == KindInt32 && c.I32 == nil {
			c.I32 = []int32{}
		}
		if c.Kind == KindFloat64 && c.F64 == nil {
			c.F64 = []float64{}
		}
		if c.Kind == KindBool && c.Bool == nil {
			c.Bool = []bool{}
		}
	}
	return t, nil
}

// viewSchema makes the table's columns from a schema checkStream has checked.
func viewSchema(m fbuf, sc int) (*Table, []Kind, error) {
	kinds, err := checkSchema(m, sc)
	if err != nil {
		return nil, nil, err
	}
	fields, nf, _ := m.vector(sc, 1, 4)
	t := &Table{Columns: make([]Column, nf)}
	for i := 0; i < nf; i++ {
		f, _ := m.tableAt(fields + 4*i)
		name, _, _ := m.str(f, 0)
		t.Columns[i].Name = name
		t.Columns[i].Kind = kinds[i]
		if kinds[i] == kindLargeUtf8 {
			t.Columns[i].Kind = KindUtf8
		}
	}
	return t, kinds, nil
}

// viewBatch appends a record batch that checkStream has checked (buffers inside the body, lengths
// enough for the rows, the last string offset inside the data).
func viewBatch(t *Table, kinds []Kind, m fbuf, rb int, body []byte) error {
	length, _ := m.i64(rb, 0, 0)
	n := int(length)
	nodes, _, _ := m.vector(rb, 1, 16)
	bufs, _, _ := m.vector(rb, 2, 16)
	buf := func(j int) []byte {
		off := int64(binary.LittleEndian.Uint64(m[bufs+16*j:]))
		l := int64(binary.LittleEndian.Uint64(m[bufs+16*j+8:]))
		return body[off : off+l]
	}
	prev := t.NumRows
	j := 0
	for i, k := range kinds {
		c := &t.Columns[i]
		nulls := int64(binary.LittleEndian.Uint64(m[nodes+16*i+8:]))
		validity := buf(j)
		valid := func(r int) bool { return nulls == 0 || validity[r/8]&(1<<(r%8)) != 0 }
		if nulls > 0 && c.Valid == nil {
			c.Valid = make([]bool, prev, prev+n)
			for r := range c.Valid {
				c.Valid[r] = true
			}
		}
		if c.Valid != nil {
			for r := 0; r < n; r++ {
				c.Valid = append(c.Valid, valid(r))
			}
		}
		data := buf(j + 1)
		switch k {
		case KindUtf8, kindLargeUtf8:
			if n > 0 {
				chars := buf(j + 2)
				off := func(r int) int64 { return int64(int32(binary.LittleEndian.Uint32(data[4*r:]))) }
				if k == kindLargeUtf8 {
					off = func(r int) int64 { return int64(binary.LittleEndian.Uint64(data[8*r:])) }
				}
				sub := func(lo, hi int64) string {
					if hi == lo {
						return ""
					}
					return unsafe.String(&chars[lo], hi-lo)
				}
				if err := appendStrings(c, n, len(chars), off, sub, valid); err != nil {
					return fmt.Errorf("arrowio: column %q: %w", c.Name, err)
				}
			}
			j += 3
			continue
		case KindInt32:
			for r := 0; r < n; r++ {
				v := int32(binary.LittleEndian.Uint32(data[4*r:]))
				if !valid(r) {
					v = 0
				}
				c.I32 = append(c.I32, v)
			}
		case KindFloat64:
			for r := 0; r < n; r++ {
				v := math.Float64frombits(binary.LittleEndian.Uint64(data[8*r:]))
				if !valid(r) {
					v = 0
				}
				c.F64 = append(c.F64, v)
			}
		case KindBool:
			for r := 0; r < n; r++ {
				c.Bool = append(c.Bool, valid(r) && data[r/8]&(1<<(r%8)) != 0)
			}
		}
		j += 2
	}
	t.NumRows += n
	return nil
}

// appendStrings validates offsets (monotone, inside the data buffer) and
// UTF-8, then appends the strings. All strings of the batch share one
// Go string (one copy of the data buffer), sliced per value.
func appendStrings(c *Column, n, dataLen int, off func(int) int64, copyRange func(lo, hi int64) string, valid func(int) bool) error {
	first, last := off(0), off(n)
	if first < 0 || last < first || last > int64(dataLen) {
		return fmt.Errorf("string offsets [%d, %d] outside the %d-byte data buffer", first, last, dataLen)
	}
	prevOff := first
	for i := 1; i <= n; i++ {
		o := off(i)
		if o < prevOff || o > last {
			return fmt.Errorf("string offsets not monotone at row %d of the batch", i)
		}
		prevOff = o
	}
	all := copyRange(first, last)
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
	return nil
}
