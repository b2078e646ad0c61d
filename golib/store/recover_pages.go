package store

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"strings"
)

// When a table's tree is damaged above its leaves (its root or an interior page), the rows of the
// leaves below cannot be reached through it, though their pages may be whole. leafScan reads
// every page of the damaged file, in SQLite's file format, for table leaves that are not on the
// free list, and hands their rows to the table whose number of columns they have. The rows the
// tree gave are kept (the new file refuses a rowid or a key twice). The write-ahead log is not
// read: a page newer there than in the file is read as the file holds it.

var errNotALeaf = errors.New("not a table leaf")

// pageFile is the damaged file, read page by page.
type pageFile struct {
	f        *os.File
	size     int // page size
	usable   int // page size less the bytes reserved at its end
	pages    uint32
	freeList map[uint32]bool
}

func openPages(path string) (*pageFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	head := make([]byte, 100)
	if _, err := f.ReadAt(head, 0); err != nil {
		f.Close()
		return nil, err
	}
	size := int(binary.BigEndian.Uint16(head[16:18]))
	if size == 1 {
		size = 65536
	}
	if size < 512 || size&(size-1) != 0 {
		f.Close()
		return nil, errors.New("the file's header has no valid page size")
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	p := &pageFile{f: f, size: size, usable: size - int(head[20]), pages: uint32(fi.Size() / int64(size)), freeList: map[uint32]bool{}}
	p.readFreeList(binary.BigEndian.Uint32(head[32:36]))
	return p, nil
}

func (p *pageFile) Close() error { return p.f.Close() }

// page reads page n (numbered from 1).
func (p *pageFile) page(n uint32, buf []byte) error {
	if n < 1 || n > p.pages {
		return errors.New("no such page")
	}
	_, err := p.f.ReadAt(buf[:p.size], int64(n-1)*int64(p.size))
	return err
}

// readFreeList marks the pages of the free list, whose old content is rows deleted; a damaged
// list is read as far as it goes.
func (p *pageFile) readFreeList(trunk uint32) {
	buf := make([]byte, p.size)
	for trunk != 0 && !p.freeList[trunk] && p.page(trunk, buf) == nil {
		p.freeList[trunk] = true
		count := int(binary.BigEndian.Uint32(buf[4:8]))
		for i := 0; i < count && 8+4*i+4 <= p.usable; i++ {
			p.freeList[binary.BigEndian.Uint32(buf[8+4*i:])] = true
		}
		trunk = binary.BigEndian.Uint32(buf[0:4])
	}
}

// leafRow is one row of a table leaf: its rowid and its fields, as SQLite stored them.
type leafRow struct {
	rowid  int64
	fields []any
}

// leaf reads the rows of page n if it is a table leaf whose every cell can be read.
func (p *pageFile) leaf(n uint32, buf []byte) ([]leafRow, error) {
	if p.freeList[n] {
		return nil, errNotALeaf
	}
	if err := p.page(n, buf); err != nil {
		return nil, err
	}
	h := 0
	if n == 1 {
		h = 100
	}
	if buf[h] != 0x0D {
		return nil, errNotALeaf
	}
	cells := int(binary.BigEndian.Uint16(buf[h+3:]))
	first := h + 8 + 2*cells
	if first > p.usable {
		return nil, errNotALeaf
	}
	rows := make([]leafRow, 0, cells)
	for i := 0; i < cells; i++ {
		off := int(binary.BigEndian.Uint16(buf[h+8+2*i:]))
		if off < first || off >= p.usable {
			return nil, errNotALeaf
		}
		row, err := p.cell(buf[off:p.usable])
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// cell reads one cell of a table leaf, following its payload into overflow pages.
func (p *pageFile) cell(b []byte) (leafRow, error) {
	size, n := varint(b)
	if n == 0 || size > math.MaxInt32 {
		return leafRow{}, errNotALeaf
	}
	b = b[n:]
	rowid, n := varint(b)
	if n == 0 {
		return leafRow{}, errNotALeaf
	}
	b = b[n:]
	payload := int(size)
	local := p.localSize(payload)
	if local > len(b) || (local < payload && local+4 > len(b)) {
		return leafRow{}, errNotALeaf
	}
	data := append(make([]byte, 0, payload), b[:local]...)
	if local < payload {
		next := binary.BigEndian.Uint32(b[local:])
		over := make([]byte, p.size)
		for len(data) < payload {
			if next == 0 || p.freeList[next] || p.page(next, over) != nil {
				return leafRow{}, errNotALeaf
			}
			take := min(payload-len(data), p.usable-4)
			data = append(data, over[4:4+take]...)
			next = binary.BigEndian.Uint32(over[0:4])
		}
	}
	fields, err := record(data)
	if err != nil {
		return leafRow{}, err
	}
	return leafRow{rowid: int64(rowid), fields: fields}, nil
}

// localSize is how much of a payload a table leaf keeps on its page (SQLite's file format).
func (p *pageFile) localSize(payload int) int {
	maxLocal := p.usable - 35
	if payload <= maxLocal {
		return payload
	}
	minLocal := (p.usable-12)*32/255 - 23
	k := minLocal + (payload-minLocal)%(p.usable-4)
	if k <= maxLocal {
		return k
	}
	return minLocal
}

// record decodes a row's fields from SQLite's record format.
func record(b []byte) ([]any, error) {
	hsize, n := varint(b)
	if n == 0 || hsize < uint64(n) || hsize > uint64(len(b)) {
		return nil, errNotALeaf
	}
	header, body := b[n:hsize], b[hsize:]
	var fields []any
	for len(header) > 0 {
		t, n := varint(header)
		if n == 0 {
			return nil, errNotALeaf
		}
		header = header[n:]
		v, used, err := value(t, body)
		if err != nil {
			return nil, err
		}
		body = body[used:]
		fields = append(fields, v)
	}
	if len(body) != 0 {
		return nil, errNotALeaf
	}
	return fields, nil
}

// value decodes one field of serial type t from the start of b.
func value(t uint64, b []byte) (any, int, error) {
	intSize := [...]int{0, 1, 2, 3, 4, 6, 8}
	switch {
	case t == 0:
		return nil, 0, nil
	case t <= 6:
		size := intSize[t]
		if len(b) < size {
			return nil, 0, errNotALeaf
		}
		var v int64
		for _, c := range b[:size] {
			v = v<<8 | int64(c)
		}
		shift := 64 - 8*size // sign-extend
		return v << shift >> shift, size, nil
	case t == 7:
		if len(b) < 8 {
			return nil, 0, errNotALeaf
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b)), 8, nil
	case t == 8:
		return int64(0), 0, nil
	case t == 9:
		return int64(1), 0, nil
	case t >= 12:
		size := int((t - 12) / 2)
		if size > len(b) {
			return nil, 0, errNotALeaf
		}
		if t%2 == 0 {
			return append([]byte{}, b[:size]...), size, nil
		}
		return string(b[:size]), size, nil
	}
	return nil, 0, errNotALeaf
}

// varint reads SQLite's big-endian variable-length integer; n is 0 when b ends first.
func varint(b []byte) (v uint64, n int) {
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return v, 9
}

// scanLeaves reads every table leaf of the file at path and adds its rows to the table with
// their number of columns: the one table with exactly as many, else the one with the fewest more
// (a row written before columns were added), when no other table has as many. The rows of a
// table whose tree lost nothing are all in the new file already, and are not read again.
func scanLeaves(path string, copies []*tableCopy) error {
	p, err := openPages(path)
	if err != nil {
		return nil // no page can be read: the tree's rows are all there is
	}
	defer p.Close()
	buf := make([]byte, p.size)
	for n := uint32(1); n <= p.pages; n++ {
		rows, err := p.leaf(n, buf)
		if err != nil || len(rows) == 0 {
			continue
		}
		c := tableFor(copies, len(rows[0].fields))
		if c == nil || (c.skipped == 0 && c.bounded) {
			continue
		}
		for _, row := range rows {
			if len(row.fields) > c.width-1 || schemaRow(row) {
				continue
			}
			if err := c.add(row); err != nil {
				return err
			}
		}
	}
	return nil
}

// tableFor is the table whose rows have the given number of fields, or nil when it is not clear.
func tableFor(copies []*tableCopy, fields int) *tableCopy {
	var best *tableCopy
	tie := false
	for _, c := range copies {
		cols := c.width - 1
		switch {
		case cols < fields:
		case best == nil || cols < best.width-1:
			best, tie = c, false
		case cols == best.width-1:
			tie = true
		}
	}
	if tie {
		return nil
	}
	return best
}

// schemaRow reports whether row is one of the file's list of tables and indexes (sqlite_master),
// whose leaves have five fields as a table of the store may.
func schemaRow(row leafRow) bool {
	if len(row.fields) != 5 {
		return false
	}
	kind, _ := row.fields[0].(string)
	sql, _ := row.fields[4].(string)
	switch kind {
	case "table", "index", "view", "trigger":
		return sql == "" || strings.HasPrefix(sql, "CREATE")
	}
	return false
}
