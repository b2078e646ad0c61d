package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

type mistralTestSchemas struct {
	*mistralSchemas
	response *jsonschema.Schema // ChatCompletionResponse without its spurious "data" requirement
}

var loadMistralTestSchemas = sync.OnceValues(func() (*mistralTestSchemas, error) {
	s, err := loadMistralSchemas()
	if err != nil {
		return nil, err
	}
	// The published ChatCompletionResponse requires a "data" property that no
	// response has (and that the schema does not define); see spec/README.md.
	var doc any
	doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(mustJSON(s.doc)))
	if err != nil {
		return nil, err
	}
	part := jsonPointer(doc, "/components/schemas/ChatCompletionResponse/allOf/1").(map[string]any)
	var req []any
	for _, r := range part["required"].([]any) {
		if r != "data" {
			req = append(req, r)
		}
	}
	part["required"] = req
	resp, err := compileMistral(doc, "ChatCompletionResponse")
	if err != nil {
		return nil, err
	}
	return &mistralTestSchemas{mistralSchemas: s, response: resp}, nil
})

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func mistralSpec(t testing.TB) *mistralTestSchemas {
	t.Helper()
	s, err := loadMistralTestSchemas()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mistralBody returns a valid Mistral request; fields in extra replace or
// add top-level fields (null removes one).
func mistralBody(t testing.TB, user, extra string) string {
	t.Helper()
	base := `{"model":"mistral-small-latest","messages":[{"role":"system","content":"You screen records."},
	 {"role":"user","content":` + quoteJSON(user) + `}],"tools":[` + screenTool + `],
	 "tool_choice":{"type":"function","function":{"name":"record_decision"}},"parallel_tool_calls":false,
	 "reasoning_effort":"none","temperature":0,"random_seed":42,"max_tokens":300}`
	return patchedBody(t, base, extra)
}

func mistralURL(base string) string { return base + "/mistral/v1/chat/completions" }

func mistralMessage(t testing.TB, r reply) (map[string]any, string) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	ch := r.json(t)["choices"].([]any)[0].(map[string]any)
	return ch["message"].(map[string]any), ch["finish_reason"].(string)
}

func mistralArgs(t testing.TB, msg map[string]any) map[string]any {
	t.Helper()
	call := msg["tool_calls"].([]any)[0].(map[string]any)
	var out map[string]any
	switch a := call["function"].(map[string]any)["arguments"].(type) {
	case string:
		if err := json.Unmarshal([]byte(a), &out); err != nil {
			t.Fatalf("arguments %q: %v", a, err)
		}
	case map[string]any:
		out = a
	}
	return out
}

func TestMistralSpecLoads(t *testing.T) {
	s := mistralSpec(t)
	for _, k := range []string{"model", "messages", "tools", "tool_choice", "random_seed", "reasoning_effort",
		"max_tokens", "parallel_tool_calls", "prompt_mode", "response_format"} {
		if !s.topLevel[k] {
			t.Errorf("request property %q not in the spec", k)
		}
	}
	for _, k := range []string{"seed", "max_completion_tokens", "verbosity"} {
		if s.topLevel[k] {
			t.Errorf("%q must not be a request property", k)
		}
	}
}

