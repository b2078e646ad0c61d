package fakeprovider

import (
	"bytes"
	"hash/maphash"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// decodeCases are bodies whose decoding decodeJSON must share with jsonschema.UnmarshalJSON
// (encoding/json): valid and invalid JSON, escapes, surrogates, invalid UTF-8, numbers, nesting.
var decodeCases = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1`, `-1.5e+10`, `1E5`, `12.`, `01`, `-`, `+1`,
	`1.e5`, `.5`, `1e`, `1e+`, `"x"`, `"`, `"\"`, `"\u00e9\u003c\n\t\/\\\"\b\f\r"`, `"\u12"`, `"\x"`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`,
	"\"\xff\xfe\"", "\"caf\xc3\xa9\"", "\"\xed\xa0\x80\"", "\"a\x01\"", "\"a\x7f\"", "\"tab\there\"",
	`{"a":1,"a":2}`, `{"a" : [ 1 , 2 ] , "b" : { } }`, "\t\n\r {\"a\":null} \n", `{"a":1,}`, `[1,]`, `[,1]`,
	`{"a"}`, `{"a":}`, `{a:1}`, `{"a":1}}`, `{"a":1} x`, `{"a":1}{}`, `[1 2]`, `tru`, `nul`, `truex`,
	`{"k":"v"`, `[`, `{`, "\xef\xbb\xbf{}", `{"":""}`, `[[[[[]]]]]`, `{"n":123456789012345678901234567890}`,
	`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"x":-0.0e-0}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

func checkDecodeSame(t *testing.T, body []byte) {
	t.Helper()
	want, wantErr := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	got, gotErr := decodeJSON(body)
	if (wantErr != nil) != (gotErr != nil) {
		t.Fatalf("%.200q: error %v, encoding/json's %v", body, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%.200q: decoded %#v, encoding/json %#v", body, got, want)
	}
	withSkeleton, _, skelErr := decodeJSONSkeleton(body)
	if (skelErr != nil) != (wantErr != nil) || !reflect.DeepEqual(withSkeleton, got) {
		t.Fatalf("%.200q: with its skeleton decoded %#v (%v), without %#v", body, withSkeleton, skelErr, got)
	}
}

func TestDecodeJSONLikeEncodingJSON(t *testing.T) {
	for _, c := range decodeCases {
		checkDecodeSame(t, []byte(c))
	}
	for _, dir := range []string{"testdata/bench", "../provider/testdata/openai", "../provider/testdata/anthropic",
		"../provider/testdata/mistral"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(dir + "/" + e.Name())
			if err != nil {
				t.Fatal(err)
			}
			checkDecodeSame(t, b)
		}
	}
	checkDecodeSame(t, []byte(chatBody("Title: <x> & \"y\"\nAbstract: é 😀 \u2028", `"seed":42`)))
}

func FuzzDecodeJSON(f *testing.F) {
	for _, c := range decodeCases {
		if len(c) < 1000 {
			f.Add([]byte(c))
		}
	}
	f.Add([]byte(chatBody("Title: x\nAbstract: y", "")))
	f.Fuzz(func(t *testing.T, b []byte) { checkDecodeSame(t, b) })
}

// The skeleton of a body leaves out exactly the string contents of its messages: bodies that
// differ only there share it, and the shape then too; any other difference changes it.
func TestDecodeJSONSkeleton(t *testing.T) {
	skeleton := func(body string) (any, uint64) {
		t.Helper()
		v, h, err := decodeJSONSkeleton([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if want, err := decodeJSON([]byte(body)); err != nil || !reflect.DeepEqual(v, want) {
			t.Fatalf("%s: decoded %v, decodeJSON %v", body, v, want)
		}
		return v, h
	}
	shape := func(v any) uint64 {
		var h maphash.Hash
		h.SetSeed(skeletonSeed)
		writeShape(&h, v, placeBody)
		return h.Sum64()
	}
	msgs := func(first, second string) string {
		return `{"model":"m","messages":[{"role":"system","content":` + first + `},{"content":` + second +
			`,"role":"user"}],"n":1}`
	}
	same := [][2]string{
		{chatBody("record one", ""), chatBody("another record, longer, with \"quotes\" and <tags> é", "")},
		{msgs(`"a"`, `"b"`), msgs(`"a longer text"`, `"\u00e9\n"`)},
		{`{"messages":[{"content":"x","content":"y"}]}`, `{"messages":[{"content":"z","content":""}]}`},
	}
	for _, p := range same {
		v1, h1 := skeleton(p[0])
		v2, h2 := skeleton(p[1])
		if h1 != h2 || shape(v1) != shape(v2) {
			t.Errorf("not one skeleton and shape:\n%s\n%s", p[0], p[1])
		}
	}
	different := [][2]string{
		{chatBody("x", ""), chatBody("x", `"seed":1`)},
		{chatBody("x", `"seed":1`), chatBody("x", `"seed":2`)},
		{msgs(`"a"`, `"b"`), msgs(`["a"]`, `"b"`)},
		{msgs(`[{"type":"text","text":"a"}]`, `"b"`), msgs(`[{"type":"text","text":"c"}]`, `"b"`)},
		{msgs(`"a"`, `"b"`), msgs(`"a"`, `3`)},
		{`{"content":"a","messages":[]}`, `{"content":"b","messages":[]}`},
		{`{"x":{"messages":[{"content":"a"}]}}`, `{"x":{"messages":[{"content":"b"}]}}`},
		{`{"messages":[[{"content":"a"}]]}`, `{"messages":[[{"content":"b"}]]}`},
		{`{"messages":[{"x":{"content":"a"}}]}`, `{"messages":[{"x":{"content":"b"}}]}`},
		{`{"messag\u0065s":[{"content":"a"}]}`, `{"messag\u0065s":[{"content":"b"}]}`},
		{`{"messages":[{"cont\u0065nt":"a"}]}`, `{"messages":[{"cont\u0065nt":"b"}]}`},
		{`[{"messages":[{"content":"a"}]}]`, `[{"messages":[{"content":"b"}]}]`},
		{`{"messages":[{"content":"a"}],"model":"m"}`, `{"model":"m","messages":[{"content":"a"}]}`},
		{`{"messages":[{"content":"a"}]}`, `{"messages": [{"content":"a"}]}`},
	}
	for _, p := range different {
		_, h1 := skeleton(p[0])
		_, h2 := skeleton(p[1])
		if h1 == h2 {
			t.Errorf("one skeleton:\n%s\n%s", p[0], p[1])
		}
	}
}
