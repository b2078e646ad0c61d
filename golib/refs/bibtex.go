package refs

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// bibEntry is one BibTeX entry: its type (lower case), key and fields in order.
type bibEntry struct {
	typ, key string
	fields   []field // tag = field name in lower case
	line     int
}

// parseBibTeX reads BibTeX entries. An entry runs from "@type{" to its closing brace (or
// parenthesis) and may span lines; text between entries is a comment. @string macros are
// expanded, @comment and @preamble skipped. An entry still open at the end of the file is an
// error naming the line where it starts.
func parseBibTeX(lr *lineReader, emit func(*bibEntry) error) error {
	macros := map[string]string{}
	var text strings.Builder
	depth, start, n := 0, 0, 0
	if err := lr.each(func(b []byte) error {
		if depth == 0 {
			at := indexEntryStart(b)
			if at < 0 {
				return nil
			}
			b = b[at:]
			start = lr.line
			text.Reset()
		} else {
			text.WriteByte('\n')
		}
		text.Write(b)
		if depth = bibDepth(text.String()); depth > 0 {
			return nil
		}
		e, perr := parseBibEntry(text.String(), macros)
		if perr != nil {
			return &Error{Class: ClassParse, Kind: "bibtex", Line: start, Message: perr.Error()}
		}
		if e != nil {
			e.line = start
			n++
			if err := emit(e); err != nil {
				return err
			}
		}
		depth = 0
		return nil
	}); err != nil {
		return err
	}
	if depth > 0 {
		return &Error{Class: ClassParse, Kind: "truncated", Line: start,
			Message: "the entry that starts here is not closed: the file ends inside it",
			Hint:    "A closing brace is missing, or the file is truncated."}
	}
	if n == 0 {
		return &Error{Class: ClassParse, Kind: "empty", Message: "the file holds no BibTeX entries"}
	}
	return nil
}

// indexEntryStart is where "@type{" or "@type(" starts on the line, or -1.
func indexEntryStart(b []byte) int {
	for i := 0; i < len(b); i++ {
		if b[i] != '@' {
			if b[i] != ' ' && b[i] != '\t' {
				return -1
			}
			continue
		}
		j := i + 1
		for j < len(b) && (isUpper(b[j]) || (b[j] >= 'a' && b[j] <= 'z')) {
			j++
		}
		for j < len(b) && b[j] == ' ' {
			j++
		}
		if j > i+1 && j < len(b) && (b[j] == '{' || b[j] == '(') {
			return i
		}
		return -1
	}
	return -1
}

// bibDepth is the nesting depth at the end of an entry's text so far: braces inside it, and its
// opening brace or parenthesis.
func bibDepth(s string) int {
	open := strings.IndexAny(s, "{(")
	if open < 0 {
		return 1
	}
	c := byte('}')
	if s[open] == '(' {
		c = ')'
	}
	depth := 1
	for i := open + 1; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == '{':
			depth++
		case s[i] == '}' && c == '}', s[i] == '}' && depth > 1:
			depth--
		case s[i] == ')' && c == ')' && depth == 1:
			depth--
		}
		if depth == 0 {
			return 0
		}
	}
	return depth
}

// parseBibEntry parses one entry's text; nil for @comment, @preamble and @string (whose macro it
// records).
func parseBibEntry(s string, macros map[string]string) (*bibEntry, error) {
	open := strings.IndexAny(s, "{(")
	typ := strings.ToLower(strings.TrimSpace(s[1:open]))
	body := s[open+1 : len(s)-1]
	switch typ {
	case "comment", "preamble":
		return nil, nil
	case "string":
		fields, err := bibFields(body, macros)
		for _, f := range fields {
			macros[f.tag] = f.val
		}
		return nil, err
	}
	e := &bibEntry{typ: typ}
	comma := strings.IndexByte(body, ',')
	if comma < 0 {
		e.key = strings.TrimSpace(body)
		return e, nil
	}
	e.key = strings.TrimSpace(body[:comma])
	var err error
	e.fields, err = bibFields(body[comma+1:], macros)
	return e, err
}

