package fakeprovider

import (
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// openAI speaks the OpenAI Chat Completions protocol:
// POST {base}/chat/completions with Authorization: Bearer <key>.
type openAI struct {
	chatBase
	schemas *openAISchemas
}

// openAIDialect: a string tool_choice never forces the call in the fake (a named one does).
var openAIDialect = chatDialect{seedField: "seed"}

func newOpenAI() (*openAI, error) {
	return withSchemas(loadOpenAISchemas, func(s *chatSchemas) *openAI {
		return &openAI{chatBase: chatBase{openAIDialect}, schemas: s}
	})
}

func init() { registerProtocol(true, func() (protocol, error) { return newOpenAI() }) }

func (o *openAI) name() string { return "openai" }

func (o *openAI) chatPath() string { return "/v1/chat/completions" }

func (o *openAI) match(path string) bool { return strings.HasSuffix(path, "/chat/completions") }

const openAIBadJSON = "We could not parse the JSON body of your request. (HINT: This likely means you aren't " +
	"using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not " +
	"valid JSON. If you have trouble figuring out how to fix this, please contact us through our help " +
	"center at help.openai.com.)"

func (o *openAI) parse(_ *http.Request, body []byte, rc *runtimeConfig) (*chatRequest, *failure) {
	doc, err := decodeJSON(body)
	if err != nil {
		return nil, &failure{kind: failInvalidRequest, message: openAIBadJSON}
	}
	obj, isObj := doc.(map[string]any)
	if isObj && !rc.AllowUnknownFields {
		var unknown []string
		for k := range obj {
			if !o.schemas.topLevel[k] {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return nil, &failure{kind: failInvalidRequest,
				message: "Unrecognized request argument supplied: " + strings.Join(unknown, ", ")}
		}
	}
	if err := o.schemas.validate(doc); err != nil {
		msg, param := describeValidation(err)
		return nil, &failure{kind: failInvalidRequest, message: msg, param: param}
	}
	if f := checkOpenAIRules(obj); f != nil {
		return nil, f
	}
	req := o.extract(obj)
	req.flex = obj["service_tier"] == "flex"
	if rc.PromptCache {
		req.cache = chatCachePoints(obj, req.model, "")
	}
	return req, nil
}

// functionTools returns the function tools of a tools array, in order.
func functionTools(v any) []toolDef { return chatBase{openAIDialect}.tools(v) }

// contentText returns the text of a message content: a string, or the
// text (and refusal) parts of an array.
func contentText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			pm, _ := p.(map[string]any)
			for _, k := range []string{"text", "refusal"} {
				if s, ok := pm[k].(string); ok {
					if b.Len() > 0 {
						b.WriteByte('\n')
					}
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

// textSize counts the characters of the keys and strings in v.
func textSize(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case json.Number:
		return len(x)
	case map[string]any:
		n := 0
		for k, e := range x {
			n += len(k) + textSize(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += textSize(e)
		}
		return n
	}
	return 0
}

func stringAt(m map[string]any, keys ...string) string {
	var cur any = m
	for _, k := range keys {
		cm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = cm[k]
	}
	s, _ := cur.(string)
	return s
}

// --- responses ---

type oaErrorBody struct {
	Error oaError `json:"error"`
}

type oaError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

const badGatewayHTML = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n" +
	"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n"

func (o *openAI) writeFailure(w http.ResponseWriter, f *failure) {
	status := failureStatus(f.kind)
	h := w.Header()
	if f.hasRetry {
		ms := f.retryAfter.Milliseconds()
		h.Set("retry-after", strconv.FormatInt(int64(math.Ceil(f.retryAfter.Seconds())), 10))
		h.Set("retry-after-ms", strconv.FormatInt(ms, 10))
	}
	if f.kind == failBadGateway {
		writeBadGateway(w, status)
		return
	}
	e := oaError{Message: f.message, Type: "invalid_request_error"}
	code := f.code
	switch f.kind {
	case failMissingKey:
		e.Message = "You didn't provide an API key. You need to provide your API key in an Authorization " +
			"header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field " +
			"(with blank username) if you're accessing the API from your browser and are prompted for a " +
			"username and password. You can obtain an API key from https://platform.openai.com/account/api-keys."
	case failInvalidKey:
		e.Message = "Incorrect API key provided: " + maskKey(f.key) +
			". You can find your API key at https://platform.openai.com/account/api-keys."
		code = "invalid_api_key"
	case failRateLimit:
		if f.tokens {
			e.Type, code = "tokens", "rate_limit_exceeded"
			e.Message = "Rate limit reached for " + f.model + " in organization org-fake on tokens per min (TPM): " +
				"Limit " + strconv.FormatInt(f.limit, 10) + ", Used " + strconv.FormatInt(f.used, 10) +
				", Requested " + strconv.FormatInt(f.requested, 10) + ". Please try again in " +
				f.retryAfter.Round(time.Millisecond).String() +
				". Visit https://platform.openai.com/account/rate-limits to learn more."
			break
		}
		e.Type, code = "requests", "rate_limit_exceeded"
		e.Message = "Rate limit reached for requests in organization org-fake on requests per min (RPM): " +
			"Limit " + strconv.FormatInt(f.limit, 10) + ". Please try again in " +
			f.retryAfter.Round(time.Millisecond).String() +
			". Visit https://platform.openai.com/account/rate-limits to learn more."
	case failConcurrency:
		e.Type, code = "requests", "rate_limit_exceeded"
		e.Message = "Too many concurrent requests in organization org-fake: limit " +
			strconv.FormatInt(f.limit, 10) + ". Please try again in " +
			f.retryAfter.Round(time.Millisecond).String() + "."
	case failQuota:
		e.Type, code = "insufficient_quota", "insufficient_quota"
		e.Message = "You exceeded your current quota, please check your plan and billing details. For more " +
			"information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."
	case failServer:
		e.Type = "server_error"
		e.Message = "The server had an error while processing your request. Sorry about that!"
	case failUnavailable:
		e.Type, code = "service_unavailable_error", "server_is_overloaded"
		e.Message = "The server is overloaded or not ready yet."
	case failTimeout:
		e.Type, code = "server_error", "timeout"
		e.Message = "Request timed out."
	case failTooLarge:
		e.Message = "Request too large."
	case failFlexUnavailable:
		code = "resource_unavailable"
		e.Message = "Resource unavailable: flex processing has no capacity for this model at the moment. " +
			"Retry later, or send the request without service_tier \"flex\"."
	}
	if f.param != "" {
		p := f.param
		e.Param = &p
	}
	if code != "" {
		e.Code = &code
	}
	writeJSON(w, status, oaErrorBody{Error: e})
}

// maskKey hides all but the first 3 and last 4 characters, as the service does.
func maskKey(k string) string {
	if len(k) <= 8 {
		return strings.Repeat("*", len(k))
	}
	return k[:3] + strings.Repeat("*", len(k)-7) + k[len(k)-4:]
}

func (o *openAI) setRateHeaders(h http.Header, s rateSnapshot) {
	setHeaders(h, openAIRateKeys,
		strconv.FormatInt(s.limitRequests, 10),
		strconv.FormatInt(s.remainingRequests, 10),
		s.resetRequests.String(),
		strconv.FormatInt(s.limitTokens, 10),
		strconv.FormatInt(s.remainingTokens, 10),
		s.resetTokens.String())
}

var openAIRateKeys = canonicalKeys("x-ratelimit-limit-requests", "x-ratelimit-remaining-requests",
	"x-ratelimit-reset-requests", "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens",
	"x-ratelimit-reset-tokens")

type oaResponse struct {
	ID                string     `json:"id"`
	Object            string     `json:"object"`
	Created           int64      `json:"created"`
	Model             string     `json:"model"`
	Choices           []oaChoice `json:"choices"`
	Usage             oaUsage    `json:"usage"`
	ServiceTier       string     `json:"service_tier"`
	SystemFingerprint string     `json:"system_fingerprint"`
}

type oaChoice struct {
	Index        int       `json:"index"`
	Message      oaMessage `json:"message"`
	Logprobs     *struct{} `json:"logprobs"` // always null
	FinishReason string    `json:"finish_reason"`
}

type oaMessage struct {
	Role        string       `json:"role"`
	Content     *string      `json:"content"`
	Refusal     *string      `json:"refusal"`
	ToolCalls   []oaToolCall `json:"tool_calls,omitempty"`
	Annotations []struct{}   `json:"annotations"`
}

type oaToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function oaFunctionCall `json:"function"`
}

type oaFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

// openAIAnswer encodes an answer as a chat.completion object.
func openAIAnswer(req *chatRequest, a *answer) []byte {
	resp := oaResponse{
		ID:                "chatcmpl-" + a.id,
		Object:            "chat.completion",
		Created:           a.created,
		Model:             a.model,
		ServiceTier:       "default",
		SystemFingerprint: "fp_" + strings.ToLower(a.id[:10]),
	}
	n := max(req.choices, 1)
	for i := 0; i < n; i++ {
		msg := oaMessage{Role: "assistant", Annotations: []struct{}{}}
		finish := "stop"
		if i < len(a.args) {
			msg.ToolCalls = []oaToolCall{{ID: a.callIDs[i], Type: "function",
				Function: oaFunctionCall{Name: req.tool.name, Arguments: a.args[i]}}}
			if !req.forced { // a named tool_choice ends with "stop", as the service does
				finish = "tool_calls"
			}
		} else {
			text := a.text
			msg.Content = &text
		}
		resp.Choices = append(resp.Choices, oaChoice{Index: i, Message: msg, FinishReason: finish})
	}
	u := &resp.Usage
	u.PromptTokens, u.CompletionTokens = a.promptTokens, a.completionTokens
	u.TotalTokens = a.promptTokens + a.completionTokens
	u.PromptTokensDetails.CachedTokens = a.cachedTokens
	u.CompletionTokensDetails.ReasoningTokens = a.reasoningTokens

	b, _ := json.Marshal(resp)
	return b
}

var openAIAnswerKeys = canonicalKeys("openai-version", "openai-organization")

func (o *openAI) writeAnswer(w http.ResponseWriter, req *chatRequest, a *answer) {
	writeAnswer(w, openAIAnswer(req, a), a.fault, openAIAnswerKeys, "2020-10-01", "org-fake")
}
