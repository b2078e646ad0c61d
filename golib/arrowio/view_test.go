package arrowio

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// decodeBoth decodes a stream with View and with arrow-go (the oracle) and checks they agree, also on
// the errors they find.
func decodeBoth(t *testing.T, b []byte) *Table {
	t.Helper()
	viewed, verr := View(b)
	decoded, derr := arrowGoDecode(b)
	if (verr == nil) != (derr == nil) {
		t.Fatalf("View error %v, Decode error %v", verr, derr)
	}
	if verr != nil {
		return nil
	}
	assertTablesEqual(t, decoded, viewed)
	for i := range decoded.Columns {
		if !reflect.DeepEqual(decoded.Columns[i].Valid, viewed.Columns[i].Valid) {
			t.Fatalf("column %d: validity %v, Decode %v", i, viewed.Columns[i].Valid, decoded.Columns[i].Valid)
		}
	}
	return viewed
}

func TestViewReadsWhatDecodeReads(t *testing.T) {
	big := strings.Repeat("ab😀ø", 100*1024/9)
	tables := []*Table{
		NewTable(0), NewTable(5), allKinds(0, false), allKinds(37, false), allKinds(37, true), allKinds(10000, true),
		NewTable(3).AddStr("s", []string{"", "", ""}, []bool{false, false, false}),
		NewTable(4).AddStr("s", []string{"", "", "", ""}, nil),
		NewTable(3).AddStr("abstract", []string{big, "", big + "x"}, nil),
		NewTable(3).AddF64("f", []float64{math.NaN(), math.Inf(-1), math.Copysign(0, -1)}, nil),
	}
	for _, tab := range tables {
		b, err := Encode(tab)
		if err != nil {
			t.Fatal(err)
		}
		decodeBoth(t, b)
		// every truncation is refused by both, or read alike
		for _, cut := range []int{len(b) - 8, len(b) / 2, 12} {
			if cut > 0 && cut < len(b) {
				decodeBoth(t, b[:cut])
			}
		}
	}
	for _, file := range []string{"from_r.arrows", "from_js.arrows"} {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		decodeBoth(t, b)
	}
}

func FuzzView(f *testing.F) {
	addSeedStreams(f)
	// View reads nothing arrow-go ignores either, so it may accept a stream whose unused metadata
	// (a field's custom metadata, say) arrow-go trips over; what it accepts must be consistent, and
	// what both accept must agree.
	f.Fuzz(func(t *testing.T, b []byte) {
		viewed, verr := View(b)
		decoded, derr := arrowGoDecode(b)
		if verr != nil {
			if derr == nil {
				t.Fatalf("View refuses what Decode reads: %v", verr)
			}
			return
		}
		if err := viewed.Validate(); err != nil {
			t.Fatalf("View read an inconsistent table: %v", err)
		}
		if _, err := Encode(viewed); err != nil {
			t.Fatalf("cannot re-encode a viewed table: %v", err)
		}
		if derr == nil {
			assertTablesEqual(t, decoded, viewed)
		}
	})
}

// A table that View read is encoded from its strings' own memory (adjacentStrings); the stream
// reads back as the table, with its nulls and empty strings, as the builder's does.
func TestEncodeOfViewUsesTheStringsInPlace(t *testing.T) {
	orig := allKinds(30000, true).AddStr("abstract", func() []string {
		s := make([]string, 30000)
		for i := range s {
			if i%5 != 0 {
				s[i] = strings.Repeat("Jørgensen 😀 abc ", i%100)
			}
		}
		return s
	}(), nil)
	// one record batch, as R's encoder writes: a column's strings are then adjacent throughout
	saved := batchBytes
	batchBytes = 1 << 30
	b, err := Encode(orig)
	batchBytes = saved
	if err != nil {
		t.Fatal(err)
	}
	viewed, err := View(b)
	if err != nil {
		t.Fatal(err)
	}
	col := func(tb *Table, name string) *Column {
		c, ok := tb.Col(name)
		if !ok {
			t.Fatalf("no column %q", name)
		}
		return c
	}
	for _, name := range []string{"s", "abstract"} {
		c := col(viewed, name)
		total := 0
		for i, s := range c.Str {
			if !c.IsNull(i) {
				total += len(s)
			}
		}
		if adjacentStrings(c, total) == nil {
			t.Fatalf("column %q of a viewed table: not encoded in place", name)
		}
		if name == "abstract" && adjacentStrings(col(orig, name), total) != nil {
			t.Fatalf("column %q of a built table: its strings are not adjacent", name)
		}
	}
	again, err := Encode(viewed)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(again)
	if err != nil {
		t.Fatal(err)
	}
	assertTablesEqual(t, orig, back)
	if v2 := decodeBoth(t, again); v2 == nil {
		t.Fatal("no table")
	}
}
