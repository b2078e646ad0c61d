package arrowio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"
)

// checkStream walks the message framing of an IPC stream before arrow-go
// sees it. arrow-go trusts lengths from the metadata and allocates them
// (a corrupt length could ask the Go runtime for terabytes, which is a fatal
// error, not a panic), so every metadata length, body length and buffer
// range is checked against the input here. It also requires the
// end-of-stream marker, so a stream cut at a message boundary is rejected.
func checkStream(b []byte) error {
	pos := 0
	nmsg := 0
	var kinds []Kind
	for {
		if len(b)-pos < 4 {
			return errors.New("truncated stream: no end-of-stream marker")
		}
		var metaLen int64
		cont := binary.LittleEndian.Uint32(b[pos:])
		if cont == 0xFFFFFFFF {
			if len(b)-pos < 8 {
				return errors.New("truncated stream: message length missing")
			}
			metaLen = int64(int32(binary.LittleEndian.Uint32(b[pos+4:])))
			pos += 8
		} else {
			// pre-0.15 framing: the length without a continuation marker
			metaLen = int64(int32(cont))
			pos += 4
		}
		if metaLen == 0 {
			if nmsg == 0 {
				return errors.New("stream has no schema")
			}
			return nil
		}
		if metaLen < 0 || metaLen > int64(len(b)-pos) {
			return fmt.Errorf("message %d: metadata length %d out of range", nmsg, metaLen)
		}
		meta := fbuf(b[pos : pos+int(metaLen)])
		pos += int(metaLen)
		bodyLen, err := checkMessage(meta, b[pos:], nmsg, &kinds)
		if err != nil {
			return fmt.Errorf("message %d: %w", nmsg, err)
		}
		if bodyLen > int64(len(b)-pos) {
			return fmt.Errorf("message %d: body length %d exceeds the %d bytes left", nmsg, bodyLen, len(b)-pos)
		}
		pos += int(bodyLen)
		nmsg++
	}
}

const (
	hdrSchema          = 1
	hdrDictionaryBatch = 2
	hdrRecordBatch     = 3
)

// checkMessage validates one Message flatbuffer and returns its body length.
// The schema (message 0) sets *kinds, which the record batches are checked
// against.
func checkMessage(m fbuf, rest []byte, index int, kinds *[]Kind) (int64, error) {
	root, err := m.root()
	if err != nil {
		return 0, err
	}
	version, err := m.i16(root, 0, 0)
	if err != nil {
		return 0, err
	}
	if version < 3 { // V4 = 3, V5 = 4
		return 0, fmt.Errorf("unsupported metadata version V%d", version+1)
	}
	htype, err := m.u8(root, 1, 0)
	if err != nil {
		return 0, err
	}
	bodyLen, err := m.i64(root, 3, 0)
	if err != nil {
		return 0, err
	}
	if bodyLen < 0 {
		return 0, fmt.Errorf("negative body length %d", bodyLen)
	}
	switch {
	case index == 0 && htype != hdrSchema:
		return 0, fmt.Errorf("first message is not a schema (header type %d)", htype)
	case index > 0 && htype == hdrSchema:
		return 0, errors.New("second schema message")
	case htype == hdrDictionaryBatch:
		return 0, errors.New("dictionary batches are not supported")
	case htype != hdrSchema && htype != hdrRecordBatch:
		return 0, fmt.Errorf("unsupported message header type %d", htype)
	}
	hdr, ok, err := m.table(root, 2)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, errors.New("message without header")
	}
	if htype == hdrSchema {
		k, err := checkSchema(m, hdr)
		if err != nil {
			return 0, err
		}
		*kinds = k
	} else if bodyLen > int64(len(rest)) {
		return 0, fmt.Errorf("body length %d exceeds the %d bytes left", bodyLen, len(rest))
	} else if err := checkRecordBatch(m, hdr, rest[:bodyLen], *kinds); err != nil {
		return 0, err
	}
	return bodyLen, nil
}

const (
	typeInt           = 2
	typeFloatingPoint = 3
	typeUtf8          = 5
	typeBool          = 6
	typeLargeUtf8     = 20
	kindLargeUtf8     = Kind(100) // only inside checkStream
)

