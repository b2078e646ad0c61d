package fakeprovider

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// postHeaders posts body with Content-Type JSON and the given headers.
func postHeaders(t testing.TB, url string, headers map[string]string, body string) reply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

var anthropicHeaders = map[string]string{"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}

func postAnthropic(t testing.TB, base, body string) reply {
	t.Helper()
	return postHeaders(t, base+"/v1/messages", anthropicHeaders, body)
}

// An Anthropic tool like a screening client would send.
const anthropicTool = `{"name":"record_decision","description":"Record it.","strict":true,
 "input_schema":{"type":"object","properties":{
  "decision":{"type":"string","enum":["1","0","1.1"]},
  "reason":{"type":"string","maxLength":200},
  "confidence":{"type":"integer","minimum":0,"maximum":100},
  "rank":{"type":"integer","minimum":3,"maximum":5}},
 "required":["decision","reason","confidence","rank"],"additionalProperties":false}}`

// anthropicBody returns a valid Messages request; fields in extra (a JSON
// object's members) replace or add top-level fields.
func anthropicBody(t testing.TB, user, extra string) string {
	t.Helper()
	base := `{"model":"claude-haiku-5-5","max_tokens":1024,"system":"You screen records.",
	 "messages":[{"role":"user","content":` + quoteJSON(user) + `}],"tools":[` + anthropicTool + `],
	 "tool_choice":{"type":"tool","name":"record_decision","disable_parallel_tool_use":true},
	 "thinking":{"type":"disabled"},"output_config":{"effort":"low"}}`
	return patchedBody(t, base, extra)
}

// anthropicError checks an error answer's status and shape and returns its error object.
func anthropicError(t testing.TB, r reply, status int, typ string) map[string]any {
	t.Helper()
	if r.err != nil || r.status != status {
		t.Fatalf("status %d (want %d) err %v: %s", r.status, status, r.err, r.body)
	}
	m := r.json(t)
	e, _ := m["error"].(map[string]any)
	if m["type"] != "error" || e == nil || e["type"] != typ {
		t.Fatalf("error shape/type (want %s): %s", typ, r.body)
	}
	if id, _ := m["request_id"].(string); !strings.HasPrefix(id, "req_") || id != r.header.Get("request-id") {
		t.Errorf("request_id %v, header %q", m["request_id"], r.header.Get("request-id"))
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Error("empty message")
	}
	return e
}

func contentBlocks(t testing.TB, r reply) []map[string]any {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var out []map[string]any
	for _, b := range r.json(t)["content"].([]any) {
		out = append(out, b.(map[string]any))
	}
	return out
}

func TestAnthropicValidRequest(t *testing.T) {
	_, base := startServer(t, "")
	r := postAnthropic(t, base, anthropicBody(t, "Title: A randomised trial", ""))
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	m := r.json(t)
	if m["type"] != "message" || m["role"] != "assistant" || m["model"] != "claude-haiku-5-5" ||
		m["stop_reason"] != "tool_use" || m["stop_sequence"] != nil {
		t.Errorf("message %s", r.body)
	}
	if _, ok := m["stop_sequence"]; !ok {
		t.Error("stop_sequence must be present (null)")
	}
	if !strings.HasPrefix(m["id"].(string), "msg_") {
		t.Errorf("id %v", m["id"])
	}
	blocks := contentBlocks(t, r)
	if len(blocks) != 1 || blocks[0]["type"] != "tool_use" {
		t.Fatalf("thinking disabled: one tool_use block expected: %s", r.body)
	}
	call := blocks[0]
	if call["name"] != "record_decision" || !strings.HasPrefix(call["id"].(string), "toolu_") {
		t.Errorf("tool_use %v", call)
	}
	args := call["input"].(map[string]any)
	if d := args["decision"]; d != "1" && d != "0" && d != "1.1" {
		t.Errorf("decision %v", d)
	}
	if c := args["confidence"].(float64); c < 0 || c > 100 || c != float64(int(c)) {
		t.Errorf("confidence %v", c)
	}
	if k := args["rank"].(float64); k < 3 || k > 5 || k != float64(int(k)) {
		t.Errorf("rank %v", k)
	}
	u := m["usage"].(map[string]any)
	for _, k := range []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} {
		if _, ok := u[k].(float64); !ok {
			t.Errorf("usage.%s missing: %v", k, u)
		}
	}
	if u["input_tokens"].(float64) < 10 || u["output_tokens"].(float64) < 1 {
		t.Errorf("usage %v", u)
	}
	if r.header.Get("request-id") == "" || r.header.Get("x-request-id") != "" {
		t.Errorf("request id headers: %v", r.header)
	}
	for _, kind := range []string{"requests", "tokens", "input-tokens", "output-tokens"} {
		for _, part := range []string{"limit", "remaining", "reset"} {
			h := "anthropic-ratelimit-" + kind + "-" + part
			v := r.header.Get(h)
			if v == "" {
				t.Errorf("header %s missing", h)
			}
			if part == "reset" {
				if _, err := time.Parse(time.RFC3339, v); err != nil {
					t.Errorf("%s %q is not RFC 3339", h, v)
				}
			}
		}
	}

	// thinking on (absent thinking on a thinking-by-default model, tool_choice auto):
	// a thinking block precedes the call
	r = postAnthropic(t, base, anthropicBody(t, "x", `"model":"claude-sonnet-5-5","thinking":null,
	 "tool_choice":{"type":"auto","disable_parallel_tool_use":true}`))
	blocks = contentBlocks(t, r)
	if len(blocks) != 2 || blocks[0]["type"] != "thinking" || blocks[1]["type"] != "tool_use" {
		t.Fatalf("blocks %s", r.body)
	}
	if th, ok := blocks[0]["thinking"].(string); !ok || th != "" || blocks[0]["signature"] == "" {
		t.Errorf("thinking block %v", blocks[0])
	}
	// adaptive thinking on an older model, no tool_choice: a call anyway
	r = postAnthropic(t, base, anthropicBody(t, "x", `"model":"claude-haiku-4-5","thinking":{"type":"adaptive"},
	 "tool_choice":null`))
	if blocks = contentBlocks(t, r); len(blocks) != 2 || blocks[1]["type"] != "tool_use" {
		t.Errorf("adaptive: %s", r.body)
	}
	// tool_choice none: a text answer
	r = postAnthropic(t, base, anthropicBody(t, "x", `"tool_choice":{"type":"none"}`))
	if blocks = contentBlocks(t, r); blocks[len(blocks)-1]["type"] != "text" || r.json(t)["stop_reason"] != "end_turn" {
		t.Errorf("none: %s", r.body)
	}
	// max_tokens as an integral float, content as blocks, a prefill on an older model
	r = postAnthropic(t, base, anthropicBody(t, "x", `"max_tokens":1024.0,"model":"claude-haiku-4-5",
	 "thinking":null,"messages":[{"role":"user","content":[{"type":"text","text":"Title: x",
	 "cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":"{"}]`))
	if r.status != 200 {
		t.Errorf("lenient cases: %d %s", r.status, r.body)
	}
}

