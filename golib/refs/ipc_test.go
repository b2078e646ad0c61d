package refs

import (
	"bytes"
	"testing"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// A chunk written as Arrow IPC decodes (with the package every table of the core goes through)
// to the same values: text columns, the integer year, nulls, empty strings, a chunk of no rows.
func TestChunkWriteIPC(t *testing.T) {
	for _, text := range []string{
		"TY  - JOUR\nTI  - One\nPY  - 2001\nER  - \nTY  - BOOK\nAB  - Two\nU1  - x\nER  - \nTY  - JOUR\nER  - \n",
		"title,abstract,n\nA,,1\n",
		"title,abstract\n",
	} {
		rd, err := OpenBytes([]byte(text), Options{NA: []string{"", "NA"}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := ReadAll(rd)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunks {
			tb := decodedChunk(t, ch)
			for k, name := range ch.Names() {
				c := &tb.Columns[k]
				for i := 0; i < ch.Rows; i++ {
					want, ok := ch.Value(name, i)
					got := ""
					if c.Kind == arrowio.KindInt32 {
						got = itoa(int(c.I32[i]))
					} else {
						got = c.Str[i]
					}
					if c.IsNull(i) == ok || (ok && got != want) {
						t.Errorf("%q: column %s row %d: %q (null %v), want %q (valid %v)", text, name, i, got, c.IsNull(i), want, ok)
					}
				}
			}
		}
	}
}

// decodedChunk is a chunk written as Arrow IPC and decoded again, with its rows and columns.
func decodedChunk(t *testing.T, ch *Chunk) *arrowio.Table {
	t.Helper()
	var b bytes.Buffer
	if err := ch.WriteIPC(&b); err != nil {
		t.Fatalf("WriteIPC: %v", err)
	}
	tb, err := arrowio.Decode(b.Bytes())
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if tb.NumRows != ch.Rows || len(tb.Columns) != len(ch.Names()) {
		t.Fatalf("%d rows, %d columns; want %d, %d", tb.NumRows, len(tb.Columns), ch.Rows, len(ch.Names()))
	}
	return tb
}
