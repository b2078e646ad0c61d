package fakeprovider

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestSpecLoads(t *testing.T) {
	s := schemas(t)
	for _, k := range []string{"model", "messages", "tools", "tool_choice", "temperature", "top_p",
		"reasoning_effort", "seed", "max_completion_tokens", "prompt_cache_key", "parallel_tool_calls"} {
		if !s.topLevel[k] {
			t.Errorf("request property %q not found in the spec", k)
		}
	}
	if s.topLevel["api_key"] {
		t.Error("api_key must not be a request property")
	}
}

func TestNormaliseNullable(t *testing.T) {
	var doc any
	_ = json.Unmarshal([]byte(`{"properties":{"a":{"type":"integer","nullable":true},
	 "b":{"nullable":true,"oneOf":[{"type":"string"}]},
	 "c":{"type":"string","enum":["x"],"nullable":true},
	 "nullable":{"type":"string"}}}`), &doc)
	got, _ := json.Marshal(normaliseNullable(doc))
	want := `{"properties":{"a":{"type":["integer","null"]},` +
		`"b":{"anyOf":[{"type":"null"},{"oneOf":[{"type":"string"}]}]},` +
		`"c":{"enum":["x",null],"type":["string","null"]},"nullable":{"type":"string"}}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestValidRequestGetsToolCall(t *testing.T) {
	_, base := startServer(t, "")
	url := base + "/v1/chat/completions"
	r := postAnswered(t, url, "sk-test", chatBody("Title: A randomised trial", ""), schemas(t).response)
	m := r.json(t)
	if m["object"] != "chat.completion" || m["model"] != "gpt-6-luna-2026-09-22" {
		t.Errorf("object/model: %v %v", m["object"], m["model"])
	}
	if !strings.HasPrefix(m["id"].(string), "chatcmpl-") {
		t.Errorf("id %v", m["id"])
	}
	ch := m["choices"].([]any)[0].(map[string]any)
	msg := ch["message"].(map[string]any)
	if msg["content"] != nil || msg["refusal"] != nil {
		t.Errorf("content/refusal must be null: %v", msg)
	}
	if _, ok := msg["content"]; !ok {
		t.Error("content must be present (null)")
	}
	if ch["finish_reason"] != "stop" {
		t.Errorf("named tool_choice must finish with stop, got %v", ch["finish_reason"])
	}
	call := msg["tool_calls"].([]any)[0].(map[string]any)
	if call["type"] != "function" || !strings.HasPrefix(call["id"].(string), "call_") {
		t.Errorf("tool call %v", call)
	}
	if call["function"].(map[string]any)["name"] != "record_decision" {
		t.Errorf("name %v", call["function"])
	}
	args := toolArgs(t, r)
	if d := args["decision"]; d != "1" && d != "0" && d != "1.1" {
		t.Errorf("decision %v", d)
	}
	if c := args["confidence"].(float64); c < 0 || c > 1 {
		t.Errorf("confidence %v", c)
	}
	if k := args["rank"].(float64); k < 3 || k > 5 || k != float64(int(k)) {
		t.Errorf("rank %v", k)
	}
	if args["flag"] != false || args["reason"] == "" {
		t.Errorf("flag/reason %v", args)
	}
	u := m["usage"].(map[string]any)
	if u["prompt_tokens"].(float64) < 10 || u["total_tokens"].(float64) != u["prompt_tokens"].(float64)+u["completion_tokens"].(float64) {
		t.Errorf("usage %v", u)
	}
	if _, ok := u["prompt_tokens_details"].(map[string]any)["cached_tokens"]; !ok {
		t.Error("cached_tokens missing")
	}
	if _, ok := u["completion_tokens_details"].(map[string]any)["reasoning_tokens"]; !ok {
		t.Error("reasoning_tokens missing")
	}
	for _, h := range []string{"x-request-id", "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests",
		"x-ratelimit-reset-requests", "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens",
		"x-ratelimit-reset-tokens"} {
		if r.header.Get(h) == "" {
			t.Errorf("header %s missing", h)
		}
	}
	if reset := r.header.Get("x-ratelimit-reset-requests"); !strings.HasSuffix(reset, "s") {
		t.Errorf("reset-requests %q is not a duration", reset)
	}

	// tool_choice "required" / "auto": finish_reason tool_calls; the first function tool.
	body := strings.Replace(chatBody("x", ""), `{"type":"function","function":{"name":"record_decision"}}`, `"required"`, 1)
	r = post(t, url, "sk-test", body)
	if fr := r.json(t)["choices"].([]any)[0].(map[string]any)["finish_reason"]; fr != "tool_calls" {
		t.Errorf("finish_reason %v", fr)
	}
	// a dated model keeps its name
	r = post(t, url, "sk-test", strings.Replace(chatBody("x", ""), `"gpt-6-luna"`, `"gpt-4o-2024-08-06"`, 1))
	if m := r.json(t)["model"]; m != "gpt-4o-2024-08-06" {
		t.Errorf("model %v", m)
	}
	// any path ending in /chat/completions
	if r = post(t, base+"/openai/v1/chat/completions", "k", chatBody("x", "")); r.status != 200 {
		t.Errorf("other path: %d", r.status)
	}
}

func TestNamedToolAmongSeveral(t *testing.T) {
	_, base := startServer(t, "")
	other := `{"type":"function","function":{"name":"other_tool","parameters":{"type":"object",` +
		`"properties":{"level":{"type":"integer","enum":[7,8]}}}}}`
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + screenTool + `,` + other +
		`],"tool_choice":{"type":"function","function":{"name":"other_tool"}}}`
	r := post(t, base+"/v1/chat/completions", "k", body)
	args := toolArgs(t, r)
	if l := args["level"]; l != 7.0 && l != 8.0 {
		t.Errorf("level %v", l)
	}
	// tool_choice none: a text answer
	body = strings.Replace(body, `{"type":"function","function":{"name":"other_tool"}}`, `"none"`, 1)
	r = post(t, base+"/v1/chat/completions", "k", body)
	msg := r.json(t)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if _, has := msg["tool_calls"]; has || msg["content"] == nil {
		t.Errorf("tool_choice none: %v", msg)
	}
	validateAgainst(t, schemas(t).response, r.body)
}

func TestInvalidRequests(t *testing.T) {
	_, base := startServer(t, "")
	url := base + "/v1/chat/completions"
	valid := chatBody("x", "")
	replace := func(old, new string) string {
		if !strings.Contains(valid, old) {
			t.Fatalf("test bug: %q not in body", old)
		}
		return strings.Replace(valid, old, new, 1)
	}
	cases := []struct {
		name, body, param, contains string
	}{
		{"not JSON", `{"model":`, "", "could not parse the JSON body"},
		{"not an object", `[1]`, "", "expected an object"},
		{"no model", `{"messages":[{"role":"user","content":"x"}]}`, "model", "Missing required parameter"},
		{"empty model", `{"model":"","messages":[{"role":"user","content":"x"}]}`, "", "provide a model"},
		{"no messages", `{"model":"m"}`, "messages", "Missing required parameter"},
		{"empty messages", `{"model":"m","messages":[]}`, "messages", "empty array"},
		{"content number", `{"model":"m","messages":[{"role":"user","content":5}]}`, "messages[0].content",
			"expected one of a string or an array"},
		{"bad role", `{"model":"m","messages":[{"role":"usr","content":"x"}]}`, "messages[0].role", "'usr'"},
		{"missing content", `{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content", "Missing"},
		{"bad part", `{"model":"m","messages":[{"role":"user","content":[{"type":"txt","text":"x"}]}]}`,
			"messages[0].content[0].type", "'txt'"},
		{"unknown field", replace(`"reasoning_effort":"none"`, `"reasoning_effort":"none","api_key":"sk"`), "",
			"Unrecognized request argument supplied: api_key"},
		{"bad reasoning_effort", replace(`"reasoning_effort":"none"`, `"reasoning_effort":"tiny"`),
			"reasoning_effort", "Supported values"},
		{"temperature too high", replace(`"reasoning_effort":"none"`, `"temperature":2.5`), "temperature",
			"above maximum"},
		{"top_p string", replace(`"reasoning_effort":"none"`, `"top_p":"1"`), "top_p", "Invalid type"},
		{"seed not integer", replace(`"reasoning_effort":"none"`, `"seed":1.5`), "seed", ""},
		{"tool without function", replace(screenTool, `{"type":"function"}`), "tools[0].function", "Missing"},
		{"strict tool, property not required", replace(`"required":["decision","reason","confidence","rank","flag"]`,
			`"required":["decision","reason","confidence","rank"]`), "tools[0].function.parameters",
			"Missing 'flag'"},
		{"strict tool, additionalProperties true", replace(`"additionalProperties":false`,
			`"additionalProperties":true`), "tools[0].function.parameters", "'additionalProperties' is required"},
		{"strict tool, additionalProperties missing", replace(`,"additionalProperties":false`, ``),
			"tools[0].function.parameters", "In context=()"},
		{"parameters not an object schema", replace(`"parameters":{"type":"object",`, `"parameters":{"type":"array",`),
			"tools[0].function.parameters", `type: "object"`},
		{"bad function name", replace(`"name":"record_decision","description"`, `"name":"record decision","description"`),
			"tools[0].function.name", "pattern"},
		{"tool_choice names no tool", replace(`{"name":"record_decision"}}`, `{"name":"other"}}`), "tool_choice",
			"'other'"},
		{"tool_choice without tools", `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"auto"}`,
			"tool_choice", "only allowed when 'tools'"},
		{"parallel_tool_calls without tools", `{"model":"m","messages":[{"role":"user","content":"x"}],` +
			`"parallel_tool_calls":false}`, "parallel_tool_calls", "only allowed when 'tools'"},
		{"bad tool_choice string", replace(`{"type":"function","function":{"name":"record_decision"}}`, `"any"`),
			"tool_choice", ""},
		{"stream", replace(`"reasoning_effort":"none"`, `"stream":true`), "stream", "streaming"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := post(t, url, "sk-test", c.body)
			if r.status != 400 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			validateAgainst(t, schemas(t).errorRes, r.body)
			e := r.errorOf(t)
			if e["type"] != "invalid_request_error" {
				t.Errorf("type %v", e["type"])
			}
			if c.param == "" && e["param"] != nil && c.contains != "" {
				t.Errorf("param %v, want null", e["param"])
			}
			if c.param != "" && e["param"] != c.param {
				t.Errorf("param %v, want %s (%s)", e["param"], c.param, e["message"])
			}
			if !strings.Contains(e["message"].(string), c.contains) {
				t.Errorf("message %q lacks %q", e["message"], c.contains)
			}
		})
	}
}

