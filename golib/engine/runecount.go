package engine

import (
	"encoding/binary"
	"unicode/utf8"
)

// runeCount is utf8.RuneCount, eight bytes at a time over ASCII (a body is mostly ASCII, and
// counting it byte by byte was a few microseconds of every request).
func runeCount(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		if i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			i += 8
			n += 8
			continue
		}
		if b[i] < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRune(b[i:])
			i += size
		}
		n++
	}
	return n
}
