package fakeprovider

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// mistralPrefix is the base path under which the fake serves Mistral, so
// that one process serves OpenAI's /v1/chat/completions and Mistral's
// /mistral/v1/chat/completions.
const mistralPrefix = "/mistral/"

// mistral speaks Mistral's chat completions protocol:
// POST /mistral/v1/chat/completions with Authorization: Bearer <key>. The
// body is validated against ChatCompletionRequest of Mistral's OpenAPI
// document (a closed schema: unknown fields are a 422).
type mistral struct {
	chatBase
	schemas *mistralSchemas
}

// mistralDialect: "any" and "required" force a call; a tool without a type is a function.
var mistralDialect = chatDialect{seedField: "random_seed", typelessTools: true,
	forcing: map[string]bool{"any": true, "required": true}}

func newMistral() (*mistral, error) {
	return withSchemas(loadMistralSchemas, func(s *chatSchemas) *mistral {
		return &mistral{chatBase: chatBase{mistralDialect}, schemas: s}
	})
}

func init() { registerProtocol(false, func() (protocol, error) { return newMistral() }) }

func (m *mistral) name() string { return "mistral" }

func (m *mistral) chatPath() string { return mistralPrefix + "v1/chat/completions" }

func (m *mistral) gives(kind string) bool { return kind == FaultFinishError }

func (m *mistral) match(path string) bool {
	return strings.HasPrefix(path, mistralPrefix) && strings.HasSuffix(path, "/chat/completions")
}

func (m *mistral) owns(path string) bool { return strings.HasPrefix(path, mistralPrefix) }

func (m *mistral) requestIDHeader() string { return "x-kong-request-id" }

func mistralInvalid(format string, a ...any) *failure {
	return &failure{kind: failInvalidRequest, message: fmt.Sprintf(format, a...)}
}

func (m *mistral) parse(_ *http.Request, body []byte, rc *runtimeConfig) (*chatRequest, *failure) {
	doc, err := decodeJSON(body)
	if err != nil { // FastAPI's answer to a body that is not JSON
		return nil, &failure{kind: failValidation, detail: []pydanticError{{Type: "json_invalid",
			Loc: []any{"body", 0}, Msg: "JSON decode error", Input: map[string]any{},
			Ctx: map[string]any{"error": "Expecting value"}}}}
	}
	obj, isObj := doc.(map[string]any)
	if isObj && rc.AllowUnknownFields {
		trimmed := make(map[string]any, len(obj))
		for k, v := range obj {
			if m.schemas.topLevel[k] {
				trimmed[k] = v
			}
		}
		doc, obj = trimmed, trimmed
	}
	if err := m.schemas.validate(doc); err != nil {
		return nil, &failure{kind: failValidation, detail: pydanticErrors(err, doc)}
	}
	if f := checkMistralRules(obj, rc); f != nil {
		return nil, f
	}
	req := m.extract(obj)
	req.argsObject = rc.MistralArgsAsObject
	if key, _ := obj["prompt_cache_key"].(string); rc.PromptCache && key != "" {
		req.cache = chatCachePoints(obj, req.model, key)
	}
	return req, nil
}