func TestAnthropicHeaders(t *testing.T) {
	_, base := startServer(t, `{"invalid_keys":["sk-ant-revoked"]}`)
	body := anthropicBody(t, "x", "")
	url := base + "/v1/messages"
	anthropicError(t, postHeaders(t, url, map[string]string{"x-api-key": "k"}, body), 400, "invalid_request_error")
	e := anthropicError(t, postHeaders(t, url, map[string]string{"x-api-key": "k", "anthropic-version": "2099-01-01"},
		body), 400, "invalid_request_error")
	if !strings.Contains(e["message"].(string), "anthropic-version") {
		t.Errorf("message %v", e["message"])
	}
	anthropicError(t, postHeaders(t, url, map[string]string{"anthropic-version": "2023-06-01"}, body), 401,
		"authentication_error")
	// a bearer token is not an API key here
	anthropicError(t, postHeaders(t, url, map[string]string{"anthropic-version": "2023-06-01",
		"Authorization": "Bearer sk-ant-test"}, body), 401, "authentication_error")
	anthropicError(t, postHeaders(t, url, map[string]string{"anthropic-version": "2023-06-01",
		"x-api-key": "sk-ant-revoked"}, body), 401, "authentication_error")
	r := postHeaders(t, base+"/v1/messages/batches", anthropicHeaders, body)
	anthropicError(t, r, 404, "not_found_error")
	expectGetStatus(t, url, 405)
}

