package refs

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// csvScanner splits CSV records as R's read.csv() does: fields separated by one delimiter, a
// field that starts with a quote runs to the closing quote (a doubled quote is a quote, line
// breaks are kept), a quote inside an unquoted field is text, blank lines are skipped.
type csvScanner struct {
	lr     *lineReader
	delim  byte
	fields []string
	quoted []bool
}

// next returns the next record's fields, whether each was quoted, and the record's first line.
func (c *csvScanner) next() ([]string, []bool, int, error) {
	var line []byte
	for {
		b, ok, err := c.lr.next()
		if err != nil || !ok {
			return nil, nil, 0, err
		}
		if !isBlank(b) {
			line = b
			break
		}
	}
	start := c.lr.line
	c.fields, c.quoted = c.fields[:0], c.quoted[:0]
	var val []byte
	i := 0
	for {
		val = val[:0]
		quoted := i < len(line) && line[i] == '"'
		if quoted {
			i++
			for {
				j := bytes.IndexByte(line[i:], '"')
				if j < 0 {
					val = append(val, line[i:]...)
					val = append(val, '\n')
					b, ok, err := c.lr.next()
					if err != nil {
						return nil, nil, 0, err
					}
					if !ok {
						return nil, nil, 0, &Error{Class: ClassParse, Kind: "csv_quote", Line: start,
							Message: "a quoted field that starts on this line is not closed: the rest of the file would be one field",
							Hint:    "Is a quote missing, or is this not a CSV file?"}
					}
					line, i = b, 0
					continue
				}
				val = append(val, line[i:i+j]...)
				i += j + 1
				if i < len(line) && line[i] == '"' {
					val = append(val, '"')
					i++
					continue
				}
				break
			}
		}
		// Up to the delimiter (after a closing quote, text is kept as read.csv keeps it).
		j := bytes.IndexByte(line[i:], c.delim)
		if j < 0 {
			j = len(line) - i
		}
		val = append(val, line[i:i+j]...)
		i += j
		c.fields = append(c.fields, string(val))
		c.quoted = append(c.quoted, quoted)
		if i >= len(line) {
			return c.fields, c.quoted, start, nil
		}
		i++ // the delimiter
	}
}

// The column names of the major exports (compared in lower case, white space trimmed) and the
// named column each is read into; the first name of a column's list that a file has wins, the
// others stay as they are. Scopus, Web of Science (also its tab-delimited export, headed by its
// tags), PubMed, Embase, the Cochrane Library, CINAHL, Lens, OpenAlex, Covidence, Rayyan,
// Zotero, EndNote, Google Scholar, Abstrackr, RIS tags.
var csvAliases = []struct {
	col   string
	names []string
}{
	{"title", []string{"title", "ti", "t1", "article title", "primary title", "document title"}},
	{"abstract", []string{"abstract", "ab", "n2", "abstract note"}},
	{"authors", []string{"authors", "author", "author names", "author/s", "author(s)", "au", "a1", "first_authors"}},
	{"year", []string{"year", "py", "publication year", "published year", "publication_year", "year published"}},
	{"journal", []string{"journal", "source title", "journal title", "publication title", "journal/book", "jo", "so", "publication", "source"}},
	{"doi", []string{"doi", "do", "di"}},
	{"pmid", []string{"pmid", "pubmed id", "pubmed_id", "medline pmid", "pm", "ids.pmid"}},
	{"keywords", []string{"keywords", "author keywords", "kw", "de"}},
	{"type", []string{"type", "ty", "type_of_reference", "reference type"}},
	{"database_id", []string{"database_id"}},
	{"accession_number", []string{"accession_number", "accession number", "an", "ut (unique wos id)", "ut"}},
	{"editors", []string{"editors", "editor", "a2", "ed"}},
	{"date", []string{"date", "da", "date published", "publication date", "date of publication"}},
	{"secondary_title", []string{"secondary_title", "secondary title", "t2"}},
	{"journal_full", []string{"journal_full", "jf"}},
	{"journal_abbrev", []string{"journal_abbrev", "ja", "journal abbreviation", "abbreviated source title", "ji"}},
	{"volume", []string{"volume", "vl"}},
	{"issue", []string{"issue", "issue number", "number", "is"}},
	{"start_page", []string{"start_page", "start page", "page start", "first page", "beginning page", "sp", "bp", "pages"}},
	{"end_page", []string{"end_page", "end page", "page end", "last page", "ending page", "ep"}},
	{"issn", []string{"issn", "issns", "sn"}},
	{"publisher", []string{"publisher", "book publisher", "pb", "pu"}},
	{"place", []string{"place", "place published", "place_published", "cy"}},
	{"language", []string{"language", "la", "language of original document"}},
	{"url", []string{"url", "link", "ur"}},
	{"notes", []string{"notes", "note", "n1"}},
}

