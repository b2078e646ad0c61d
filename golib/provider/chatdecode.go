package provider

// A reader of chat-completions replies that takes only the fields the adapter reads, in one pass
// over the body, with no reflection: encoding/json's decoding was a fifth of a zero-latency run's
// client work. It reads the common shape only, and says so (false) for anything else: a body
// that is not valid JSON, a field of another type or null where a value is read, a key that
// differs from a read one only in case or has escapes (encoding/json matches keys without regard
// to case), a read key given twice, more than one choice, numbers that are not plain integers,
// strings with escapes or invalid UTF-8. The caller then decodes the body with encoding/json as
// before, so that every reply means what it did (chatdecode_test.go compares the two on the
// fixtures and on their variations).

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// jsonScan reads a JSON document; every method returns false when the body is not what it wants
// (or not valid JSON), and the caller gives up on the fast reading.
type jsonScan struct {
	b     []byte
	i     int
	depth int
}

// maxScanDepth bounds the nesting the scanner follows; deeper bodies go to encoding/json.
const maxScanDepth = 64

func (s *jsonScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips white space and reports the next byte (0 at the end).
func (s *jsonScan) next() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jsonScan) eat(c byte) bool {
	if s.next() == c {
		s.i++
		return true
	}
	return false
}

// str reads a string and returns its content as written (between the quotes) and whether it
// holds an escape.
func (s *jsonScan) str() (content []byte, escaped bool, ok bool) {
	if s.next() != '"' {
		return nil, false, false
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			content = s.b[start:s.i]
			s.i++
			return content, escaped, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				return nil, false, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return nil, false, false
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return nil, false, false
					}
				}
				s.i += 6
			default:
				return nil, false, false
			}
		default:
			s.i++
		}
	}
	return nil, false, false
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// plainString reads a string that encoding/json would give as written: no escapes, valid UTF-8.
func (s *jsonScan) plainString() (string, bool) {
	content, escaped, ok := s.str()
	if !ok || escaped || !utf8.Valid(content) {
		return "", false
	}
	return string(content), true
}

// number reads a number by JSON's grammar and returns its text.
func (s *jsonScan) number() ([]byte, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
			s.i++
		}
	default:
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

func (s *jsonScan) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// int64 reads a number that encoding/json would store in an int64 field.
func (s *jsonScan) int64() (int64, bool) {
	text, ok := s.number()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(string(text), 10, 64)
	return v, err == nil
}

func (s *jsonScan) literal(word string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		s.i += len(word)
		return true
	}
	return false
}

// isNull reads a null if one comes next.
func (s *jsonScan) isNull() bool {
	return s.next() == 'n' && s.literal("null")
}

// skip reads any value.
func (s *jsonScan) skip() bool {
	switch s.next() {
	case '"':
		_, _, ok := s.str()
		return ok
	case '{':
		return s.object(func(string) bool { return s.skip() }, nil)
	case '[':
		return s.array(s.skip)
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		_, ok := s.number()
		return ok
	}
}

// value reads any value and returns its text as written.
func (s *jsonScan) value() ([]byte, bool) {
	s.ws()
	start := s.i
	if !s.skip() {
		return nil, false
	}
	return s.b[start:s.i], true
}

// object reads an object, calling member for each key (which must read the value). With known
// set, the keys are those of a struct that encoding/json would fill: a key that matches one of
// them only without regard to case, or that holds an escape or a non-ASCII byte, or a known key
// given twice, makes the reading give up.
func (s *jsonScan) object(member func(key string) bool, known []string) bool {
	if !s.eat('{') {
		return false
	}
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	defer func() { s.depth-- }()
	var seen uint32
	if s.eat('}') {
		return true
	}
	for {
		key, escaped, ok := s.str()
		if !ok || !s.eat(':') {
			return false
		}
		k := ""
		if known != nil {
			if escaped {
				return false
			}
			for j, name := range known {
				if string(key) == name {
					if seen&(1<<j) != 0 {
						return false
					}
					seen |= 1 << j
					k = name
					break
				}
				if foldMatch(key, name) {
					return false
				}
			}
		}
		if k == "" {
			if !s.skip() {
				return false
			}
		} else if !member(k) {
			return false
		}
		if s.eat(',') {
			continue
		}
		return s.eat('}')
	}
}