func TestAnthropicInvalidBodies(t *testing.T) {
	_, base := startServer(t, "")
	cases := []struct {
		name, body, want string
	}{
		{"float max_tokens", `"max_tokens":1024.5`, "max_tokens: Input should be a valid integer"},
		{"string max_tokens", `"max_tokens":"1024"`, "max_tokens: Input should be a valid integer"},
		{"zero max_tokens", `"max_tokens":0`, "max_tokens: Input should be greater than or equal to 1"},
		{"no max_tokens", `"max_tokens":null`, "max_tokens: Field required"},
		{"no model", `"model":null`, "model: Field required"},
		{"unknown field", `"seed":42`, "seed: Extra inputs are not permitted"},
		{"top_p as OpenAI", `"top_p":[1]`, "top_p: Input should be a valid number"},
		{"system role", `"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]`,
			"messages.0.role: Input should be 'user' or 'assistant'"},
		{"no messages", `"messages":[]`, "messages: at least one message is required"},
		{"empty user content", `"messages":[{"role":"user","content":""}]`, "non-empty content"},
		{"extra message key", `"messages":[{"role":"user","content":"u","name":"n"}]`,
			"messages.0.name: Extra inputs are not permitted"},
		{"unknown block", `"messages":[{"role":"user","content":[{"type":"input_text","text":"u"}]}]`,
			"does not match any of the expected tags"},
		{"empty text block", `"messages":[{"role":"user","content":[{"type":"text","text":""}]}]`,
			"text content blocks must be non-empty"},
		{"prefill on 5.5", `"messages":[{"role":"user","content":"u"},{"role":"assistant","content":"{"}]`,
			"prefill not supported"},
		{"system as object", `"system":{"text":"s"}`, "system: Input should be a valid string or a valid list"},
		{"OpenAI-style tool", `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],
		 "tool_choice":{"type":"auto"}`, "does not match any of the expected tags"},
		{"tool name", `"tools":[{"name":"record decision","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto"}`,
			"tools.0.custom.name: String should match pattern"},
		{"tool schema type", `"tools":[{"name":"f","input_schema":{"type":"array"}}],"tool_choice":{"type":"auto"}`,
			"tools.0.custom.input_schema.type: Input should be 'object'"},
		{"tool without schema", `"tools":[{"name":"f"}],"tool_choice":{"type":"auto"}`,
			"tools.0.custom.input_schema: Field required"},
		{"tool parameters", `"tools":[{"name":"f","input_schema":{"type":"object"},"parameters":{}}],
		 "tool_choice":{"type":"auto"}`, "tools.0.custom.parameters: Extra inputs are not permitted"},
		{"duplicate tools", `"tools":[` + anthropicTool + `,` + anthropicTool + `]`, "Tool names must be unique"},
		{"tool_choice type", `"tool_choice":{"type":"required"}`,
			"tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"},
		{"tool_choice OpenAI", `"tool_choice":"auto"`, "tool_choice: Input should be a valid dictionary"},
		{"tool_choice no name", `"tool_choice":{"type":"tool"}`, "tool_choice.tool.name: Field required"},
		{"tool_choice other tool", `"tool_choice":{"type":"tool","name":"other"}`, "Tool 'other' not found"},
		{"tool_choice parallel", `"tool_choice":{"type":"any","disable_parallel_tool_use":"yes"}`,
			"tool_choice.any.disable_parallel_tool_use: Input should be a valid boolean"},
		{"tool_choice without tools", `"tools":null,"tool_choice":{"type":"auto"}`,
			"tool_choice may only be specified while providing tools"},
		{"thinking type", `"thinking":{"type":"on"}`, "thinking.type: Input should be"},
		{"thinking budget small", `"model":"claude-haiku-4-5","tool_choice":{"type":"auto"},
		 "thinking":{"type":"enabled","budget_tokens":500}`, "budget_tokens: Input should be greater than or equal to 1024"},
		{"thinking budget big", `"model":"claude-haiku-4-5","tool_choice":{"type":"auto"},
		 "thinking":{"type":"enabled","budget_tokens":2048}`, "`max_tokens` must be greater than `thinking.budget_tokens`"},
		{"thinking no budget", `"thinking":{"type":"enabled"}`, "thinking.enabled.budget_tokens: Field required"},
		{"effort", `"output_config":{"effort":"none"}`,
			"output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"},
		{"effort at top level", `"effort":"low"`, "effort: Extra inputs are not permitted"},
		{"temperature", `"temperature":1.5`, "temperature: Input should be less than or equal to 1"},
		{"metadata", `"metadata":{"user":"u"}`, "metadata.user: Extra inputs are not permitted"},
		{"streaming", `"stream":true`, "streaming"},
		{"forced tool and thinking", `"thinking":{"type":"adaptive"}`,
			"Thinking may not be enabled when tool_choice forces tool use"},
		{"forced any and default thinking", `"thinking":null,"tool_choice":{"type":"any"}`,
			"Thinking may not be enabled when tool_choice forces tool use"},
		{"forced on opus 5.5", `"model":"claude-opus-5-5","thinking":null`, "not supported for model claude-opus-5-5"},
		{"forced on fable", `"model":"claude-fable-5-1","thinking":null,"tool_choice":{"type":"any"}`,
			"not supported for model claude-fable-5-1"},
		{"thinking off on sonnet 5.5", `"model":"claude-sonnet-5-5","tool_choice":{"type":"auto"}`,
			"Thinking cannot be disabled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := postAnthropic(t, base, anthropicBody(t, "x", c.body))
			e := anthropicError(t, r, 400, "invalid_request_error")
			if msg := e["message"].(string); !strings.Contains(msg, c.want) {
				t.Errorf("message %q does not contain %q", msg, c.want)
			}
		})
	}
	r := postAnthropic(t, base, `{"model":`)
	anthropicError(t, r, 400, "invalid_request_error")
	st := stats(t, base)
	if p := st.ByProtocol["anthropic"]; p.Invalid != int64(len(cases)+1) || p.ByStatus["400"] != p.Invalid ||
		p.Valid != 0 || st.Invalid != p.Invalid {
		t.Errorf("stats %+v", st)
	}
}

