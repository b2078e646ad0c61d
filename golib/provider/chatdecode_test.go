package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// chatBodies are the reply bodies of the chat-completions fixtures (OpenAI and Mistral), and the
// bodies of their batch fixtures' answered lines.
func chatBodies(t testing.TB) [][]byte {
	var out [][]byte
	for _, protocol := range []string{"openai", "mistral"} {
		var cases []responseCase
		b, err := os.ReadFile(filepath.Join("testdata", protocol, "responses.json"))
		if err == nil {
			err = json.Unmarshal(b, &cases)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			body := []byte(c.Body)
			var s string
			if json.Unmarshal(body, &s) == nil {
				body = []byte(s) // a body that is not JSON, kept as a string
			}
			out = append(out, body)
		}
	}
	if len(out) == 0 {
		t.Fatal("no fixture body")
	}
	return out
}

// chatVariants are bodies that differ from b in the ways the fast reader must notice: indented,
// keys in another case or escaped, a key twice, nulls, numbers that are not plain integers,
// escaped strings, a second choice, cut short, trailing text.
func chatVariants(b []byte) [][]byte {
	var out [][]byte
	add := func(s string) { out = append(out, []byte(s)) }
	s := string(b)
	var indented bytes.Buffer
	if json.Indent(&indented, b, " ", "\t") == nil {
		out = append(out, indented.Bytes())
	}
	for _, r := range [][2]string{
		{`"model"`, `"Model"`}, {`"model"`, `"mod\u0065l"`}, {`"usage"`, `"USAGE"`}, {`"choices"`, `"Choices"`},
		{`"prompt_tokens"`, `"prompt_Tokens"`}, {`"finish_reason"`, `"finish_reaſon"`}, {`"tool_calls"`, `"tool_calls_"`},
		{`"refusal":null`, `"refusal":"no"`}, {`"refusal": null`, `"refusal": "a \"quoted\" no"`},
		{`"usage":`, `"usage":null,"usage":`}, {`"model":`, `"model":"x","model":`},
		{`"prompt_tokens":`, `"prompt_tokens":1.0,"x":`}, {`"completion_tokens": `, `"completion_tokens": 1e3,"y": `},
		{`"prompt_tokens": `, `"prompt_tokens": "12","z": `}, {`"completion_tokens":`, `"completion_tokens":99999999999999999999,"w":`},
		{`"prompt_tokens_details":`, `"prompt_tokens_details":null,"v":`},
		{`"model": "`, `"model": "\u00e9`}, {`"model":"`, `"model":"é\/`}, {`"finish_reason": "`, `"finish_reason": "\n`},
		{`"arguments":`, `"arguments":null,"u":`}, {`"arguments": `, `"arguments": {"decision_llm" : "1"},"t": `},
		{`"function":`, `"function":null,"s":`}, {`"message":`, `"message":null,"r":`}, {`"tool_calls":`, `"tool_calls":null,"q":`},
		{`"choices": [`, `"choices": [{"finish_reason":"stop","message":{}},`}, {`"choices":[`, `"choices":[{},`},
		{`"choices":`, `"choices":null,"p":`}, {`"id":`, `"id":[[[[{"a":[1,2,{"b":null}]}]]]],"o":`},
		{`"model"`, "\"model\xff\""}, {`"model": "`, "\"model\": \"\xff"}, {`"index": 0`, `"index": -0.5e-3`},
	} {
		if strings.Contains(s, r[0]) {
			add(strings.Replace(s, r[0], r[1], 1))
		}
	}
	add(s + " x")
	add(s + "\n\t ")
	add(" \n" + s)
	add("[" + s + "]")
	add("null")
	add("\ufeff" + s)
	for i := 0; i < len(b); i += 7 {
		out = append(out, b[:i])
	}
	return out
}

// checkChatDecode: whenever the fast reader takes a body, encoding/json reads the same reply
// from it without an error.
func checkChatDecode(t *testing.T, body []byte) (fast bool) {
	t.Helper()
	var got chatResponse
	if !decodeChatFast(body, &got) {
		return false
	}
	var want chatResponse
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatalf("the fast reader took a body encoding/json refuses (%v):\n%s", err, body)
	}
	if !reflect.DeepEqual(normalChat(got), normalChat(want)) {
		t.Fatalf("fast reading differs:\n got %s\nwant %s\nbody %s", dumpChat(got), dumpChat(want), body)
	}
	return true
}

