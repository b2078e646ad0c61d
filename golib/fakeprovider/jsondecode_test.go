package fakeprovider

import (
	"bytes"
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
