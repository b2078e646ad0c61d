package provider

// Provider B: the Anthropic Messages protocol. There is no published OpenAPI document; the shapes
// follow the official SDK's types (MessageCreateParams, Message, Usage). The call is a content
// block of type tool_use whose input is a JSON object; thinking blocks may come before it.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tabscreen/tabscreen/golib/screen"
)

const (
	anthropicVersion   = "2023-06-01"
	anthropicPath      = "/v1/messages"
	defaultMaxTokensB  = 1024
	toolInstructionFmt = "Answer only by calling the function %s, exactly once."
)

func init() {
	Register(Descriptor{Protocol: "anthropic", Letter: "b", New: newAnthropic})
}

type anthropic struct {
	s         Settings
	url       string
	tools     []screen.Tool
	toolsJSON json.RawMessage
	builtin   bool
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Strict      *bool           `json:"strict,omitempty"`
}

func newAnthropic(s Settings) (Adapter, error) {
	a := &anthropic{s: s, url: anthropicEndpoint(s.URL)}
	if !s.HasCustomTools() {
		strict := true
		a.builtin = true
		a.tools = []screen.Tool{s.Builtin}
		a.toolsJSON, _ = json.Marshal([]anthropicTool{{Name: s.Builtin.Name, Description: s.Builtin.Description,
			InputSchema: s.Builtin.Parameters, Strict: &strict}})
		return a, nil
	}
	raw, err := customToolList(s.CustomTools)
	if err != nil {
		return nil, err
	}
	for i, t := range raw {
		var tool anthropicTool
		b, _ := json.Marshal(t)
		if err := json.Unmarshal(b, &tool); err != nil || tool.Name == "" || len(tool.InputSchema) == 0 {
			return nil, fmt.Errorf("tool %d is not of the form list(name = ..., description = ..., input_schema = list(type = \"object\", ...))", i+1)
		}
		a.tools = append(a.tools, screen.Tool{Name: tool.Name, Description: tool.Description,
			Parameters: tool.InputSchema, Strict: tool.Strict != nil && *tool.Strict})
	}
	a.toolsJSON, _ = json.Marshal(raw)
	return a, nil
}

// anthropicEndpoint appends the Messages path to a base URL; a URL that already ends in it is
// used as it is.
func anthropicEndpoint(base string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, anthropicPath) {
		return base
	}
	return base + anthropicPath
}

func (a *anthropic) Endpoint() string     { return a.url }
func (a *anthropic) Tools() []screen.Tool { return a.tools }

func (a *anthropic) Headers(apiKey string) http.Header {
	h := http.Header{}
	h.Set("x-api-key", apiKey)
	h.Set("anthropic-version", anthropicVersion)
	h.Set("content-type", "application/json")
	return h
}

// Body forces the built-in tool where the model allows it. A model that rejects forced tools
// gets tool_choice auto with an instruction in the top-level system field (the protocol has no
// system role); its replies without the call are failed attempts. The protocol has no seed.
func (a *anthropic) Body(c *Call) ([]byte, error) {
	maxTokens := a.s.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokensB
	}
	fields := []field{
		{"model", c.Model.Name},
		{"max_tokens", maxTokens},
		{"messages", []map[string]string{{"role": a.s.Role, "content": c.Question}}},
		{"tools", a.toolsJSON},
	}
	if a.builtin {
		choice := map[string]any{"type": "tool", "name": a.s.Builtin.Name, "disable_parallel_tool_use": true}
		if !c.Model.ForcedTool {
			choice = map[string]any{"type": "auto", "disable_parallel_tool_use": true}
			fields = append(fields, field{"system", fmt.Sprintf(toolInstructionFmt, a.s.Builtin.Name)})
		}
		fields = append(fields, field{"tool_choice", choice})
	}
	if c.Model.Thinking != "" {
		fields = append(fields, field{"thinking", map[string]string{"type": c.Model.Thinking}})
	}
	if c.Model.ReasoningEffort != "" {
		fields = append(fields, field{"output_config", map[string]string{"effort": c.Model.ReasoningEffort}})
	}
	return mergeBody(fields, a.s.ExtraBody)
}

type anthropicResponse struct {
	Model      string `json:"model"`
	StopReason string `json:"stop_reason"`
	Content    []struct {
		Type  string          `json:"type"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	Usage *struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

// Parse selects content blocks by type, never by position. prompt_tokens is every input token,
// cache reads and writes included; each is priced at its own rate. Thinking tokens are already
// inside output_tokens.
func (a *anthropic) Parse(body []byte) (Reply, error) {
	var r anthropicResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return Reply{}, fmt.Errorf("the response is not valid JSON: %v", err)
	}
	reply := Reply{Submodel: r.Model}
	if u := r.Usage; u != nil {
		reply.Usage = screen.Usage{
			Prompt:     u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
			Cached:     u.CacheReadInputTokens,
			CacheWrite: u.CacheCreationInputTokens,
			Completion: u.OutputTokens,
		}
	}
	for _, block := range r.Content {
		if block.Type != "tool_use" {
			continue
		}
		if found, err := takeCall(&reply, a.tools, block.Name, block.Input); found {
			return reply, err
		}
	}
	switch r.StopReason {
	case "max_tokens", "refusal", "model_context_window_exceeded", "pause_turn":
		return reply, fmt.Errorf("the answer stopped with stop_reason %q before calling the tool", r.StopReason)
	}
	return reply, ErrNoToolCall
}

func (a *anthropic) ErrorMessage(status int, body []byte) string {
	var e struct {
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != nil && e.Error.Message != "" {
		return fmt.Sprintf("HTTP %d: %s (%s)", status, e.Error.Message, e.Error.Type)
	}
	return fmt.Sprintf("HTTP %d: %s", status, snippet(body))
}

// Stop: besides a refused key or access, a billing error (402) and a 429 without retry-after (a
// monthly spend cap, not a rate limit) stop the run: no retry can succeed.
func (a *anthropic) Stop(status int, h http.Header, body []byte) (Stop, bool) {
	msg := a.ErrorMessage(status, body)
	switch {
	case status == http.StatusPaymentRequired:
		return Stop{"tabscreen_error_quota", "the account cannot be billed (" + msg + ")"}, true
	case status == http.StatusTooManyRequests && h.Get("retry-after") == "" && h.Get("retry-after-ms") == "":
		return Stop{"tabscreen_error_quota", "the account's spend limit is reached (" + msg + ")"}, true
	}
	return bearerStop(status, h, body, msg)
}

// ResetWait reads the RFC 3339 reset time of an exhausted allowance.
func (a *anthropic) ResetWait(h http.Header, now time.Time) (time.Duration, bool) {
	for _, kind := range []string{"requests", "tokens", "input-tokens", "output-tokens"} {
		if h.Get("anthropic-ratelimit-"+kind+"-remaining") != "0" {
			continue
		}
		if t, err := time.Parse(time.RFC3339, h.Get("anthropic-ratelimit-"+kind+"-reset")); err == nil {
			if d := t.Sub(now); d > 0 {
				return d, true
			}
		}
	}
	return 0, false
}
