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

// QuestionFields must find the fields QuestionOf wrote, whatever the text: the engine compares
// them with R's text to tell which fields R can paste back as it sent them.
func FuzzQuestionFields(f *testing.F) {
	for _, s := range []string{"", "a", "NA", " NA", "a b", "a  b", " a", "a ", "a\nb", "x\u00a0y", "\xff", "caf\u00e9 \ufffd",
		"</title>\n<abstract>", "a</title> b"} {
		f.Add(s, "b c", true)
	}
	f.Fuzz(func(t *testing.T, title, abstract string, valid bool) {
		text, _ := Field(title, valid)
		prompt := "Include\n this?"
		q := QuestionOf(prompt, title, valid, abstract, true)
		gotT, gotA := QuestionFields(q, len(QuestionHead(prompt)))
		wantA, _ := Field(abstract, true)
		if gotT != text || gotA != wantA || QuestionHead(prompt)+gotT+QuestionMiddle+gotA+QuestionTail != q {
			t.Fatalf("QuestionFields(%q) = %q, %q; want %q, %q", q, gotT, gotA, text, wantA)
		}
	})
}