// bibFields parses "name = value, ..." where a value is {text}, "text", a number or a macro, or
// several joined by #.
func bibFields(s string, macros map[string]string) ([]field, error) {
	var out []field
	i := 0
	for {
		for i < len(s) && (s[i] == ',' || isSpace(s[i])) {
			i++
		}
		if i >= len(s) {
			return out, nil
		}
		j := i
		for j < len(s) && s[j] != '=' && s[j] != ',' {
			j++
		}
		name := strings.ToLower(strings.TrimSpace(s[i:j]))
		if j >= len(s) || s[j] != '=' {
			return out, fmt.Errorf("the field %q has no value (name = {value})", name)
		}
		i = j + 1
		var parts []string
		for {
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if i >= len(s) {
				break
			}
			var part string
			switch s[i] {
			case '{':
				end := matchBrace(s, i)
				if end < 0 {
					return out, fmt.Errorf("the value of %q has a brace that is not closed", name)
				}
				part, i = s[i+1:end], end+1
			case '"':
				end := i + 1
				for depth := 0; end < len(s) && (s[end] != '"' || depth > 0); end++ {
					switch s[end] {
					case '\\':
						end++
					case '{':
						depth++
					case '}':
						depth--
					}
				}
				if end >= len(s) {
					return out, fmt.Errorf("the value of %q has a quote that is not closed", name)
				}
				part, i = s[i+1:end], end+1
			default:
				end := i
				for end < len(s) && s[end] != ',' && s[end] != '#' && !isSpace(s[end]) {
					end++
				}
				word := s[i:end]
				if m, ok := macros[strings.ToLower(word)]; ok {
					word = m
				} else if mo, ok := months[strings.ToLower(word)]; ok {
					word = mo
				}
				part, i = word, end
			}
			parts = append(parts, part)
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if i < len(s) && s[i] == '#' {
				i++
				continue
			}
			break
		}
		if name != "" {
			out = append(out, field{tag: name, val: strings.Join(parts, "")})
		}
	}
}

var months = map[string]string{"jan": "January", "feb": "February", "mar": "March", "apr": "April",
	"may": "May", "jun": "June", "jul": "July", "aug": "August", "sep": "September", "oct": "October",
	"nov": "November", "dec": "December"}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func matchBrace(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// LaTeX accent commands and the combining mark each adds.
var latexAccents = map[byte]rune{
	'"': '\u0308', '\'': '\u0301', '`': '\u0300', '^': '\u0302', '~': '\u0303', '=': '\u0304',
	'.': '\u0307', 'c': '\u0327', 'v': '\u030c', 'H': '\u030b', 'u': '\u0306', 'k': '\u0328', 'r': '\u030a',
}

var latexSymbols = map[string]string{
	"ss": "ß", "o": "ø", "O": "Ø", "aa": "å", "AA": "Å", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ",
	"l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "&": "&", "%": "%", "_": "_", "$": "$", "#": "#", "{": "{", "}": "}",
}

// latexText turns a BibTeX value into plain text: accents and escaped characters become the
// characters they stand for, the braces that protect case go, white space is one space.
func latexText(s string) string {
	if !strings.ContainsAny(s, "\\{}\n\t") && !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' || c == '}':
		case c == '\\' && i+1 < len(s):
			i = latexCommand(s, i, &b)
		case isSpace(c):
			if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
				b.WriteByte(' ')
			}
		default:
			b.WriteByte(c)
		}
	}
	return norm.NFC.String(strings.TrimSpace(b.String()))
}

// latexCommand writes what the command at s[i] ("\" ...) stands for and returns the index of its
// last byte.
func latexCommand(s string, i int, b *strings.Builder) int {
	c := s[i+1]
	if mark, ok := latexAccents[c]; ok && (!isLetter(c) || i+2 < len(s) && (s[i+2] == '{' || s[i+2] == ' ')) {
		j := i + 2
		for j < len(s) && (s[j] == ' ' || s[j] == '{') {
			j++
		}
		if j < len(s) {
			if s[j] == '\\' && j+1 < len(s) && (s[j+1] == 'i' || s[j+1] == 'j') {
				j++
			}
			base := s[j]
			b.WriteByte(base)
			b.WriteRune(mark)
			for j+1 < len(s) && s[j+1] == '}' {
				j++
			}
			return j
		}
		return j - 1
	}
	j := i + 1
	for j < len(s) && isLetter(s[j]) {
		j++
	}
	name := s[i+1 : j]
	if name == "" {
		name, j = s[i+1:i+2], i+2
	}
	// An unknown command (\textit, \emph) goes; the text in its braces stays.
	b.WriteString(latexSymbols[name])
	if j < len(s) && s[j] == ' ' && isLetter(name[0]) {
		j++ // TeX takes the space after a command's name as its end
	}
	return j - 1
}

