package refs

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkReadRIS reads the file REFS_BENCH_FILE names (bench/refs.R writes one of 50,000 real
// records with REFS_BENCH_FILE set).
func BenchmarkReadRIS(b *testing.B) {
	path := os.Getenv("REFS_BENCH_FILE")
	if path == "" {
		b.Skip("REFS_BENCH_FILE is not set")
	}
	for i := 0; i < b.N; i++ {
		rd, err := Open(path, Options{Format: "ris", NA: []string{"", "NA"}})
		if err != nil {
			b.Fatal(err)
		}
		for {
			ch, err := rd.Next()
			if err != nil {
				b.Fatal(err)
			}
			if ch == nil {
				break
			}
			ch.Release() // as the C ABI does once a chunk is encoded
		}
	}
}

// BenchmarkWriteIPC writes the chunks of REFS_BENCH_FILE as Arrow IPC streams.
func BenchmarkWriteIPC(b *testing.B) {
	path := os.Getenv("REFS_BENCH_FILE")
	if path == "" {
		b.Skip("REFS_BENCH_FILE is not set")
	}
	rd, err := Open(path, Options{Format: "ris", NA: []string{"", "NA"}})
	if err != nil {
		b.Fatal(err)
	}
	chunks, err := ReadAll(rd)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, ch := range chunks {
			w := bytes.NewBuffer(make([]byte, 0, ch.Bytes()))
			if err := ch.WriteIPC(w); err != nil {
				b.Fatal(err)
			}
		}
	}
}