// foldMatch is true when key might be matched to name by encoding/json's case-insensitive rule:
// equal without regard to ASCII case, or holding a non-ASCII byte (Unicode folding, e.g. the
// Kelvin sign for k, is left to encoding/json).
func foldMatch(key []byte, name string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	return bytes.EqualFold(key, []byte(name))
}

// array reads an array, calling elem for each element.
func (s *jsonScan) array(elem func() bool) bool {
	if !s.eat('[') {
		return false
	}
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	defer func() { s.depth-- }()
	if s.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.eat(',') {
			continue
		}
		return s.eat(']')
	}
}

// decodeChatFast fills r from a reply of the common shape; false when the body needs
// encoding/json (r is then left partly filled, and the caller starts from a zero value).
func decodeChatFast(body []byte, r *chatResponse) bool {
	s := &jsonScan{b: body}
	ok := s.object(func(key string) bool {
		switch key {
		case "model":
			v, ok := s.plainString()
			r.Model = v
			return ok
		case "choices":
			return s.array(func() bool {
				if len(r.Choices) > 0 {
					return false // a second choice: encoding/json reads them all
				}
				r.Choices = append(r.Choices, chatChoice{})
				return decodeChoiceFast(s, &r.Choices[0])
			})
		default: // usage
			if s.isNull() {
				return true
			}
			u := &chatUsage{}
			r.Usage = u
			return s.object(func(key string) bool {
				var ok bool
				switch key {
				case "prompt_tokens":
					u.PromptTokens, ok = s.int64()
				case "completion_tokens":
					u.CompletionTokens, ok = s.int64()
				default: // prompt_tokens_details
					if s.isNull() {
						return true
					}
					d := &chatTokenDetails{}
					u.PromptTokensDetails = d
					return s.object(func(key string) bool {
						var ok bool
						if key == "cached_tokens" {
							d.CachedTokens, ok = s.int64()
						} else {
							d.CacheWriteTokens, ok = s.int64()
						}
						return ok
					}, []string{"cached_tokens", "cache_write_tokens"})
				}
				return ok
			}, []string{"prompt_tokens", "completion_tokens", "prompt_tokens_details"})
		}
	}, []string{"model", "choices", "usage"})
	// Nothing but white space may follow the value.
	return ok && s.next() == 0 && s.i == len(s.b)
}

func decodeChoiceFast(s *jsonScan, c *chatChoice) bool {
	return s.object(func(key string) bool {
		if key == "finish_reason" {
			v, ok := s.plainString()
			c.FinishReason = v
			return ok
		}
		m := &c.Message
		return s.object(func(key string) bool {
			if key == "refusal" {
				if s.isNull() {
					return true
				}
				v, ok := s.plainString()
				m.Refusal = &v
				return ok
			}
			return s.array(func() bool {
				m.ToolCalls = append(m.ToolCalls, chatToolCall{})
				call := &m.ToolCalls[len(m.ToolCalls)-1]
				return s.object(func(string) bool {
					f := &call.Function
					return s.object(func(key string) bool {
						if key == "name" {
							v, ok := s.plainString()
							f.Name = v
							return ok
						}
						if s.next() == 'n' {
							return false // null arguments: as encoding/json stores them
						}
						raw, ok := s.value()
						f.Arguments = json.RawMessage(bytes.Clone(raw))
						return ok
					}, []string{"name", "arguments"})
				}, []string{"function"})
			})
		}, []string{"refusal", "tool_calls"})
	}, []string{"finish_reason", "message"})
}
