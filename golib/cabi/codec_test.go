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
	out, err := roundTrip(in)
	if err != nil {
		t.Fatal(err)
	}
	// arrow-go is deterministic: decoding and re-encoding its own stream is the identity
	if !bytes.Equal(in, out) {
		t.Fatalf("round trip changed the stream (%d -> %d bytes)", len(in), len(out))
	}
	if _, err := roundTrip(in[:len(in)-3]); err == nil {
		t.Fatal("truncated stream accepted")
	}
	if _, err := roundTrip(nil); err == nil {
		t.Fatal("empty input accepted")
	}
}
