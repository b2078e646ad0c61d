package refs

import "fmt"

// Web of Science tags whose continuation lines are further values (one author, address or cited
// reference per line); in the other tags they continue the text.
var wosListTags = map[string]bool{
	"AU": true, "AF": true, "BA": true, "BF": true, "BE": true, "CA": true, "GP": true, "CR": true, "C1": true, "C3": true,
}

// parseWoS reads the Web of Science tagged format (.ciw, .txt; also Zoological Record's): header
// lines FN and VR, records of "TG value" lines ending with ER, continuation lines indented by
// three spaces, EF at the end.
func parseWoS(lr *lineReader, emit func(fields []field) error) error {
	var cur []field
	open, n := 0, 0
	if err := lr.each(func(b []byte) error {
		if isBlank(b) {
			return nil
		}
		if b[0] == ' ' || b[0] == '\t' {
			if len(cur) == 0 {
				return nil
			}
			f := &cur[len(cur)-1]
			v := cleanValue(b)
			if wosListTags[f.tag] {
				cur = append(cur, field{tag: f.tag, val: v, line: lr.line})
			} else if v != "" {
				f.more = append(f.more, v)
			}
			return nil
		}
		tag, val, ok := wosTagAt(b)
		switch {
		case !ok:
			if v := cleanValue(b); open > 0 && len(cur) > 0 && v != "" {
				cur[len(cur)-1].more = append(cur[len(cur)-1].more, v)
			}
		case tag == "ER":
			if open > 0 {
				n++
				joinMore(cur)
				if err := emit(cur); err != nil {
					return err
				}
			}
			cur, open = cur[:0], 0
		case open == 0 && (tag == "FN" || tag == "VR" || tag == "EF"):
		default:
			if open == 0 {
				open = lr.line
			}
			cur = append(cur, field{tag: tag, val: cleanValue(val), line: lr.line})
		}
		return nil
	}); err != nil {
		return err
	}
	if open > 0 {
		return &Error{Class: ClassParse, Kind: "truncated", Line: open, Message: fmt.Sprintf(
			"the record that starts at line %d has no ER line: the file ends (line %d) inside it", open, lr.line),
			Hint: "The file looks truncated: export the references again."}
	}
	if n == 0 {
		return &Error{Class: ClassParse, Kind: "empty", Message: "the file holds no Web of Science records (no ER line ends one)"}
	}
	return nil
}

// wosTagAt parses "TG value" (or a tag alone, as ER and EF are written).
func wosTagAt(b []byte) (string, []byte, bool) {
	if len(b) < 2 || !isUpper(b[0]) || !(isUpper(b[1]) || isDigit(b[1])) {
		return "", nil, false
	}
	if len(b) > 2 && b[2] != ' ' {
		return "", nil, false
	}
	if len(b) == 2 {
		return tagName(b[0], b[1]), nil, true
	}
	return tagName(b[0], b[1]), b[3:], true
}

var wosColumns = map[string]string{
	"TI": "title", "AB": "abstract", "BE": "editors", "SO": "journal_full", "JI": "journal_abbrev",
	"DE": "keywords", "ID": "keywords", "PD": "date", "VL": "volume", "IS": "issue", "BP": "start_page",
	"EP": "end_page", "DI": "doi", "PM": "pmid", "SN": "issn", "PU": "publisher", "PI": "place",
	"LA": "language", "UT": "accession_number", "AN": "accession_number", "SE": "secondary_title",
}

var wosTypes = map[string]string{"J": "JOUR", "B": "BOOK", "S": "SER", "P": "PAT", "C": "CONF"}

// mapWoS: authors are the full names (AF) where the record has them, else the short ones (AU);
// keywords are the author keywords (DE) and Keywords Plus (ID); the type follows PT (J is JOUR).
func mapWoS(fields []field, na naSet, r *row) (*row, int32, bool) {
	r.reset()
	var short, full []string
	var year int32
	hasYear := false
	for _, f := range fields {
		v := f.val
		if na.has(v) {
			continue
		}
		switch f.tag {
		case "AF":
			full = append(full, v)
			continue
		case "AU":
			short = append(short, v)
			continue
		case "PY":
			year, hasYear = fourDigits(v)
			continue
		case "PT":
			if t, ok := wosTypes[v]; ok {
				r.add("type", t)
			}
		}
		addField(r, wosColumns, FormatWoS, f.tag, v)
	}
	finishRow(r, full, short)
	if !r.has("type") {
		r.add("type", "GEN")
	}
	if v := r.first("journal_full"); v != "" {
		r.add("journal", v)
	}
	return r, year, hasYear
}
