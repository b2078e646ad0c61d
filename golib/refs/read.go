// Package refs reads the reference files users export from databases and reference managers
// (RIS, PubMed MEDLINE, Web of Science tagged, BibTeX, CSV) into one table shape, and finds the
// duplicate records of several exports of one search. R calls it through golib/cabi (refs.go).
package refs

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// The formats, as read_refs() names them.
const (
	FormatRIS     = "ris"
	FormatMedline = "medline"
	FormatWoS     = "wos"
	FormatBibTeX  = "bibtex"
	FormatCSV     = "csv"
)

// Formats lists the formats in the order detection tries them.
var Formats = []string{FormatRIS, FormatMedline, FormatWoS, FormatBibTeX, FormatCSV}

// Options of a read.
type Options struct {
	Format string   `json:"format"` // "auto" or one of Formats
	NA     []string `json:"na"`     // values that mean missing, compared after trimming
}

// Result is a file's table and what was found out about the file.
type Result struct {
	Table  *arrowio.Table
	Format string
	// CSV only: the separator, the line of the header (after a preamble such as Embase's), and
	// the columns with a quoted field (text whatever they look like: write_refs() quotes text).
	Delimiter   string
	HeaderLine  int
	TextColumns []string
}

// The error classes, as R raises them.
const (
	ClassParse    = "tabscreen_error_refs_parse"
	ClassEncoding = "tabscreen_error_encoding"
	ClassColumns  = "tabscreen_error_refs_columns"
	ClassUnknown  = "tabscreen_error_refs_unknown"
)

// Error is a file that cannot be read: where (Line, 1-based as editors count; 0 for the whole
// file) and why. R adds the file's name and raises it with these fields.
type Error struct {
	Class     string   `json:"class"`
	Kind      string   `json:"kind"`
	Line      int      `json:"line,omitempty"`
	Message   string   `json:"message"`
	Hint      string   `json:"hint,omitempty"`
	BadLines  []int    `json:"bad_lines,omitempty"`
	NBad      int      `json:"n_bad,omitempty"`
	Suggest   string   `json:"suggest,omitempty"`
	FirstLine string   `json:"first_line,omitempty"`
	Tried     []string `json:"tried,omitempty"`
	Columns   []string `json:"columns,omitempty"`
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

// ReadFile reads the file at path.
func ReadFile(path string, opt Options) (*Result, error) {
	return read(func() (io.ReadCloser, error) { return os.Open(path) }, opt)
}

// ReadBytes reads a file's content (tests, fuzzing).
func ReadBytes(b []byte, opt Options) (*Result, error) {
	return read(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, opt)
}

func read(open func() (io.ReadCloser, error), opt Options) (*Result, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, readBlock)
	head, err := br.Peek(readBlock)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, err
	}
	na := make(map[string]bool, len(opt.NA))
	for _, v := range opt.NA {
		na[v] = true
	}
	format := opt.Format
	if format == "" || format == "auto" {
		if format, err = detect(head); err != nil {
			return nil, err
		}
	}
	res := &Result{Format: format}
	if format == FormatCSV {
		var sn csvSniff
		res.Table, res.TextColumns, sn, err = readCSV(br, head, na)
		res.Delimiter, res.HeaderLine = string(sn.delim), sn.headerLine
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	lr := newLineReader(br)
	res.Table, err = readTagged(lr, format, na)
	if err != nil {
		if de := lr.drain(); de != nil {
			return nil, de
		}
		if te := lr.textError(); te != nil {
			return nil, te
		}
		return nil, err
	}
	if te := lr.textError(); te != nil {
		return nil, te
	}
	return res, nil
}

// readTagged parses a tagged format and maps each record to a row.
func readTagged(lr *lineReader, format string, na map[string]bool) (*arrowio.Table, error) {
	tb := newTableBuilder()
	r := newRow()
	var err error
	switch format {
	case FormatRIS:
		m := &risMapper{na: na, row: r}
		err = parseRIS(lr, func(fields []field) error {
			tb.addRow(m.mapRecord(fields))
			return nil
		})
	case FormatMedline:
		err = parseMedline(lr, func(fields []field) error {
			tb.addRow(mapMedline(fields, na, r))
			return nil
		})
	case FormatWoS:
		err = parseWoS(lr, func(fields []field) error {
			tb.addRow(mapWoS(fields, na, r))
			return nil
		})
	case FormatBibTeX:
		err = parseBibTeX(lr, func(e *bibEntry) error {
			tb.addRow(mapBibTeX(e, na, r))
			return nil
		})
	default:
		return nil, &Error{Class: ClassUnknown, Kind: "format", Message: fmt.Sprintf("unknown format %q", format)}
	}
	if err != nil {
		return nil, err
	}
	return tb.table(), nil
}
