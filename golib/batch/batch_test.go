package batch

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/tabscreen/tabscreen/golib/provider"
)

func TestReconcile(t *testing.T) {
	jobs := map[string]string{"a": "1/1/m/-/1", "b": "2/1/m/-/1", "c": "3/1/m/-/1"}
	ok := func(id string) provider.BatchLine {
		return provider.BatchLine{CustomID: id, Kind: provider.LineResponse, Status: 200, Body: []byte("{}")}
	}
	zero := func(id string) provider.BatchLine {
		return provider.BatchLine{CustomID: id, Kind: provider.LineFailed, Message: "status_code 0"}
	}
	expired := func(id string) provider.BatchLine {
		return provider.BatchLine{CustomID: id, Kind: provider.LineExpired, Message: "batch_expired"}
	}
	missing := func(id string) provider.BatchLine {
		return provider.BatchLine{CustomID: id, Kind: provider.LineExpired,
			Message: "in neither the output nor the error file of its batch (counted as expired)"}
	}
	refused := func(id string) provider.BatchLine {
		return provider.BatchLine{CustomID: id, Kind: provider.LineExpired, Message: "the provider refused the batch"}
	}
	cases := []struct {
		name    string
		lines   []provider.BatchLine
		refused bool
		want    []provider.BatchLine
	}{
		{"all answered", []provider.BatchLine{ok("c"), ok("a"), ok("b")}, false, []provider.BatchLine{ok("a"), ok("b"), ok("c")}},
		{"error file with status 0 and an expiry", []provider.BatchLine{ok("a"), zero("b"), expired("c")}, false,
			[]provider.BatchLine{ok("a"), zero("b"), expired("c")}},
		{"a line in neither file is expired", []provider.BatchLine{ok("a"), ok("c")}, false,
			[]provider.BatchLine{ok("a"), missing("b"), ok("c")}},
		{"no file at all", nil, false, []provider.BatchLine{missing("a"), missing("b"), missing("c")}},
		{"a response wins over a failure of the same line", []provider.BatchLine{zero("a"), ok("a"), ok("b"), ok("c"), zero("b")}, false,
			[]provider.BatchLine{ok("a"), ok("b"), ok("c")}},
		{"lines of other batches are ignored", []provider.BatchLine{ok("a"), ok("b"), ok("c"), ok("x")}, false,
			[]provider.BatchLine{ok("a"), ok("b"), ok("c")}},
		{"a refused batch expires every line", []provider.BatchLine{ok("a")}, true,
			[]provider.BatchLine{refused("a"), refused("b"), refused("c")}},
		{"a line that names no request is counted, and said beside the missing ones",
			[]provider.BatchLine{ok("a"), {Kind: provider.LineFailed, Message: "its result line could not be read: <html>"}, ok("c")}, false,
			[]provider.BatchLine{ok("a"), {CustomID: "b", Kind: provider.LineExpired, Message: missing("b").Message +
				"; 1 result line of the batch names no request: its result line could not be read: <html>"}, ok("c")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Reconcile(jobs, c.lines, c.refused); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestChunk(t *testing.T) {
	line := func(n int) []byte { return bytes.Repeat([]byte("x"), n-1) } // n bytes with its newline
	lines := func(n, size int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = line(size)
		}
		return out
	}
	cases := []struct {
		name  string
		lines [][]byte
		lim   provider.BatchLimits
		want  [][2]int
	}{
		{"none", nil, provider.BatchLimits{MaxLines: 10, MaxBytes: 1000}, nil},
		{"fits", lines(5, 10), provider.BatchLimits{MaxLines: 10, MaxBytes: 1000}, [][2]int{{0, 5}}},
		{"lines limit", lines(25, 10), provider.BatchLimits{MaxLines: 10, MaxBytes: 1 << 20}, [][2]int{{0, 10}, {10, 20}, {20, 25}}},
		{"exactly the lines limit", lines(20, 10), provider.BatchLimits{MaxLines: 10, MaxBytes: 1 << 20}, [][2]int{{0, 10}, {10, 20}}},
		// 1000 bytes less the 1% margin: 990 bytes, 99 lines of 10.
		{"bytes limit", lines(200, 10), provider.BatchLimits{MaxLines: 50000, MaxBytes: 1000}, [][2]int{{0, 99}, {99, 198}, {198, 200}}},
		{"a line larger than the limit goes alone", [][]byte{line(10), line(2000), line(10)},
			provider.BatchLimits{MaxLines: 100, MaxBytes: 1000}, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{"OpenAI's limits", lines(120000, 100), provider.BatchLimits{MaxLines: 50000, MaxBytes: 200 << 20},
			[][2]int{{0, 50000}, {50000, 100000}, {100000, 120000}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Chunk(c.lines, c.lim); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}
