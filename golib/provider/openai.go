package provider

// Provider A: the OpenAI Chat Completions protocol (also served by Azure, Ollama, vLLM, llama.cpp
// and LM Studio). Request and response shapes follow CreateChatCompletionRequest and
// CreateChatCompletionResponse of OpenAI's OpenAPI document.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/tabscreen/tabscreen/golib/screen"
)

type openAI struct {
	s          Settings
	tools      []screen.Tool
	toolsJSON  json.RawMessage
	toolChoice json.RawMessage
	builtin    bool
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

func newOpenAI(s Settings) (*openAI, error) {
	a := &openAI{s: s}
	if len(s.CustomTools) == 0 || string(s.CustomTools) == "null" {
		strict := true
		a.builtin = true
		a.tools = []screen.Tool{s.Builtin}
		a.toolsJSON, _ = json.Marshal([]openAITool{{Type: "function", Function: openAIFunction{
			Name: s.Builtin.Name, Description: s.Builtin.Description, Parameters: s.Builtin.Parameters, Strict: &strict}}})
		a.toolChoice, _ = json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": s.Builtin.Name}})
		return a, nil
	}
	var raw []map[string]any
	if err := json.Unmarshal(s.CustomTools, &raw); err != nil {
		return nil, fmt.Errorf("tools must be a list of tool definitions: %v", err)
	}
	for i, t := range raw {
		normaliseSchema(t)
		var tool openAITool
		b, _ := json.Marshal(t)
		if err := json.Unmarshal(b, &tool); err != nil || tool.Function.Name == "" {
			return nil, fmt.Errorf("tool %d is not of the form list(type = \"function\", function = list(name = ..., parameters = ...))", i+1)
		}
		a.tools = append(a.tools, screen.Tool{Name: tool.Function.Name, Description: tool.Function.Description,
			Parameters: tool.Function.Parameters, Strict: tool.Function.Strict != nil && *tool.Function.Strict})
	}
	a.toolsJSON, _ = json.Marshal(raw)
	a.toolChoice = openAIToolChoice(s.ToolChoice)
	return a, nil
}

// openAIToolChoice keeps the protocol's own values, reads any other string as a function name,
// and means "auto" when the user gave none.
func openAIToolChoice(choice json.RawMessage) json.RawMessage {
	if len(choice) == 0 || string(choice) == "null" {
		return json.RawMessage(`"auto"`)
	}
	var s string
	if json.Unmarshal(choice, &s) != nil {
		return choice
	}
	switch s {
	case "none", "auto", "required":
		return choice
	}
	b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": s}})
	return b
}

func (a *openAI) Endpoint() string     { return a.s.URL }
func (a *openAI) Tools() []screen.Tool { return a.tools }

func (a *openAI) Headers(apiKey string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+apiKey)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	return h
}

func (a *openAI) Body(c *Call) ([]byte, error) {
	fields := []field{
		{"model", c.Model.Name},
		{"messages", []map[string]string{{"role": a.s.Role, "content": c.Question}}},
		{"tools", a.toolsJSON},
		{"tool_choice", a.toolChoice},
	}
	if a.builtin {
		fields = append(fields, field{"parallel_tool_calls", false})
	}
	if c.HasTopP && c.Model.SendTopP {
		fields = append(fields, field{"top_p", c.TopP})
	}
	if c.Model.ReasoningEffort != "" {
		fields = append(fields, field{"reasoning_effort", c.Model.ReasoningEffort})
	}
	if c.Model.Verbosity != "" {
		fields = append(fields, field{"verbosity", c.Model.Verbosity})
	}
	if c.HasSeed {
		fields = append(fields, field{"seed", c.Seed})
	}
	return mergeBody(fields, a.s.ExtraBody)
}

type openAIResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

func (a *openAI) Parse(body []byte) (Reply, error) {
	var r openAIResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return Reply{}, fmt.Errorf("the response is not valid JSON: %v", err)
	}
	reply := Reply{Submodel: r.Model}
	if r.Usage != nil {
		reply.Usage = screen.Usage{Prompt: r.Usage.PromptTokens, Completion: r.Usage.CompletionTokens}
		if r.Usage.PromptTokensDetails != nil {
			reply.Usage.Cached = r.Usage.PromptTokensDetails.CachedTokens
		}
	}
	if len(r.Choices) == 0 {
		return reply, fmt.Errorf("the response has no choices")
	}
	choice := r.Choices[0]
	switch choice.FinishReason {
	case "length", "content_filter":
		return reply, fmt.Errorf("the answer was cut off (finish_reason %q)", choice.FinishReason)
	}
	if choice.Message.Refusal != nil && *choice.Message.Refusal != "" {
		return reply, fmt.Errorf("the model refused: %s", *choice.Message.Refusal)
	}
	for _, call := range choice.Message.ToolCalls {
		tool := findTool(a.tools, call.Function.Name)
		if tool == nil {
			continue
		}
		args, err := decodeArguments(call.Function.Arguments)
		if err != nil {
			return reply, err
		}
		reply.Tool, reply.Args = tool, args
		return reply, nil
	}
	return reply, fmt.Errorf("the answer has no call of the screening tool")
}

type openAIError struct {
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

func (a *openAI) ErrorMessage(status int, body []byte) string {
	var e openAIError
	if json.Unmarshal(body, &e) == nil && e.Error != nil && e.Error.Message != "" {
		return fmt.Sprintf("HTTP %d: %s", status, e.Error.Message)
	}
	return fmt.Sprintf("HTTP %d: %s", status, snippet(body))
}

func (a *openAI) Stop(status int, h http.Header, body []byte) (Stop, bool) {
	switch {
	case status == http.StatusUnauthorized:
		return Stop{"tabscreen_error_auth", "the provider refused the API key (" + a.ErrorMessage(status, body) + ")"}, true
	case status == http.StatusForbidden:
		return Stop{"tabscreen_error_auth", "the provider refused access (" + a.ErrorMessage(status, body) + ")"}, true
	case status == http.StatusTooManyRequests && IsQuotaExhausted(h, body):
		return Stop{"tabscreen_error_quota", "the account's quota or credit is exhausted (" + a.ErrorMessage(status, body) + ")"}, true
	}
	return Stop{}, false
}

func (a *openAI) ResetWait(h http.Header) (time.Duration, bool) {
	for _, kind := range []string{"requests", "tokens"} {
		if h.Get("x-ratelimit-remaining-"+kind) != "0" {
			continue
		}
		if d, err := time.ParseDuration(h.Get("x-ratelimit-reset-" + kind)); err == nil && d > 0 {
			return d, true
		}
	}
	return 0, false
}

func snippet(body []byte) string {
	const max = 200
	if len(body) > max {
		return string(body[:max]) + "..."
	}
	if len(body) == 0 {
		return "(empty body)"
	}
	return string(body)
}
