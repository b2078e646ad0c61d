package fakeprovider

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// maxInWindow counts the largest number of times in any half-open window.
func maxInWindow(ts []time.Time, w time.Duration) int {
	best, j := 0, 0
	for i := range ts {
		for ts[i].Sub(ts[j]) >= w {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

func TestSlidingLimiterProperty(t *testing.T) {
	for _, rpm := range []float64{30, 60, 119, 120, 600, 6000} {
		l := newRPMLimiter(rpm)
		t0 := time.Unix(1000, 0)
		var admitted []time.Time
		now := t0
		maxGap := uint64(400_000 / max(1, int(rpm/60))) // microseconds; arrivals outpace the limit
		for i := 0; i < 5000; i++ {
			now = now.Add(time.Duration(hash(uint64(i))%maxGap) * time.Microsecond)
			if ok, retry := l.admit(now); ok {
				admitted = append(admitted, now)
			} else if retry <= 0 || retry > l.window {
				t.Fatalf("rpm %v: retry %v", rpm, retry)
			}
		}
		capacity := int(rpm / 60)
		if capacity < 1 {
			if got := maxInWindow(admitted, time.Duration(float64(time.Minute)/rpm)); got != 1 {
				t.Errorf("rpm %v: %d in one window", rpm, got)
			}
			continue
		}
		if got := maxInWindow(admitted, time.Second); got > capacity {
			t.Errorf("rpm %v: %d admitted in one second, limit %d", rpm, got, capacity)
		}
		// and the limiter is not stricter than it must be: it reaches the limit
		if got := maxInWindow(admitted, time.Second); got < capacity && len(admitted) > capacity {
			t.Errorf("rpm %v: never reached %d per second (max %d)", rpm, capacity, got)
		}
	}
}

func TestWindowMax(t *testing.T) {
	var w windowMax
	t0 := time.Unix(0, 0)
	for _, ms := range []int{0, 100, 200, 999, 1000, 1001, 1500, 1999, 3000} {
		w.add(t0.Add(time.Duration(ms) * time.Millisecond))
	}
	// [0, 1 s) holds 0,100,200,999; [1 s, 2 s) holds 1000,1001,1500,1999; [200 ms, 1.2 s) holds 5
	if got := w.get(); got != 5 {
		t.Errorf("max %d, want 5", got)
	}
}

func TestRPMEnforced(t *testing.T) {
	s, base := startServer(t, `{"rpm":180}`) // 3 per second
	url := base + "/v1/chat/completions"
	var got []int
	for i := 0; i < 6; i++ {
		r := post(t, url, "k", chatBody("x", ""))
		got = append(got, r.status)
		if r.status == 429 {
			e := r.errorOf(t)
			if e["code"] != "rate_limit_exceeded" {
				t.Errorf("code %v", e["code"])
			}
			ms, err := strconv.Atoi(r.header.Get("retry-after-ms"))
			if err != nil || ms <= 0 || ms > 1000 || r.header.Get("Retry-After") != "1" {
				t.Errorf("retry headers %q %q", r.header.Get("retry-after-ms"), r.header.Get("Retry-After"))
			}
		}
	}
	if want := []int{200, 200, 200, 429, 429, 429}; !equalInts(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	st := s.Stats()
	if st.RefusedRate != 3 || st.MaxRequests1s != 6 {
		t.Errorf("stats %+v", st)
	}
	time.Sleep(1100 * time.Millisecond)
	if r := post(t, url, "k", chatBody("x", "")); r.status != 200 {
		t.Errorf("after a second: %d", r.status)
	}
	// a change of rpm takes effect at once
	configure(t, base, `{"rpm":0}`)
	for i := 0; i < 10; i++ {
		if r := post(t, url, "k", chatBody("x", "")); r.status != 200 {
			t.Fatalf("unlimited: %d", r.status)
		}
	}
}

func TestConcurrencyLimit(t *testing.T) {
	s, base := startServer(t, `{"max_concurrency":2,"latency_ms":800,"retry_after_ms":50}`)
	url := base + "/v1/chat/completions"
	var wg sync.WaitGroup
	var mu sync.Mutex
	count := map[int]int{}
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := postWith(&http.Client{Transport: &http.Transport{}}, url, "k", chatBody("x", ""))
			mu.Lock()
			count[r.status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	st := s.Stats()
	if count[200] != 2 || count[429] != 4 || st.RefusedConcurrency != 4 || st.MaxInFlight < 3 {
		t.Errorf("statuses %v, stats %+v", count, st)
	}
}

func TestHeaderBuckets(t *testing.T) {
	var b headerBuckets
	t0 := time.Unix(0, 0)
	s := b.take(t0, 60, 1000, 1, 100)
	if s.remainingRequests != 59 || s.remainingTokens != 900 || s.resetRequests != time.Second ||
		s.resetTokens != 6*time.Second {
		t.Errorf("%+v", s)
	}
	s = b.take(t0.Add(time.Second), 60, 1000, 1, 0) // one request refilled
	if s.remainingRequests != 59 {
		t.Errorf("%+v", s)
	}
	if got := (1500 * time.Millisecond).String(); got != "1.5s" { // header format
		t.Error(got)
	}
}

// The tpm limit: requests are answered while the token budget holds their prompt, then refused
// with the protocol's own 429 and a Retry-After; the budget counts exactly the tokens the answers
// report, and the refusals are counted by cause.
func TestTokenLimitRefusesOverTheBudget(t *testing.T) {
	type usageOf func(m map[string]any) int64
	num := func(m map[string]any, keys ...string) int64 {
		n := int64(0)
		for _, k := range keys {
			v, _ := m[k].(float64)
			n += int64(v)
		}
		return n
	}
	chatUsage := func(m map[string]any) int64 {
		return num(m["usage"].(map[string]any), "prompt_tokens", "completion_tokens")
	}
	tests := []struct {
		name    string
		post    func(t *testing.T, base string) reply
		usage   usageOf
		limit   string // the header that reports the token limit
		message func(body map[string]any) string
	}{
		{"openai", func(t *testing.T, base string) reply {
			return post(t, base+"/v1/chat/completions", "k", chatBody("x", ""))
		},
			chatUsage, "x-ratelimit-limit-tokens",
			func(b map[string]any) string { return b["error"].(map[string]any)["message"].(string) }},
		{"anthropic", func(t *testing.T, base string) reply { return postAnthropic(t, base, anthropicBody(t, "x", "")) },
			func(m map[string]any) int64 {
				return num(m["usage"].(map[string]any), "input_tokens", "output_tokens", "cache_read_input_tokens",
					"cache_creation_input_tokens")
			}, "anthropic-ratelimit-tokens-limit",
			func(b map[string]any) string { return b["error"].(map[string]any)["message"].(string) }},
		{"mistral", func(t *testing.T, base string) reply { return post(t, mistralURL(base), "k", mistralBody(t, "x", "")) },
			chatUsage, "x-ratelimit-limit-tokens-minute",
			func(b map[string]any) string { return b["message"].(string) }},
	}
	for _, mode := range []string{TPMBucket, TPMWindow, TPMSecond} {
		for _, tc := range tests {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				_, base := startServer(t, `{"tpm": 1500, "tpm_mode": "`+mode+`"}`)
				var answered, counted int64
				var refused *reply
				for i := 0; i < 40 && refused == nil; i++ {
					r := tc.post(t, base)
					if r.err != nil {
						t.Fatal(r.err)
					}
					if got := r.header.Get(tc.limit); got != "1500" {
						t.Fatalf("%s: %q", tc.limit, got)
					}
					switch r.status {
					case 200:
						answered++
						counted += tc.usage(r.json(t))
					case 429:
						refused = &r
					default:
						t.Fatalf("status %d: %s", r.status, r.body)
					}
				}
				if refused == nil || answered == 0 {
					t.Fatalf("answered %d, refused %v", answered, refused != nil)
				}
				if ra, err := strconv.Atoi(refused.header.Get("retry-after")); err != nil || ra < 1 || ra > 60 {
					t.Errorf("retry-after %q", refused.header.Get("retry-after"))
				}
				msg := tc.message(refused.json(t))
				if tc.name != "mistral" && !strings.Contains(msg, "tokens per min") {
					t.Errorf("message %q", msg)
				}
				st := stats(t, base)
				if st.RefusedTokens != 1 || st.RefusedByCause["tokens"] != 1 || st.RefusedRate != 0 ||
					st.TokensCounted != counted || st.Answered != answered {
					t.Errorf("stats %+v, counted %d, answered %d", st, counted, answered)
				}
			})
		}
	}
}

// The three ways of counting a tpm limit, on one sequence of requests (tpm 6000: 100 tokens a
// second): a bucket refilled continuously admits a minute's tokens at once; a sliding minute
// admits no more than 6000 in any 60 s; a bucket of one second's tokens admits 100 a second, and
// a larger request when it is full.
func TestTokenLimitModes(t *testing.T) {
	steps := []struct {
		at     time.Duration
		prompt int64
	}{{0, 100}, {500 * time.Millisecond, 100}, {time.Second, 5700}, {2 * time.Second, 200}, {2500 * time.Millisecond, 1}}
	type outcome struct {
		ok   bool
		wait time.Duration
	}
	tests := []struct {
		mode string
		want []outcome
	}{
		{TPMBucket, []outcome{{true, 0}, {true, 0}, {true, 0}, {true, 0}, {true, 0}}},
		// 100 + 100 + 5700 counted; 200 more fit once the first 100 leave the minute
		{TPMWindow, []outcome{{true, 0}, {true, 0}, {true, 0}, {false, 58 * time.Second}, {true, 0}}},
		// the second 100 waits for the bucket to refill; 5700 goes into the full bucket, which
		// then owes 5600; a second later 200 waits 56 s for 100 (the bucket's most), and 1 token
		// half a second later 54.51 s
		{TPMSecond, []outcome{{true, 0}, {false, 500 * time.Millisecond}, {true, 0}, {false, 56 * time.Second},
			{false, 54510 * time.Millisecond}}},
	}
	for _, tc := range tests {
		s, err := New(DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		rc := &runtimeConfig{Config: Config{TPM: 6000, TPMMode: tc.mode}}
		t0 := time.Unix(1000, 0)
		for i, st := range steps {
			ok, wait, _ := s.admitTokens(rc, t0.Add(st.at), st.prompt)
			if w := tc.want[i]; ok != w.ok || (!ok && wait != w.wait) {
				t.Errorf("%s, request %d: admitted %v after %v, want %v after %v", tc.mode, i, ok, wait, w.ok, w.wait)
			}
		}
	}
	var w tokenWindow
	t0 := time.Unix(1000, 0)
	w.admit(t0, 100, time.Minute, 1000)
	w.count(t0.Add(time.Second), 50)
	if got := w.minute(t0.Add(30 * time.Second)); got != 150 {
		t.Errorf("minute %d, want 150", got)
	}
	if got := w.minute(t0.Add(60 * time.Second)); got != 50 {
		t.Errorf("a minute later %d, want 50", got)
	}
	if _, err := DefaultConfig().Merge([]byte(`{"tpm_mode": "minute"}`)); err == nil {
		t.Error("tpm_mode minute accepted")
	}
}