// ColumnNames maps a table's column names to the named columns of read_refs(): the names of the
// major exports (csvAliases) become the named column; others stay. write_refs() writes a data
// frame's columns with the same map, so a CSV from a database is written as RIS with its authors,
// year and DOI.
func ColumnNames(names []string) []string {
	out := append([]string(nil), names...)
	low := make([]string, len(names))
	for i, n := range names {
		low[i] = strings.ToLower(strings.TrimSpace(n))
	}
	taken := make([]bool, len(names))
	for _, a := range csvAliases {
		if i := indexOf(names, a.col); i >= 0 {
			taken[i] = true
			continue
		}
	search:
		for _, cand := range a.names {
			for i := range names {
				if !taken[i] && low[i] == cand {
					out[i], taken[i] = a.col, true
					break search
				}
			}
		}
	}
	return out
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

type csvSniff struct {
	found      bool
	delim      byte
	headerLine int
	header     []string
}

var csvDelims = []byte{',', ';', '\t'}

// sniffCSV finds the separator and the header in the head of a file: the first record (of the
// first 30) that names a title column, for the separator that finds it first; several exports
// (Embase) put lines about the search before the header. Without a title column the header is
// the first record for the separator that gives it the most fields.
func sniffCSV(head []byte) csvSniff {
	best := csvSniff{}
	fallback, most := csvSniff{delim: ','}, 0
	for _, d := range csvDelims {
		sc := &csvScanner{lr: newLineReader(bytes.NewReader(head)), delim: d}
		for k := 0; k < 30; k++ {
			fields, _, line, err := sc.next()
			if err != nil || fields == nil {
				break
			}
			if k == 0 && len(fields) > most {
				most = len(fields)
				fallback = csvSniff{delim: d, headerLine: line, header: append([]string(nil), fields...)}
			}
			if indexOf(ColumnNames(fields), "title") >= 0 {
				if !best.found || line < best.headerLine || (line == best.headerLine && len(fields) > len(best.header)) {
					best = csvSniff{found: true, delim: d, headerLine: line, header: append([]string(nil), fields...)}
				}
				break
			}
		}
	}
	if best.found {
		return best
	}
	return fallback
}

// readCSV reads a CSV file whose head has been sniffed and sends its rows in chunks. Columns come
// as text, title and abstract first (abstract all missing when the file has none), the others in
// the file's order with the names of the major exports mapped (ColumnNames). A column with no
// name gets one; when it has no value either (an Excel export's trailing separators) it is left
// out. It returns the columns that had a quoted field, for R's choice of types.
func readCSV(lr *lineReader, sn csvSniff, na naSet, chunkRows int, send func(*Chunk) bool) ([]string, error) {
	sc := &csvScanner{lr: lr, delim: sn.delim}
	var header []string
	for {
		fields, _, line, err := sc.next()
		if err != nil {
			return nil, err
		}
		if fields == nil {
			break
		}
		if line == sn.headerLine || sn.headerLine == 0 {
			header = append([]string(nil), fields...)
			break
		}
	}
	if header == nil {
		return nil, &Error{Class: ClassParse, Kind: "empty", Message: "the file holds no references (it is empty)"}
	}
	names := uniqueNames(ColumnNames(header))
	if indexOf(names, "title") < 0 {
		return nil, &Error{Class: ClassColumns, Kind: "no_title", Line: sn.headerLine, Columns: header,
			Message: "the CSV has no title column"}
	}
	// Column k of the file is column order[k] of the table; -1 for the unnamed ones, which are
	// added only when they have a value.
	order := csvOrder(names)
	quoted := make([]bool, len(names))
	g := newColumns()
	ids := make([]int, len(names))
	for k, name := range names {
		ids[k] = g.id(name)
	}
	abstract := g.id("abstract")
	pmidCol := indexOf(names, "pmid")
	pool := newBufPool()
	newBuilder := func(prev *chunkBuilder) *chunkBuilder {
		tb := newChunkBuilder(false, g, pool, chunkRows, nil)
		if prev != nil {
			tb = prev.next()
		}
		for _, k := range order {
			tb.column(ids[k])
			if k == order[0] && indexOf(names, "abstract") < 0 {
				tb.column(abstract) // all missing, after the title
			}
		}
		return tb
	}
	tb := newBuilder(nil)
	sent := false
	one := make([]string, 1)
	for {
		fields, q, line, err := sc.next()
		if err != nil {
			return nil, err
		}
		if fields == nil {
			break
		}
		for k := len(names); k < len(fields); k++ {
			if strings.TrimSpace(fields[k]) != "" {
				return nil, &Error{Class: ClassParse, Kind: "csv_fields", Line: line, Message: fmt.Sprintf(
					"this row has %d fields but the header (line %d) names %d columns", len(fields), sn.headerLine, len(names)),
					Hint: fmt.Sprintf("The columns are separated by %s; is a field's quote missing?", delimName(sn.delim))}
			}
		}
		for k := range names {
			if k >= len(fields) || na.has(strings.TrimSpace(fields[k])) {
				continue
			}
			quoted[k] = quoted[k] || q[k]
			col := tb.column(ids[k])
			col.padTo(tb.n)
			one[0] = fields[k]
			if k == pmidCol {
				// OpenAlex writes the PubMed id as a link.
				if m := pmidLink.FindStringSubmatch(one[0]); m != nil {
					one[0] = m[1]
				}
			}
			col.push(one, "")
		}
		tb.n++
		if tb.n >= chunkRows {
			if !send(tb.chunk()) {
				return nil, nil
			}
			tb, sent = newBuilder(tb), true
		}
	}
	if tb.n > 0 || !sent {
		// A file of a header alone is a table without rows, with its columns.
		send(tb.chunk())
	}
	var text []string
	for k, name := range names {
		if quoted[k] {
			text = append(text, name)
		}
	}
	return text, nil
}

// csvOrder: title, abstract, then the file's order, without the unnamed columns (added when they
// have a value).
func csvOrder(names []string) []int {
	var order []int
	for _, front := range []string{"title", "abstract"} {
		if i := indexOf(names, front); i >= 0 {
			order = append(order, i)
		}
	}
	for k, name := range names {
		if name != "title" && name != "abstract" && !strings.HasPrefix(name, unnamedPrefix) {
			order = append(order, k)
		}
	}
	return order
}

const unnamedPrefix = "...column_"

// uniqueNames names the unnamed columns and makes repeated names unique as R's make.unique(sep =
// "_") does.
func uniqueNames(names []string) []string {
	out := make([]string, len(names))
	seen := make(map[string]int, len(names))
	for i, n := range names {
		if strings.TrimSpace(n) == "" {
			n = unnamedPrefix + strconv.Itoa(i+1)
		}
		if k, dup := seen[n]; dup {
			seen[n] = k + 1
			n = n + "_" + strconv.Itoa(k)
		} else {
			seen[n] = 1
		}
		out[i] = n
	}
	return out
}

func delimName(d byte) string {
	switch d {
	case ';':
		return "semicolons"
	case '\t':
		return "tabs"
	}
	return "commas"
}
