package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// mergeBodyReflect is the request body writer that mergeBody replaced (encoding/json for every
// value): the reference the appending writer must match byte for byte.
func mergeBodyReflect(fields []field, extra map[string]json.RawMessage) ([]byte, error) {
	buf := make([]byte, 0, 1024)
	buf = append(buf, '{')
	seen := make(map[string]bool, len(fields))
	first := true
	write := func(k string, v []byte) {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		kb, _ := json.Marshal(k)
		buf = append(buf, kb...)
		buf = append(buf, ':')
		buf = append(buf, v...)
	}
	for _, f := range fields {
		seen[f.key] = true
		if v, ok := extra[f.key]; ok {
			write(f.key, v)
			continue
		}
		if raw, ok := f.value.(json.RawMessage); ok {
			write(f.key, raw)
			continue
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.key, err)
		}
		write(f.key, v)
	}
	for k, v := range extra {
		if !seen[k] {
			write(k, v)
		}
	}
	return append(buf, '}'), nil
}

// questions are texts that exercise every rule of encoding/json's string encoding.
var questions = []string{
	"Include?\n\nTitle: A randomised trial\n\nAbstract: Adolescents (n = 120) were assigned...",
	"quotes \" and backslashes \\ and / slashes",
	"HTML <b>bold</b> & 'single'",
	"controls \x00\x01\x07\b\f\n\r\t\x1f\x7f end",
	"unicode é ü 中文 emoji 😀 line\u2028separator\u2029para",
	"invalid \xff\xfe utf-8 \xc3 cut \xe2\x82 and \xed\xa0\x80 surrogate",
	"",
}

// TestBodyMatchesReflect builds the request of every fixture of every provider, and of every
// fixture with each of the questions above, with both writers: the bodies are the same bytes
// (the same JSON when extra_body adds two fields or more, whose order is the map's).
func TestBodyMatchesReflect(t *testing.T) {
	for _, d := range All() {
		t.Run(d.Protocol, func(t *testing.T) {
			var cases []requestCase
			readFixture(t, filepath.Join("testdata", d.Protocol, "requests.json"), &cases)
			n := 0
			for _, c := range cases {
				for qi := -1; qi < len(questions); qi++ {
					call := c.Call.call()
					if qi >= 0 {
						call.Question = questions[qi]
						call.PrefixLen = min(call.PrefixLen, len(call.Question))
					}
					for _, topP := range []float64{1, 0.5, 0.1 + 0.2, 1e-7, 1e21, 123456789.125} {
						if call.HasTopP {
							call.TopP = topP
						}
						a, err := d.New(c.Settings.settings())
						if err != nil {
							t.Fatalf("%s: %v", c.Name, err)
						}
						got, err := a.Request(call)
						if err != nil {
							t.Fatalf("%s: %v", c.Name, err)
						}
						buildBody = mergeBodyReflect
						want, err := a.Request(call)
						buildBody = mergeBody
						if err != nil {
							t.Fatalf("%s: %v", c.Name, err)
						}
						n++
						if bytes.Equal(got.Body, want.Body) {
							continue
						}
						if len(c.Settings.ExtraBody) >= 2 && jsonEqual(got.Body, want.Body) {
							continue
						}
						t.Fatalf("%s, question %d, top_p %g:\n got %s\nwant %s", c.Name, qi, topP, got.Body, want.Body)
					}
				}
			}
			if n == 0 {
				t.Fatal("no request compared")
			}
		})
	}
}

