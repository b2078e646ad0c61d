package fakeprovider

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/maphash"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeJSON reads a request body into the values jsonschema.UnmarshalJSON gives (objects as
// map[string]any, arrays as []any, numbers as json.Number, strings, bools and nil), and refuses
// what it refuses: anything but one JSON value between optional whitespace. It exists because
// encoding/json's decoder was a quarter of the fake's CPU per request; the fake's answers, checks
// and limits all read the decoded value, so it must be the same value (jsondecode_test.go compares
// the two, and fuzzes them). Like encoding/json it replaces invalid UTF-8 and lone surrogates with
// U+FFFD and keeps the last of duplicate keys.
func decodeJSON(b []byte) (any, error) {
	d := jsonDecoder{b: b}
	return d.decode()
}

// decodeJSONSkeleton is decodeJSON that also returns a hash of the body's text with the string
// contents of its messages (the "content" strings of the objects in a top-level "messages" array)
// left out. Two bodies with the same skeleton decode to values that differ at most in those
// strings, so they have the same shape (validcache.go): the shape of a screening's requests is
// known from their text without walking the decoded value.
func decodeJSONSkeleton(b []byte) (any, uint64, error) {
	d := jsonDecoder{b: b, skeleton: true}
	d.h.SetSeed(skeletonSeed)
	v, err := d.decode()
	if err != nil {
		return nil, 0, err
	}
	_, _ = d.h.Write(b[d.flushed:])
	return v, d.h.Sum64(), nil
}

var skeletonSeed = maphash.MakeSeed()

func (d *jsonDecoder) decode() (any, error) {
	d.skipSpace()
	v, err := d.value(0, inOther)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.i != len(d.b) {
		return nil, errJSONSyntax
	}
	return v, nil
}

// Where a value sits, for the skeleton.
type jsonPlace int

const (
	inOther    jsonPlace = iota
	inBody               // the top-level object
	inMessages           // its "messages" array
	inMessage            // an object in it
)

var (
	errJSONSyntax = errors.New("invalid JSON")
	errJSONDepth  = errors.New("invalid JSON: exceeded max depth")
)

// jsonMaxDepth is encoding/json's limit on nested arrays and objects.
const jsonMaxDepth = 10000

type jsonDecoder struct {
	b   []byte
	i   int
	buf []byte // scratch for strings with escapes

	skeleton bool         // hash the text without the messages' contents into h
	h        maphash.Hash // the text up to flushed, and a 0 byte (never in JSON text) per content left out
	flushed  int
}

func (d *jsonDecoder) skipSpace() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// separator reads what follows a member or an element: a comma, or the closing bracket (end).
func (d *jsonDecoder) separator(closing byte) (end bool, err error) {
	d.skipSpace()
	if d.i >= len(d.b) {
		return false, errJSONSyntax
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		d.skipSpace()
		return false, nil
	case closing:
		d.i++
		return true, nil
	}
	return false, errJSONSyntax
}

func (d *jsonDecoder) literal(word string, v any) (any, error) {
	if len(d.b)-d.i < len(word) || string(d.b[d.i:d.i+len(word)]) != word {
		return nil, errJSONSyntax
	}
	d.i += len(word)
	return v, nil
}

// value reads the value at d.i (whitespace before it already skipped); depth is the number of
// arrays and objects it is in, at where it sits when it is an array or an object.
func (d *jsonDecoder) value(depth int, at jsonPlace) (any, error) {
	if d.i >= len(d.b) {
		return nil, errJSONSyntax
	}
	switch c := d.b[d.i]; {
	case c == '{':
		if depth == 0 {
			at = inBody
		}
		return d.object(depth+1, at)
	case c == '[':
		return d.array(depth+1, at)
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return d.literal("true", true)
	case c == 'f':
		return d.literal("false", false)
	case c == 'n':
		return d.literal("null", nil)
	}
	return nil, errJSONSyntax
}

