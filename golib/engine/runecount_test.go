package engine

import (
	"testing"
	"unicode/utf8"
)

// FuzzRuneCount: the word-at-a-time count is utf8.RuneCount, for any bytes.
func FuzzRuneCount(f *testing.F) {
	for _, s := range []string{"", "abc", "Include? 12345678 é 中文 \xff\xfe\xc3 end", "\xe2\x82", "0123456789abcdef\x80"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := runeCount(b), utf8.RuneCount(b); got != want {
			t.Fatalf("runeCount(%q) = %d, want %d", b, got, want)
		}
	})
}
