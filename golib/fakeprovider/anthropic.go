package fakeprovider

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// anthropic speaks the Anthropic Messages protocol: POST {base}/v1/messages
// with x-api-key and anthropic-version headers. The request is checked field
// by field (anthropic_rules.go): Anthropic publishes no OpenAPI document.
type anthropic struct{}

func newAnthropic() *anthropic { return &anthropic{} }

func init() { registerProtocol(false, func() (protocol, error) { return newAnthropic(), nil }) }

func (a *anthropic) name() string { return "anthropic" }

func (a *anthropic) chatPath() string { return "/v1/messages" }

func (a *anthropic) gives(kind string) bool { return kind == Fault529 }

func (a *anthropic) match(path string) bool { return strings.HasSuffix(path, "/v1/messages") }

// owns: other paths under /v1/messages (batches, count_tokens) get
// Anthropic's 404.
func (a *anthropic) owns(path string) bool { return strings.Contains(path, "/v1/messages/") }

func (a *anthropic) requestIDHeader() string { return "request-id" }

func (a *anthropic) apiKey(r *http.Request) string {
	return strings.TrimSpace(r.Header.Get("x-api-key"))
}

// anthropicVersions are the values of the anthropic-version header the service accepts.
var anthropicVersions = map[string]bool{"2023-06-01": true, "2023-01-01": true}

func (a *anthropic) parse(r *http.Request, body []byte, rc *runtimeConfig) (*chatRequest, *failure) {
	switch v := r.Header.Get("anthropic-version"); {
	case v == "":
		return nil, aFail("anthropic-version", "header is required")
	case !anthropicVersions[v]:
		return nil, aFail("anthropic-version", "invalid version %q; use 2023-06-01", v)
	}
	doc, err := decodeJSON(body)
	if err != nil {
		return nil, aFail("", "There was an error parsing the body: the request body is not valid JSON.")
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, aFail("", "Input should be a valid dictionary or object to extract fields from")
	}
	if f := checkAnthropicBody(obj, rc); f != nil {
		return nil, f
	}
	if f := checkAnthropicRules(obj, rc); f != nil {
		return nil, f
	}
	return extractAnthropic(obj, rc), nil
}

// extractAnthropic reads a valid request.
func extractAnthropic(body map[string]any, rc *runtimeConfig) *chatRequest {
	req := &chatRequest{choices: 1}
	req.model, _ = body["model"].(string)
	msgs, _ := body["messages"].([]any)
	req.messages = len(msgs)
	if sys, ok := body["system"]; ok {
		req.messages++
		req.promptSize += len(contentText(sys))
	}
	var user strings.Builder
	users := 0
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		text := contentText(mm["content"])
		req.promptSize += len(text)
		if mm["role"] == "user" && text != "" {
			if users++; users == 1 {
				req.userText = text // the usual single user message: its text, not a copy
				continue
			}
			if users == 2 {
				user.WriteString(req.userText)
			}
			user.WriteByte('\n')
			user.WriteString(text)
		}
	}
	if users > 1 {
		req.userText = user.String()
	}
	req.promptSize += textSize(body["tools"])

	var tools []toolDef
	list, _ := body["tools"].([]any)
	for _, t := range list {
		tm, _ := t.(map[string]any)
		if typ, has := tm["type"]; has && typ != "custom" {
			continue // server tool
		}
		name, _ := tm["name"].(string)
		schema, _ := tm["input_schema"].(map[string]any)
		tools = append(tools, toolDef{name: name, schema: schema})
	}
	tc, _ := body["tool_choice"].(map[string]any)
	switch tc["type"] {
	case "none":
	case "tool":
		for i := range tools {
			if tools[i].name == tc["name"] {
				req.tool, req.forced = &tools[i], true
			}
		}
	default: // auto (or absent), any: the first tool
		if len(tools) > 0 {
			req.tool, req.forced = &tools[0], tc["type"] == "any"
		}
	}
	req.thinking = anthropicThinks(body, rc)
	if rc.PromptCache {
		req.cache, req.cacheExplicit = anthropicCachePoints(body, req.model), true
	}
	return req
}

// --- responses ---

type anthErrorBody struct {
	Type      string    `json:"type"`
	Error     anthError `json:"error"`
	RequestID string    `json:"request_id"`
}

