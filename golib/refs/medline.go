package refs

import (
	"strings"
)

// parseMedline reads PubMed's MEDLINE format (.nbib, .txt): records separated by blank lines, each
// opened by "PMID- "; a tag of up to four characters padded to four, "- ", the value; continuation
// lines are indented.
func parseMedline(lr *lineReader, emit func(fields []field) error) error {
	var cur []field
	n := 0
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		n++
		joinMore(cur)
		err := emit(cur)
		cur = cur[:0]
		return err
	}
	if err := lr.each(func(b []byte) error {
		if isBlank(b) {
			if err := flush(); err != nil {
				return err
			}
			return nil
		}
		if b[0] != ' ' && b[0] != '\t' {
			if tag, val, ok := medlineTagAt(b); ok {
				if tag == "PMID" {
					if err := flush(); err != nil {
						return err
					}
				}
				cur = append(cur, field{tag: tag, val: cleanValue(val), line: lr.line})
				return nil
			}
		}
		if len(cur) > 0 {
			if v := cleanValue(b); v != "" {
				cur[len(cur)-1].more = append(cur[len(cur)-1].more, v)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if n == 0 {
		return &Error{Class: ClassParse, Kind: "empty", Message: "the file holds no MEDLINE records (no PMID line opens one)"}
	}
	return nil
}

// medlineTagAt parses "TAG - value" with the tag padded to four characters (or longer tags such
// as "IRAD" followed directly by "- ").
func medlineTagAt(b []byte) (string, []byte, bool) {
	i := 0
	for i < len(b) && i < 4 && (isUpper(b[i]) || (i > 0 && isDigit(b[i]))) {
		i++
	}
	if i < 2 {
		return "", nil, false
	}
	tag := string(b[:i])
	for i < len(b) && b[i] == ' ' {
		i++
	}
	if i >= len(b) || b[i] != '-' || (i+1 < len(b) && b[i+1] != ' ') {
		return "", nil, false
	}
	return tag, b[i+1:], true
}

// MEDLINE tags with a named column; the others keep their tag (see extraName).
var medlineColumns = map[string]string{
	"PMID": "pmid", "TI": "title", "AB": "abstract", "DP": "date", "TA": "journal_abbrev",
	"JT": "journal_full", "VI": "volume", "IP": "issue", "IS": "issn", "LA": "language", "PL": "place",
	"PB": "publisher", "FED": "editors", "ED": "editors",
}

// mapMedline: authors are the full names (FAU) where the record has them, else the short ones
// (AU); keywords are the other terms (OT) and the MeSH headings (MH); the DOI is the LID or AID
// marked [doi]; pages (PG) are split into start and end; the type is JOUR, or BOOK and CHAP for
// PubMed's book records (BTI).
func mapMedline(fields []field, na naSet, r *row) (*row, int32, bool) {
	r.reset()
	var short, full []string
	for _, f := range fields {
		v := f.val
		if na.has(v) {
			continue
		}
		switch f.tag {
		case "FAU":
			full = append(full, v)
			continue
		case "AU":
			short = append(short, v)
			continue
		case "OT", "MH":
			r.add("keywords", v)
			continue
		case "PG":
			start, end, _ := strings.Cut(v, "-")
			r.add("start_page", strings.TrimSpace(start))
			if end = strings.TrimSpace(end); end != "" {
				r.add("end_page", end)
			}
			continue
		case "LID", "AID":
			if d, ok := strings.CutSuffix(v, " [doi]"); ok && !r.has("doi") {
				r.add("doi", strings.TrimSpace(d))
			}
		}
		addField(r, medlineColumns, FormatMedline, f.tag, v)
	}
	finishRow(r, full, short)
	switch {
	case r.has("BTI") && r.has("title"):
		r.add("type", "CHAP")
		r.add("secondary_title", r.first("BTI"))
	case r.has("BTI"):
		r.add("type", "BOOK")
		r.set("title", r.first("BTI"))
	default:
		r.add("type", "JOUR")
	}
	if !r.has("journal") {
		if v := r.first("journal_full"); v != "" {
			r.add("journal", v)
		} else if v := r.first("journal_abbrev"); v != "" {
			r.add("journal", v)
		}
	}
	year, ok := fourDigits(r.first("date"))
	if !ok {
		year, ok = fourDigits(r.first("DEP"))
	}
	return r, year, ok
}

// addField adds a field of a tagged format to its named column, else to the column of its tag.
func addField(r *row, columns map[string]string, format, tag, v string) {
	col, ok := columns[tag]
	if !ok {
		col = extraName(tag, format)
	}
	r.add(col, v)
}

// finishRow adds the authors, by their full names when the record has them (MEDLINE's FAU, Web
// of Science's AF), else the short ones, and joins the repeats of the other columns.
func finishRow(r *row, full, short []string) {
	if len(full) == 0 {
		full = short
	}
	for _, a := range full {
		r.add("authors", a)
	}
	joinExtras(r)
}

// extraName is the column of a tag without a named column: the tag itself, unless RIS names a
// column with that tag (MEDLINE's DA is the date the record was created, not RIS's date), then
// the tag and the format, e.g. DA_medline.
func extraName(tag, format string) string {
	if _, clash := risColumns[tag]; clash || tag == "TY" || tag == "ER" || tag == "PY" {
		return tag + "_" + format
	}
	return tag
}

// joinExtras joins the repeated values of the columns that are not named, and of the named
// single-valued ones that a format repeats (several ISSNs, languages), by "; ": in these formats
// a repeat is another value of the field, not a second field as in RIS.
func joinExtras(r *row) {
	for _, id := range r.used {
		if vals := r.vals[id]; len(vals) > 1 && !multiColumns[r.g.names[id]] {
			r.vals[id] = append(vals[:0], strings.Join(vals, multiSep))
		}
	}
}