func TestMistralValidRequest(t *testing.T) {
	_, base := startServer(t, "")
	url := mistralURL(base)
	r := postAnswered(t, url, "mistral-key", mistralBody(t, "Title: A randomised trial", ""), mistralSpec(t).response)
	m := r.json(t)
	if m["object"] != "chat.completion" || m["model"] != "mistral-small-latest" {
		t.Errorf("object/model: %v %v", m["object"], m["model"])
	}
	if id, _ := m["id"].(string); len(id) != 32 {
		t.Errorf("id %v", m["id"])
	}
	msg, finish := mistralMessage(t, r)
	if finish != "tool_calls" || msg["content"] != "" || msg["role"] != "assistant" {
		t.Errorf("message %v finish %s", msg, finish)
	}
	call := msg["tool_calls"].([]any)[0].(map[string]any)
	if call["type"] != "function" || len(call["id"].(string)) != 9 || call["index"] != 0.0 {
		t.Errorf("call %v", call)
	}
	if _, isString := call["function"].(map[string]any)["arguments"].(string); !isString {
		t.Errorf("arguments must be a JSON string by default: %v", call)
	}
	args := mistralArgs(t, msg)
	if d := args["decision"]; d != "1" && d != "0" && d != "1.1" {
		t.Errorf("decision %v", d)
	}
	if k := args["rank"].(float64); k < 3 || k > 5 || k != float64(int(k)) {
		t.Errorf("rank %v", k)
	}
	u := m["usage"].(map[string]any)
	if u["total_tokens"].(float64) != u["prompt_tokens"].(float64)+u["completion_tokens"].(float64) {
		t.Errorf("usage %v", u)
	}
	for _, h := range []string{"x-kong-request-id", "x-ratelimit-limit-req-minute", "x-ratelimit-remaining-req-minute",
		"x-ratelimit-limit-tokens-minute", "x-ratelimit-remaining-tokens-minute"} {
		if r.header.Get(h) == "" {
			t.Errorf("header %s missing", h)
		}
	}
	// random_seed: the same seed gives the same arguments
	r2 := post(t, url, "k", mistralBody(t, "Title: A randomised trial", ""))
	msg2, _ := mistralMessage(t, r2)
	if a, b := mustJSON(mistralArgs(t, msg)), mustJSON(mistralArgs(t, msg2)); !bytes.Equal(a, b) {
		t.Errorf("same random_seed, other arguments: %s %s", a, b)
	}
	// tool_choice "any" / "required" / absent; tool type omitted (default "function")
	for _, extra := range []string{`"tool_choice":"any"`, `"tool_choice":"required"`, `"tool_choice":null`,
		`"tool_choice":"auto","tools":[{"function":{"name":"record_decision","parameters":{"type":"object",
		 "properties":{"decision":{"type":"string","enum":["1","0"]}}}}}]`} {
		r = post(t, url, "k", mistralBody(t, "x", extra))
		validateAgainst(t, mistralSpec(t).response, r.body)
		if msg, finish := mistralMessage(t, r); finish != "tool_calls" || mistralArgs(t, msg)["decision"] == nil {
			t.Errorf("%s: %s", extra, r.body)
		}
	}
	// tool_choice "none": text
	r = post(t, url, "k", mistralBody(t, "x", `"tool_choice":"none"`))
	if msg, finish := mistralMessage(t, r); finish != "stop" || msg["tool_calls"] != nil || msg["content"] == "" {
		t.Errorf("none: %s", r.body)
	}
	// high reasoning effort: the content is a list of chunks, thinking first
	r = post(t, url, "k", mistralBody(t, "x", `"reasoning_effort":"high"`))
	validateAgainst(t, mistralSpec(t).response, r.body)
	msg, _ = mistralMessage(t, r)
	if chunks, ok := msg["content"].([]any); !ok || chunks[0].(map[string]any)["type"] != "thinking" {
		t.Errorf("high effort content %v", msg["content"])
	}
	// n
	r = post(t, url, "k", mistralBody(t, "x", `"n":2`))
	if n := len(r.json(t)["choices"].([]any)); n != 2 {
		t.Errorf("choices %d", n)
	}
	// arguments as an object when configured
	configure(t, base, `{"mistral_args_as_object":true}`)
	r = post(t, url, "k", mistralBody(t, "x", ""))
	validateAgainst(t, mistralSpec(t).response, r.body)
	msg, _ = mistralMessage(t, r)
	if _, isObj := msg["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"].(map[string]any); !isObj {
		t.Errorf("arguments not an object: %s", r.body)
	}
	// provider A still answers at its own URL, with its own shape
	r = post(t, base+"/v1/chat/completions", "k", chatBody("x", ""))
	validateAgainst(t, schemas(t).response, r.body)
	st := stats(t, base)
	if st.ByProtocol["mistral"].Answered < 9 || st.ByProtocol["openai"].Answered != 1 ||
		st.ByProtocol["anthropic"].RequestsTotal != 0 {
		t.Errorf("by_protocol %+v", st.ByProtocol)
	}
}

