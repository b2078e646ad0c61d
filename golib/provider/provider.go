// Package provider turns provider-neutral calls into one wire protocol and back. Everything that
// differs between providers (URL, headers, body, parsing, rate-limit headers, which failures stop a
// run) lives in one small file per provider behind Adapter; the engine owns every loop, wait and
// retry.
package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// Model is one model of a run with the request settings its rules allow.
type Model struct {
	Name string
	// ReasoningEffort and Verbosity are sent only when not empty.
	ReasoningEffort string
	Verbosity       string
	// SendTopP is false for models that reject sampling parameters.
	SendTopP bool
	// Thinking is provider B's thinking type ("disabled", "adaptive"), sent when not empty.
	Thinking string
	// ForcedTool is false for models that reject a forced tool choice: they are asked with
	// tool_choice auto and an instruction, and a reply without the call is a failed attempt.
	ForcedTool bool
}

// Call is one request: one question to one model.
type Call struct {
	Model    *Model
	Question string
	TopP     float64
	HasTopP  bool
	Seed     int64
	HasSeed  bool
}

// Settings are the request settings shared by every call of a run.
type Settings struct {
	URL  string
	Role string
	// Builtin is the built-in tool, used when CustomTools is empty.
	Builtin screen.Tool
	// CustomTools is the user's tool list in the protocol's own shape, sent as given.
	CustomTools json.RawMessage
	// ToolChoice is the user's tool_choice, or null.
	ToolChoice json.RawMessage
	// ExtraBody holds the fields passed through the R function's `...`; they override ours.
	ExtraBody map[string]json.RawMessage
	MaxTokens int
}

// Reply is what a 200 response says.
type Reply struct {
	Tool *screen.Tool
	Args map[string]any
	// RawArgs are the arguments as the model wrote them: a JSON object, in its order.
	RawArgs  json.RawMessage
	Usage    screen.Usage
	Submodel string
}

// Stop describes a failure after which no request of the run can succeed (a refused key, an
// exhausted quota): the engine stops the whole run instead of failing every job one by one.
type Stop struct {
	Class   string
	Message string
}

// Adapter is one wire protocol.
type Adapter interface {
	// Endpoint is the URL every call is posted to.
	Endpoint() string
	// Headers are the protocol's headers, authentication included.
	Headers(apiKey string) http.Header
	// Body is the JSON request body of one call.
	Body(c *Call) ([]byte, error)
	// Parse reads a 200 response. It returns the usage it could read even when the answer is
	// unusable (no tool call, arguments that are not JSON), because those tokens were billed.
	Parse(body []byte) (Reply, error)
	// Stop reports whether a failed response stops the whole run.
	Stop(status int, h http.Header, body []byte) (Stop, bool)
	// ErrorMessage is the human-readable message of an error response.
	ErrorMessage(status int, body []byte) string
	// ResetWait is how long the rate-limit headers of a response received at now say to wait
	// before the next request.
	ResetWait(h http.Header, now time.Time) (time.Duration, bool)
	// Tools are the tools the run offers, to read the decision from the called one.
	Tools() []screen.Tool
}

// New returns the adapter of a registered provider, named by its letter or its protocol.
func New(name string, s Settings) (Adapter, error) {
	d, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q", name)
	}
	return d.New(s)
}

// probeMessages is the question of the smallest request (rate_limits_per_minute()).
var probeMessages = []map[string]string{{"role": "user", "content": "Reply with OK."}}

// mergeBody writes fields in order and lets the user's extra fields override ours.
func mergeBody(fields []field, extra map[string]json.RawMessage) ([]byte, error) {
	buf := make([]byte, 0, 1024)
	buf = append(buf, '{')
	seen := make(map[string]bool, len(fields))
	first := true
	write := func(k string, v []byte) {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		kb, _ := json.Marshal(k)
		buf = append(buf, kb...)
		buf = append(buf, ':')
		buf = append(buf, v...)
	}
	for _, f := range fields {
		seen[f.key] = true
		if v, ok := extra[f.key]; ok {
			write(f.key, v)
			continue
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.key, err)
		}
		write(f.key, v)
	}
	for k, v := range extra {
		if !seen[k] {
			write(k, v)
		}
	}
	return append(buf, '}'), nil
}

type field struct {
	key   string
	value any
}

// findTool returns the tool of that name.
func findTool(tools []screen.Tool, name string) *screen.Tool {
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	return nil
}

// HasCustomTools tells whether the run sends the user's tools rather than the built-in one.
func (s Settings) HasCustomTools() bool {
	return len(s.CustomTools) > 0 && string(s.CustomTools) != "null"
}

// customToolList reads the user's tools, with their schemas made valid JSON Schema.
func customToolList(raw json.RawMessage) ([]map[string]any, error) {
	var tools []map[string]any
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, fmt.Errorf("tools must be a list of tool definitions: %v", err)
	}
	for _, t := range tools {
		normaliseSchema(t)
	}
	return tools, nil
}

// takeCall records a call of one of the run's tools in the reply; found is false when the call
// names no tool of the run.
func takeCall(reply *Reply, tools []screen.Tool, name string, rawArgs json.RawMessage) (found bool, err error) {
	tool := findTool(tools, name)
	if tool == nil {
		return false, nil
	}
	args, object, err := decodeArguments(rawArgs)
	if err != nil {
		return true, err
	}
	reply.Tool, reply.Args, reply.RawArgs = tool, args, object
	return true, nil
}

// decodeArguments reads tool arguments that arrive either as a JSON string (OpenAI, usually
// Mistral) or as a JSON object (Anthropic, sometimes Mistral), and returns them also as the JSON
// object's text, compacted.
func decodeArguments(raw json.RawMessage) (map[string]any, json.RawMessage, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		raw = json.RawMessage(s)
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, nil, fmt.Errorf("the tool arguments are not valid JSON: %v", err)
	}
	if args == nil {
		return nil, nil, fmt.Errorf("the tool arguments are not a JSON object")
	}
	var object bytes.Buffer
	if err := json.Compact(&object, raw); err != nil {
		return nil, nil, fmt.Errorf("the tool arguments are not valid JSON: %v", err)
	}
	return args, object.Bytes(), nil
}

// normaliseSchema wraps the scalar values that R's auto-unboxing makes of one-element `required`
// and `enum` vectors back into arrays, so that a custom tool written in R is a valid JSON Schema.
func normaliseSchema(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if (k == "required" || k == "enum") && !isArray(child) {
				x[k] = []any{child}
				continue
			}
			x[k] = normaliseSchema(child)
		}
		return x
	case []any:
		for i := range x {
			x[i] = normaliseSchema(x[i])
		}
		return x
	default:
		return v
	}
}

func isArray(v any) bool { _, ok := v.([]any); return ok }
