package fakeprovider

import (
	"strings"
	"testing"
)

// longPrompt is about 1,700 tokens: over OpenAI's 1,024 and Haiku 5.5's 512, under Haiku 4.5's 4,096.
var longPrompt = strings.Repeat("Include randomised trials of family therapy for adolescents. ", 110)

// usageOf reads the cache figures of an answer in any protocol: read, written and all prompt tokens.
func usageOf(t *testing.T, r reply) (read, written, prompt float64) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	u, _ := r.json(t)["usage"].(map[string]any)
	num := func(k string) float64 { v, _ := u[k].(float64); return v }
	if d, ok := u["prompt_tokens_details"].(map[string]any); ok {
		read, _ = d["cached_tokens"].(float64)
	}
	if _, ok := u["input_tokens"]; ok { // Anthropic
		read, written = num("cache_read_input_tokens"), num("cache_creation_input_tokens")
		return read, written, num("input_tokens") + read + written
	}
	return read, 0, num("prompt_tokens")
}

func TestPromptCacheAsEachProviderReportsIt(t *testing.T) {
	breakpoint := func(model string) func(t testing.TB, user string) string {
		return func(t testing.TB, user string) string {
			return anthropicBody(t, "", `"model":"`+model+`","messages":[{"role":"user","content":[
				{"type":"text","text":`+quoteJSON(longPrompt)+`,"cache_control":{"type":"ephemeral"}},
				{"type":"text","text":`+quoteJSON(user)+`}]}]`)
		}
	}
	cases := []struct {
		name   string
		path   string
		key    string
		body   func(t testing.TB, user string) string
		second [2]bool // the second request reads, writes
		first  [2]bool
	}{
		{"A: automatic from 1,024 tokens", "/v1/chat/completions", "sk-a",
			func(_ testing.TB, user string) string { return chatBody(longPrompt+user, "") }, [2]bool{true, false}, [2]bool{}},
		{"A: a short prompt is not cached", "/v1/chat/completions", "sk-a",
			func(_ testing.TB, user string) string { return chatBody("Short. "+user, "") }, [2]bool{}, [2]bool{}},
		{"B: written at the breakpoint, then read", "/v1/messages", "",
			breakpoint("claude-haiku-5-5"), [2]bool{true, false}, [2]bool{false, true}},
		{"B: no cache_control, no cache", "/v1/messages", "",
			func(t testing.TB, user string) string { return anthropicBody(t, longPrompt+user, "") }, [2]bool{}, [2]bool{}},
		{"B: under the model's minimum", "/v1/messages", "",
			breakpoint("claude-haiku-4-5"), [2]bool{}, [2]bool{}},
		{"C: with prompt_cache_key", "/mistral/v1/chat/completions", "mk",
			func(t testing.TB, user string) string {
				return mistralBody(t, longPrompt+user, `"prompt_cache_key":"tabscreen-1"`)
			}, [2]bool{true, false}, [2]bool{}},
		{"C: without prompt_cache_key", "/mistral/v1/chat/completions", "mk",
			func(t testing.TB, user string) string { return mistralBody(t, longPrompt+user, "") }, [2]bool{}, [2]bool{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, base := startServer(t, `{"prompt_cache":true}`)
			for i, want := range [][2]bool{tc.first, tc.second} {
				body := tc.body(t, "Title: one record")
				var r reply
				if tc.key == "" {
					r = postAnthropic(t, base, body)
				} else {
					r = post(t, base+tc.path, tc.key, body)
				}
				read, written, prompt := usageOf(t, r)
				if (read > 0) != want[0] || (written > 0) != want[1] || read+written > prompt {
					t.Fatalf("request %d: read %v, written %v of %v prompt tokens; want read %v, written %v",
						i+1, read, written, prompt, want[0], want[1])
				}
			}
		})
	}
}

func TestFlexUnavailableOnceThenAnswered(t *testing.T) {
	_, base := startServer(t, `{"flex_unavailable_n":1}`)
	url := base + "/v1/chat/completions"
	r := post(t, url, "sk-a", chatBody("Title: x", `"service_tier":"flex"`))
	if e := r.errorOf(t); r.status != 429 || e["code"] != "resource_unavailable" {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if r := post(t, url, "sk-a", chatBody("Title: x", `"service_tier":"flex"`)); r.status != 200 {
		t.Fatalf("second flex request: status %d: %s", r.status, r.body)
	}
}