var typeNames = []string{"NONE", "Null", "Int", "FloatingPoint", "Binary", "Utf8", "Bool", "Decimal",
	"Date", "Time", "Timestamp", "Interval", "List", "Struct", "Union", "FixedSizeBinary", "FixedSizeList",
	"Map", "Duration", "LargeBinary", "LargeUtf8", "LargeList", "RunEndEncoded", "BinaryView", "Utf8View",
	"ListView", "LargeListView"}

// checkSchema validates everything arrow-go reads from a Schema and returns
// the column kinds. Unsupported types are rejected here, naming the column,
// so arrow-go only ever parses the five types we accept.
func checkSchema(m fbuf, sc int) ([]Kind, error) {
	if endian, err := m.i16(sc, 0, 0); err != nil {
		return nil, err
	} else if endian != 0 {
		return nil, errors.New("big-endian streams are not supported")
	}
	if err := m.checkKeyValues(sc, 2); err != nil {
		return nil, err
	}
	fields, nf, err := m.vector(sc, 1, 4)
	if err != nil {
		return nil, err
	}
	kinds := make([]Kind, nf)
	for i := 0; i < nf; i++ {
		f, err := m.tableAt(fields + 4*i)
		if err != nil {
			return nil, err
		}
		name, _, err := m.str(f, 0)
		if err != nil {
			return nil, err
		}
		if !utf8.ValidString(name) {
			return nil, fmt.Errorf("column %d: name is not valid UTF-8", i+1)
		}
		if err := m.checkKeyValues(f, 6); err != nil {
			return nil, err
		}
		if _, present, err := m.table(f, 4); err != nil {
			return nil, err
		} else if present {
			return nil, fmt.Errorf("column %q is dictionary-encoded, which is not supported", name)
		}
		if _, nc, err := m.vector(f, 5, 4); err != nil {
			return nil, err
		} else if nc != 0 {
			return nil, fmt.Errorf("column %q has child fields (nested types are not supported)", name)
		}
		tt, err := m.u8(f, 2, 0)
		if err != nil {
			return nil, err
		}
		typ, present, err := m.table(f, 3)
		if err != nil {
			return nil, err
		}
		if !present {
			return nil, fmt.Errorf("column %q has no type", name)
		}
		tname := fmt.Sprintf("type %d", tt)
		if int(tt) < len(typeNames) {
			tname = typeNames[tt]
		}
		switch tt {
		case typeUtf8:
			kinds[i] = KindUtf8
		case typeLargeUtf8:
			kinds[i] = kindLargeUtf8
		case typeBool:
			kinds[i] = KindBool
		case typeInt:
			bits, err := m.i32(typ, 0, 0)
			if err != nil {
				return nil, err
			}
			signed, err := m.u8(typ, 1, 0)
			if err != nil {
				return nil, err
			}
			if bits == 32 && signed != 0 {
				kinds[i] = KindInt32
			} else {
				tname = fmt.Sprintf("Int(bitWidth %d, signed %v)", bits, signed != 0)
			}
		case typeFloatingPoint:
			prec, err := m.i16(typ, 0, 0)
			if err != nil {
				return nil, err
			}
			if prec == 2 {
				kinds[i] = KindFloat64
			} else {
				tname = fmt.Sprintf("FloatingPoint(precision %d)", prec)
			}
		}
		if kinds[i] == KindInvalid {
			return nil, fmt.Errorf("column %q has unsupported Arrow type %s (supported: utf8, int32, float64, bool)", name, tname)
		}
	}
	return kinds, nil
}

