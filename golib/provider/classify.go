package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The classification of failed responses that the protocols share. Each adapter's Classify puts
// its own run-stopping rules first, then calls classify.

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

// IsTransient is the default retry rule, llm_is_transient() in R: x-should-retry decides when
// present; else 408, 409, 500, 502, 503, 504 and 529 are transient, and so is a 429 unless it
// means an exhausted quota.
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

// maxHonouredWait caps how long a server may ask us to wait before one retry.
const maxHonouredWait = 5 * time.Minute

// CapWait limits a wait to what the engine honours.
func CapWait(d time.Duration) time.Duration { return min(d, maxHonouredWait) }

// RetryAfter reads the standard wait headers of a response received at now: retry-after-ms, then
// Retry-After in seconds or as an HTTP date.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && ms >= 0 {
		return CapWait(time.Duration(ms * float64(time.Millisecond))), true
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return CapWait(time.Duration(s * float64(time.Second))), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return CapWait(max(t.Sub(now), 0)), true
	}
	return 0, false
}

// classify is the shared rule for an error response that stops nothing: transient or not
// (IsTransient), and the wait it asks for (Retry-After, else the reset of an exhausted rate limit
// on a 429, which then holds the whole run).
func classify(rate RateHeaders, r Response, now time.Time, message string) Failure {
	f := Failure{Verdict: FailJob, Message: message}
	if IsTransient(r.Status, r.Header, r.Body) {
		f.Verdict = Retry
	}
	f.Wait, f.HasWait = RetryAfter(r.Header, now)
	if !f.HasWait && r.Status == http.StatusTooManyRequests {
		f.Wait, f.HasWait = rate.ResetWait(r.Header, now)
	}
	f.Pause = f.HasWait && r.Status == http.StatusTooManyRequests
	return f
}

// WrongURL reports an HTTP answer that means the request reached a server but not the API: no such
// path (404), no POST there (405), nothing implemented there (501), or a web page where JSON was
// expected. Before a run's first answer it stops the run (the engine's endpoint check); later it
// is an ordinary failure.
func WrongURL(r Response) (string, bool) {
	switch r.Status {
	case http.StatusNotFound:
		// Providers and local servers also answer 404 for a model they do not have: that is the
		// model argument's fault, not the URL's, and stays an ordinary failure with its message.
		if bytes.Contains(bytes.ToLower(r.Body), []byte("model")) {
			return "", false
		}
		return "HTTP 404 Not Found: the server has no such path", true
	case http.StatusMethodNotAllowed:
		return "HTTP 405 Method Not Allowed: the server takes no POST requests at that path", true
	case http.StatusNotImplemented:
		return "HTTP 501 Not Implemented: the server does not serve that path", true
	}
	if r.Status >= 200 && r.Status < 300 && strings.HasPrefix(strings.ToLower(r.Header.Get("Content-Type")), "text/html") {
		return fmt.Sprintf("HTTP %d with a web page instead of the API's JSON", r.Status), true
	}
	return "", false
}

// stopped is a failure that stops the run.
func stopped(class, message string) Failure {
	return Failure{Verdict: StopRun, Class: class, Message: message}
}

// bearerStop is the run-stop rule of every provider: a refused key or access, or a 429 that means
// an exhausted quota.
func bearerStop(r Response, message string) (Failure, bool) {
	switch {
	case r.Status == http.StatusUnauthorized:
		return stopped("tabscreen_error_auth", "the provider refused the API key ("+message+")"), true
	case r.Status == http.StatusForbidden:
		return stopped("tabscreen_error_auth", "the provider refused access ("+message+")"), true
	case r.Status == http.StatusTooManyRequests && IsQuotaExhausted(r.Header, r.Body):
		return stopped("tabscreen_error_quota", "the account's quota or credit is exhausted ("+message+")"), true
	}
	return Failure{}, false
}

// rateState is the RateState of any protocol, from its rate-limit headers.
func rateState(rate RateHeaders, h http.Header, now time.Time) RateState {
	s := RateState{Info: rate.Read(h)}
	s.Wait, s.HasWait = rate.ResetWait(h, now)
	return s
}

// snippet is the start of a body that is not the provider's error shape.
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

// decodeResponse reads a response body; one that is not JSON is worth asking again.
func decodeResponse(body []byte, into any) *Failure {
	if err := json.Unmarshal(body, into); err != nil {
		return reask(fmt.Errorf("the response is not valid JSON: %v", err))
	}
	return nil
}
