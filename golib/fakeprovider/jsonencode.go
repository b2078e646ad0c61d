package fakeprovider

import (
	"encoding/json"
	"slices"
	"strconv"
)

// The answers are written by appending bytes rather than by encoding/json's reflection, which
// was a tenth of the fake's CPU per request. They are the bytes json.Marshal gave for the answer
// structures the protocols used before (jsonencode_test.go keeps those structures and compares):
// the same field order, HTML characters escaped in strings, omitted empty fields.

// appendJSONString appends s as json.Marshal writes a string.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // escapes, non-ASCII text, invalid UTF-8: encoding/json's way
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONField appends ,"key": (no comma when first).
func appendJSONField(b []byte, key string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = appendJSONString(b, key)
	return append(b, ':')
}

func appendJSONInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// appendChatUsage closes a chat completion's choices and opens its usage with the counts both
// chat-completions protocols (A and C) send; the caller adds its own fields and the closing brace.
func appendChatUsage(b []byte, prompt, completion int) []byte {
	b = append(b, `],"usage":{"prompt_tokens":`...)
	b = appendJSONInt(b, int64(prompt))
	b = append(b, `,"completion_tokens":`...)
	b = appendJSONInt(b, int64(completion))
	b = append(b, `,"total_tokens":`...)
	return appendJSONInt(b, int64(prompt+completion))
}

// marshalValue encodes a value of the kinds decodeJSON and fillArgs make (maps with sorted keys,
// slices, strings, json.Number, bool, nil) as json.Marshal does, with its error where it fails.
func marshalValue(v any) ([]byte, error) {
	if b, ok := appendJSONValue(make([]byte, 0, 64), v); ok {
		return b, nil
	}
	return json.Marshal(v)
}

// appendJSONValue appends v, or reports false for a value it leaves to encoding/json (another
// type, an invalid json.Number).
func appendJSONValue(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendJSONString(b, x), true
	case bool:
		return strconv.AppendBool(b, x), true
	case json.Number:
		s := string(x)
		if s == "" {
			s = "0" // as encoding/json writes an empty Number
		}
		if !validNumber(s) {
			return b, false
		}
		return append(b, s...), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendJSONValue(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		var small [16]string
		keys := small[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			b = appendJSONField(b, k, i == 0)
			var ok bool
			if b, ok = appendJSONValue(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// validNumber reports whether s is a JSON number, as encoding/json requires of a json.Number.
func validNumber(s string) bool {
	d := jsonDecoder{b: []byte(s)}
	if s == "" || (s[0] != '-' && !isDigit(s[0])) {
		return false
	}
	_, err := d.number()
	return err == nil && d.i == len(s)
}