// checkRecordBatch checks the batch's nodes and buffers against the schema
// and the body. It also checks the last string offset, which arrow-go checks
// with a panic that leaks the buffers it already read.
func checkRecordBatch(m fbuf, rb int, body []byte, kinds []Kind) error {
	bodyLen := int64(len(body))
	length, err := m.i64(rb, 0, 0)
	if err != nil {
		return err
	}
	if length < 0 {
		return fmt.Errorf("negative record batch length %d", length)
	}
	if _, present, err := m.table(rb, 3); err != nil {
		return err
	} else if present {
		return errors.New("compressed record batches are not supported")
	}
	if _, nv, err := m.vector(rb, 4, 8); err != nil {
		return err
	} else if nv != 0 {
		return errors.New("variadic buffers are not supported")
	}
	nodes, nn, err := m.vector(rb, 1, 16)
	if err != nil {
		return err
	}
	bufs, nb, err := m.vector(rb, 2, 16)
	if err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		off := int64(binary.LittleEndian.Uint64(m[bufs+16*i:]))
		l := int64(binary.LittleEndian.Uint64(m[bufs+16*i+8:]))
		if off < 0 || l < 0 || off > bodyLen || l > bodyLen-off {
			return fmt.Errorf("buffer %d (offset %d, length %d) outside the %d-byte body", i, off, l, bodyLen)
		}
	}
	if nn != len(kinds) {
		return fmt.Errorf("record batch has %d field nodes for %d columns", nn, len(kinds))
	}
	want := 0
	for _, k := range kinds {
		want += 2
		if k == KindUtf8 || k == kindLargeUtf8 {
			want++
		}
	}
	if nb != want {
		return fmt.Errorf("record batch has %d buffers, the schema needs %d", nb, want)
	}
	bufOff := func(j int) int64 { return int64(binary.LittleEndian.Uint64(m[bufs+16*j:])) }
	bufLen := func(j int) int64 { return int64(binary.LittleEndian.Uint64(m[bufs+16*j+8:])) }
	bitmapBytes := (length + 7) / 8
	j := 0
	for i, k := range kinds {
		l := int64(binary.LittleEndian.Uint64(m[nodes+16*i:]))
		nulls := int64(binary.LittleEndian.Uint64(m[nodes+16*i+8:]))
		if l != length || nulls < 0 || nulls > l {
			return fmt.Errorf("column %d: length %d, null count %d in a batch of %d rows", i+1, l, nulls, length)
		}
		if nulls > 0 && bufLen(j) < bitmapBytes {
			return fmt.Errorf("column %d: validity bitmap too short", i+1)
		}
		var need int64
		switch k {
		case KindUtf8:
			if length > 0 {
				need = 4 * (length + 1)
			}
		case kindLargeUtf8:
			if length > 0 {
				need = 8 * (length + 1)
			}
		case KindInt32:
			need = 4 * length
		case KindFloat64:
			need = 8 * length
		case KindBool:
			need = bitmapBytes
		}
		if bufLen(j+1) < need {
			return fmt.Errorf("column %d: data buffer of %d bytes, %d rows need %d", i+1, bufLen(j+1), length, need)
		}
		if length > 0 && (k == KindUtf8 || k == kindLargeUtf8) {
			var last int64
			if k == KindUtf8 {
				last = int64(int32(binary.LittleEndian.Uint32(body[bufOff(j+1)+4*length:])))
			} else {
				last = int64(binary.LittleEndian.Uint64(body[bufOff(j+1)+8*length:]))
			}
			if last < 0 || last > bufLen(j+2) {
				return fmt.Errorf("column %d: last string offset %d outside the %d-byte data buffer", i+1, last, bufLen(j+2))
			}
		}
		j += 2
		if k == KindUtf8 || k == kindLargeUtf8 {
			j++
		}
	}
	return nil
}

// fbuf is a bounds-checked reader for the few flatbuffer tables checked above.
type fbuf []byte

var errFlatbuf = errors.New("corrupt flatbuffer metadata")

func (f fbuf) u32(pos int) (uint32, error) {
	if pos < 0 || pos > len(f)-4 {
		return 0, errFlatbuf
	}
	return binary.LittleEndian.Uint32(f[pos:]), nil
}

func (f fbuf) root() (int, error) {
	off, err := f.u32(0)
	if err != nil {
		return 0, err
	}
	return f.checkTable(int64(off))
}

// checkTable validates the table at pos and its vtable.
func (f fbuf) checkTable(pos int64) (int, error) {
	if pos < 0 || pos > int64(len(f))-4 {
		return 0, errFlatbuf
	}
	soff := int64(int32(binary.LittleEndian.Uint32(f[pos:])))
	vt := pos - soff
	if vt < 0 || vt > int64(len(f))-4 {
		return 0, errFlatbuf
	}
	vtSize := int64(binary.LittleEndian.Uint16(f[vt:]))
	tblSize := int64(binary.LittleEndian.Uint16(f[vt+2:]))
	if vtSize < 4 || vtSize%2 != 0 || vt+vtSize > int64(len(f)) || tblSize < 4 || pos+tblSize > int64(len(f)) {
		return 0, errFlatbuf
	}
	return int(pos), nil
}