// checkMistralRules: what the service enforces beyond its schema.
func checkMistralRules(body map[string]any, rc *runtimeConfig) *failure {
	model, _ := body["model"].(string)
	if e, ok := body["reasoning_effort"]; ok && e != nil {
		lower := strings.ToLower(model)
		for _, p := range rc.MistralNoReasoningEffort {
			if p != "" && strings.HasPrefix(lower, strings.ToLower(p)) {
				return &failure{kind: failValidation, param: "reasoning_effort",
					message: "reasoning_effort is not supported for model '" + model + "'"}
			}
		}
	}
	if s, _ := body["stream"].(bool); s {
		return mistralInvalid("The fake provider does not implement streaming; send 'stream': false or omit it.")
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) == 0 {
		return mistralInvalid("Conversation must have at least one message")
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	role, _ := last["role"].(string)
	if prefix, _ := last["prefix"].(bool); role != "user" && role != "tool" && !(role == "assistant" && prefix) {
		return mistralInvalid("Expected last role User or Tool (or Assistant with prefix True) for serving "+
			"but got %s", role)
	}
	if tc, ok := body["tool_choice"].(map[string]any); ok {
		name := stringAt(tc, "function", "name")
		found := false
		for _, t := range mistralTools(body["tools"]) {
			found = found || t.name == name
		}
		if !found {
			return mistralInvalid("Tool choice function '%s' is not one of the tools provided", name)
		}
	}
	return nil
}

// mistralTools returns the function tools (type "function" or absent), in order.
func mistralTools(v any) []toolDef { return chatBase{mistralDialect}.tools(v) }

// --- responses ---

type miError struct {
	Object        string  `json:"object"`
	Message       string  `json:"message"`
	Type          string  `json:"type"`
	Param         *string `json:"param"`
	Code          *string `json:"code"`
	RawStatusCode *int    `json:"raw_status_code,omitempty"`
}

func (m *mistral) writeFailure(w http.ResponseWriter, f *failure) {
	status := failureStatus(f.kind)
	h := w.Header()
	reqID := h.Get("x-kong-request-id")
	if f.hasRetry {
		h.Set("Retry-After", strconv.FormatInt(int64(math.Ceil(f.retryAfter.Seconds())), 10))
	}
	str := func(s string) *string { return &s }
	e := miError{Object: "error", Message: f.message, Type: "invalid_request_error"}
	if f.param != "" {
		e.Param = str(f.param)
	}
	switch f.kind {
	case failValidation:
		if f.detail != nil { // FastAPI's own 422
			writeJSON(w, status, map[string]any{"detail": f.detail})
			return
		}
	case failMissingKey, failInvalidKey: // from the gateway
		writeJSON(w, status, map[string]string{"message": "Unauthorized", "request_id": reqID})
		return
	case failNotFound:
		writeJSON(w, status, map[string]string{"detail": "Not Found"})
		return
	case failMethod:
		writeJSON(w, status, map[string]string{"detail": "Method Not Allowed"})
		return
	case failTooLarge:
		writeJSON(w, status, map[string]string{"message": "Request size limit exceeded", "request_id": reqID})
		return
	case failBadGateway:
		writeJSON(w, status, map[string]string{"message": "An invalid response was received from the upstream server",
			"request_id": reqID})
		return
	case failTimeout:
		writeJSON(w, status, map[string]string{"message": "The upstream server is timing out", "request_id": reqID})
		return
	case failQuota: // no allowance left: the same body as a rate limit, a per-minute limit of 0
		h.Set("x-ratelimit-limit-req-minute", "0")
		h.Set("x-ratelimit-remaining-req-minute", "0")
		fallthrough
	case failRateLimit, failConcurrency:
		e.Message, e.Type, e.Code, e.RawStatusCode = "Rate limit exceeded", "rate_limited", str("1300"), &status
	case failServer:
		e.Message, e.Type = "Internal server error", "server_error"
	case failUnavailable, failOverloaded:
		status = http.StatusServiceUnavailable
		e.Message, e.Type, e.Code = "Service tier capacity exceeded for this model.", "service_tier_capacity_exceeded",
			str("3505")
		e.RawStatusCode = &status
	}
	writeJSON(w, status, e)
}

func (m *mistral) setRateHeaders(h http.Header, s rateSnapshot) {
	setHeaders(h, mistralRateKeys,
		strconv.FormatInt(max(1, s.limitRequests), 10),
		strconv.FormatInt(s.remainingRequests, 10),
		strconv.FormatInt(s.limitTokens, 10),
		strconv.FormatInt(s.remainingTokens, 10))
}

var mistralRateKeys = canonicalKeys("x-ratelimit-limit-req-minute", "x-ratelimit-remaining-req-minute",
	"x-ratelimit-limit-tokens-minute", "x-ratelimit-remaining-tokens-minute")

// mistralThinks: with a high reasoning effort the content is a list of
// chunks that starts with the model's thinking.
func mistralThinks(effort string) bool { return effort == "high" || effort == "xhigh" }

type miResponse struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices []miChoice `json:"choices"`
	Usage   miUsage    `json:"usage"`
}

type miChoice struct {
	Index        int       `json:"index"`
	Message      miMessage `json:"message"`
	FinishReason string    `json:"finish_reason"`
}

type miMessage struct {
	Role      string       `json:"role"`
	Content   any          `json:"content"`
	ToolCalls []miToolCall `json:"tool_calls"`
	Prefix    bool         `json:"prefix"`
}

type miToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function miFunctionCall `json:"function"`
	Index    int            `json:"index"`
}

type miFunctionCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type miUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// PromptTokensDetails is sent only when a prompt_cache_key request read the cache: the chat
	// schema's UsageInfo does not define it, Mistral's answers carry it (providers.md 3.3).
	PromptTokensDetails *miTokenDetails `json:"prompt_tokens_details,omitempty"`
}

type miTokenDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// mistralAnswer encodes an answer as a chat.completion object of Mistral's.
func mistralAnswer(req *chatRequest, a *answer) []byte {
	h1 := hashString(a.id)
	resp := miResponse{
		ID:      fmt.Sprintf("%016x%016x", h1, mix64(h1)),
		Object:  "chat.completion",
		Created: a.created,
		Model:   req.model, // the alias as requested
	}
	n := max(req.choices, 1)
	for i := 0; i < n; i++ {
		msg := miMessage{Role: "assistant", Content: ""}
		finish := "stop"
		switch {
		case a.fault == FaultFinishError:
			finish = "error"
		case i < len(a.args):
			args, _ := json.Marshal(a.args[i]) // a JSON string
			if req.argsObject && json.Valid([]byte(a.args[i])) {
				args = json.RawMessage(a.args[i])
			}
			msg.ToolCalls = []miToolCall{{ID: strings.TrimPrefix(a.callIDs[i], "call_")[:9], Type: "function",
				Function: miFunctionCall{Name: req.tool.name, Arguments: args}}}
			finish = "tool_calls"
		default:
			msg.Content = a.text
		}
		if mistralThinks(req.effort) && a.fault != FaultFinishError {
			text, _ := msg.Content.(string)
			msg.Content = []any{
				map[string]any{"type": "thinking", "thinking": []any{
					map[string]any{"type": "text", "text": "The record is read against the question."}}},
				map[string]any{"type": "text", "text": text},
			}
		}
		resp.Choices = append(resp.Choices, miChoice{Index: i, Message: msg, FinishReason: finish})
	}
	resp.Usage = miUsage{PromptTokens: a.promptTokens, CompletionTokens: a.completionTokens,
		TotalTokens: a.promptTokens + a.completionTokens}
	if a.cachedTokens > 0 {
		resp.Usage.PromptTokensDetails = &miTokenDetails{CachedTokens: a.cachedTokens}
	}

	b, _ := json.Marshal(resp)
	return b
}

func (m *mistral) writeAnswer(w http.ResponseWriter, req *chatRequest, a *answer) {
	writeAnswer(w, mistralAnswer(req, a), a.fault, nil)
}
