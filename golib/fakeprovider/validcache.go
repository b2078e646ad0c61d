package fakeprovider

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"sync"
)

// validShapes remembers the request shapes that passed schema validation. Requests of one
// screening differ only in the text of their messages, which the chat schemas of both protocols
// leave unconstrained (a string, any string); validating every request again cost the fake more
// CPU than the client spent on it, on the same cores. A request whose shape was seen valid is
// valid; any other is validated, so an error is always the validator's own.
type validShapes struct {
	mu   sync.Mutex
	seed maphash.Seed
	seen map[uint64]struct{}
}

const maxValidShapes = 4096

func newValidShapes() *validShapes {
	return &validShapes{seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}}
}

// validate runs validate(doc) unless doc's shape is known to be valid.
func (v *validShapes) validate(doc any, validate func(any) error) error {
	var h maphash.Hash
	h.SetSeed(v.seed)
	writeShape(&h, doc, placeBody)
	key := h.Sum64()
	v.mu.Lock()
	_, ok := v.seen[key]
	v.mu.Unlock()
	if ok {
		return nil
	}
	if err := validate(doc); err != nil {
		return err
	}
	v.mu.Lock()
	if len(v.seen) >= maxValidShapes {
		clear(v.seen)
	}
	v.seen[key] = struct{}{}
	v.mu.Unlock()
	return nil
}

// Where a value sits, for writeShape: only a message's content is left out.
type shapePlace int

const (
	placeBody shapePlace = iota
	placeMessages
	placeMessage
	placeOther
)

// writeShape hashes a decoded JSON value with the text of message contents left out (only that it
// is a string). Strings are written with their length before them, which keeps values apart
// without quoting them (strconv.Quote was most of the hashing's cost); every token starts with its
// own byte ('{', '}', '[', ']', 'k'ey, 's'tring, '#' number, 'g' float, 'T', 'F', 'N'ull, 'X' for
// a message's text).
func writeShape(h *maphash.Hash, v any, at shapePlace) {
	switch x := v.(type) {
	case map[string]any:
		h.WriteByte('{')
		var small [16]string
		keys := small[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			writeShapeString(h, 'k', k)
			_, isText := x[k].(string)
			switch {
			case at == placeMessage && k == "content" && isText:
				h.WriteByte('X')
			case at == placeBody && k == "messages":
				writeShape(h, x[k], placeMessages)
			default:
				writeShape(h, x[k], placeOther)
			}
		}
		h.WriteByte('}')
	case []any:
		h.WriteByte('[')
		inner := placeOther
		if at == placeMessages {
			inner = placeMessage
		}
		for _, e := range x {
			writeShape(h, e, inner)
		}
		h.WriteByte(']')
	case string:
		writeShapeString(h, 's', x)
	case json.Number:
		writeShapeString(h, '#', string(x))
	case float64:
		writeShapeString(h, 'g', strconv.FormatFloat(x, 'g', -1, 64))
	case bool:
		if x {
			h.WriteByte('T')
		} else {
			h.WriteByte('F')
		}
	case nil:
		h.WriteByte('N')
	default:
		panic(fmt.Sprintf("fake provider: a decoded request holds a %T", v))
	}
}

// writeShapeString writes a tag, the length of s and s.
func writeShapeString(h *maphash.Hash, tag byte, s string) {
	var n [9]byte
	n[0] = tag
	binary.LittleEndian.PutUint64(n[1:], uint64(len(s)))
	_, _ = h.Write(n[:])
	_, _ = h.WriteString(s)
}