// field returns the absolute position of field id (0 if absent).
func (f fbuf) field(tbl, id, size int) (int, error) {
	vt := tbl - int(int32(binary.LittleEndian.Uint32(f[tbl:])))
	vtSize := int(binary.LittleEndian.Uint16(f[vt:]))
	tblSize := int(binary.LittleEndian.Uint16(f[vt+2:]))
	slot := 4 + 2*id
	if slot+2 > vtSize {
		return 0, nil
	}
	fo := int(binary.LittleEndian.Uint16(f[vt+slot:]))
	if fo == 0 {
		return 0, nil
	}
	if fo < 4 || fo+size > tblSize {
		return 0, errFlatbuf
	}
	return tbl + fo, nil
}

func (f fbuf) u8(tbl, id int, def uint8) (uint8, error) {
	p, err := f.field(tbl, id, 1)
	if err != nil || p == 0 {
		return def, err
	}
	return f[p], nil
}

func (f fbuf) i16(tbl, id int, def int16) (int16, error) {
	p, err := f.field(tbl, id, 2)
	if err != nil || p == 0 {
		return def, err
	}
	return int16(binary.LittleEndian.Uint16(f[p:])), nil
}

func (f fbuf) i32(tbl, id int, def int32) (int32, error) {
	p, err := f.field(tbl, id, 4)
	if err != nil || p == 0 {
		return def, err
	}
	return int32(binary.LittleEndian.Uint32(f[p:])), nil
}

func (f fbuf) i64(tbl, id int, def int64) (int64, error) {
	p, err := f.field(tbl, id, 8)
	if err != nil || p == 0 {
		return def, err
	}
	return int64(binary.LittleEndian.Uint64(f[p:])), nil
}

// table follows the offset in field id to a sub-table.
func (f fbuf) table(tbl, id int) (int, bool, error) {
	p, err := f.field(tbl, id, 4)
	if err != nil || p == 0 {
		return 0, false, err
	}
	t, err := f.tableAt(p)
	return t, err == nil, err
}

// tableAt follows the uoffset stored at p (a field or a vector element).
func (f fbuf) tableAt(p int) (int, error) {
	off, err := f.u32(p)
	if err != nil {
		return 0, err
	}
	return f.checkTable(int64(p) + int64(off))
}

// strAt reads the string whose uoffset is stored at p.
func (f fbuf) strAt(p int) (string, error) {
	off, err := f.u32(p)
	if err != nil {
		return "", err
	}
	s := int64(p) + int64(off)
	if s > int64(len(f))-4 {
		return "", errFlatbuf
	}
	n := int64(binary.LittleEndian.Uint32(f[s:]))
	if n > int64(len(f))-(s+4) {
		return "", errFlatbuf
	}
	return string(f[s+4 : s+4+n]), nil
}

// str reads the string in field id ("" if absent).
func (f fbuf) str(tbl, id int) (string, bool, error) {
	p, err := f.field(tbl, id, 4)
	if err != nil || p == 0 {
		return "", false, err
	}
	s, err := f.strAt(p)
	return s, err == nil, err
}

// checkKeyValues validates a custom_metadata vector of KeyValue tables.
func (f fbuf) checkKeyValues(tbl, id int) error {
	v, n, err := f.vector(tbl, id, 4)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		kv, err := f.tableAt(v + 4*i)
		if err != nil {
			return err
		}
		for _, fid := range []int{0, 1} {
			if _, _, err := f.str(kv, fid); err != nil {
				return err
			}
		}
	}
	return nil
}

// vector follows the offset in field id to a vector of elemSize-byte
// elements and returns the position of element 0 and the count.
func (f fbuf) vector(tbl, id, elemSize int) (int, int, error) {
	p, err := f.field(tbl, id, 4)
	if err != nil || p == 0 {
		return 0, 0, err
	}
	v := int64(p) + int64(binary.LittleEndian.Uint32(f[p:]))
	if v > int64(len(f))-4 {
		return 0, 0, errFlatbuf
	}
	n := int64(binary.LittleEndian.Uint32(f[v:]))
	if n*int64(elemSize) > int64(len(f))-(v+4) {
		return 0, 0, errFlatbuf
	}
	return int(v + 4), int(n), nil
}