func TestAnthropicConfiguredRules(t *testing.T) {
	_, base := startServer(t, "")
	forcedNoThinking := anthropicBody(t, "x", `"thinking":null`)
	anthropicError(t, postAnthropic(t, base, forcedNoThinking), 400, "invalid_request_error")
	// haiku-5-5 no longer thinks by default: a forced tool without a thinking field works
	configure(t, base, `{"anthropic_thinking_by_default":["sonnet-5"]}`)
	if blocks := contentBlocks(t, postAnthropic(t, base, forcedNoThinking)); len(blocks) != 1 {
		t.Errorf("blocks %v", blocks)
	}
	// opus 5.5 accepts a forced tool once the lists say so
	opus := anthropicBody(t, "x", `"model":"claude-opus-5-5"`)
	anthropicError(t, postAnthropic(t, base, opus), 400, "invalid_request_error")
	configure(t, base, `{"anthropic_no_forced_tool":[],"anthropic_no_disable_thinking":[]}`)
	if r := postAnthropic(t, base, opus); r.status != 200 {
		t.Errorf("opus: %d %s", r.status, r.body)
	}
	prefill := anthropicBody(t, "x", `"messages":[{"role":"user","content":"u"},{"role":"assistant","content":"{"}]`)
	anthropicError(t, postAnthropic(t, base, prefill), 400, "invalid_request_error")
	configure(t, base, `{"anthropic_no_prefill":"opus-5-5"}`)
	if r := postAnthropic(t, base, prefill); r.status != 200 {
		t.Errorf("prefill: %d %s", r.status, r.body)
	}
	configure(t, base, `{"allow_unknown_fields":true}`)
	if r := postAnthropic(t, base, anthropicBody(t, "x", `"seed":1`)); r.status != 200 {
		t.Errorf("allow_unknown_fields: %d %s", r.status, r.body)
	}
	resp, err := testClient.Post(base+"/_fake/config", "application/json",
		strings.NewReader(`{"anthropic_no_prefill":[""]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("empty pattern accepted: %d", resp.StatusCode)
	}
}

func TestAnthropicFaults(t *testing.T) {
	s, base := startServer(t, `{"retry_after_ms":1500}`)
	type check = faultCheck
	errorWith := func(status int, typ string, retry bool, shouldRetry string) check {
		return func(t *testing.T, r reply) {
			anthropicError(t, r, status, typ)
			if got := r.header.Get("retry-after"); (got != "") != retry || retry && got != "2" {
				t.Errorf("retry-after %q, want present=%v", got, retry)
			}
			if got := r.header.Get("x-should-retry"); got != shouldRetry {
				t.Errorf("x-should-retry %q, want %q", got, shouldRetry)
			}
		}
	}
	ok200 := answered
	cases := map[string]check{
		FaultRateLimit:   errorWith(429, "rate_limit_error", true, "true"),
		FaultQuota:       errorWith(429, "rate_limit_error", false, ""),
		Fault500:         errorWith(500, "api_error", false, "true"),
		Fault503:         errorWith(503, "api_error", false, "true"),
		Fault504:         errorWith(504, "timeout_error", false, "true"),
		Fault529:         errorWith(529, "overloaded_error", true, "true"),
		FaultFinishError: errorWith(500, "api_error", false, "true"), // Mistral's kind: a 500 here
		Fault502:         htmlBadGateway,
		FaultDrop:        dropped,
		FaultMalformed: ok200(func(t *testing.T, r reply) {
			if json.Valid(r.body) || len(r.body) < 20 {
				t.Errorf("malformed body is valid JSON: %s", r.body)
			}
		}),
		FaultNoTool: ok200(func(t *testing.T, r reply) {
			blocks := contentBlocks(t, r)
			if len(blocks) != 1 || blocks[0]["type"] != "text" || r.json(t)["stop_reason"] != "end_turn" {
				t.Errorf("no_tool: %s", r.body)
			}
		}),
		FaultBadArgs: ok200(func(t *testing.T, r reply) {
			blocks := contentBlocks(t, r)
			if in, _ := blocks[0]["input"].(map[string]any); in == nil || len(in) != 0 {
				t.Errorf("bad_args: %s", r.body)
			}
		}),
		FaultBadEnum: ok200(func(t *testing.T, r reply) {
			if d := contentBlocks(t, r)[0]["input"].(map[string]any)["decision"]; d != "2" {
				t.Errorf("bad_enum decision %v", d)
			}
		}),
	}
	body := anthropicBody(t, "x", "")
	for kind, chk := range cases {
		t.Run(kind, func(t *testing.T) {
			configure(t, base, `{"fail_first_n":{"kind":"`+kind+`","n":1}}`)
			chk(t, postAnthropic(t, base, body))
			if r := postAnthropic(t, base, body); r.status != 200 {
				t.Errorf("next request: %d", r.status)
			}
		})
	}
	st := s.Stats()
	for kind := range cases {
		want := kind
		if kind == FaultFinishError {
			want = Fault500
		}
		if st.ByFault[want] < 1 {
			t.Errorf("by_fault[%s] = %d", want, st.ByFault[want])
		}
	}
	if p := st.ByProtocol["anthropic"]; p.Answered != int64(len(cases)) || p.RequestsTotal != int64(2*len(cases)) ||
		st.ByProtocol["openai"].RequestsTotal != 0 || st.Answered != p.Answered {
		t.Errorf("stats %+v", st)
	}
}

func TestAnthropicRateLimitAndConcurrency(t *testing.T) {
	_, base := startServer(t, `{"rpm":60}`)
	body := anthropicBody(t, "x", "")
	if r := postAnthropic(t, base, body); r.status != 200 {
		t.Fatalf("first: %d", r.status)
	}
	r := postAnthropic(t, base, body)
	anthropicError(t, r, 429, "rate_limit_error")
	if r.header.Get("retry-after") == "" || r.header.Get("anthropic-ratelimit-requests-limit") != "60" {
		t.Errorf("headers %v", r.header)
	}
	// the rate-limit headers come with errors too
	r = postHeaders(t, base+"/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, body)
	if r.status != 401 || r.header.Get("anthropic-ratelimit-requests-reset") == "" {
		t.Errorf("401 headers %v", r.header)
	}
}
