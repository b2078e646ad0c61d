package arrowio

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// decodeBoth decodes a stream with View and with arrow-go (Decode) and checks they agree, also on
// the errors they find.
func decodeBoth(t *testing.T, b []byte) *Table {
	t.Helper()
	viewed, verr := View(b)
	decoded, derr := Decode(b)
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
		decoded, derr := Decode(b)
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
