package fakeprovider

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// startServer starts a fake on a free loopback port with cfg patched by
// patch (JSON, may be ""), and stops it at the end of the test.
func startServer(t testing.TB, patch string) (*Server, string) {
	t.Helper()
	cfg := DefaultConfig()
	if patch != "" {
		var err error
		if cfg, err = cfg.Merge([]byte(patch)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(5 * time.Second); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s, "http://" + addr.String()
}

type reply struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON (%v): %s", err, r.body)
	}
	return m
}

// errorOf returns the "error" object of an OpenAI error body.
func (r reply) errorOf(t testing.TB) map[string]any {
	t.Helper()
	e, ok := r.json(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %s", r.body)
	}
	return e
}

var testClient = &http.Client{Timeout: 10 * time.Second}

func post(t testing.TB, url, key, body string) reply {
	t.Helper()
	return postWith(testClient, url, key, body)
}

func postWith(c *http.Client, url, key, body string) reply {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

func getJSON(t testing.TB, url string, v any) {
	t.Helper()
	resp, err := testClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func stats(t testing.TB, base string) Stats {
	t.Helper()
	var s Stats
	getJSON(t, base+"/_fake/stats", &s)
	return s
}

func configure(t testing.TB, base, patch string) {
	t.Helper()
	resp, err := testClient.Post(base+"/_fake/config", "application/json", strings.NewReader(patch))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("configure %s: %d %s", patch, resp.StatusCode, b)
	}
}

// A tool like a screening client would send; the fake must not rely on its names.
const screenTool = `{"type":"function","function":{"name":"record_decision","description":"Record it.",
 "strict":true,"parameters":{"type":"object","properties":{
  "decision":{"type":"string","enum":["1","0","1.1"]},
  "reason":{"type":"string","maxLength":200},
  "confidence":{"type":"number","minimum":0,"maximum":1},
  "rank":{"type":"integer","minimum":3,"maximum":5},
  "flag":{"type":"boolean"}},
 "required":["decision","reason","confidence","rank","flag"],"additionalProperties":false}}}`

// chatBody returns a valid request for user text (extra is spliced into the object).
func chatBody(user, extra string) string {
	b := `{"model":"gpt-6-luna","messages":[{"role":"system","content":"You screen records."},` +
		`{"role":"user","content":` + quoteJSON(user) + `}],"tools":[` + screenTool + `],` +
		`"tool_choice":{"type":"function","function":{"name":"record_decision"}},` +
		`"reasoning_effort":"none","parallel_tool_calls":false`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// toolArgs returns the parsed arguments of the first tool call of a 200 answer.
func toolArgs(t testing.TB, r reply) map[string]any {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	m := r.json(t)
	call := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["tool_calls"].([]any)[0]
	args := call.(map[string]any)["function"].(map[string]any)["arguments"].(string)
	var out map[string]any
	if err := json.Unmarshal([]byte(args), &out); err != nil {
		t.Fatalf("arguments %q: %v", args, err)
	}
	return out
}

var loadTestSchemas = sync.OnceValues(loadOpenAISchemas)

func schemas(t testing.TB) *openAISchemas {
	t.Helper()
	s, err := loadTestSchemas()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateAgainst(t testing.TB, sch *jsonschema.Schema, body []byte) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("not JSON: %v: %s", err, body)
	}
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("does not match the schema: %v\n%s", err, body)
	}
}

// patchedBody is the JSON object base with the members of extra (a JSON object's members, without
// the braces) replacing or adding top-level fields; a null removes one.
func patchedBody(t testing.TB, base, extra string) string {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal([]byte(base), &body); err != nil {
		t.Fatal(err)
	}
	if extra != "" {
		var patch map[string]any
		if err := json.Unmarshal([]byte("{"+extra+"}"), &patch); err != nil {
			t.Fatalf("extra %s: %v", extra, err)
		}
		for k, v := range patch {
			if v == nil {
				delete(body, k)
			} else {
				body[k] = v
			}
		}
	}
	return string(mustJSON(body))
}

// faultCheck checks the reply to a request that met an injected fault.
type faultCheck func(t *testing.T, r reply)

// answered checks a 200 answer, then checks it further with f.
func answered(f func(t *testing.T, r reply)) faultCheck {
	return func(t *testing.T, r reply) {
		if r.err != nil || r.status != 200 {
			t.Fatalf("status %d err %v: %s", r.status, r.err, r.body)
		}
		f(t, r)
	}
}

// htmlBadGateway is the 502 every protocol's proxy sends, and dropped a connection closed without
// a response.
func htmlBadGateway(t *testing.T, r reply) {
	if r.status != 502 || !strings.Contains(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("502: %d %s", r.status, r.header.Get("Content-Type"))
	}
}

func dropped(t *testing.T, r reply) {
	if r.err == nil {
		t.Errorf("drop: got a response %d", r.status)
	}
}

// postAnswered posts a valid request and checks that the answer is a 200 valid against schema.
func postAnswered(t *testing.T, url, key, body string, schema *jsonschema.Schema) reply {
	t.Helper()
	r := post(t, url, key, body)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	validateAgainst(t, schema, r.body)
	return r
}

// expectGetStatus checks the status of a GET of url.
func expectGetStatus(t testing.TB, url string, want int) {
	t.Helper()
	resp, err := testClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Errorf("GET %s: %d, want %d", url, resp.StatusCode, want)
	}
}
