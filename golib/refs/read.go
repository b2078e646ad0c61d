// Package refs reads the reference files users export from databases and reference managers
// (RIS, PubMed MEDLINE, Web of Science tagged, BibTeX, CSV) into one table shape, and finds the
// duplicate records of several exports of one search. R calls it through golib/cabi (refs.go).
package refs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/tabscreen/tabscreen/golib/guard"
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

// ChunkRows is how many rows a chunk of a file's table holds: some megabytes of text.
const ChunkRows = 5000

// chunksAhead is how many chunks the parser may have ready before the caller takes them: enough
// for R's decoding of one chunk to overlap the parsing of the next ones.
const chunksAhead = 2

// Reader streams a file's table in chunks: a goroutine parses the file while the caller takes
// the chunks, at most chunksAhead ahead of it.
type Reader struct {
	Format string
	// CSV only: the separator and the line of the header (after a preamble such as Embase's).
	Delimiter  string
	HeaderLine int
	// CSV only, complete once Next has returned the last chunk: the columns with a quoted field
	// (text whatever they look like: write_refs() quotes text).
	TextColumns []string

	items chan item
	done  chan struct{}
	once  sync.Once
}

type item struct {
	chunk *Chunk
	err   error
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

// Open detects the file's format (unless opt names it) and starts reading it.
func Open(path string, opt Options) (*Reader, error) {
	return open(func() (io.ReadCloser, error) { return os.Open(path) }, opt, ChunkRows)
}

// OpenBytes reads a file's content (tests, fuzzing).
func OpenBytes(b []byte, opt Options, chunkRows int) (*Reader, error) {
	return open(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, opt, chunkRows)
}

func open(openFile func() (io.ReadCloser, error), opt Options, chunkRows int) (*Reader, error) {
	f, err := openFile()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, readBlock)
	head, err := br.Peek(readBlock)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		f.Close()
		return nil, err
	}
	na := newNASet(opt.NA)
	format := opt.Format
	if format == "" || format == "auto" {
		if format, err = detect(head); err != nil {
			f.Close()
			return nil, err
		}
	}
	if !slices.Contains(Formats, format) {
		f.Close()
		return nil, &Error{Class: ClassUnknown, Kind: "format", Message: fmt.Sprintf("unknown format %q", format)}
	}
	rd := &Reader{Format: format, items: make(chan item, chunksAhead), done: make(chan struct{})}
	var sn csvSniff
	if format == FormatCSV {
		sn = sniffCSV(head)
		rd.Delimiter, rd.HeaderLine = string(sn.delim), sn.headerLine
	}
	go func() {
		defer f.Close()
		defer close(rd.items)
		// A parser bug on some odd file ends this reading with an error, not the user's R session.
		defer guard.Recover(func(err error) {
			select {
			case rd.items <- item{err: err}:
			case <-rd.done:
			}
		})
		lr := newLineReader(br)
		send := func(ch *Chunk) bool {
			if lr.nulLine > 0 || lr.nBad > 0 {
				// Text that is not UTF-8 (or NUL bytes) is not passed on: the reading goes on
				// only to count the lines, for the error that ends it.
				return true
			}
			select {
			case rd.items <- item{chunk: ch}:
				return true
			case <-rd.done:
				return false
			}
		}
		var err error
		if format == FormatCSV {
			rd.TextColumns, err = readCSV(lr, sn, na, chunkRows, send)
		} else {
			err = readTagged(lr, format, na, chunkRows, send)
		}
		if err != nil {
			if de := lr.drain(); de != nil {
				err = de
			} else if te := lr.textError(); te != nil {
				err = te
			}
		} else if te := lr.textError(); te != nil {
			err = te
		}
		if err != nil {
			select {
			case rd.items <- item{err: err}:
			case <-rd.done:
			}
		}
	}()
	return rd, nil
}

// Next returns the next chunk, nil at the end, or the error that stopped the reading (an
// encoding or binary problem anywhere in the file wins over what it caused).
func (rd *Reader) Next() (*Chunk, error) {
	it, ok := <-rd.items
	if !ok {
		return nil, nil
	}
	return it.chunk, it.err
}

// Close stops the reading (the parser's goroutine ends and closes the file).
func (rd *Reader) Close() {
	rd.once.Do(func() { close(rd.done) })
	for range rd.items {
	}
}

// ReadAll reads a whole file into its chunks (tests, tools).
func ReadAll(rd *Reader) ([]*Chunk, error) {
	defer rd.Close()
	var out []*Chunk
	for {
		ch, err := rd.Next()
		if err != nil {
			return nil, err
		}
		if ch == nil {
			return out, nil
		}
		out = append(out, ch)
	}
}

// readTagged parses a tagged format, maps each record to a row and sends the rows in chunks.
func readTagged(lr *lineReader, format string, na naSet, chunkRows int, send func(*Chunk) bool) error {
	g := newColumns()
	tb := newChunkBuilder(true, g, newBufPool(), chunkRows, nil)
	r := newRow(g)
	stopped := errors.New("stopped")
	add := func(rw *row, year int32, hasYear bool) error {
		tb.addRow(rw, year, hasYear)
		if tb.n >= chunkRows {
			if !send(tb.chunk()) {
				return stopped
			}
			tb = tb.next()
		}
		return nil
	}
	var err error
	switch format {
	case FormatRIS:
		m := newRISMapper(na, r)
		err = parseRIS(lr, func(fields []field) error { return add(m.mapRecord(fields)) })
	case FormatMedline:
		err = parseMedline(lr, func(fields []field) error { return add(mapMedline(fields, na, r)) })
	case FormatWoS:
		err = parseWoS(lr, func(fields []field) error { return add(mapWoS(fields, na, r)) })
	case FormatBibTeX:
		err = parseBibTeX(lr, func(e *bibEntry) error { return add(mapBibTeX(e, na, r)) })
	}
	if err == stopped {
		return nil
	}
	if err != nil {
		return err
	}
	if tb.n > 0 {
		send(tb.chunk())
	}
	return nil
}

// naSet are the values that mean missing. Most values are longer than any of them (an abstract),
// and are not hashed to find that out.
type naSet struct {
	m      map[string]bool
	maxLen int
}

func newNASet(values []string) naSet {
	s := naSet{m: make(map[string]bool, len(values))}
	for _, v := range values {
		s.m[v] = true
		s.maxLen = max(s.maxLen, len(v))
	}
	return s
}

func (s naSet) has(v string) bool { return len(v) <= s.maxLen && s.m[v] }
