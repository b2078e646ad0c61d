package arrowio

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

func checkedAlloc(t *testing.T) *memory.CheckedAllocator {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func allKinds(n int, withNulls bool) *Table {
	s := make([]string, n)
	i32 := make([]int32, n)
	f64 := make([]float64, n)
	bl := make([]bool, n)
	var valid []bool
	if withNulls {
		valid = make([]bool, n)
	}
	words := []string{"", "a", "Jørgensen", "Ã¥", "😀 emoji", "中文字符", "tab\tnew\nline", `quote"back\slash`}
	for i := 0; i < n; i++ {
		s[i] = words[i%len(words)]
		i32[i] = int32(i*7919) - 1<<20
		f64[i] = float64(i)/3 - 17
		bl[i] = i%3 == 0
		if withNulls {
			valid[i] = i%4 != 1
		}
	}
	if withNulls {
		for i := range valid {
			if !valid[i] {
				s[i], i32[i], f64[i], bl[i] = "", 0, 0, false
			}
		}
	}
	return NewTable(n).AddStr("s", s, valid).AddI32("i", i32, valid).
		AddF64("f", f64, valid).AddBool("b", bl, valid)
}

func TestRoundTrip(t *testing.T) {
	big := strings.Repeat("ab😀ø", 100*1024/9)
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64}
	cases := []struct {
		name string
		tab  *Table
	}{
		{"no columns", NewTable(0)},
		{"no columns, rows", NewTable(5)},
		{"zero rows", allKinds(0, false)},
		{"all kinds", allKinds(37, false)},
		{"all kinds with nulls", allKinds(37, true)},
		{"all null", NewTable(3).AddStr("s", []string{"", "", ""}, []bool{false, false, false}).
			AddI32("i", []int32{0, 0, 0}, []bool{false, false, false})},
		{"empty strings only", NewTable(4).AddStr("s", []string{"", "", "", ""}, nil)},
		{"100 KB strings", NewTable(3).AddStr("abstract", []string{big, "", big + "x"}, nil)},
		{"int32 extremes", NewTable(3).AddI32("i", []int32{math.MinInt32, math.MaxInt32, 0}, nil)},
		{"float specials", NewTable(len(specials)).AddF64("f", specials, nil)},
		{"duplicate and odd names", NewTable(1).AddI32("", []int32{1}, nil).AddI32("", []int32{2}, nil).
			AddBool("naïve ✓", []bool{true}, nil)},
		{"many rows", allKinds(10000, true)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := checkedAlloc(t)
			b, err := EncodeWithAllocator(tc.tab, mem)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if len(b)%8 != 0 {
				t.Errorf("stream length %d is not a multiple of 8", len(b))
			}
			if !bytes.HasSuffix(b, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}) {
				t.Errorf("stream does not end with the end-of-stream marker")
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			assertTablesEqual(t, tc.tab, got)
		})
	}
}

// assertTablesEqual compares tables, treating NaNs bit-for-bit and nil vs
// empty slices as equal.
func assertTablesEqual(t *testing.T, want, got *Table) {
	t.Helper()
	if want.NumRows != got.NumRows || len(want.Columns) != len(got.Columns) {
		t.Fatalf("shape: want %d rows x %d cols, got %d x %d", want.NumRows, len(want.Columns), got.NumRows, len(got.Columns))
	}
	for j := range want.Columns {
		w, g := &want.Columns[j], &got.Columns[j]
		if w.Name != g.Name || w.Kind != g.Kind {
			t.Fatalf("column %d: want %q %v, got %q %v", j, w.Name, w.Kind, g.Name, g.Kind)
		}
		if g.Len() != want.NumRows {
			t.Fatalf("column %q: %d values", g.Name, g.Len())
		}
		if (w.NullCount() > 0) != (g.Valid != nil) {
			t.Fatalf("column %q: want %d nulls, got Valid=%v", w.Name, w.NullCount(), g.Valid != nil)
		}
		for i := 0; i < want.NumRows; i++ {
			if w.IsNull(i) != g.IsNull(i) {
				t.Fatalf("column %q row %d: null %v vs %v", w.Name, i, w.IsNull(i), g.IsNull(i))
			}
			if w.IsNull(i) {
				continue
			}
			var eq bool
			switch w.Kind {
			case KindUtf8:
				eq = w.Str[i] == g.Str[i]
			case KindInt32:
				eq = w.I32[i] == g.I32[i]
			case KindFloat64:
				eq = math.Float64bits(w.F64[i]) == math.Float64bits(g.F64[i])
			case KindBool:
				eq = w.Bool[i] == g.Bool[i]
			}
			if !eq {
				t.Fatalf("column %q row %d differs", w.Name, i)
			}
		}
	}
}

