package refs

import (
	"bytes"
	"fmt"
	"strings"
	"unsafe"
)

// The RIS tags with a named column. The columns of authors, editors and keywords keep every value;
// the others keep the first and put later ones in repeated_tags, as RIS lines.
var risColumns = map[string]string{
	"TI": "title", "T1": "title", "AB": "abstract", "N2": "abstract", "AU": "authors", "A1": "authors",
	"A2": "editors", "ED": "editors", "KW": "keywords", "Y1": "date", "DA": "date", "JO": "journal",
	"JF": "journal_full", "JA": "journal_abbrev", "T2": "secondary_title", "DO": "doi", "ID": "database_id",
	"AN": "accession_number", "UR": "url", "SN": "issn", "VL": "volume", "IS": "issue", "SP": "start_page",
	"EP": "end_page", "N1": "notes", "LA": "language", "PB": "publisher", "CY": "place", "PM": "pmid",
}

// The prefixes of the keywords and notes write_refs() adds: screening results and merged records.
const (
	prefixResult = "tabscreen: "
	prefixMerged = "tabscreen merged: "
)

type field struct {
	tag, val string
	line     int
	more     []string // continuation lines, joined to val when the record ends
}

// joinMore joins each field's continuation lines to its value with spaces (once, at the end of
// the record: a long abstract wrapped over hundreds of lines is not copied per line).
func joinMore(fields []field) {
	for i := range fields {
		f := &fields[i]
		if len(f.more) == 0 {
			continue
		}
		parts := f.more
		if f.val != "" {
			parts = append([]string{f.val}, parts...)
		}
		f.val, f.more = strings.Join(parts, " "), nil
	}
}

