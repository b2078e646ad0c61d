//go:build cgo

package main

import (
	"strings"
	"testing"

	"github.com/tabscreen/tabscreen/golib/arrowio"
	"github.com/tabscreen/tabscreen/golib/refs"
)

func manyRecords(n int) []byte {
	return []byte(strings.Repeat("TY  - JOUR\nTI  - A title\nAB  - An abstract\nER  - \n", n))
}

// The chunks a reading encodes ahead decode to the file's rows; the end comes with no error.
func TestReadingEncodesChunks(t *testing.T) {
	rd, err := refs.OpenBytes(manyRecords(25), refs.Options{NA: []string{""}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	r := startReading(rd)
	rows := 0
	for e := range r.out {
		if e.b == nil {
			if e.err != nil {
				t.Fatal(e.err)
			}
			break
		}
		tb, err := arrowio.Decode(e.b.bytes())
		e.b.free()
		if err != nil {
			t.Fatal(err)
		}
		rows += tb.NumRows
	}
	r.close()
	if rows != 25 {
		t.Fatalf("%d rows, want 25", rows)
	}
}

// A reading closed after its first chunk stops, and frees what it had encoded.
func TestReadingClosedEarly(t *testing.T) {
	rd, err := refs.OpenBytes(manyRecords(100), refs.Options{NA: []string{""}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	r := startReading(rd)
	e := <-r.out
	if e.b == nil {
		t.Fatalf("no chunk: %v", e.err)
	}
	e.b.free()
	r.close()
	if _, open := <-r.out; open {
		t.Fatal("the reading goes on after close")
	}
}
