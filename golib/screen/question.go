// Package screen holds the provider-neutral screening rules: how a record becomes a question, the
// built-in tools, how a tool call becomes a decision, the aggregation of repeated answers and prices.
package screen

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// NoInformation is what the model sees for a missing or blank title or abstract.
const NoInformation = "No information"

// Field normalises one title or abstract for the question. Every run of white space becomes one
// space, so a line break never glues two words together (the incumbent package deleted single
// line breaks). A missing, blank or literal "NA" value becomes NoInformation.
func Field(s string, valid bool) (text string, blank bool) {
	if !valid {
		return NoInformation, true
	}
	t := collapseSpace(s)
	if t == "" || t == "NA" {
		return NoInformation, true
	}
	return t, false
}

// IsBlank tells, without building the normalised text, whether Field makes a value
// NoInformation: nothing but white space, or "NA" between white space.
func IsBlank(s string, valid bool) bool {
	if !valid {
		return true
	}
	t := strings.TrimFunc(s, unicode.IsSpace)
	return t == "" || t == "NA"
}

func collapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	writeCollapsed(&b, s)
	return b.String()
}

// writeCollapsed writes s with every run of white space made one space and none at either end.
func writeCollapsed(b *strings.Builder, s string) {
	start := b.Len()
	pendingSpace := false
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiSpace[c] {
				pendingSpace = b.Len() > start
				i++
				continue
			}
			// Abstracts are mostly ASCII: a run of it is copied at once, not rune by rune, and
			// so are the single spaces between its words, which stay as they are.
			j := i + 1
			for j < len(s) {
				if j+8 <= len(s) && plainWords(s[j:j+8]) {
					j += 8
					continue
				}
				if c := s[j]; c < utf8.RuneSelf && !asciiSpace[c] {
					j++
					continue
				}
				if s[j] == ' ' && j+1 < len(s) && s[j+1] < utf8.RuneSelf && !asciiSpace[s[j+1]] {
					j += 2
					continue
				}
				break
			}
			if pendingSpace {
				b.WriteByte(' ')
				pendingSpace = false
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if unicode.IsSpace(r) {
			pendingSpace = b.Len() > start
			continue
		}
		if pendingSpace {
			b.WriteByte(' ')
			pendingSpace = false
		}
		b.WriteRune(r) // invalid UTF-8 becomes U+FFFD, as ranging over the string does
	}
}

// plainWords tells whether eight bytes, which follow a byte that is not white space, are copied
// as they are: printable ASCII, any space single and not the last byte (so that the next bytes
// also follow one that is not white space). It looks at the eight at once; a false answer only
// sends them through the byte-by-byte rules.
func plainWords(b string) bool {
	x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if x&highs != 0 || (x-0x20*ones)&^x&highs != 0 { // a byte >= 0x80, or a control byte
		return false
	}
	y := x ^ (0x20 * ones)
	spaces := (y - ones) &^ y & highs // every space marked (a '!' just after one may be too)
	return spaces&(spaces<<8) == 0 && b[7] != ' '
}

// asciiSpace is unicode.IsSpace for the ASCII bytes.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// writeField writes a title or abstract as Field normalises it.
func writeField(b *strings.Builder, s string, valid bool) {
	if IsBlank(s, valid) {
		b.WriteString(NoInformation)
		return
	}
	writeCollapsed(b, s)
}

// PromptText is the prompt as a question starts with it (QuestionOf): the part of every question
// shared by the records of one prompt.
func PromptText(prompt string) string { return collapseSpace(prompt) }

// The frame of a question: QuestionHead(prompt), the title, QuestionMiddle, the abstract,
// QuestionTail. R puts the question of a result's row together from these and the fields, so that
// the text it sent is not sent back.
const (
	questionLead   = "\n\nNow evaluate the following record.\n<title>"
	QuestionMiddle = "</title>\n<abstract>"
	QuestionTail   = "</abstract>"
)

// QuestionHead is what a question of this prompt holds before the title.
func QuestionHead(prompt string) string { return collapseSpace(prompt) + questionLead }

// QuestionOf is Question of a record's raw title and abstract, built in one pass: a large
// screening builds hundreds of thousands of them, and the normalised fields would be garbage.
func QuestionOf(prompt, title string, titleValid bool, abstract string, abstractValid bool) string {
	var b strings.Builder
	b.Grow(len(prompt) + len(title) + len(abstract) + 128)
	writeCollapsed(&b, prompt)
	b.WriteString(questionLead)
	writeField(&b, title, titleValid)
	b.WriteString(QuestionMiddle)
	writeField(&b, abstract, abstractValid)
	b.WriteString(QuestionTail)
	return b.String()
}

// QuestionFields are the title and abstract of a question built by QuestionOf from a prompt whose
// head has headLen bytes: the normalised title has no line break, so it ends at the first
// QuestionMiddle. The fields share the question's memory.
func QuestionFields(question string, headLen int) (title, abstract string) {
	rest := question[headLen : len(question)-len(QuestionTail)]
	end := strings.Index(rest, QuestionMiddle)
	return rest[:end], rest[end+len(QuestionMiddle):]
}

// Question places the prompt first (so the shared prefix can be cached by the provider) and the
// record after it, each part labelled and fenced by tags so that instruction-like text inside an
// abstract cannot be mistaken for the reviewer's instructions.
func Question(prompt, title, abstract string) string {
	var b strings.Builder
	b.Grow(len(prompt) + len(title) + len(abstract) + 128)
	b.WriteString(QuestionHead(prompt))
	b.WriteString(title)
	b.WriteString(QuestionMiddle)
	b.WriteString(abstract)
	b.WriteString(QuestionTail)
	return b.String()
}