// risTagAt parses a RIS tag line: two characters (a capital letter, then a capital letter or a
// digit), white space of two or more spaces or holding a tab, a hyphen, then white space or the
// end. A single space before the hyphen is taken only when loose is set (a record whose TY line
// is written so). The value is returned without the white space around it.
func risTagAt(b []byte, loose bool) (tag string, val []byte, ok bool) {
	if len(b) < 3 || !isUpper(b[0]) || !(isUpper(b[1]) || isDigit(b[1])) {
		return "", nil, false
	}
	i, spaces, tab := 2, 0, false
	for ; i < len(b) && (b[i] == ' ' || b[i] == '\t'); i++ {
		if b[i] == '\t' {
			tab = true
		} else {
			spaces++
		}
	}
	if i >= len(b) || b[i] != '-' || !(tab || spaces >= 2 || (loose && spaces == 1)) {
		return "", nil, false
	}
	i++
	if i < len(b) && b[i] != ' ' && b[i] != '\t' {
		return "", nil, false
	}
	return tagName(b[0], b[1]), b[i:], true
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// tagNames interns the two-character tags, so that a 50,000-record file does not allocate a string
// per line for them.
var tagNames [26 * 36]string

func tagName(a, b byte) string {
	j := int(b - '0')
	if isUpper(b) {
		j = 10 + int(b-'A')
	}
	k := int(a-'A')*36 + j
	if tagNames[k] == "" {
		tagNames[k] = string([]byte{a, b})
	}
	return tagNames[k]
}

// risColumnByTag is risColumns by tag index, else the tag itself: looked up for every field.
var risColumnByTag [26 * 36]string

func tagIndex(tag string) int {
	j := int(tag[1] - '0')
	if isUpper(tag[1]) {
		j = 10 + int(tag[1]-'A')
	}
	return int(tag[0]-'A')*36 + j
}

func init() {
	// Fill the tables before any goroutine reads them (files are read concurrently).
	for a := byte('A'); a <= 'Z'; a++ {
		for b := byte('0'); b <= '9'; b++ {
			tagName(a, b)
		}
		for b := byte('A'); b <= 'Z'; b++ {
			tagName(a, b)
		}
	}
	for k, tag := range tagNames {
		risColumnByTag[k] = tag
	}
	for tag, col := range risColumns {
		risColumnByTag[tagIndex(tag)] = col
	}
}

// parseRIS reads RIS records. It is tolerant of what exporters add around the records (record
// numbers such as "1.", Ovid's "Link to the Ovid Full Text" lines, the Cochrane Library's
// "Record #3 of 18" and header lines, tags after ER such as Ovid's NL, which belong to the record
// above, an ER without a record) and refuses only what loses records: a TY before the ER of the
// record it interrupts, a file that ends inside a record, tags outside any record.
func parseRIS(lr *lineReader, emit func(fields []field) error) error {
	// The values of the open record, the record before and the tags after it live in three
	// arenas, which swap as the records do.
	var curA, prevA, pendA arena
	var (
		cur      []field // the open record; nil when outside
		inside   bool
		loose    bool
		openLine int
		prev     []field // the last closed record, held until it can take no more trailing tags
		havePrev bool
		pending  []field // tags after an ER, not yet known to be trailing tags or a record without TY
		nRecords int
	)
	flushPrev := func() error {
		if !havePrev {
			return nil
		}
		havePrev = false
		joinMore(prev)
		err := emit(prev)
		prevA.reset()
		pendA.reset()
		return err
	}
	if err := lr.each(func(b []byte) error {
		if isBlank(b) {
			return nil
		}
		var (
			tag   string
			val   []byte
			isTag bool
		)
		if inside {
			tag, val, isTag = risTagAt(b, loose)
		} else if tag, val, isTag = risTagAt(b, false); isTag && tag == "TY" {
			loose = false
		} else if t, v, ok := risTagAt(b, true); !isTag && ok && t == "TY" {
			// A TY written "TY - JOUR" opens a record whose tags have one space.
			tag, val, isTag, loose = t, v, true, true
		}
		switch {
		case !inside && !isTag:
			// Decoration between records: record numbers, links, headers.
		case !inside && tag == "TY":
			if len(pending) > 0 {
				if !havePrev {
					return outsideError(pending[0])
				}
				prev = append(prev, pending...)
				pending = pending[:0]
			}
			if err := flushPrev(); err != nil {
				return err
			}
			inside, openLine = true, lr.line
			curA.reset()
			cur = append(cur[:0], field{tag: "TY", val: curA.value(val, lr.cr), line: lr.line})
		case !inside && tag == "ER":
			if len(pending) > 0 {
				// Tags closed by an ER with no TY: a record whose TY line is missing.
				if err := flushPrev(); err != nil {
					return err
				}
				nRecords++
				joinMore(pending)
				if err := emit(pending); err != nil {
					return err
				}
				pending = pending[:0]
				pendA.reset()
			}
		case !inside:
			pending = append(pending, field{tag: tag, val: pendA.value(val, lr.cr), line: lr.line})
		case !isTag:
			cur = appendContinuation(cur, curA.value(b, lr.cr))
		case tag == "TY":
			return &Error{Class: ClassParse, Kind: "no_er", Line: lr.line, Message: fmt.Sprintf(
				"a new record starts (TY) but the record that starts at line %d has no ER line", openLine),
				Hint: "Each record must end with an ER line; is a line missing or the export damaged?"}
		case tag == "ER":
			inside = false
			nRecords++
			prev, cur = cur, prev
			prevA, curA = curA, prevA
			havePrev = true
		default:
			cur = append(cur, field{tag: tag, val: curA.value(val, lr.cr), line: lr.line})
		}
		return nil
	}); err != nil {
		return err
	}
	if inside {
		return &Error{Class: ClassParse, Kind: "truncated", Line: openLine, Message: fmt.Sprintf(
			"the record that starts at line %d has no ER line: the file ends (line %d) inside it", openLine, lr.line),
			Hint: "The file looks truncated: export the references again."}
	}
	if len(pending) > 0 {
		if !havePrev {
			return outsideError(pending[0])
		}
		prev = append(prev, pending...)
	}
	if err := flushPrev(); err != nil {
		return err
	}
	if nRecords == 0 {
		return &Error{Class: ClassParse, Kind: "empty", Message: "the file holds no RIS records (no TY line opens one)"}
	}
	return nil
}

func outsideError(f field) *Error {
	return &Error{Class: ClassParse, Kind: "outside", Line: f.line,
		Message: fmt.Sprintf("the tag %s is outside a record: a record starts with a TY line and ends with an ER line", f.tag)}
}

// appendContinuation adds a line without a tag to the last field of the record: a new keyword for
// KW (EndNote writes one keyword per line under one KW), else the value's next words.
func appendContinuation(cur []field, v string) []field {
	f := &cur[len(cur)-1]
	switch {
	case v == "":
	case f.tag == "KW":
		return append(cur, field{tag: "KW", val: v, line: f.line})
	default:
		f.more = append(f.more, v)
	}
	return cur
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// risMapper turns a RIS record into a row, as read_refs() documents it.
type risMapper struct {
	na  naSet
	row *row
	// Each tag's column number and whether it holds several values, found once per tag.
	tagID    [26 * 36]int
	tagMulti [26 * 36]bool
	ids      struct{ date, typ, decision, merged, note, repeated int }
}

func newRISMapper(na naSet, r *row) *risMapper {
	m := &risMapper{na: na, row: r}
	for k := range m.tagID {
		m.tagID[k] = -1
	}
	g := r.g
	m.ids.date, m.ids.typ, m.ids.decision = g.id("date"), g.id("type"), g.id(colDecision)
	m.ids.merged, m.ids.note, m.ids.repeated = g.id(colMerged), g.id(colNote), g.id(colRepeated)
	return m
}

// column is the number of the tag's column.
func (m *risMapper) column(tag string) (int, bool) {
	k := tagIndex(tag)
	if m.tagID[k] < 0 {
		col := risColumnByTag[k]
		m.tagID[k], m.tagMulti[k] = m.row.g.id(col), multiColumns[col]
	}
	return m.tagID[k], m.tagMulti[k]
}

func (m *risMapper) mapRecord(fields []field) (*row, int32, bool) {
	r := m.row
	r.reset()
	var (
		firstPY, firstY1, firstDA = true, true, true
		year                      int32
		yearFrom                  = 4 // 1 PY, 2 Y1, 3 DA, 4 none
	)
	for _, f := range fields {
		if m.na.has(f.val) {
			continue
		}
		v := f.val
		switch {
		case f.tag == "TY":
			r.addID(m.ids.typ, v)
			continue
		case f.tag == "KW" && strings.HasPrefix(v, prefixResult):
			r.addID(m.ids.decision, v[len(prefixResult):])
			continue
		case f.tag == "N1" && strings.HasPrefix(v, prefixMerged):
			r.addID(m.ids.merged, v[len(prefixMerged):])
			continue
		case f.tag == "N1" && strings.HasPrefix(v, prefixResult):
			r.addID(m.ids.note, v)
			continue
		}
		// The year: the first four-digit number of the first PY, else of the first Y1, else of the
		// first DA.
		switch f.tag {
		case "PY":
			if firstPY {
				firstPY = false
				if y, ok := fourDigits(v); ok && yearFrom > 1 {
					year, yearFrom = y, 1
				}
				if isYear(v) {
					continue // fully held by year
				}
				m.single(r, m.ids.date, f.tag, v)
			} else {
				r.addID(m.ids.repeated, f.tag+"  - "+v)
			}
			continue
		case "Y1", "DA":
			first, rank := &firstY1, 2
			if f.tag == "DA" {
				first, rank = &firstDA, 3
			}
			if *first {
				*first = false
				if y, ok := fourDigits(v); ok && yearFrom > rank {
					year, yearFrom = y, rank
				}
			}
		}
		if id, multi := m.column(f.tag); multi {
			r.addID(id, v)
		} else {
			m.single(r, id, f.tag, v)
		}
	}
	fillJournal(r)
	fillDOI(r, []string{"L3", "M3"}, []string{"url", "notes"})
	fillPMID(r)
	return r, year, yearFrom < 4
}

// single sets a single-valued column, or keeps a repeat as a RIS line in repeated_tags.
func (m *risMapper) single(r *row, id int, tag, v string) {
	if r.hasID(id) {
		r.addID(m.ids.repeated, tag+"  - "+v)
		return
	}
	r.addID(id, v)
}

// fillJournal: the journal is JO, else the full or abbreviated name, else the secondary title (a
// journal article's journal or a chapter's book).
func fillJournal(r *row) {
	if r.has("journal") {
		return
	}
	for _, c := range []string{"journal_full", "journal_abbrev", "secondary_title"} {
		if v := r.first(c); v != "" {
			r.add("journal", v)
			return
		}
	}
}

func isYear(v string) bool {
	return len(v) == 4 && isDigit(v[0]) && isDigit(v[1]) && isDigit(v[2]) && isDigit(v[3])
}

// fourDigits finds the first run of exactly four digits.
func fourDigits(v string) (int32, bool) {
	for i := 0; i+4 <= len(v); i++ {
		if !isDigit(v[i]) || (i > 0 && isDigit(v[i-1])) {
			continue
		}
		if isDigit(v[i+1]) && isDigit(v[i+2]) && isDigit(v[i+3]) && (i+4 == len(v) || !isDigit(v[i+4])) {
			return int32(v[i]-'0')*1000 + int32(v[i+1]-'0')*100 + int32(v[i+2]-'0')*10 + int32(v[i+3]-'0'), true
		}
	}
	return 0, false
}

// arena holds a record's values: each field's value is a view of it (unsafe.String), valid until
// the record is in the table, so that reading a file allocates no string per value. Growing the
// arena leaves earlier views on the old array, which stays alive as long as they do.
type arena struct{ b []byte }

func (a *arena) reset() { a.b = a.b[:0] }

// value stores a trimmed value (lone carriage returns as spaces, as cleanValue does; cr says
// whether the line holds one).
func (a *arena) value(v []byte, cr bool) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return ""
	}
	start := len(a.b)
	a.b = append(a.b, v...)
	out := a.b[start:]
	if cr {
		for i, c := range out {
			if c == '\r' {
				out[i] = ' '
			}
		}
		out = bytes.TrimSpace(out)
		if len(out) == 0 {
			return ""
		}
	}
	return unsafe.String(&out[0], len(out))
}