type anthError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func (a *anthropic) writeFailure(w http.ResponseWriter, f *failure) {
	status := failureStatus(f.kind)
	h := w.Header()
	if f.hasRetry {
		h.Set("retry-after", strconv.FormatInt(int64(math.Ceil(f.retryAfter.Seconds())), 10))
	}
	if f.kind == failBadGateway {
		writeBadGateway(w, status)
		return
	}
	e := anthError{Type: "invalid_request_error", Message: f.message}
	switch f.kind {
	case failMissingKey:
		e.Type, e.Message = "authentication_error", "x-api-key header is required"
	case failInvalidKey:
		e.Type, e.Message = "authentication_error", "invalid x-api-key"
	case failNotFound:
		e.Type, e.Message = "not_found_error", "Not found"
	case failMethod:
		e.Message = "Method Not Allowed"
	case failTooLarge:
		e.Type, e.Message = "request_too_large", "Request exceeds the maximum allowed number of bytes."
	case failRateLimit:
		e.Type = "rate_limit_error"
		unit := " requests per minute"
		if f.tokens {
			unit = " input tokens per minute"
		}
		e.Message = "This request would exceed the rate limit for your organization (org-fake) of " +
			strconv.FormatInt(f.limit, 10) + unit + ". For details, refer to: " +
			"https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. " +
			"Please reduce the prompt length or the maximum tokens requested, or try again later."
		h.Set("x-should-retry", "true")
	case failConcurrency:
		e.Type = "rate_limit_error"
		e.Message = "Number of concurrent connections has exceeded your rate limit (" +
			strconv.FormatInt(f.limit, 10) + "). Please try again later or contact sales at " +
			"https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."
		h.Set("x-should-retry", "true")
	case failQuota: // the tier's monthly spend cap: no retry-after
		e.Type = "rate_limit_error"
		e.Message = "You have reached your organization's monthly usage limit for your usage tier. " +
			"You will regain access on the 1st of next month at 00:00 UTC. To continue, upgrade your tier " +
			"or contact sales."
	case failServer:
		e.Type, e.Message = "api_error", "Internal server error"
		h.Set("x-should-retry", "true")
	case failUnavailable:
		e.Type, e.Message = "api_error", "Service unavailable"
		h.Set("x-should-retry", "true")
	case failTimeout:
		e.Type, e.Message = "timeout_error", "Request timed out"
		h.Set("x-should-retry", "true")
	case failOverloaded:
		e.Type, e.Message = "overloaded_error", "Overloaded"
		h.Set("x-should-retry", "true")
	case failValidation:
		status = http.StatusBadRequest
	}
	writeJSON(w, status, anthErrorBody{Type: "error", Error: e, RequestID: h.Get("request-id")})
}

// setRateHeaders: requests, tokens, input tokens and output tokens, each
// with limit, remaining (tokens rounded down to thousands, as the service
// does) and reset (an RFC 3339 time).
func (a *anthropic) setRateHeaders(h http.Header, s rateSnapshot) {
	reset := func(d time.Duration) string { return s.at.Add(d).UTC().Format(time.RFC3339) }
	// The three token kinds report the same budget: each value is formatted once.
	limit := strconv.FormatInt(s.limitTokens, 10)
	remaining := strconv.FormatInt(s.remainingTokens/1000*1000, 10)
	tokensReset := reset(s.resetTokens)
	setHeaders(h, anthropicRateKeys,
		strconv.FormatInt(s.limitRequests, 10), strconv.FormatInt(s.remainingRequests, 10), reset(s.resetRequests),
		limit, remaining, tokensReset,
		limit, remaining, tokensReset,
		limit, remaining, tokensReset)
}

var anthropicRateKeys = canonicalKeys(
	"anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset",
	"anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset",
	"anthropic-ratelimit-input-tokens-limit", "anthropic-ratelimit-input-tokens-remaining",
	"anthropic-ratelimit-input-tokens-reset",
	"anthropic-ratelimit-output-tokens-limit", "anthropic-ratelimit-output-tokens-remaining",
	"anthropic-ratelimit-output-tokens-reset")

type anthMessage struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []anthBlock     `json:"content"`
	StopReason   string          `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        anthUsage       `json:"usage"`
	Container    json.RawMessage `json:"container"`
}

// anthBlock is a response content block (fields by type).
type anthBlock struct {
	Type      string          `json:"type"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

type anthUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreation            struct {
		Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	OutputTokens int    `json:"output_tokens"`
	ServiceTier  string `json:"service_tier"`
}

// anthropicAnswer encodes an answer as a Messages message object.
func anthropicAnswer(req *chatRequest, ans *answer) []byte {
	resp := anthMessage{
		ID:        "msg_01" + ans.id[:24],
		Type:      "message",
		Role:      "assistant",
		Model:     req.model,
		Container: json.RawMessage("null"),
	}
	if req.thinking { // empty thinking text (display omitted), with a signature
		empty := ""
		resp.Content = append(resp.Content, anthBlock{Type: "thinking", Thinking: &empty,
			Signature: "EqQB" + randomID("", 64, hashString(ans.id))})
	}
	if len(ans.args) > 0 {
		input := json.RawMessage(ans.args[0])
		if ans.fault == FaultBadArgs || !json.Valid(input) {
			// input is always an object; the failure is one without the
			// arguments the schema requires
			input = json.RawMessage("{}")
		}
		resp.Content = append(resp.Content, anthBlock{Type: "tool_use",
			ID: "toolu_01" + strings.TrimPrefix(ans.callIDs[0], "call_"), Name: req.tool.name, Input: input})
		resp.StopReason = "tool_use"
	} else {
		text := ans.text
		resp.Content = append(resp.Content, anthBlock{Type: "text", Text: &text})
		resp.StopReason = "end_turn"
	}
	u := &resp.Usage
	u.InputTokens = ans.promptTokens - ans.cachedTokens - ans.cacheWriteTokens
	u.CacheReadInputTokens = ans.cachedTokens
	u.CacheCreationInputTokens = ans.cacheWriteTokens
	u.CacheCreation.Ephemeral5m = ans.cacheWriteTokens
	u.OutputTokens = ans.completionTokens
	u.ServiceTier = "standard"

	b, _ := json.Marshal(resp)
	return b
}

var anthropicAnswerKeys = canonicalKeys("anthropic-organization-id")

func (a *anthropic) writeAnswer(w http.ResponseWriter, req *chatRequest, ans *answer) {
	writeAnswer(w, anthropicAnswer(req, ans), ans.fault, anthropicAnswerKeys, "00000000-0000-4000-8000-00000000fa6e")
}