func isLetter(c byte) bool { return isUpper(c) || (c >= 'a' && c <= 'z') }

// BibTeX fields with a named column.
var bibColumns = map[string]string{
	"title": "title", "abstract": "abstract", "journal": "journal", "journaltitle": "journal",
	"booktitle": "secondary_title", "doi": "doi", "pmid": "pmid", "volume": "volume", "number": "issue",
	"issue": "issue", "issn": "issn", "publisher": "publisher", "address": "place", "location": "place",
	"url": "url", "note": "notes", "language": "language", "date": "date",
}

var bibTypes = map[string]string{
	"article": "JOUR", "book": "BOOK", "inbook": "CHAP", "incollection": "CHAP", "inproceedings": "CPAPER",
	"conference": "CPAPER", "proceedings": "CONF", "phdthesis": "THES", "mastersthesis": "THES",
	"thesis": "THES", "techreport": "RPRT", "report": "RPRT", "manual": "GEN", "misc": "GEN",
	"unpublished": "UNPB", "online": "ELEC", "electronic": "ELEC", "booklet": "PAMP", "patent": "PAT",
}

// mapBibTeX: the key is the database id; authors and editors are split at "and"; keywords at
// commas or semicolons; pages into start and end; the year is the year field, else the date's.
func mapBibTeX(e *bibEntry, na naSet, r *row) (*row, int32, bool) {
	r.reset()
	if t, ok := bibTypes[e.typ]; ok {
		r.add("type", t)
	} else {
		r.add("type", "GEN")
	}
	if e.key != "" {
		r.add("database_id", e.key)
	}
	var year int32
	hasYear := false
	for _, f := range e.fields {
		v := latexText(f.val)
		if na.has(v) {
			continue
		}
		switch f.tag {
		case "author", "editor":
			col := "authors"
			if f.tag == "editor" {
				col = "editors"
			}
			for _, name := range splitAnd(f.val) {
				r.add(col, latexText(name))
			}
			continue
		case "keywords":
			for _, k := range strings.FieldsFunc(v, func(c rune) bool { return c == ',' || c == ';' }) {
				if k = strings.TrimSpace(k); k != "" {
					r.add("keywords", k)
				}
			}
			continue
		case "pages":
			start, end, _ := strings.Cut(v, "-")
			r.add("start_page", strings.TrimSpace(start))
			if end = strings.TrimSpace(strings.TrimLeft(end, "-")); end != "" {
				r.add("end_page", end)
			}
			continue
		case "year":
			year, hasYear = fourDigits(v)
			if !isYear(v) && !r.has("date") {
				r.add("date", v)
			}
			continue
		}
		col, ok := bibColumns[f.tag]
		if !ok {
			col = f.tag
		}
		r.add(col, v)
	}
	joinExtras(r)
	if !hasYear {
		year, hasYear = fourDigits(r.first("date"))
	}
	return r, year, hasYear
}

// splitAnd splits a BibTeX name list at the word "and" outside braces.
func splitAnd(s string) []string {
	var out []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		}
		if depth == 0 && i+5 <= len(s) && isSpace(s[i]) && strings.EqualFold(s[i+1:i+4], "and") && isSpace(s[i+4]) {
			out = append(out, strings.TrimSpace(s[last:i]))
			last = i + 5
			i += 4
		}
	}
	out = append(out, strings.TrimSpace(s[last:]))
	keep := out[:0]
	for _, n := range out {
		if strings.TrimFunc(n, unicode.IsSpace) != "" {
			keep = append(keep, n)
		}
	}
	return keep
}
