//go:build cgo

package main

import (
	"bytes"
	"testing"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

func TestRoundTripExport(t *testing.T) {
	in, err := arrowio.Encode(arrowio.NewTable(3).
		AddStr("s", []string{"Jørgensen", "", "😀"}, []bool{true, true, false}).
		AddI32("i", []int32{1, 2, 3}, nil).
		AddF64("f", []float64{0.5, 0, 2}, []bool{true, false, true}).
		AddBool("b", []bool{true, false, false}, nil))
	if err != nil {
		t.Fatal(err)
	}
	// Into C memory, in a buffer of the size SizeHint gives.
	out, err := roundTrip(in)
	if err != nil {
		t.Fatal(err)
	}
	defer out.free()
	// arrow-go is deterministic: decoding and re-encoding its own stream is the identity
	if !bytes.Equal(in, out.bytes()) {
		t.Fatalf("round trip changed the stream (%d -> %d bytes)", len(in), out.len)
	}
	// Through a buffer that starts too small and has to grow.
	tab, err := arrowio.View(in)
	if err != nil {
		t.Fatal(err)
	}
	small := newCBuffer(16)
	defer small.free()
	if err := arrowio.EncodeTo(tab, small); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, small.bytes()) {
		t.Fatalf("encoding into a growing buffer changed the stream (%d -> %d bytes)", len(in), small.len)
	}
	if b, err := roundTrip(in[:len(in)-3]); err == nil {
		b.free()
		t.Fatal("truncated stream accepted")
	}
	if b, err := roundTrip(nil); err == nil {
		b.free()
		t.Fatal("empty input accepted")
	}
}
