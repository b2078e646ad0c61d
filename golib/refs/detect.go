package refs

import (
	"bytes"
	"regexp"
	"unicode/utf8"
)

var (
	bibEntryStart = regexp.MustCompile(`^\s*@\s*[A-Za-z]+\s*[{(]`)
	medlineTag    = regexp.MustCompile(`^[A-Z][A-Z0-9]{1,3} {0,3}- `)
	wosHeader     = regexp.MustCompile(`^(FN |VR \d|PT [A-Z]$)`)
)

// detectLines is how many lines that are not blank detection looks at for a decisive one.
const detectLines = 60

// detect names the format of a file from the start of its content (head), never from its name:
// the first line that only one format has decides (a BibTeX entry, PubMed's "PMID- ", Web of
// Science's "FN" header, a RIS tag); decoration before it (record numbers, header lines) is
// passed over. Failing those, a CSV whose header names a title column. A file none of them reads
// is an error that lists the formats tried and shows the first line.
func detect(head []byte) (string, error) {
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return "", &Error{Class: ClassParse, Kind: "binary", Line: bytes.Count(head[:i], []byte{'\n'}) + 1,
			Message: "the file holds NUL bytes: it is not a text export (a binary file?)"}
	}
	lines := headLines(head)
	// A CSV's header comes before its values, which may hold anything (a RIS line in a quoted
	// field of a table write_refs() wrote): lines from the header on are not looked at.
	sn := sniffCSV(head)
	seen := 0
	for k, l := range lines {
		if sn.found && k+1 >= sn.headerLine {
			return FormatCSV, nil
		}
		if isBlank(l) {
			continue
		}
		if seen++; seen > detectLines {
			break
		}
		switch {
		case bibEntryStart.Match(l):
			return FormatBibTeX, nil
		case bytes.HasPrefix(l, []byte("PMID-")):
			return FormatMedline, nil
		case wosHeader.Match(l):
			return FormatWoS, nil
		}
		if _, _, ok := risTagAt(l, false); ok {
			if medlineTag.Match(l) && hasMedlinePMID(lines) {
				return FormatMedline, nil
			}
			return FormatRIS, nil
		}
		if tag, _, ok := risTagAt(l, true); ok && tag == "TY" {
			return FormatRIS, nil
		}
	}
	if _, at := firstLine(lines); at == 0 {
		return "", &Error{Class: ClassParse, Kind: "empty", Message: "the file holds no references (it is empty)"}
	}
	if sn.found {
		return FormatCSV, nil
	}
	if looksLikeTable(head) {
		// A table without a title column: the CSV reader says which columns it has.
		return FormatCSV, nil
	}
	first, _ := firstLine(lines)
	if !utf8.Valid(first) {
		first = bytes.ToValidUTF8(first, []byte("\uFFFD"))
	}
	shown := string(first)
	if len(shown) > 80 {
		shown = shown[:80] + "..."
	}
	return "", &Error{Class: ClassUnknown, Kind: "unknown_format", Line: 0, FirstLine: shown,
		Tried:   []string{"RIS", "PubMed MEDLINE (.nbib)", "Web of Science tagged (.ciw)", "BibTeX (.bib)", "CSV (with a title column)"},
		Message: "the file is in none of the formats read_refs() reads"}
}

// hasMedlinePMID reports whether a MEDLINE record starts in the head: a file that opens with other
// MEDLINE tags before its first PMID line.
func hasMedlinePMID(lines [][]byte) bool {
	for _, l := range lines {
		if bytes.HasPrefix(l, []byte("PMID- ")) {
			return true
		}
		if bytes.HasPrefix(l, []byte("TY  -")) {
			return false
		}
	}
	return false
}

// headLines splits the head into lines as the line reader does (without their ends and BOMs).
func headLines(head []byte) [][]byte {
	sep := byte('\n')
	if bytes.IndexByte(head, '\n') < 0 && bytes.IndexByte(head, '\r') >= 0 {
		sep = '\r'
	}
	parts := bytes.Split(head, []byte{sep})
	for i, p := range parts {
		p = bytes.TrimSuffix(p, []byte{'\r'})
		parts[i] = bytes.TrimPrefix(p, bom)
	}
	return parts
}

func firstLine(lines [][]byte) ([]byte, int) {
	for i, l := range lines {
		if !isBlank(l) {
			return l, i + 1
		}
	}
	return nil, 0
}

// looksLikeTable: the first two records have the same number of fields, two or more, for one of
// the separators.
func looksLikeTable(head []byte) bool {
	for _, d := range csvDelims {
		sc := &csvScanner{lr: newLineReader(bytes.NewReader(head)), delim: d}
		a, _, _, err1 := sc.next()
		n := len(a)
		b, _, _, err2 := sc.next()
		if err1 == nil && err2 == nil && n >= 2 && len(b) == n {
			return true
		}
	}
	return false
}