// writeBatches writes recs with arrow-go directly (several batches).
func writeBatches(t *testing.T, mem memory.Allocator, schema *arrow.Schema, recs ...arrow.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeMultipleBatchesAndLargeUtf8(t *testing.T) {
	mem := checkedAlloc(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	mk := func(ls []string, lsValid []bool, i []int32, iValid []bool) arrow.Record {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		b.Field(0).(*array.LargeStringBuilder).AppendValues(ls, lsValid)
		b.Field(1).(*array.Int32Builder).AppendValues(i, iValid)
		return b.NewRecord()
	}
	r1 := mk([]string{"a", "bb"}, nil, []int32{1, 2}, nil)
	defer r1.Release()
	r2 := mk(nil, nil, nil, nil) // empty batch in the middle
	defer r2.Release()
	r3 := mk([]string{"", "ccc", "dø"}, []bool{true, false, true}, []int32{3, 0, 5}, []bool{true, false, true})
	defer r3.Release()
	b := writeBatches(t, mem, schema, r1, r2, r3)

	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	valid := []bool{true, true, true, false, true}
	want := NewTable(5).AddStr("ls", []string{"a", "bb", "", "", "dø"}, valid).
		AddI32("i", []int32{1, 2, 3, 0, 5}, valid)
	assertTablesEqual(t, want, got)
	if !reflect.DeepEqual(got.Columns[0].Valid, valid) {
		t.Fatalf("validity not back-filled: %v", got.Columns[0].Valid)
	}
}

func TestDecodeUnsupported(t *testing.T) {
	mem := checkedAlloc(t)
	cases := []struct {
		name string
		typ  arrow.DataType
		fill func(b array.Builder)
	}{
		{"int64", arrow.PrimitiveTypes.Int64, func(b array.Builder) { b.(*array.Int64Builder).Append(1) }},
		{"float32", arrow.PrimitiveTypes.Float32, func(b array.Builder) { b.(*array.Float32Builder).Append(1) }},
		{"binary", arrow.BinaryTypes.Binary, func(b array.Builder) { b.(*array.BinaryBuilder).Append([]byte{1}) }},
		{"list", arrow.ListOf(arrow.PrimitiveTypes.Int32), func(b array.Builder) { b.(*array.ListBuilder).AppendNull() }},
		{"dictionary", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String},
			func(b array.Builder) { _ = b.(*array.BinaryDictionaryBuilder).AppendString("x") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			schema := arrow.NewSchema([]arrow.Field{{Name: "bad_col", Type: tc.typ, Nullable: true}}, nil)
			rb := array.NewRecordBuilder(mem, schema)
			tc.fill(rb.Field(0))
			rec := rb.NewRecord()
			rb.Release()
			b := writeBatches(t, mem, schema, rec)
			rec.Release()
			_, err := Decode(b)
			if err == nil {
				t.Fatal("expected an error")
			}
			if !strings.Contains(err.Error(), "bad_col") {
				t.Fatalf("error does not name the column: %v", err)
			}
		})
	}
}

func TestDecodeCorrupt(t *testing.T) {
	good, err := Encode(allKinds(20, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("every truncation", func(t *testing.T) {
		for n := 0; n < len(good); n++ {
			if _, err := Decode(good[:n]); err == nil {
				t.Fatalf("truncation to %d of %d bytes accepted", n, len(good))
			}
		}
	})
	t.Run("no end-of-stream marker", func(t *testing.T) {
		if _, err := Decode(good[:len(good)-8]); err == nil || !strings.Contains(err.Error(), "end-of-stream") {
			t.Fatalf("want an end-of-stream error, got %v", err)
		}
	})
	t.Run("empty and garbage", func(t *testing.T) {
		for _, b := range [][]byte{nil, {}, {0, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff}, []byte("not an arrow stream at all"),
			{0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0x7f}, {0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x80}} {
			if _, err := Decode(b); err == nil {
				t.Fatalf("%q accepted", b)
			}
		}
	})
	t.Run("huge buffer length", func(t *testing.T) {
		b := append([]byte(nil), good...)
		pos := setBufferLength(t, b, 1<<40)
		if _, err := Decode(b); err == nil || !strings.Contains(err.Error(), "outside") {
			t.Fatalf("want a buffer range error, got %v (patched at %d)", err, pos)
		}
	})
	t.Run("random byte flips", func(t *testing.T) {
		rng := rand.New(rand.NewSource(1))
		accepted := 0
		for k := 0; k < 5000; k++ {
			b := append([]byte(nil), good...)
			for j := 0; j < 1+rng.Intn(3); j++ {
				b[rng.Intn(len(b))] = byte(rng.Intn(256))
			}
			tab, err := Decode(b)
			if err == nil {
				accepted++
				if verr := tab.Validate(); verr != nil {
					t.Fatalf("accepted an inconsistent table: %v", verr)
				}
			}
		}
		t.Logf("%d of 5000 corrupted streams decoded (flips in value bytes are undetectable)", accepted)
	})
}

// setBufferLength overwrites the length of buffer 0 of the record batch
// (the second message) and returns the position it patched.
func setBufferLength(t *testing.T, b []byte, v int64) int {
	t.Helper()
	schemaLen := int(binary.LittleEndian.Uint32(b[4:]))
	metaStart := 8 + schemaLen + 8
	m := fbuf(b[metaStart : metaStart+int(binary.LittleEndian.Uint32(b[8+schemaLen+4:]))])
	root, err := m.root()
	if err != nil {
		t.Fatal(err)
	}
	hdr, ok, err := m.table(root, 2)
	if err != nil || !ok {
		t.Fatal("no record batch header", err)
	}
	bufs, n, err := m.vector(hdr, 2, 16)
	if err != nil || n == 0 {
		t.Fatal("no buffers", err)
	}
	binary.LittleEndian.PutUint64(m[bufs+8:], uint64(v))
	return metaStart + bufs + 8
}

func TestEncodeRejectsInconsistentTables(t *testing.T) {
	cases := map[string]*Table{
		"short column":   NewTable(2).AddI32("i", []int32{1}, nil),
		"short validity": NewTable(2).AddI32("i", []int32{1, 2}, []bool{true}),
		"bad kind":       {NumRows: 0, Columns: []Column{{Name: "x"}}},
		"negative rows":  {NumRows: -1},
	}
	for name, tab := range cases {
		if _, err := Encode(tab); err == nil {
			t.Errorf("%s: expected an error", name)
		}
	}
	if _, err := Encode(nil); err == nil {
		t.Error("nil table: expected an error")
	}
}

func TestCol(t *testing.T) {
	tab := allKinds(3, false)
	c, ok := tab.Col("f")
	if !ok || c.Kind != KindFloat64 || c.Len() != 3 {
		t.Fatalf("Col(f) = %+v, %v", c, ok)
	}
	c.F64[0] = 42 // Col returns a pointer into the table
	if tab.Columns[2].F64[0] != 42 {
		t.Fatal("Col does not alias the table's column")
	}
	if _, ok := tab.Col("missing"); ok {
		t.Fatal("found a missing column")
	}
	if KindUtf8.String() != "utf8" || Kind(9).String() != "invalid(9)" {
		t.Fatal("Kind.String")
	}
}

// addSeedStreams seeds a fuzz test with the streams of a few tables of every kind.
func addSeedStreams(f *testing.F) {
	for _, tab := range []*Table{allKinds(0, false), allKinds(5, true), NewTable(0)} {
		b, err := Encode(tab)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzDecode(f *testing.F) {
	addSeedStreams(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		tab, err := Decode(b)
		if n := mem.CurrentAlloc(); n != 0 {
			t.Fatalf("%d bytes leaked (error: %v)", n, err)
		}
		if err != nil {
			return
		}
		if err := tab.Validate(); err != nil {
			t.Fatalf("decoded an inconsistent table: %v", err)
		}
		if _, err := Encode(tab); err != nil {
			t.Fatalf("cannot re-encode a decoded table: %v", err)
		}
	})
}

// TestDecodeOtherWriters decodes streams written by the two other
// implementations: testdata/from_r.arrows by tabscreen's C codec
// (df_to_ipc) and testdata/from_js.arrows by the JS apache-arrow package
// (tests/node/write.cjs; three batches, one empty, and a large_utf8 column).
// Both hold the same five rows.
func TestDecodeOtherWriters(t *testing.T) {
	valid := []bool{true, false, true, true, true}
	want := NewTable(5).
		AddStr("s", []string{"a", "", "Jørgensen", "", "😀中文"}, valid).
		AddI32("i", []int32{1, 0, -3, math.MaxInt32, 0}, valid).
		AddF64("f", []float64{1.5, 0, math.NaN(), math.Inf(1), -0.25}, valid).
		AddBool("b", []bool{true, false, false, true, false}, valid)
	for _, file := range []string{"from_r.arrows", "from_js.arrows"} {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			mem := checkedAlloc(t)
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			w := want
			if file == "from_js.arrows" {
				w = &Table{NumRows: 5, Columns: append(append([]Column(nil), want.Columns...),
					Column{Name: "ls", Kind: KindUtf8, Str: []string{"x", "y", "", "😀", ""},
						Valid: []bool{true, true, false, true, true}})}
			}
			// NaN payloads may differ between writers: compare NaN-ness
			if f, _ := got.Col("f"); math.IsNaN(f.F64[2]) {
				f.F64[2] = w.Columns[2].F64[2]
			}
			assertTablesEqual(t, w, got)
			// and arrow-go re-encodes it to something it reads back the same
			again, err := EncodeWithAllocator(got, mem)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Decode(again)
			if err != nil {
				t.Fatal(err)
			}
			assertTablesEqual(t, got, back)
		})
	}
}

// A table with more text than one batch holds is written as several record batches, each with
// its own copy of only its rows, and reads back whole through both readers.
func TestEncodeSplitsLargeTablesIntoBatches(t *testing.T) {
	defer func(old int) { batchBytes = old }(batchBytes)
	batchBytes = 1000
	for _, n := range []int{0, 1, 7, 300} {
		str, valid, num := make([]string, n), make([]bool, n), make([]int32, n)
		for i := range str {
			str[i], valid[i], num[i] = strings.Repeat("é", i%50), i%7 != 3, int32(i)
		}
		in := NewTable(n).AddStr("text", str, valid).AddI32("n", num, nil)
		b, err := Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		// EncodeTo lends each batch's buffers to the next: the same stream.
		var viaPool bytes.Buffer
		if err := EncodeTo(in, &viaPool); err != nil || !bytes.Equal(viaPool.Bytes(), b) {
			t.Fatalf("%d rows: EncodeTo differs from Encode (%v)", n, err)
		}
		batches := 0
		rdr, err := ipc.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		for rdr.Next() {
			batches++
		}
		rdr.Release()
		// 300 rows hold 14,700 bytes of text: about 15 batches of 1,000; the others fit in one.
		if (n == 300 && batches < 10) || (n < 300 && batches != 1) {
			t.Errorf("%d rows: %d batches", n, batches)
		}
		for name, read := range map[string]func([]byte) (*Table, error){"Decode": Decode, "View": View} {
			out, err := read(b)
			if err != nil {
				t.Fatalf("%s, %d rows: %v", name, n, err)
			}
			got, _ := out.Col("text")
			gotN, _ := out.Col("n")
			if out.NumRows != n || !reflect.DeepEqual(got.I32, []int32(nil)) || len(got.Str) != n || len(gotN.I32) != n {
				t.Fatalf("%s, %d rows: read %d rows", name, n, out.NumRows)
			}
			for i := 0; i < n; i++ {
				if got.IsNull(i) != !valid[i] || (valid[i] && got.Str[i] != str[i]) || gotN.I32[i] != num[i] {
					t.Fatalf("%s, %d rows: row %d differs", name, n, i)
				}
			}
		}
	}
}
