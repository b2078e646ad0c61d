package provider

// The contract every adapter keeps, checked over golden fixtures (testdata/<protocol>/): the
// request a call becomes, and what each response means. A provider without fixtures, or whose
// fixtures leave out one of the cases every protocol must handle, fails. `go test -run Contract
// -update` rewrites the expectations from what the adapters do now; read the diff before keeping it.

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/screen"
)

var update = flag.Bool("update", false, "rewrite the golden expectations of the contract fixtures")

// contractKey is the key of every fixture; headers show it as <key>.
const contractKey = "sk-contract-test-key"

// contractNow is the time every response of the fixtures is received at.
var contractNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

type requestCase struct {
	Name     string          `json:"name"`
	Settings fixtureSettings `json:"settings"`
	Call     fixtureCall     `json:"call"`
	Want     *wantRequest    `json:"want"`
}

type fixtureSettings struct {
	URL        string                     `json:"url"`
	Role       string                     `json:"role"`
	Builtin    [3]bool                    `json:"builtin"` // overinclusive, decision_description, confidence
	Tools      json.RawMessage            `json:"tools"`
	ToolChoice json.RawMessage            `json:"tool_choice"`
	ExtraBody  map[string]json.RawMessage `json:"extra_body"`
	MaxTokens  int                        `json:"max_tokens"`
	Cache      bool                       `json:"cache,omitempty"`
}

func (f fixtureSettings) settings() Settings {
	return Settings{URL: f.URL, Role: f.Role, Builtin: screen.BuiltinTool(f.Builtin[0], f.Builtin[1], f.Builtin[2]),
		CustomTools: f.Tools, ToolChoice: f.ToolChoice, ExtraBody: f.ExtraBody, MaxTokens: f.MaxTokens, APIKey: contractKey,
		Cache: f.Cache}
}

type fixtureCall struct {
	Model    Model    `json:"model"`
	Question string   `json:"question"`
	TopP     *float64 `json:"top_p"`
	Seed     *int64   `json:"seed"`
	// The cache layout (Call): the prompt's length in the question, the requests sharing it.
	PrefixLen   int    `json:"prefix_len,omitempty"`
	PromptReuse int    `json:"prompt_reuse,omitempty"`
	RecordReuse int    `json:"record_reuse,omitempty"`
	CacheKey    string `json:"cache_key,omitempty"`
}

func (f fixtureCall) call() *Call {
	m := f.Model
	c := &Call{Model: &m, Question: f.Question, PrefixLen: f.PrefixLen, PromptReuse: f.PromptReuse,
		RecordReuse: f.RecordReuse, CacheKey: f.CacheKey}
	if f.TopP != nil {
		c.TopP, c.HasTopP = *f.TopP, true
	}
	if f.Seed != nil {
		c.Seed, c.HasSeed = *f.Seed, true
	}
	return c
}

type wantRequest struct {
	URL    string            `json:"url"`
	Header map[string]string `json:"header"`
	Body   json.RawMessage   `json:"body"`
}

type responseCase struct {
	Name string `json:"name"`
	// Covers names what the case is an example of, for the coverage check.
	Covers   []string          `json:"covers"`
	Settings fixtureSettings   `json:"settings"`
	Forced   bool              `json:"forced_tool"`
	Status   int               `json:"status"`
	Header   map[string]string `json:"header"`
	// Body is the response body: a JSON value, or a string holding a body that is not JSON.
	Body json.RawMessage `json:"body"`
	Want *wantOutcome    `json:"want"`
}

type wantOutcome struct {
	Verdict     string   `json:"verdict"` // answer, retry, reask, fail, stop
	Class       string   `json:"class,omitempty"`
	Message     string   `json:"message,omitempty"`
	Decision    string   `json:"decision,omitempty"`
	Description string   `json:"description,omitempty"`
	Confidence  float64  `json:"confidence,omitempty"`
	Arguments   string   `json:"arguments,omitempty"`
	Usage       [4]int64 `json:"usage"` // prompt, cached, cache write, completion
	Submodel    string   `json:"submodel,omitempty"`
	WaitSeconds float64  `json:"wait_seconds,omitempty"`
	Pause       bool     `json:"pause,omitempty"`
}

// mustCover are the cases every protocol's fixtures must hold.
var mustCover = []string{"answer", "answer with arguments as text", "custom tool", "no tool call", "cut off",
	"malformed body", "refused key", "quota", "429 with retry header", "429 without retry header",
	"server error", "bad request"}

func readFixture(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (a provider brings its contract fixtures)", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func writeFixture(t *testing.T, path string, v any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestContract(t *testing.T) {
	for _, d := range All() {
		t.Run(d.Protocol, func(t *testing.T) {
			dir := filepath.Join("testdata", d.Protocol)
			contractRequests(t, d, filepath.Join(dir, "requests.json"))
			contractResponses(t, d, filepath.Join(dir, "responses.json"))
		})
	}
}

