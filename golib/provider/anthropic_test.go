package provider

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tabscreen/tabscreen/golib/screen"
)

func TestAnthropicEndpointAndHeaders(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.anthropic.com":              "https://api.anthropic.com/v1/messages",
		"https://api.anthropic.com/":             "https://api.anthropic.com/v1/messages",
		"http://127.0.0.1:9/v1/messages":         "http://127.0.0.1:9/v1/messages",
		"https://gateway.example/anthropic/base": "https://gateway.example/anthropic/base/v1/messages",
	} {
		a, _ := New("b", Settings{URL: in, Builtin: screen.BuiltinTool(true, false, false)})
		if req, _ := a.Request(&Call{Model: &Model{Name: "m", ForcedTool: true}}); req.URL != want {
			t.Errorf("%s -> %s, want %s", in, req.URL, want)
		}
	}
	a, _ := New("b", Settings{URL: "https://api.anthropic.com", APIKey: "sk-ant-test"})
	req, _ := a.Request(&Call{Model: &Model{Name: "m", ForcedTool: true}})
	h := req.Header
	if h.Get("x-api-key") != "sk-ant-test" || h.Get("anthropic-version") != "2023-06-01" || h.Get("Authorization") != "" {
		t.Errorf("headers %v", h)
	}
}

func TestAnthropicBodies(t *testing.T) {
	builtin := screen.BuiltinTool(true, false, true)
	cases := []struct {
		name  string
		s     Settings
		model Model
		check func(t *testing.T, b map[string]any)
	}{
		{"forced tool, thinking off, effort, integer max_tokens, no seed and no top_p",
			Settings{Role: "user", Builtin: builtin, MaxTokens: 1024},
			Model{Name: "claude-haiku-5-5", ForcedTool: true, Thinking: "disabled", ReasoningEffort: "low"},
			func(t *testing.T, b map[string]any) {
				choice := b["tool_choice"].(map[string]any)
				if choice["type"] != "tool" || choice["name"] != builtin.Name || choice["disable_parallel_tool_use"] != true {
					t.Errorf("tool_choice %v", choice)
				}
				if b["thinking"].(map[string]any)["type"] != "disabled" || b["output_config"].(map[string]any)["effort"] != "low" {
					t.Errorf("body %v", b)
				}
				for _, k := range []string{"seed", "top_p", "system", "parallel_tool_calls"} {
					if _, ok := b[k]; ok {
						t.Errorf("%s sent", k)
					}
				}
				tool := b["tools"].([]any)[0].(map[string]any)
				if tool["input_schema"] == nil || tool["name"] != builtin.Name {
					t.Errorf("tool %v", tool)
				}
			}},
		{"a model that rejects forced tools gets auto and an instruction in system",
			Settings{Role: "user", Builtin: builtin}, Model{Name: "claude-sonnet-5-5", ForcedTool: false},
			func(t *testing.T, b map[string]any) {
				choice := b["tool_choice"].(map[string]any)
				if choice["type"] != "auto" || !strings.Contains(b["system"].(string), builtin.Name) {
					t.Errorf("body %v", b)
				}
				if _, ok := b["thinking"]; ok {
					t.Error("thinking sent")
				}
				if b["max_tokens"] != 1024.0 {
					t.Errorf("default max_tokens %v", b["max_tokens"])
				}
			}},
		{"custom tools in B's shape, no tool_choice",
			Settings{Role: "user", CustomTools: json.RawMessage(`[{"name":"judge","input_schema":{"type":"object","properties":{"verdict":{"type":"string","enum":"1"}}}}]`)},
			Model{Name: "m", ForcedTool: true},
			func(t *testing.T, b map[string]any) {
				if _, ok := b["tool_choice"]; ok {
					t.Error("tool_choice sent with custom tools")
				}
				enum := b["tools"].([]any)[0].(map[string]any)["input_schema"].(map[string]any)["properties"].(map[string]any)["verdict"].(map[string]any)["enum"]
				if _, ok := enum.([]any); !ok {
					t.Errorf("enum not an array: %v", enum)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := New("b", c.s)
			if err != nil {
				t.Fatal(err)
			}
			req, err := a.Request(&Call{Model: &c.model, Question: "q", TopP: 0.5, HasTopP: true, Seed: 3, HasSeed: true})
			b := req.Body
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, mustJSON(t, b))
		})
	}
}

func TestAnthropicMaxTokensIsAnInteger(t *testing.T) {
	a, _ := New("b", Settings{Role: "user", Builtin: screen.BuiltinTool(true, false, false), MaxTokens: 512})
	b := bodyOf(t, a, &Call{Model: &Model{Name: "m", ForcedTool: true}, Question: "q"})
	if !strings.Contains(string(b), `"max_tokens":512,`) {
		t.Errorf("max_tokens must be sent as an integer: %s", b)
	}
}

func TestAnthropicParse(t *testing.T) {
	a, _ := New("b", Settings{Builtin: screen.BuiltinTool(true, false, true)})
	cases := []struct {
		name, body, wantErr string
		prompt, cached      int64
		noTool              bool
	}{
		{"thinking block first, then the call; every input token counted",
			`{"model":"claude-haiku-5-5","content":[{"type":"thinking","thinking":"","signature":"x"},{"type":"tool_use","name":"inclusion_decision_simple","input":{"decision_llm":"1","confidence":80}}],"stop_reason":"tool_use","usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":9}}`,
			"", 150, 30, false},
		{"no tool call", `{"content":[{"type":"text","text":"include"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`, "no call", 5, 0, true},
		{"cut off", `{"content":[],"stop_reason":"max_tokens"}`, "max_tokens", 0, 0, false},
		{"malformed", `{"content":[`, "not valid JSON", 0, 0, false},
	}
	for _, c := range cases {
		r := parseOf(a, c.body)
		err := r.Err()
		if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: err %v", c.name, err)
		}
		if r.Usage.Prompt != c.prompt || r.Usage.Cached != c.cached {
			t.Errorf("%s: usage %+v", c.name, r.Usage)
		}
		if c.noTool != errors.Is(err, ErrNoToolCall) {
			t.Errorf("%s: ErrNoToolCall %v", c.name, err)
		}
		if c.wantErr == "" {
			d := r.Decision
			if err != nil || d.Binary != 1 || !d.HasConfidence || d.Confidence != 80 {
				t.Errorf("%s: decision %+v %v", c.name, d, err)
			}
		}
	}
}

func TestAnthropicStopRules(t *testing.T) {
	a, _ := New("b", Settings{})
	cases := []struct {
		status int
		header map[string]string
		stop   string
	}{
		{401, nil, "tabscreen_error_auth"}, {403, nil, "tabscreen_error_auth"}, {402, nil, "tabscreen_error_quota"},
		{429, nil, "tabscreen_error_quota"}, {429, map[string]string{"retry-after": "3"}, ""},
		{529, nil, ""}, {500, nil, ""}, {400, nil, ""}, {413, nil, ""},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.header {
			h.Set(k, v)
		}
		s, stop := stopOf(a, c.status, h, []byte(`{"type":"error","error":{"type":"x","message":"m"}}`))
		if (c.stop != "") != stop || s.Class != c.stop {
			t.Errorf("%d %v: %v %q", c.status, c.header, stop, s.Class)
		}
	}
	if !IsTransient(529, http.Header{}, nil) || IsTransient(413, http.Header{}, nil) || IsTransient(402, http.Header{}, nil) {
		t.Error("529 must be transient, 402 and 413 not")
	}
}
