package provider

import (
	"encoding/json"
	"net/http"
)

// quotaCodes are the error codes that mean money, not pace: retrying cannot help.
var quotaCodes = map[string]bool{"insufficient_quota": true, "credit_balance_exhausted": true}

// IsQuotaExhausted reports a 429 that means an exhausted quota rather than a rate limit: an
// OpenAI-style error code, or a Mistral workspace whose per-minute allowance is zero.
func IsQuotaExhausted(h http.Header, body []byte) bool {
	if h.Get("x-ratelimit-limit-req-minute") == "0" {
		return true
	}
	var e struct {
		Error *struct {
			Type string `json:"type"`
			Code any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return false
	}
	code, _ := e.Error.Code.(string)
	return quotaCodes[code] || quotaCodes[e.Error.Type]
}

// IsTransient is the default rule of llm_is_transient(): the R function of that name applies the
// same rule, and a test checks both on the same responses. x-should-retry overrides the status.
func IsTransient(status int, h http.Header, body []byte) bool {
	switch h.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	switch status {
	case 408, 409, 500, 502, 503, 504, 529:
		return true
	case 429:
		return !IsQuotaExhausted(h, body)
	}
	return false
}