// normalChat makes nil and empty slices alike (the adapter reads only their length).
func normalChat(r chatResponse) chatResponse {
	if len(r.Choices) == 0 {
		r.Choices = nil
	}
	for i := range r.Choices {
		if len(r.Choices[i].Message.ToolCalls) == 0 {
			r.Choices[i].Message.ToolCalls = nil
		}
	}
	return r
}

func dumpChat(r chatResponse) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// TestChatDecodeFast compares the fast reader with encoding/json over every chat fixture body and
// its variants, and checks that the fixtures' usual replies do take the fast path.
func TestChatDecodeFast(t *testing.T) {
	taken, total := 0, 0
	for _, body := range chatBodies(t) {
		if checkChatDecode(t, body) {
			taken++
		}
		for _, v := range chatVariants(body) {
			total++
			checkChatDecode(t, v)
		}
	}
	if taken < 8 {
		t.Fatalf("only %d fixture bodies took the fast path", taken)
	}
	t.Logf("%d fixture bodies fast, %d variants compared", taken, total)
}

// TestChatDecodeFastRandom flips, inserts and removes bytes of the fixture bodies at random.
func TestChatDecodeFastRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	bodies := chatBodies(t)
	alphabet := []byte(" \t\n{}[]:,\"\\/0123456789.eE+-ntrufalsxMCU\x00\x1f\x80\xff")
	for range 20000 {
		b := bytes.Clone(bodies[rng.Intn(len(bodies))])
		for range 1 + rng.Intn(3) {
			if len(b) == 0 {
				break
			}
			i := rng.Intn(len(b))
			switch rng.Intn(3) {
			case 0:
				b[i] = alphabet[rng.Intn(len(alphabet))]
			case 1:
				b = append(b[:i], append([]byte{alphabet[rng.Intn(len(alphabet))]}, b[i:]...)...)
			default:
				b = append(b[:i], b[i+1:]...)
			}
		}
		checkChatDecode(t, b)
	}
}

// TestChatParseSame: the adapters' outcome on every fixture body and variant is what it was with
// encoding/json alone.
func TestChatParseSame(t *testing.T) {
	for _, letter := range []string{"a", "c"} {
		d, _ := Lookup(letter)
		for _, custom := range []bool{false, true} {
			s := Settings{Role: "user", Builtin: screen.BuiltinTool(true, false, false)}
			if custom {
				s.CustomTools = json.RawMessage(`[{"type":"function","function":{"name":"judge","parameters":{"type":"object","properties":{"verdict":{"type":"string"}}}}}]`)
			}
			a, err := d.New(s)
			if err != nil {
				t.Fatal(err)
			}
			c := a.(*chat)
			call := &Call{Model: &Model{Name: "m", ForcedTool: true}}
			for _, body := range chatBodies(t) {
				for _, v := range append(chatVariants(body), body) {
					got := c.parse(call, v)
					var r chatResponse
					want := Outcome{Failure: decodeResponse(v, &r)}
					if want.Failure == nil {
						want = c.parseDecoded(call, &r)
					}
					if outcomeText(got) != outcomeText(want) {
						t.Fatalf("%s: body %s\n got %+v\nwant %+v", letter, v, got, want)
					}
				}
			}
		}
	}
}

func outcomeText(o Outcome) string {
	f := ""
	if o.Failure != nil {
		f = fmt.Sprintf("%d %q %q %v %v %v", o.Failure.Verdict, o.Failure.Class, o.Failure.Message, o.Failure.Wait, o.Failure.HasWait, o.Failure.Pause)
	}
	return fmt.Sprintf("%+v %+v %q failure %s", o.Decision, o.Usage, o.Submodel, f)
}

func BenchmarkChatDecode(b *testing.B) {
	body := chatBodies(b)[0]
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var r chatResponse
			if !decodeChatFast(body, &r) {
				b.Fatal("not fast")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var r chatResponse
			if err := json.Unmarshal(body, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzChatDecode: any body the fast reader takes, encoding/json reads alike.
func FuzzChatDecode(f *testing.F) {
	for _, b := range chatBodies(f) {
		f.Add(b)
		for _, v := range chatVariants(b) {
			f.Add(v)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkChatDecode(t, body) })
}