func contractRequests(t *testing.T, d Descriptor, path string) {
	var cases []requestCase
	readFixture(t, path, &cases)
	if len(cases) == 0 {
		t.Fatalf("%s has no request", path)
	}
	for i := range cases {
		c := &cases[i]
		a, err := d.New(c.Settings.settings())
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		req, err := a.Request(c.Call.call())
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if a.Protocol() != d.Protocol {
			t.Fatalf("%s: protocol %q", c.Name, a.Protocol())
		}
		got := wantRequest{URL: req.URL, Header: map[string]string{}, Body: req.Body}
		for k, v := range req.Header {
			got.Header[k] = strings.ReplaceAll(strings.Join(v, ", "), contractKey, "<key>")
		}
		if *update {
			var body any
			_ = json.Unmarshal(req.Body, &body)
			got.Body, _ = json.Marshal(body)
			c.Want = &got
			continue
		}
		if c.Want == nil {
			t.Fatalf("%s: no expectation (run with -update)", c.Name)
		}
		if got.URL != c.Want.URL || !reflect.DeepEqual(got.Header, c.Want.Header) {
			t.Errorf("%s: %s %v, want %s %v", c.Name, got.URL, got.Header, c.Want.URL, c.Want.Header)
		}
		var gotBody, wantBody any
		if err := json.Unmarshal(got.Body, &gotBody); err != nil {
			t.Fatalf("%s: the body is not JSON: %v", c.Name, err)
		}
		_ = json.Unmarshal(c.Want.Body, &wantBody)
		if !reflect.DeepEqual(gotBody, wantBody) {
			t.Errorf("%s: body\n%s\nwant\n%s", c.Name, got.Body, c.Want.Body)
		}
		if bytes.Contains(req.Body, []byte(contractKey)) {
			t.Errorf("%s: the key is in the body", c.Name)
		}
	}
	if *update {
		writeFixture(t, path, cases)
	}
}

var verdictNames = map[Verdict]string{Retry: "retry", Reask: "reask", FailJob: "fail", StopRun: "stop"}

func contractResponses(t *testing.T, d Descriptor, path string) {
	var cases []responseCase
	readFixture(t, path, &cases)
	covered := map[string]bool{}
	for i := range cases {
		c := &cases[i]
		for _, k := range c.Covers {
			covered[k] = true
		}
		a, err := d.New(c.Settings.settings())
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		body := []byte(c.Body)
		var text string
		if json.Unmarshal(c.Body, &text) == nil {
			body = []byte(text) // a body that is not JSON, kept as a string
		}
		h := http.Header{}
		for k, v := range c.Header {
			h.Set(k, v)
		}
		r := Response{Status: c.Status, Header: h, Body: body}
		var got wantOutcome
		if c.Status >= 200 && c.Status < 300 {
			o := a.Parse(&Call{Model: &Model{Name: "m", ForcedTool: c.Forced}}, r, contractNow)
			got = outcomeOf(o)
		} else {
			got = failureOf(a.Classify(r, contractNow))
		}
		if bytes.Contains([]byte(got.Message), []byte(contractKey)) {
			t.Errorf("%s: the key is in the message", c.Name)
		}
		if *update {
			c.Want = &got
			continue
		}
		if c.Want == nil {
			t.Fatalf("%s: no expectation (run with -update)", c.Name)
		}
		if !reflect.DeepEqual(got, *c.Want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(c.Want)
			t.Errorf("%s:\n got %s\nwant %s", c.Name, g, w)
		}
	}
	for _, k := range mustCover {
		if !covered[k] {
			t.Errorf("%s covers no %q case", path, k)
		}
	}
	if *update {
		writeFixture(t, path, cases)
	}
}

func outcomeOf(o Outcome) wantOutcome {
	w := wantOutcome{Verdict: "answer", Usage: [4]int64{o.Usage.Prompt, o.Usage.Cached, o.Usage.CacheWrite, o.Usage.Completion},
		Submodel: o.Submodel}
	if o.Failure != nil {
		f := failureOf(*o.Failure)
		f.Usage, f.Submodel = w.Usage, w.Submodel
		return f
	}
	d := o.Decision
	w.Decision, w.Description, w.Confidence, w.Arguments = d.Raw, d.Description, d.Confidence, d.Arguments
	return w
}

func failureOf(f Failure) wantOutcome {
	w := wantOutcome{Verdict: verdictNames[f.Verdict], Class: f.Class, Message: f.Message, Pause: f.Pause}
	if f.HasWait {
		w.WaitSeconds = f.Wait.Seconds()
	}
	return w
}

// Which providers take a second's requests in its first third: those that count requests per
// second, not the continuously refilled limit with its acceleration limits.
func TestWindowedRequests(t *testing.T) {
	for letter, want := range map[string]bool{"a": true, "b": false, "c": true} {
		d, ok := Lookup(letter)
		if !ok {
			t.Fatalf("provider %s is not registered", letter)
		}
		if d.WindowedRequests != want {
			t.Errorf("provider %s: WindowedRequests %v, want %v", letter, d.WindowedRequests, want)
		}
	}
}
