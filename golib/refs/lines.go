package refs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"unicode/utf8"
)

// lineReader streams a text file line by line and numbers the lines as `wc -l` and editors do:
// only a line feed ends a line (a CRLF is one line end). A lone carriage return inside a line is
// white space, so that a stray CR in an abstract cannot shift every later line number; a file
// with no line feed at all in its first block is an old Mac file, whose lines end with CRs.
//
// It also checks what a text export never holds: NUL bytes (a binary file) and bytes that are not
// valid UTF-8 (an export in another encoding), recording the lines of the latter so that the
// error can list them all.
type lineReader struct {
	r       *bufio.Reader
	sep     byte
	line    int // number of the line last returned (1-based)
	buf     []byte
	badUTF8 []int // lines with invalid UTF-8, in order
	nBad    int
	nulLine int  // first line holding a NUL byte, 0 if none
	cr      bool // the line last returned holds a carriage return
	cp1252  bool // every bad line reads as Windows-1252
	eof     bool
}

const readBlock = 1 << 16

func newLineReader(r io.Reader) *lineReader {
	br := bufio.NewReaderSize(r, readBlock)
	lr := &lineReader{r: br, sep: '\n', cp1252: true}
	head, _ := br.Peek(readBlock)
	if bytes.IndexByte(head, '\n') < 0 && bytes.IndexByte(head, '\r') >= 0 {
		lr.sep = '\r'
	}
	return lr
}

// next returns the next line without its end (and without a byte-order mark at its start: exports
// joined with `cat` carry one per part). The slice is valid until the following call (it is the
// reader's buffer). ok is false at the end of the file.
func (lr *lineReader) next() (line []byte, ok bool, err error) {
	if lr.eof {
		return nil, false, nil
	}
	lr.buf = lr.buf[:0]
	var b []byte
	for {
		chunk, err := lr.r.ReadSlice(lr.sep)
		if err == nil && len(lr.buf) == 0 {
			b = chunk // the usual line, read in one piece: not copied
			break
		}
		lr.buf = append(lr.buf, chunk...)
		if err == nil {
			b = lr.buf
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			lr.eof = true
			if len(lr.buf) == 0 {
				return nil, false, nil
			}
			b = lr.buf
			break
		}
		return nil, false, err
	}
	lr.line++
	if n := len(b); n > 0 && b[n-1] == lr.sep {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	b = bytes.TrimPrefix(b, bom)
	lr.check(b)
	return b, true, nil
}

var bom = []byte{0xef, 0xbb, 0xbf}

func (lr *lineReader) check(b []byte) {
	ascii, nul, cr := scanLine(b)
	lr.cr = cr
	if ascii {
		return
	}
	if lr.nulLine == 0 && nul {
		lr.nulLine = lr.line
	}
	if !utf8.Valid(b) {
		lr.nBad++
		if len(lr.badUTF8) < maxBadLines {
			lr.badUTF8 = append(lr.badUTF8, lr.line)
		}
		lr.cp1252 = lr.cp1252 && readsAsWindows1252(b)
	}
}

// scanLine looks at a line once, eight bytes at a time: whether it is plain ASCII without NUL
// bytes (most lines of most exports: nothing more to check), whether it holds a NUL byte, and
// whether it holds a carriage return.
func scanLine(b []byte) (ascii, nul, cr bool) {
	const lo, hi, crs = 0x0101010101010101, 0x8080808080808080, 0x0d0d0d0d0d0d0d0d
	ascii = true
	i := 0
	for ; i+8 <= len(b); i += 8 {
		v := binary.LittleEndian.Uint64(b[i:])
		if v&hi != 0 {
			ascii = false
		}
		if (v-lo)&^v&hi != 0 {
			nul = true
		}
		if w := v ^ crs; (w-lo)&^w&hi != 0 {
			cr = true
		}
	}
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c >= 0x80:
			ascii = false
		case c == 0:
			nul = true
		case c == '\r':
			cr = true
		}
	}
	return ascii && !nul, nul, cr
}

// maxBadLines bounds the bad lines kept for the message (which shows five).
const maxBadLines = 5

// readsAsWindows1252 reports whether every byte of b is defined in Windows-1252 (iconv refuses
// 0x81, 0x8D, 0x8F, 0x90 and 0x9D), so that the message can suggest that encoding.
func readsAsWindows1252(b []byte) bool {
	for _, c := range b {
		switch c {
		case 0x81, 0x8d, 0x8f, 0x90, 0x9d:
			return false
		}
	}
	return true
}

// drain reads the rest of the file only to check it, so that an encoding problem after a
// structural one is still the error reported (it explains the structural one).
func (lr *lineReader) drain() error {
	return lr.each(func([]byte) error { return nil })
}

// each calls fn with every line (blank ones too) until the end of the file or fn's error.
func (lr *lineReader) each(fn func(line []byte) error) error {
	for {
		b, ok, err := lr.next()
		if err != nil || !ok {
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
	}
}

// textError is the error for NUL bytes or invalid UTF-8 seen so far, or nil.
func (lr *lineReader) textError() *Error {
	if lr.nulLine > 0 {
		return &Error{Class: ClassParse, Kind: "binary", Line: lr.nulLine,
			Message: "the file holds NUL bytes: it is not a text export (a binary file?)"}
	}
	if lr.nBad > 0 {
		enc := "latin1"
		if lr.cp1252 {
			enc = "windows-1252"
		}
		return &Error{Class: ClassEncoding, Kind: "encoding", Line: lr.badUTF8[0], BadLines: lr.badUTF8,
			NBad: lr.nBad, Suggest: enc, Message: "the text is not valid UTF-8"}
	}
	return nil
}

// cleanValue trims the white space around a value and turns lone carriage returns into spaces:
// a tagged value is one line of text.
func cleanValue(b []byte) string {
	b = bytes.TrimSpace(b)
	if bytes.IndexByte(b, '\r') < 0 {
		return string(b)
	}
	return string(bytes.TrimSpace(bytes.ReplaceAll(b, []byte{'\r'}, []byte{' '})))
}
