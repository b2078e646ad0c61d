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
	// Into C memory, through a buffer that starts too small and has to grow.
	out := newCBuffer(16)
	defer out.free()
	if err := roundTrip(in, out); err != nil {
		t.Fatal(err)
	}
	// arrow-go is deterministic: decoding and re-encoding its own stream is the identity
	if !bytes.Equal(in, out.bytes()) {
		t.Fatalf("round trip changed the stream (%d -> %d bytes)", len(in), out.len)
	}
	if err := roundTrip(in[:len(in)-3], &bytes.Buffer{}); err == nil {
		t.Fatal("truncated stream accepted")
	}
	if err := roundTrip(nil, &bytes.Buffer{}); err == nil {
		t.Fatal("empty input accepted")
	}
}
