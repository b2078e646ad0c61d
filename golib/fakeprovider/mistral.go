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

func (m *mistral) name() string { return "mistral" }

func (m *mistral) match(path string) bool {
	return strings.HasPrefix(path, mistralPrefix) && strings.HasSuffix(path, "/chat/completions")
}

func (m *mistral) owns(path string) bool { return strings.HasPrefix(path, mistralPrefix) }

func (m *mistral) requestIDHeader() string { return "x-kong-request-id" }

func mistralInvalid(format string, a ...any) *failure {
	return &failure{kind: failInvalidRequest, message: fmt.Sprintf(format, a...)}
}

func (m *mistral) parse(_ *http.Request, body []byte, rc *runtimeConfig) (*chatRequest, *failure) {
	doc, skeleton, err := decodeJSONSkeleton(body)
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
	if isObj && rc.AllowUnknownFields {
		err = m.schemas.validate(doc) // not the body as sent: its shape is hashed
	} else {
		err = m.schemas.validateSkeleton(doc, skeleton)
	}
	if err != nil {
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

// mistralAnswer encodes an answer as a chat.completion object of Mistral's.
func mistralAnswer(req *chatRequest, a *answer) []byte {
	b := make([]byte, 0, 768)
	h1 := hashString(a.id)
	b = append(b, `{"id":"`...)
	b = appendHex16(b, h1)
	b = appendHex16(b, mix64(h1))
	b = append(b, `","object":"chat.completion","created":`...)
	b = appendJSONInt(b, a.created)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, req.model) // the alias as requested
	b = append(b, `,"choices":[`...)
	n := max(req.choices, 1)
	thinks := mistralThinks(req.effort) && a.fault != FaultFinishError
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = appendJSONInt(b, int64(i))
		b = append(b, `,"message":{"role":"assistant","content":`...)
		text := ""
		finish := "stop"
		call := a.fault != FaultFinishError && i < len(a.args)
		switch {
		case a.fault == FaultFinishError:
			finish = "error"
		case call:
			finish = "tool_calls"
		default:
			text = a.text
		}
		if thinks {
			b = append(b, `[{"thinking":[{"text":"The record is read against the question.","type":"text"}],`+
				`"type":"thinking"},{"text":`...)
			b = appendJSONString(b, text)
			b = append(b, `,"type":"text"}]`...)
		} else {
			b = appendJSONString(b, text)
		}
		b = append(b, `,"tool_calls":`...)
		if call {
			b = append(b, `[{"id":`...)
			b = appendJSONString(b, strings.TrimPrefix(a.callIDs[i], "call_")[:9])
			b = append(b, `,"type":"function","function":{"name":`...)
			b = appendJSONString(b, req.tool.name)
			b = append(b, `,"arguments":`...)
			if req.argsObject && json.Valid([]byte(a.args[i])) {
				b = append(b, a.args[i]...) // compact JSON from marshalValue
			} else {
				b = appendJSONString(b, a.args[i]) // a JSON string
			}
			b = append(b, `},"index":0}]`...)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"prefix":false},"finish_reason":`...)
		b = appendJSONString(b, finish)
		b = append(b, '}')
	}
	b = appendChatUsage(b, a.promptTokens, a.completionTokens)
	// prompt_tokens_details is sent only when a prompt_cache_key request read the cache: the chat
	// schema's UsageInfo does not define it, Mistral's answers carry it (providers.md 3.3).
	if a.cachedTokens > 0 {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = appendJSONInt(b, int64(a.cachedTokens))
		b = append(b, '}')
	}
	return append(b, "}}"...)
}

// appendHex16 appends v as 16 lower-case hexadecimal digits (%016x).
func appendHex16(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[(v>>uint(shift))&0xf])
	}
	return b
}

func (m *mistral) writeAnswer(w http.ResponseWriter, req *chatRequest, a *answer) {
	writeAnswer(w, mistralAnswer(req, a), a.fault, nil)
}