func (d *jsonDecoder) object(depth int, at jsonPlace) (any, error) {
	if depth > jsonMaxDepth {
		return nil, errJSONDepth
	}
	d.i++ // {
	m := make(map[string]any)
	d.skipSpace()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return m, nil
	}
	for {
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, errJSONSyntax
		}
		keyAt := d.i
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		rawKey := d.b[keyAt+1 : d.i-1]
		d.skipSpace()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, errJSONSyntax
		}
		d.i++
		d.skipSpace()
		inner := inOther
		if d.skeleton && at == inBody && string(rawKey) == "messages" {
			inner = inMessages
		}
		var v any
		if d.skeleton && at == inMessage && string(rawKey) == "content" && d.i < len(d.b) && d.b[d.i] == '"' {
			start := d.i
			if v, err = d.str(); err != nil {
				return nil, err
			}
			_, _ = d.h.Write(d.b[d.flushed:start])
			_ = d.h.WriteByte(0)
			d.flushed = d.i
		} else if v, err = d.value(depth, inner); err != nil {
			return nil, err
		}
		m[k] = v
		if end, err := d.separator('}'); err != nil {
			return nil, err
		} else if end {
			return m, nil
		}
	}
}

func (d *jsonDecoder) array(depth int, at jsonPlace) (any, error) {
	if depth > jsonMaxDepth {
		return nil, errJSONDepth
	}
	d.i++ // [
	a := make([]any, 0, 4)
	d.skipSpace()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return a, nil
	}
	inner := inOther
	if at == inMessages {
		inner = inMessage
	}
	for {
		v, err := d.value(depth, inner)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if end, err := d.separator(']'); err != nil {
			return nil, err
		} else if end {
			return a, nil
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? as its literal text.
func (d *jsonDecoder) number() (any, error) {
	b, start := d.b, d.i
	i := d.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return nil, errJSONSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return nil, errJSONSyntax
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return nil, errJSONSyntax
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	d.i = i
	return json.Number(b[start:i]), nil
}

// str reads a string at d.i (its opening quote).
func (d *jsonDecoder) str() (string, error) {
	b := d.b
	i := d.i + 1
	start := i
	// Plain ASCII without escapes, the usual case, is copied as is.
	for i < len(b) {
		c := b[i]
		if c == '"' {
			d.i = i + 1
			if i-start <= maxInterned {
				if s, ok := jsonInterned[string(b[start:i])]; ok {
					return s, nil
				}
			}
			return string(b[start:i]), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	// The text up to the next quote (the end, unless a quote is escaped) is room enough for most
	// strings: a record's text grows once, not from 8 bytes by doubling.
	out := d.buf[:0]
	n := bytes.IndexByte(b[i:], '"')
	if n < 0 {
		n = len(b) - i
	}
	if need := i - start + n; cap(out) < need {
		out = make([]byte, 0, need)
	}
	out = append(out, b[start:i]...)
	for {
		if i >= len(b) {
			return "", errJSONSyntax
		}
		c := b[i]
		switch {
		case c == '"':
			d.i = i + 1
			d.buf = out
			return string(out), nil
		case c < 0x20:
			return "", errJSONSyntax
		case c == '\\':
			i++
			if i >= len(b) {
				return "", errJSONSyntax
			}
			switch b[i] {
			case '"', '\\', '/':
				out = append(out, b[i])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(b[i+1:])
				if r < 0 {
					return "", errJSONSyntax
				}
				i += 4
				if utf16.IsSurrogate(r) {
					// A pair makes one rune; anything else leaves a replacement character and
					// is read on its own, as encoding/json does.
					r2 := rune(-1)
					if i+2 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
						r2 = hex4(b[i+3:])
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						i += 6
						r = dec
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", errJSONSyntax
			}
			i++
		case c < utf8.RuneSelf:
			// A run of plain ASCII is copied at once.
			j := i + 1
			for j < len(b) {
				if c := b[j]; c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
					break
				}
				j++
			}
			out = append(out, b[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
}

// jsonInterned are the keys and words every request repeats, returned without allocating a string
// each time (a map lookup with string(bytes) allocates nothing).
var jsonInterned = func() map[string]string {
	m := map[string]string{}
	for _, s := range strings.Fields(`model messages role content type text tools function name description
		parameters properties required additionalProperties enum strict tool_choice parallel_tool_calls
		reasoning_effort seed random_seed top_p temperature verbosity prompt_cache_key max_tokens
		max_completion_tokens input_schema thinking output_config effort disable_parallel_tool_use
		cache_control system items minimum maximum minLength maxLength n stream metadata service_tier
		user assistant tool object string number integer boolean array null auto any none disabled
		enabled low medium high ephemeral adaptive default flex`) {
		m[s] = s
	}
	return m
}()

const maxInterned = 32

// hex4 reads four hexadecimal digits, -1 if they are not.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
