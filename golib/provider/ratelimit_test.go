package provider

import (
	"net/http"
	"testing"
	"time"
)

func TestRateHeadersOfEachProvider(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		provider string
		headers  map[string]string
		info     RateInfo
		wait     time.Duration
	}{
		{"a", map[string]string{"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "0",
			"x-ratelimit-reset-requests": "1m30s", "x-ratelimit-limit-tokens": "200000"},
			RateInfo{RequestsPerMinute: "600", TokensPerMinute: "200000", RemainingRequests: "0", ResetRequests: "1m30s"}, 90 * time.Second},
		{"b", map[string]string{"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-input-tokens-limit": "40000",
			"anthropic-ratelimit-output-tokens-remaining": "0", "anthropic-ratelimit-output-tokens-reset": "2026-11-21T12:00:07Z"},
			RateInfo{RequestsPerMinute: "50", TokensPerMinute: "40000"}, 7 * time.Second},
		{"c", map[string]string{"x-ratelimit-limit-req-minute": "60", "x-ratelimit-remaining-tokens-minute": "10"},
			RateInfo{RequestsPerMinute: "60", RemainingTokens: "10"}, 0},
	}
	for _, tc := range tests {
		d, _ := Lookup(tc.provider)
		h := http.Header{}
		for k, v := range tc.headers {
			h.Set(k, v)
		}
		if got := d.Rate.Read(h); got != tc.info {
			t.Errorf("%s: read %+v, want %+v", tc.provider, got, tc.info)
		}
		wait, ok := d.Rate.ResetWait(h, now)
		if wait != tc.wait || ok != (tc.wait > 0) {
			t.Errorf("%s: wait %v %v, want %v", tc.provider, wait, ok, tc.wait)
		}
	}
}
