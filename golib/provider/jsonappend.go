package provider

// Request bodies are written by appending to one buffer instead of through encoding/json's
// reflection: the body of every request is built once per attempt, and its encoding (a map for the
// message, reflection over each value, a buffer grown several times) was a tenth of a
// zero-latency run's client work. The output is byte for byte what json.Marshal writes for the
// same values (jsonappend_test.go compares them); a value of any other type goes through
// json.Marshal as before.

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes a JSON string holds as they are (json.Marshal's HTML-safe set).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendJSONString is encoding/json's string encoding with HTML escaping (json.Marshal's
// default): <, > and & as \u00XX, control characters escaped, invalid UTF-8 as \ufffd, and
// U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && jsonSafe8(s[i:i+8]) {
			i += 8
			continue
		}
		if b := s[i]; b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonSafe8 tells whether eight bytes are all in jsonSafe, looking at the eight at once: no byte
// of 0x80 or above, none below 0x20, and no quote, backslash, <, > or &.
func jsonSafe8(b string) bool {
	x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// Each test is non-zero exactly when some byte is what it looks for (given no byte has its
	// high bit, which the first term checks).
	hasZero := func(y uint64) uint64 { return (y - ones) &^ y & highs }
	bad := x&highs | (x-0x20*ones)&^x&highs |
		hasZero(x^('"'*ones)) | hasZero(x^('\\'*ones)) | hasZero(x^('<'*ones)) | hasZero(x^('>'*ones)) | hasZero(x^('&'*ones))
	return bad == 0
}

// appendJSONFloat is encoding/json's float64 encoding; false for NaN and infinities, which
// json.Marshal refuses.
func appendJSONFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// appendJSONValue appends the JSON of a request field's value: the types the adapters put in
// their bodies are written here, any other through json.Marshal. A json.RawMessage is written
// as it is (mergeBody's rule for the values marshalled once per run and for extra_body), never
// inside a map or list, where json.Marshal would compact it: those go to json.Marshal.
func appendJSONValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return appendJSONString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case float64:
		if out, ok := appendJSONFloat(dst, x); ok {
			return out, nil
		}
	case map[string]string:
		return appendStringMap(dst, x), nil
	case []chatMessage:
		return appendList(dst, x, func(dst []byte, m chatMessage) []byte {
			dst = append(dst, `{"content":`...)
			dst = appendJSONString(dst, m.Content)
			dst = append(dst, `,"role":`...)
			dst = appendJSONString(dst, m.Role)
			return append(dst, '}')
		}), nil
	case []map[string]string:
		return appendList(dst, x, appendStringMap), nil
	case map[string]any:
		if out, ok := appendAnyMap(dst, x); ok {
			return out, nil
		}
	case []map[string]any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		out := append(dst, '[')
		ok := true
		for i, m := range x {
			if i > 0 {
				out = append(out, ',')
			}
			if out, ok = appendAnyMap(out, m); !ok {
				break
			}
		}
		if ok {
			return append(out, ']'), nil
		}
	case []textBlock:
		return appendList(dst, x, func(dst []byte, b textBlock) []byte {
			dst = append(dst, `{"type":`...)
			dst = appendJSONString(dst, b.Type)
			dst = append(dst, `,"text":`...)
			dst = appendJSONString(dst, b.Text)
			if b.CacheControl != nil {
				dst = append(dst, `,"cache_control":{"type":`...)
				dst = appendJSONString(dst, b.CacheControl.Type)
				dst = append(dst, '}')
			}
			return append(dst, '}')
		}), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendStringMap writes a map as json.Marshal does: keys sorted, null for a nil map.
func appendStringMap(dst []byte, m map[string]string) []byte {
	out, _ := appendSortedMap(dst, m, func(dst []byte, v string) ([]byte, bool) { return appendJSONString(dst, v), true })
	return out
}

// appendAnyMap writes a map of the value types above, keys sorted; false when a value is of
// another type (or is a json.RawMessage), so that the caller marshals the whole map instead.
func appendAnyMap(dst []byte, m map[string]any) ([]byte, bool) {
	for _, v := range m {
		switch v.(type) {
		case string, bool, int, int64, float64, map[string]string, []textBlock:
		default:
			return dst, false
		}
	}
	return appendSortedMap(dst, m, func(dst []byte, v any) ([]byte, bool) {
		out, err := appendJSONValue(dst, v)
		return out, err == nil
	})
}

// appendSortedMap writes m as a JSON object with its keys sorted (encoding/json's order), each
// value by value; null for a nil map. When value fails, dst comes back as it was, with false.
func appendSortedMap[V any](dst []byte, m map[string]V, value func([]byte, V) ([]byte, bool)) ([]byte, bool) {
	if m == nil {
		return append(dst, "null"...), true
	}
	var keysBuf [8]string
	keys := sortedKeys(m, keysBuf[:0])
	start := len(dst)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		var ok bool
		if dst, ok = value(dst, m[k]); !ok {
			return dst[:start], false
		}
	}
	return append(dst, '}'), true
}

// jsonSizeHint is about how many bytes a field's value takes, so that a body is written into one
// buffer of the right size.
func jsonSizeHint(v any) int {
	switch x := v.(type) {
	case string:
		return len(x) + len(x)/8 + 16
	case json.RawMessage:
		return len(x)
	case []map[string]string:
		n := 2
		for _, m := range x {
			for k, s := range m {
				n += len(k) + len(s) + len(s)/16 + 6
			}
		}
		return n
	case []map[string]any:
		n := 2
		for _, m := range x {
			for k, e := range m {
				n += len(k) + 4 + jsonSizeHint(e)
			}
		}
		return n
	case []chatMessage:
		n := 2
		for _, m := range x {
			n += len(m.Content) + len(m.Content)/8 + len(m.Role) + 48
		}
		return n
	case []textBlock:
		n := 2
		for _, b := range x {
			n += len(b.Text) + len(b.Text)/16 + 64
		}
		return n
	}
	return 16
}

// appendList appends a JSON array (null for a nil slice, as encoding/json) of xs, each by one.
func appendList[T any](dst []byte, xs []T, one func([]byte, T) []byte) []byte {
	if xs == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, x := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = one(dst, x)
	}
	return append(dst, ']')
}

// sortedKeys appends m's keys to buf, sorted (encoding/json's order).
func sortedKeys[V any](m map[string]V, buf []string) []string {
	for k := range m {
		buf = append(buf, k)
	}
	slices.Sort(buf)
	return buf
}