func TestNullableFieldsAccepted(t *testing.T) {
	_, base := startServer(t, "")
	body := chatBody("x", `"max_completion_tokens":null,"seed":null,"stop":null,"temperature":null,`+
		`"top_p":0.5,"n":null,"store":null,"prompt_cache_key":"k","service_tier":"default",`+
		`"verbosity":"low","metadata":{"a":"b"},"max_tokens":100`)
	if r := post(t, base+"/v1/chat/completions", "k", body); r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	// array content with text parts
	body = `{"model":"m","messages":[{"role":"developer","content":[{"type":"text","text":"a"}]},` +
		`{"role":"user","content":[{"type":"text","text":"b"}]}],"tools":[` + screenTool + `]}`
	if r := post(t, base+"/v1/chat/completions", "k", body); r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
}

func TestUnknownFieldsAllowedWhenConfigured(t *testing.T) {
	_, base := startServer(t, `{"allow_unknown_fields":true}`)
	if r := post(t, base+"/v1/chat/completions", "k", chatBody("x", `"custom_thing":1`)); r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
}

func TestAuth(t *testing.T) {
	_, base := startServer(t, `{"invalid_keys":["sk-revoked-0123456789"]}`)
	url := base + "/v1/chat/completions"
	r := post(t, url, "", chatBody("x", ""))
	if r.status != 401 {
		t.Fatalf("no key: %d", r.status)
	}
	validateAgainst(t, schemas(t).errorRes, r.body)
	r = post(t, url, "sk-revoked-0123456789", chatBody("x", ""))
	if r.status != 401 || r.errorOf(t)["code"] != "invalid_api_key" {
		t.Fatalf("invalid key: %d %s", r.status, r.body)
	}
	if strings.Contains(string(r.body), "revoked-0123") {
		t.Errorf("key echoed unmasked: %s", r.body)
	}
	// not Bearer
	req := `{"model":"m","messages":[{"role":"user","content":"x"}]}`
	r = postWith(testClient, url, "", req)
	if r.status != 401 {
		t.Errorf("status %d", r.status)
	}
	if r = post(t, url, "sk-ok", req); r.status != 200 {
		t.Errorf("valid key: %d", r.status)
	}
	st := stats(t, base)
	if st.Unauthorized != 3 || st.ByStatus["401"] != 3 || st.Valid != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestContentTypeAndMethod(t *testing.T) {
	_, base := startServer(t, "")
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(chatBody("x", "")))
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Content-Type", "text/plain")
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("text/plain: %d", resp.StatusCode)
	}
	expectGetStatus(t, base+"/v1/chat/completions", 405)
	expectGetStatus(t, base+"/v1/models", 404) // an unknown path
}

func TestMultipleChoices(t *testing.T) {
	_, base := startServer(t, "")
	r := post(t, base+"/v1/chat/completions", "k", chatBody("x", `"n":3`))
	if n := len(r.json(t)["choices"].([]any)); n != 3 {
		t.Errorf("choices %d", n)
	}
	validateAgainst(t, schemas(t).response, r.body)
}