// detailOf checks a FastAPI 422 and returns its detail list.
func detailOf(t testing.TB, r reply) []map[string]any {
	t.Helper()
	if r.status != 422 {
		t.Fatalf("status %d, want 422: %s", r.status, r.body)
	}
	validateAgainst(t, mistralSpec(t).errorRes, r.body)
	var out []map[string]any
	list, _ := r.json(t)["detail"].([]any)
	for _, d := range list {
		out = append(out, d.(map[string]any))
	}
	if len(out) == 0 {
		t.Fatalf("no detail: %s", r.body)
	}
	return out
}

func locString(d map[string]any) string {
	var parts []string
	for _, p := range d["loc"].([]any) {
		parts = append(parts, fmt.Sprint(p))
	}
	return strings.Join(parts, ".")
}

func TestMistralValidation(t *testing.T) {
	_, base := startServer(t, "")
	url := mistralURL(base)
	// OpenAI-only fields: one extra_forbidden entry each
	d := detailOf(t, post(t, url, "k", mistralBody(t, "x", `"seed":7,"max_completion_tokens":300,"verbosity":"low"`)))
	if len(d) != 3 {
		t.Fatalf("detail %v", d)
	}
	got := map[string]any{}
	for _, e := range d {
		if e["type"] != "extra_forbidden" || e["msg"] != "Extra inputs are not permitted" {
			t.Errorf("entry %v", e)
		}
		got[locString(e)] = e["input"]
	}
	if got["body.seed"] != 7.0 || got["body.max_completion_tokens"] != 300.0 || got["body.verbosity"] != "low" {
		t.Errorf("locs/inputs %v", got)
	}
	cases := []struct{ name, extra, loc, typ string }{
		{"temperature type", `"temperature":"hot"`, "body.temperature", "float_type"},
		{"temperature range", `"temperature":2`, "body.temperature", "less_than_equal"},
		{"top_p zero", `"top_p":0`, "body.top_p", "greater_than"},
		{"random_seed float", `"random_seed":1.5`, "body.random_seed", "int_from_float"},
		{"random_seed negative", `"random_seed":-1`, "body.random_seed", "greater_than_equal"},
		{"tool_choice value", `"tool_choice":"sometimes"`, "body.tool_choice", "enum"},
		{"reasoning_effort value", `"reasoning_effort":"max"`, "body.reasoning_effort", "enum"},
		{"no model", `"model":null`, "body.model", "missing"},
		{"user name", `"messages":[{"role":"user","content":"x","name":"n"}]`, "body.messages.0.name", "extra_forbidden"},
		{"reasoning_content", `"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"",
		 "reasoning_content":"r"},{"role":"user","content":"y"}]`, "body.messages.1.reasoning_content", "extra_forbidden"},
		{"tool without parameters", `"tools":[{"type":"function","function":{"name":"record_decision"}}]`,
			"body.tools.0.function.parameters", "missing"},
		{"tool_choice object", `"tool_choice":{"type":"function","function":{"name":"record_decision"},"x":1}`,
			"body.tool_choice.x", "extra_forbidden"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := detailOf(t, post(t, url, "k", mistralBody(t, "x", c.extra)))
			found := false
			for _, e := range d {
				found = found || locString(e) == c.loc && e["type"] == c.typ
			}
			if !found {
				t.Errorf("no %s at %s in %v", c.typ, c.loc, d)
			}
		})
	}
	// not JSON, not an object
	if d := detailOf(t, post(t, url, "k", `{"model":`)); d[0]["type"] != "json_invalid" {
		t.Errorf("bad JSON: %v", d)
	}
	if d := detailOf(t, post(t, url, "k", `[1]`)); d[0]["type"] != "model_attributes_type" {
		t.Errorf("array body: %v", d)
	}
	// reasoning_effort on models that reject it: a 422 in the error-object shape
	for _, model := range []string{"ministral-8b-latest", "mistral-large-latest"} {
		r := post(t, url, "k", mistralBody(t, "x", `"model":"`+model+`"`))
		if r.status != 422 || r.json(t)["object"] != "error" || r.json(t)["param"] != "reasoning_effort" {
			t.Errorf("%s: %d %s", model, r.status, r.body)
		}
		if r := post(t, url, "k", mistralBody(t, "x", `"model":"`+model+`","reasoning_effort":null`)); r.status != 200 {
			t.Errorf("%s without reasoning_effort: %d %s", model, r.status, r.body)
		}
	}
	configure(t, base, `{"mistral_no_reasoning_effort":[]}`)
	if r := post(t, url, "k", mistralBody(t, "x", `"model":"ministral-8b-latest"`)); r.status != 200 {
		t.Errorf("after configuring: %d", r.status)
	}
	configure(t, base, `{"allow_unknown_fields":true}`)
	if r := post(t, url, "k", mistralBody(t, "x", `"seed":7`)); r.status != 200 {
		t.Errorf("allow_unknown_fields: %d %s", r.status, r.body)
	}
	configure(t, base, `{"allow_unknown_fields":false}`)
	// 400s from the service's own checks
	for _, extra := range []string{
		`"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"{"}]`,
		`"tool_choice":{"type":"function","function":{"name":"other"}}`,
		`"stream":true`,
		`"messages":[]`,
	} {
		r := post(t, url, "k", mistralBody(t, "x", extra))
		if r.status != 400 || r.json(t)["object"] != "error" || r.json(t)["type"] != "invalid_request_error" {
			t.Errorf("%s: %d %s", extra, r.status, r.body)
		}
	}
	// prefix: true allows a final assistant message
	if r := post(t, url, "k", mistralBody(t, "x", `"messages":[{"role":"user","content":"x"},
	 {"role":"assistant","content":"{","prefix":true}]`)); r.status != 200 {
		t.Errorf("prefix: %d %s", r.status, r.body)
	}
	// authentication and unknown paths
	if r := post(t, url, "", mistralBody(t, "x", "")); r.status != 401 || r.json(t)["message"] != "Unauthorized" {
		t.Errorf("no key: %d %s", r.status, r.body)
	}
	if r := post(t, base+"/mistral/v1/models", "k", "{}"); r.status != 404 || r.json(t)["detail"] != "Not Found" {
		t.Errorf("404: %d %s", r.status, r.body)
	}
}

