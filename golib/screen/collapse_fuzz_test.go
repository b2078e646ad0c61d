package screen

import (
	"strings"
	"testing"
	"unicode"
)

// collapsedByRunes is the rune-by-rune definition that writeCollapsed's fast path must keep.
func collapsedByRunes(s string) string {
	var b strings.Builder
	pending := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func FuzzWriteCollapsedMatchesRuneByRune(f *testing.F) {
	for _, s := range []string{"", "  a  b ", "x\u00a0y\u0085z", "caf\xc3\xa9 \xff\xfe end", "\t\n\v\f\r", "a\u2003\u3000b  "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		writeCollapsed(&b, s)
		if got, want := b.String(), collapsedByRunes(s); got != want {
			t.Fatalf("writeCollapsed(%q) = %q, want %q", s, got, want)
		}
	})
}
