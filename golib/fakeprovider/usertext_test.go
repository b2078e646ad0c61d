package fakeprovider

import "testing"

// The user text that decides an answer joins the users' messages with newlines (chat protocols:
// every user message; Anthropic: the non-empty ones), a single one as it is.
func TestUserTextJoinsUserMessages(t *testing.T) {
	cases := []struct {
		messages        string
		chat, anthropic string
	}{
		{`[{"role":"user","content":"a"}]`, "a", "a"},
		{`[{"role":"system","content":"s"},{"role":"user","content":"a"}]`, "a", "a"},
		{`[{"role":"user","content":"a"},{"role":"assistant","content":"x"},{"role":"user","content":"b"}]`, "a\nb", "a\nb"},
		{`[{"role":"user","content":""},{"role":"user","content":"b"}]`, "b", "b"},
		{`[{"role":"user","content":"a"},{"role":"user","content":""}]`, "a\n", "a"},
		{`[{"role":"user","content":""},{"role":"user","content":""},{"role":"user","content":"c"}]`, "c", "c"},
		{`[{"role":"user","content":"a"},{"role":"user","content":""},{"role":"user","content":"c"}]`, "a\n\nc", "a\nc"},
		{`[{"role":"user","content":[{"type":"text","text":"p"},{"type":"text","text":"q"}]},{"role":"user","content":"r"}]`,
			"p\nq\nr", "p\nq\nr"},
		{`[{"role":"assistant","content":"x"}]`, "", ""},
	}
	for _, c := range cases {
		v, err := decodeJSON([]byte(`{"model":"m","messages":` + c.messages + `}`))
		if err != nil {
			t.Fatal(err)
		}
		body := v.(map[string]any)
		var req chatRequest
		readChatMessages(&req, body)
		if req.userText != c.chat {
			t.Errorf("chat %s: %q, want %q", c.messages, req.userText, c.chat)
		}
		if got := extractAnthropic(body, &runtimeConfig{}).userText; got != c.anthropic {
			t.Errorf("anthropic %s: %q, want %q", c.messages, got, c.anthropic)
		}
	}
}