func TestMistralFaults(t *testing.T) {
	s, base := startServer(t, `{"retry_after_ms":1500}`)
	url := mistralURL(base)
	type check = faultCheck
	errorWith := func(status int, typ string, retry bool) check {
		return func(t *testing.T, r reply) {
			if r.err != nil || r.status != status {
				t.Fatalf("status %d (want %d) err %v: %s", r.status, status, r.err, r.body)
			}
			if m := r.json(t); m["object"] != "error" || m["type"] != typ {
				t.Errorf("body %s", r.body)
			}
			if got := r.header.Get("Retry-After"); (got != "") != retry || retry && got != "2" {
				t.Errorf("Retry-After %q, want present=%v", got, retry)
			}
		}
	}
	gateway := func(status int) check {
		return func(t *testing.T, r reply) {
			if r.status != status || r.json(t)["message"] == nil {
				t.Errorf("%d: %s", r.status, r.body)
			}
		}
	}
	ok200 := answered
	cases := map[string]check{
		FaultRateLimit: func(t *testing.T, r reply) {
			errorWith(429, "rate_limited", true)(t, r)
			if r.header.Get("x-ratelimit-limit-req-minute") == "0" {
				t.Error("a rate limit must not look like a missing allowance")
			}
		},
		FaultQuota: func(t *testing.T, r reply) {
			errorWith(429, "rate_limited", false)(t, r)
			if r.header.Get("x-ratelimit-limit-req-minute") != "0" {
				t.Errorf("quota: limit header %q", r.header.Get("x-ratelimit-limit-req-minute"))
			}
		},
		Fault500: errorWith(500, "server_error", false),
		Fault503: errorWith(503, "service_tier_capacity_exceeded", false),
		Fault529: errorWith(503, "service_tier_capacity_exceeded", false), // Anthropic's kind: a 503 here
		Fault502: gateway(502),
		Fault504: gateway(504),
		FaultFinishError: ok200(func(t *testing.T, r reply) {
			validateAgainst(t, mistralSpec(t).response, r.body)
			if msg, finish := mistralMessage(t, r); finish != "error" || msg["tool_calls"] != nil {
				t.Errorf("finish_error: %s", r.body)
			}
		}),
		FaultMalformed: ok200(func(t *testing.T, r reply) {
			if json.Valid(r.body) {
				t.Errorf("malformed body is valid JSON: %s", r.body)
			}
		}),
		FaultNoTool: ok200(func(t *testing.T, r reply) {
			validateAgainst(t, mistralSpec(t).response, r.body)
			if msg, finish := mistralMessage(t, r); finish != "stop" || msg["tool_calls"] != nil || msg["content"] == "" {
				t.Errorf("no_tool: %s", r.body)
			}
		}),
		FaultBadArgs: ok200(func(t *testing.T, r reply) {
			validateAgainst(t, mistralSpec(t).response, r.body)
			msg, _ := mistralMessage(t, r)
			a := msg["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"].(string)
			if json.Valid([]byte(a)) {
				t.Errorf("bad_args arguments are valid JSON: %s", a)
			}
		}),
		FaultBadEnum: ok200(func(t *testing.T, r reply) {
			msg, _ := mistralMessage(t, r)
			if d := mistralArgs(t, msg)["decision"]; d != "2" {
				t.Errorf("bad_enum decision %v", d)
			}
		}),
	}
	body := mistralBody(t, "x", "")
	for kind, chk := range cases {
		t.Run(kind, func(t *testing.T) {
			configure(t, base, `{"fail_first_n":{"kind":"`+kind+`","n":1}}`)
			chk(t, post(t, url, "k", body))
			if r := post(t, url, "k", body); r.status != 200 {
				t.Errorf("next request: %d", r.status)
			}
		})
	}
	st := s.Stats()
	if st.ByFault[FaultFinishError] != 1 || st.ByFault[Fault529] != 0 || st.ByFault[Fault503] != 2 {
		t.Errorf("by_fault %v", st.ByFault)
	}
	// the rate limiter's refusal
	configure(t, base, `{"rpm":60}`)
	post(t, url, "k", body)
	r := post(t, url, "k", body)
	if r.status != 429 || r.json(t)["type"] != "rate_limited" || r.header.Get("Retry-After") == "" {
		t.Errorf("refusal: %d %v %s", r.status, r.header, r.body)
	}
	if r.header.Get("x-ratelimit-limit-req-minute") != "60" {
		t.Errorf("limit header %q", r.header.Get("x-ratelimit-limit-req-minute"))
	}
}

// A body with an unknown field, answered while allow_unknown_fields trims it, is refused once the
// setting is off: what was found valid then was the trimmed body, not the one sent.
func TestMistralUnknownFieldAfterAllowing(t *testing.T) {
	_, base := startServer(t, `{"allow_unknown_fields":true}`)
	url := base + "/mistral/v1/chat/completions"
	body := mistralBody(t, "x", `"seed":7`)
	for i := 0; i < 2; i++ {
		if r := post(t, url, "k", body); r.status != 200 {
			t.Fatalf("allowed: %d %s", r.status, r.body)
		}
	}
	configure(t, base, `{"allow_unknown_fields":false}`)
	if r := post(t, url, "k", body); r.status != 422 {
		t.Errorf("not allowed: %d %s", r.status, r.body)
	}
	configure(t, base, `{"allow_unknown_fields":true}`)
	if r := post(t, url, "k", body); r.status != 200 {
		t.Errorf("allowed again: %d %s", r.status, r.body)
	}
}
