package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// weirdTool has names and values that JSON must escape, a const, nested objects and arrays, and
// numbers of every kind the argument filler writes.
const weirdTool = `{"type":"object","properties":{
  "décision <&>":{"type":"string","enum":["a\"b","<x>","\u2028","é","1"]},
  "n":{"type":"number","minimum":-5,"exclusiveMaximum":5},
  "i":{"type":"integer","minimum":1e3,"maximum":1e4},
  "c":{"const":{"k":[1,"two",null,true]}},
  "list":{"type":"array","minItems":2,"items":{"type":"object","properties":{"z":{"type":"boolean"},"a":{"type":"null"}}}},
  "s":{"type":"string","minLength":300}},
 "required":["décision <&>","n"]}`

func mustSchema(t *testing.T, s string) map[string]any {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

// TestAnswerEncodersMatchEncodingJSON: each protocol's answer is, byte for byte, what
// encoding/json made of the structures the protocols had before (jsonencode_ref_test.go), for
// tool calls and text answers, one or more choices, every 200-status fault, usage with cached,
// cache-write and reasoning tokens, thinking, and names that JSON escapes.
func TestAnswerEncodersMatchEncodingJSON(t *testing.T) {
	s, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*toolDef{
		"none":   nil,
		"screen": {name: "record_decision", schema: mustSchema(t, screenTool)["function"].(map[string]any)["parameters"].(map[string]any)},
		"weird":  {name: "a<b>&\"c\u2028é", schema: mustSchema(t, weirdTool)},
		"empty":  {name: "", schema: nil},
	}
	models := []string{"gpt-6-luna", "claude-<&>-\"x\"", "mistral-\u00e9\u2029\x7f", "bad-\xff-utf8"}
	faults := []string{"", FaultBadArgs, FaultBadEnum, FaultNoTool, FaultFinishError, FaultMalformed}
	configs := []string{`{}`, `{"reasoning_tokens":7,"snapshot":"2030-01-01"}`, `{"cached_fraction":0.5,"seed":9}`}
	seq := uint64(0)
	for _, patch := range configs {
		cfg, err := DefaultConfig().Merge([]byte(patch))
		if err != nil {
			t.Fatal(err)
		}
		rc := s.compile(cfg, nil, nil)
		for toolName, tool := range tools {
			for _, model := range models {
				for _, fault := range faults {
					for _, choices := range []int{1, 3} {
						for _, flags := range []int{0, 1, 2, 3} {
							seq++
							req := &chatRequest{model: model, userText: fmt.Sprint("record ", seq), promptSize: 4000,
								messages: 2, tool: tool, choices: choices, forced: flags&1 == 1, thinking: flags&2 == 2,
								argsObject: flags&1 == 0}
							if flags&2 == 2 {
								req.effort = "high"
							}
							a := s.buildAnswer(rc, req, seq, fault, time.Unix(1_790_000_000+int64(seq), 0))
							if flags == 3 {
								a.cachedTokens, a.cacheWriteTokens = 123, 45
							}
							name := fmt.Sprintf("%s/%s/%q/%q/n%d/flags%d", patch, toolName, model, fault, choices, flags)
							for _, enc := range []struct {
								proto    string
								got, ref []byte
							}{
								{"openai", openAIAnswer(req, a), refOpenAIAnswer(req, a)},
								{"anthropic", anthropicAnswer(req, a), refAnthropicAnswer(req, a)},
								{"mistral", mistralAnswer(req, a), refMistralAnswer(req, a)},
							} {
								if !bytes.Equal(enc.got, enc.ref) {
									t.Fatalf("%s %s:\n got %s\nwant %s", enc.proto, name, enc.got, enc.ref)
								}
								if !json.Valid(enc.got) {
									t.Fatalf("%s %s: not JSON: %s", enc.proto, name, enc.got)
								}
							}
						}
					}
				}
			}
		}
	}
}

// marshalValue writes what json.Marshal writes for decoded values, and fails where it fails.
func TestMarshalValueLikeEncodingJSON(t *testing.T) {
	values := []any{nil, "", "<&>\u2028\u2029\x00\x1f\x7f é \xff", true, false, json.Number("1.5e3"), json.Number(""),
		json.Number("NaN"), json.Number("+Inf"), json.Number("01"), []any{}, []any(nil), map[string]any{},
		map[string]any(nil), map[string]any{"b": 1.5, "a": []any{json.Number("2")}}, 3.25,
		map[string]any{"z": map[string]any{"é": "x", "<": nil, "a": []any{true, "s"}}, "A": json.Number("-0")}}
	for _, c := range decodeCases {
		if v, err := decodeJSON([]byte(c)); err == nil {
			values = append(values, v)
		}
	}
	for _, v := range values {
		want, wantErr := json.Marshal(v)
		got, gotErr := marshalValue(v)
		if (wantErr != nil) != (gotErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%#v: %s (%v), json.Marshal %s (%v)", v, got, gotErr, want, wantErr)
		}
	}
}

func FuzzMarshalValue(f *testing.F) {
	for _, c := range decodeCases {
		if len(c) < 1000 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeJSON(b)
		if err != nil {
			return
		}
		want, wantErr := json.Marshal(v)
		got, gotErr := marshalValue(v)
		if (wantErr != nil) != (gotErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("%q: %s, json.Marshal %s", b, got, want)
		}
	})
}
