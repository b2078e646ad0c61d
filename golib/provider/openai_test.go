package provider

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// bodyOf is the request body of a call.
func bodyOf(t *testing.T, a Adapter, c *Call) []byte {
	t.Helper()
	req, err := a.Request(c)
	if err != nil {
		t.Fatal(err)
	}
	return req.Body
}

// parseOf reads a 200 reply to a call of a forced model.
func parseOf(a Adapter, body string) Outcome {
	return a.Parse(&Call{Model: &Model{Name: "m", ForcedTool: true}}, Response{Status: 200, Body: []byte(body)}, time.Time{})
}

// stopOf tells whether an error response stops the run, and its class.
func stopOf(a Adapter, status int, h http.Header, body []byte) (Stop, bool) {
	f := a.Classify(Response{Status: status, Header: h, Body: body}, time.Time{})
	if f.Verdict != StopRun {
		return Stop{}, false
	}
	return Stop{Class: f.Class, Message: f.Message}, true
}

func mustJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

func TestOpenAIBodies(t *testing.T) {
	builtin := screen.BuiltinTool(true, false, false)
	custom := json.RawMessage(`[{"type":"function","function":{"name":"judge","parameters":{"type":"object","properties":{"verdict":{"type":"string","enum":"1"}},"required":"verdict"}}}]`)
	cases := []struct {
		name     string
		settings Settings
		model    Model
		call     Call
		check    func(t *testing.T, b map[string]any)
	}{
		{"built-in tool is forced, one call, reasoning none", Settings{Role: "user", Builtin: builtin},
			Model{Name: "gpt-6-luna", ReasoningEffort: "none", Verbosity: "low", SendTopP: true},
			Call{Question: "q", TopP: 1, HasTopP: true, Seed: 7, HasSeed: true},
			func(t *testing.T, b map[string]any) {
				choice := b["tool_choice"].(map[string]any)
				if choice["type"] != "function" || choice["function"].(map[string]any)["name"] != builtin.Name {
					t.Errorf("tool_choice %v", choice)
				}
				tool := b["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
				if tool["strict"] != true || b["parallel_tool_calls"] != false || b["reasoning_effort"] != "none" ||
					b["verbosity"] != "low" || b["top_p"] != 1.0 || b["seed"] != 7.0 {
					t.Errorf("body %v", b)
				}
				msg := b["messages"].([]any)[0].(map[string]any)
				if msg["role"] != "user" || msg["content"] != "q" {
					t.Errorf("messages %v", b["messages"])
				}
			}},
		{"fields a model rejects are left out", Settings{Role: "user", Builtin: builtin},
			Model{Name: "gpt-4o"}, Call{Question: "q", TopP: 0.5, HasTopP: true},
			func(t *testing.T, b map[string]any) {
				for _, k := range []string{"reasoning_effort", "verbosity", "top_p", "seed"} {
					if _, ok := b[k]; ok {
						t.Errorf("%s sent", k)
					}
				}
			}},
		{"custom tools: auto, no parallel flag, scalars re-wrapped as arrays", Settings{Role: "developer", Builtin: builtin, CustomTools: custom},
			Model{Name: "m", SendTopP: true}, Call{Question: "q"},
			func(t *testing.T, b map[string]any) {
				if b["tool_choice"] != "auto" {
					t.Errorf("tool_choice %v", b["tool_choice"])
				}
				if _, ok := b["parallel_tool_calls"]; ok {
					t.Error("parallel_tool_calls sent with custom tools")
				}
				params := b["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)["parameters"].(map[string]any)
				if _, ok := params["required"].([]any); !ok {
					t.Errorf("required not an array: %v", params)
				}
			}},
		{"a named tool_choice string becomes a function choice", Settings{Role: "user", CustomTools: custom, ToolChoice: json.RawMessage(`"judge"`)},
			Model{Name: "m"}, Call{Question: "q"},
			func(t *testing.T, b map[string]any) {
				if b["tool_choice"].(map[string]any)["function"].(map[string]any)["name"] != "judge" {
					t.Errorf("tool_choice %v", b["tool_choice"])
				}
			}},
		{"extra body fields are added and override ours", Settings{Role: "user", Builtin: builtin,
			ExtraBody: map[string]json.RawMessage{"temperature": json.RawMessage(`0`), "max_completion_tokens": json.RawMessage(`50`), "parallel_tool_calls": json.RawMessage(`true`)}},
			Model{Name: "m"}, Call{Question: "q"},
			func(t *testing.T, b map[string]any) {
				if b["temperature"] != 0.0 || b["max_completion_tokens"] != 50.0 || b["parallel_tool_calls"] != true {
					t.Errorf("body %v", b)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := New("a", c.settings)
			if err != nil {
				t.Fatal(err)
			}
			c.call.Model = &c.model
			c.check(t, mustJSON(t, bodyOf(t, a, &c.call)))
		})
	}
}

func TestOpenAIParse(t *testing.T) {
	a, _ := New("a", Settings{Builtin: screen.BuiltinTool(true, false, false)})
	cases := []struct {
		name, body, wantErr string
		prompt              int64
	}{
		{"tool call", `{"model":"gpt-6-luna-2026","choices":[{"finish_reason":"stop","message":{"content":null,"refusal":null,"tool_calls":[{"type":"function","function":{"name":"inclusion_decision_simple","arguments":"{\"decision_llm\":\"1\"}"}}]}}],"usage":{"prompt_tokens":12,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}`, "", 12},
		{"no tool call keeps usage", `{"choices":[{"finish_reason":"stop","message":{"content":"include"}}],"usage":{"prompt_tokens":9,"completion_tokens":2}}`, "no call", 9},
		{"cut off", `{"choices":[{"finish_reason":"length","message":{}}]}`, "cut off", 0},
		{"refusal", `{"choices":[{"finish_reason":"stop","message":{"refusal":"no"}}]}`, "refused", 0},
		{"malformed", `{"choices":[`, "not valid JSON", 0},
		{"unknown tool", `{"choices":[{"message":{"tool_calls":[{"function":{"name":"other","arguments":"{}"}}]}}]}`, "no call", 0},
	}
	for _, c := range cases {
		r := parseOf(a, c.body)
		err := r.Err()
		if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: err %v", c.name, err)
		}
		if r.Usage.Prompt != c.prompt {
			t.Errorf("%s: usage %+v", c.name, r.Usage)
		}
	}
}

func TestTransientAndStopRules(t *testing.T) {
	a, _ := New("a", Settings{})
	quota := []byte(`{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`)
	cases := []struct {
		status    int
		header    map[string]string
		body      []byte
		transient bool
		stop      string
	}{
		{408, nil, nil, true, ""}, {409, nil, nil, true, ""}, {429, nil, []byte(`{"error":{"code":"rate_limit_exceeded"}}`), true, ""},
		{500, nil, nil, true, ""}, {502, nil, nil, true, ""}, {503, nil, nil, true, ""}, {504, nil, nil, true, ""}, {529, nil, nil, true, ""},
		{400, nil, nil, false, ""}, {404, nil, nil, false, ""}, {422, nil, nil, false, ""},
		{401, nil, nil, false, "tabscreen_error_auth"}, {403, nil, nil, false, "tabscreen_error_auth"},
		{429, nil, quota, false, "tabscreen_error_quota"},
		{429, map[string]string{"x-ratelimit-limit-req-minute": "0"}, nil, false, "tabscreen_error_quota"},
		{500, map[string]string{"x-should-retry": "false"}, nil, false, ""},
		{400, map[string]string{"x-should-retry": "true"}, nil, true, ""},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.header {
			h.Set(k, v)
		}
		if got := IsTransient(c.status, h, c.body); got != c.transient {
			t.Errorf("%d %v: transient %v", c.status, c.header, got)
		}
		s, stop := stopOf(a, c.status, h, c.body)
		if (c.stop != "") != stop || s.Class != c.stop {
			t.Errorf("%d %v: stop %v %q", c.status, c.header, stop, s.Class)
		}
	}
}
