package provider

// The chat-completions wire shape shared by provider A (OpenAI) and provider C (Mistral): the same
// messages, tools, tool_choice and tool_calls. What differs between the two is a dialect, so that
// each provider file holds only its differences.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// dialect is what a chat-completions provider names or does differently.
type dialect struct {
	descriptor *Descriptor
	// seedField is the body field of the seed ("seed" for OpenAI, "random_seed" for Mistral).
	seedField string
	// sendVerbosity is false for providers without a verbosity field.
	sendVerbosity bool
	// finishFailures maps finish reasons to whether the reply is worth asking again (true: a
	// failed attempt, retried like a transient error; false: an unusable answer).
	finishFailures map[string]bool
	// errorMessage reads the provider's error body.
	errorMessage func(status int, body []byte) string
	// retryFirst, when set, names the error responses that are retried whatever else they say
	// (OpenAI flex's 429 "resource unavailable").
	retryFirst func(r Response) bool
}

type chat struct {
	s          Settings
	d          dialect
	header     http.Header
	tools      []screen.Tool
	toolsJSON  json.RawMessage
	toolChoice json.RawMessage
	builtin    bool
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

// registerChat registers a chat-completions provider. The link is made here, not in the
// descriptor's literal, because the adapter reads its descriptor and the descriptor makes the
// adapter.
func registerChat(desc *Descriptor, d *dialect) {
	desc.New = func(s Settings) (Adapter, error) { return newChat(s, *d) }
	d.descriptor = desc
	Register(*desc)
}

func newChat(s Settings, d dialect) (Adapter, error) {
	a := &chat{s: s, d: d, header: http.Header{}}
	a.header.Set("Authorization", "Bearer "+s.APIKey)
	a.header.Set("Content-Type", "application/json")
	a.header.Set("Accept", "application/json")
	if !s.HasCustomTools() {
		strict := true
		a.builtin = true
		a.tools = []screen.Tool{s.Builtin}
		a.toolsJSON, _ = json.Marshal([]chatTool{{Type: "function", Function: chatFunction{
			Name: s.Builtin.Name, Description: s.Builtin.Description, Parameters: s.Builtin.Parameters, Strict: &strict}}})
		a.toolChoice = namedFunctionChoice(s.Builtin.Name)
		return a, nil
	}
	raw, err := customToolList(s.CustomTools)
	if err != nil {
		return nil, err
	}
	for i, t := range raw {
		var tool chatTool
		b, _ := json.Marshal(t)
		if err := json.Unmarshal(b, &tool); err != nil || tool.Function.Name == "" {
			return nil, fmt.Errorf("tool %d is not of the form list(type = \"function\", function = list(name = ..., parameters = ...))", i+1)
		}
		a.tools = append(a.tools, screen.Tool{Name: tool.Function.Name, Description: tool.Function.Description,
			Parameters: tool.Function.Parameters, Strict: tool.Function.Strict != nil && *tool.Function.Strict})
	}
	a.toolsJSON, _ = json.Marshal(raw)
	a.toolChoice = a.userToolChoice(s.ToolChoice)
	return a, nil
}

func namedFunctionChoice(name string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": name}})
	return b
}

// userToolChoice keeps the protocol's own values, reads any other string as a function name,
// and means "auto" when the user gave none.
func (a *chat) userToolChoice(choice json.RawMessage) json.RawMessage {
	if len(choice) == 0 || string(choice) == "null" {
		return json.RawMessage(`"auto"`)
	}
	var s string
	if json.Unmarshal(choice, &s) != nil {
		return choice
	}
	if slices.Contains(a.d.descriptor.ToolChoiceWords, s) {
		return choice
	}
	return namedFunctionChoice(s)
}

func (a *chat) Protocol() string { return a.d.descriptor.Protocol }

// Request posts the body to api_url itself, the key as a bearer token. The header is shared by
// every request of the run and never changed.
func (a *chat) Request(c *Call) (Request, error) {
	body, err := a.body(c)
	return Request{URL: a.s.URL, Header: a.header, Body: body}, err
}

func (a *chat) body(c *Call) ([]byte, error) {
	fields := make([]field, 0, 10)
	fields = append(fields,
		field{"model", c.Model.Name},
		field{"messages", []chatMessage{{Role: a.s.Role, Content: c.Question}}},
		field{"tools", a.toolsJSON},
		field{"tool_choice", a.toolChoice},
	)
	if a.builtin {
		fields = append(fields, field{"parallel_tool_calls", false})
	}
	if c.HasTopP && c.Model.SendTopP {
		fields = append(fields, field{"top_p", c.TopP})
	}
	if c.Model.ReasoningEffort != "" {
		fields = append(fields, field{"reasoning_effort", c.Model.ReasoningEffort})
	}
	if c.Model.Verbosity != "" && a.d.sendVerbosity {
		fields = append(fields, field{"verbosity", c.Model.Verbosity})
	}
	if c.HasSeed {
		fields = append(fields, field{a.d.seedField, c.Seed})
	}
	// Both protocols cache a repeated prefix of the request by themselves; prompt_cache_key (in
	// both published request schemas) sends the requests of one prompt to the same cache.
	if a.s.Cache && c.CacheKey != "" && c.PromptReuse >= 2 {
		fields = append(fields, field{"prompt_cache_key", c.CacheKey})
	}
	return buildBody(fields, a.s.ExtraBody)
}

// chatMessage is one message of the request.
type chatMessage struct {
	Content string `json:"content"`
	Role    string `json:"role"`
}

type chatResponse struct {
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *chatUsage   `json:"usage"`
}

type chatChoice struct {
	FinishReason string `json:"finish_reason"`
	Message      struct {
		Refusal   *string        `json:"refusal"`
		ToolCalls []chatToolCall `json:"tool_calls"`
	} `json:"message"`
}

type chatToolCall struct {
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type chatUsage struct {
	PromptTokens        int64             `json:"prompt_tokens"`
	CompletionTokens    int64             `json:"completion_tokens"`
	PromptTokensDetails *chatTokenDetails `json:"prompt_tokens_details"`
}

type chatTokenDetails struct {
	CachedTokens     int64 `json:"cached_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
}

func (a *chat) Parse(c *Call, r Response, now time.Time) Outcome {
	return retryWait(a.parse(c, r.Body), r, now)
}

func (a *chat) parse(c *Call, body []byte) Outcome {
	var r chatResponse
	if f := decodeResponse(body, &r); f != nil {
		return Outcome{Failure: f}
	}
	return a.parseDecoded(c, &r)
}

// parseDecoded reads the decision of a decoded reply.
func (a *chat) parseDecoded(c *Call, r *chatResponse) Outcome {
	o := Outcome{Submodel: r.Model}
	if r.Usage != nil {
		o.Usage = screen.Usage{Prompt: r.Usage.PromptTokens, Completion: r.Usage.CompletionTokens}
		if r.Usage.PromptTokensDetails != nil {
			o.Usage.Cached = r.Usage.PromptTokensDetails.CachedTokens
			o.Usage.CacheWrite = r.Usage.PromptTokensDetails.CacheWriteTokens
		}
	}
	if len(r.Choices) == 0 {
		o.Failure = reask(fmt.Errorf("the response has no choices"))
		return o
	}
	choice := r.Choices[0]
	if retry, failed := a.d.finishFailures[choice.FinishReason]; failed {
		if retry {
			err := &FailedAttempt{fmt.Errorf("the provider reported a failure (finish_reason %q)", choice.FinishReason)}
			o.Failure = &Failure{Verdict: Retry, Message: err.Error(), Err: err}
		} else {
			o.Failure = reask(fmt.Errorf("the answer was cut off or filtered (finish_reason %q)", choice.FinishReason))
		}
		return o
	}
	if choice.Message.Refusal != nil && *choice.Message.Refusal != "" {
		o.Failure = reask(fmt.Errorf("the model refused: %s", *choice.Message.Refusal))
		return o
	}
	for _, call := range choice.Message.ToolCalls {
		if readCall(&o, a.tools, !a.builtin, call.Function.Name, call.Function.Arguments) {
			return o
		}
	}
	o.Failure = noCall(c.Model)
	return o
}

func (a *chat) Classify(r Response, now time.Time) Failure {
	message := a.d.errorMessage(r.Status, r.Body)
	if a.d.retryFirst != nil && a.d.retryFirst(r) {
		f := Failure{Verdict: Retry, Message: message}
		f.Wait, f.HasWait = RetryAfter(r.Header, now)
		return f
	}
	if f, stop := bearerStop(r, message); stop {
		return f
	}
	return classify(a.d.descriptor.Rate, r, now, message)
}

func (a *chat) RateState(h http.Header, now time.Time) RateState {
	return rateState(a.d.descriptor.Rate, h, now)
}

// ErrNoToolCall is a reply without a call of any of the run's tools.
var ErrNoToolCall = errors.New("the answer has no call of the screening tool")

// FailedAttempt is a 200 reply that reports a failure on the provider's side (Mistral's
// finish_reason "error"): retried like a transient error, within max_tries.
type FailedAttempt struct{ err error }

func (e *FailedAttempt) Error() string { return e.err.Error() }
func (e *FailedAttempt) Unwrap() error { return e.err }