// TestAppendJSONValue compares each value type the adapters send with json.Marshal, over random
// strings (any bytes, valid or not) and numbers of every magnitude.
func TestAppendJSONValue(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "Z", " ", "\"", "\\", "/", "<", ">", "&", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "中",
		"😀", "\u2028", "\u2029", "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\ufffd"}
	str := func() string {
		var b strings.Builder
		for range rng.Intn(40) {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		return b.String()
	}
	var values []any
	for _, q := range questions {
		values = append(values, q)
	}
	for range 2000 {
		values = append(values, str())
	}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 0.1 + 0.2, 1e-6, 9.99e-7, 1e-7, 1.5e-10, 1e20, 1e21, 1.5e21, 1e300,
		-1e-7, math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.125, 2.5e-5}
	for range 2000 {
		floats = append(floats, math.Float64frombits(rng.Uint64()), rng.Float64()*math.Pow(10, float64(rng.Intn(60)-30)))
	}
	for _, f := range floats {
		values = append(values, f)
	}
	values = append(values, math.NaN(), math.Inf(1), math.Inf(-1), true, false, 0, 1024, -5, int64(math.MaxInt64), int64(math.MinInt64),
		map[string]string{"type": "adaptive"}, map[string]string{}, map[string]string(nil),
		map[string]string{"b": "2", "a": "1<", "c": str()},
		[]map[string]string{{"role": "user", "content": questions[3]}}, []map[string]string(nil), []map[string]string{},
		[]chatMessage{{Role: "user", Content: questions[4]}, {Role: "sys<>", Content: str()}}, []chatMessage(nil), []chatMessage{},
		map[string]any{"type": "tool", "name": "inclusion_decision", "disable_parallel_tool_use": true},
		map[string]any{"type": "auto", "disable_parallel_tool_use": true, "n": 3, "x": 0.25, "nested": map[string]string{"k": "v"}},
		map[string]any{"bad": math.NaN()}, map[string]any{"other": []int{1, 2}}, map[string]any(nil),
		[]map[string]any{{"role": "user", "content": questions[4]}},
		[]map[string]any{{"role": "user", "content": []textBlock{{Type: "text", Text: questions[0], CacheControl: &cacheControl{Type: "ephemeral"}},
			{Type: "text", Text: questions[5]}}}},
		[]map[string]any{{"role": "user", "content": []textBlock(nil)}}, []map[string]any(nil),
		[]textBlock{}, []textBlock(nil), []int{1, 2}, nil)
	for i, v := range values {
		want, wantErr := json.Marshal(v)
		got, gotErr := appendJSONValue([]byte("prefix"), v)
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("value %d (%#v): error %v, json.Marshal's %v", i, v, gotErr, wantErr)
		}
		if wantErr != nil {
			if gotErr.Error() != wantErr.Error() {
				t.Fatalf("value %d: error %q, json.Marshal's %q", i, gotErr, wantErr)
			}
			continue
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("value %d (%#v):\n got %s\nwant prefix%s", i, v, got, want)
		}
	}
}

// TestChatMessageAsMap: the message struct marshals as the map the request used to hold.
func TestChatMessageAsMap(t *testing.T) {
	for _, q := range questions {
		got, _ := json.Marshal([]chatMessage{{Role: "user", Content: q}})
		want, _ := json.Marshal([]map[string]string{{"role": "user", "content": q}})
		if !bytes.Equal(got, want) {
			t.Fatalf("%s\n%s", got, want)
		}
	}
}

// FuzzAppendJSONString: any string is written as json.Marshal writes it.
func FuzzAppendJSONString(f *testing.F) {
	for _, q := range questions {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}

func BenchmarkChatBody(b *testing.B) {
	d, _ := Lookup("a")
	a, err := d.New(Settings{URL: "http://x", Role: "user", Builtin: screen.BuiltinTool(true, false, false), Cache: true})
	if err != nil {
		b.Fatal(err)
	}
	call := &Call{Model: &Model{Name: "gpt-6-luna", ReasoningEffort: "none", Verbosity: "low", SendTopP: true},
		Question: "Include?\n\n" + strings.Repeat("Randomised trial of family therapy for adolescents. ", 30), TopP: 1, HasTopP: true}
	for _, w := range []struct {
		name string
		f    func([]field, map[string]json.RawMessage) ([]byte, error)
	}{{"append", mergeBody}, {"reflect", mergeBodyReflect}} {
		b.Run(w.name, func(b *testing.B) {
			buildBody = w.f
			defer func() { buildBody = mergeBody }()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := a.Request(call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
