package fakeprovider

import (
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
// is a string).
func writeShape(h *maphash.Hash, v any, at shapePlace) {
	switch x := v.(type) {
	case map[string]any:
		h.WriteByte('{')
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			h.WriteString(strconv.Quote(k))
			_, isText := x[k].(string)
			switch {
			case at == placeMessage && k == "content" && isText:
				h.WriteString(":text")
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
		h.WriteString(strconv.Quote(x))
	case json.Number:
		h.WriteString("n" + string(x))
	case float64:
		h.WriteString("f" + strconv.FormatFloat(x, 'g', -1, 64))
	case bool:
		h.WriteString(strconv.FormatBool(x))
	case nil:
		h.WriteString("null")
	default:
		panic(fmt.Sprintf("fake provider: a decoded request holds a %T", v))
	}
}
