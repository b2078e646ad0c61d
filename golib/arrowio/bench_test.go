package arrowio

import (
	"strconv"
	"strings"
	"testing"
)

// benchTable is 100,000 rows of ~1.5 KB abstracts and short titles.
func benchTable() *Table {
	const n = 100000
	titles := make([]string, n)
	abstracts := make([]string, n)
	base := strings.Repeat("Background: we examined the effect of a programme on outcomes (Jørgensen). ", 20)
	for i := range abstracts {
		titles[i] = "Record " + strconv.Itoa(i)
		abstracts[i] = base + strconv.Itoa(i)
	}
	return NewTable(n).AddStr("title", titles, nil).AddStr("abstract", abstracts, nil)
}

func BenchmarkEncode(b *testing.B) {
	t := benchTable()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Encode(t); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	buf, err := Encode(benchTable())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
