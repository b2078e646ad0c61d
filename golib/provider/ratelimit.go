package provider

import (
	"net/http"
	"time"
)

// RateHeaders name a provider's rate-limit headers. Each list holds the headers that carry one
// value, the first present winning (provider B reports input tokens where it has no combined token
// limit).
type RateHeaders struct {
	Requests RateKind `json:"requests"`
	Tokens   RateKind `json:"tokens"`
	// Others are further allowances whose exhaustion also means waiting (provider B's output tokens).
	Others []RateKind `json:"-"`
	// ResetFormat is how a reset is written: "duration" ("6m0s"), "rfc3339" (a time), or "" when
	// the provider sends none.
	ResetFormat string `json:"reset_format"`
}

// RateKind is one allowance: its limit, what remains of it and when it resets.
type RateKind struct {
	Limit     []string `json:"limit"`
	Remaining []string `json:"remaining"`
	Reset     []string `json:"reset"`
}

// RateInfo is what a response's headers say about the allowances (rate_limits_per_minute()).
type RateInfo struct {
	RequestsPerMinute string `json:"requests_per_minute"`
	TokensPerMinute   string `json:"tokens_per_minute"`
	RemainingRequests string `json:"remaining_requests"`
	RemainingTokens   string `json:"remaining_tokens"`
	ResetRequests     string `json:"reset_requests"`
	ResetTokens       string `json:"reset_tokens"`
}

func firstHeader(h http.Header, names []string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// Read takes the allowances from a response's headers ("" where absent).
func (rh RateHeaders) Read(h http.Header) RateInfo {
	return RateInfo{
		RequestsPerMinute: firstHeader(h, rh.Requests.Limit), TokensPerMinute: firstHeader(h, rh.Tokens.Limit),
		RemainingRequests: firstHeader(h, rh.Requests.Remaining), RemainingTokens: firstHeader(h, rh.Tokens.Remaining),
		ResetRequests: firstHeader(h, rh.Requests.Reset), ResetTokens: firstHeader(h, rh.Tokens.Reset),
	}
}

// ResetWait is how long to wait, after a response received at now, for an exhausted allowance to
// reset: the first allowance with nothing remaining and a reset in the future.
func (rh RateHeaders) ResetWait(h http.Header, now time.Time) (time.Duration, bool) {
	kinds := append([]RateKind{rh.Requests, rh.Tokens}, rh.Others...)
	for _, k := range kinds {
		for i, remaining := range k.Remaining {
			if h.Get(remaining) != "0" || i >= len(k.Reset) {
				continue
			}
			if d, ok := parseReset(rh.ResetFormat, h.Get(k.Reset[i]), now); ok {
				return d, true
			}
		}
	}
	return 0, false
}

func parseReset(format, v string, now time.Time) (time.Duration, bool) {
	switch format {
	case "duration":
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d, true
		}
	case "rfc3339":
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			if d := t.Sub(now); d > 0 {
				return d, true
			}
		}
	}
	return 0, false
}
