package provider

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tabscreen/tabscreen/golib/screen"
)

func TestMistralBodies(t *testing.T) {
	builtin := screen.BuiltinTool(true, false, true)
	a, err := New("c", Settings{Role: "user", Builtin: builtin})
	if err != nil {
		t.Fatal(err)
	}
	b := bodyOf(t, a, &Call{Model: &Model{Name: "mistral-small-latest", ReasoningEffort: "none", Verbosity: "low", SendTopP: true},
		Question: "q", TopP: 0.9, HasTopP: true, Seed: 11, HasSeed: true})
	body := mustJSON(t, b)
	if body["random_seed"] != 11.0 || body["parallel_tool_calls"] != false || body["reasoning_effort"] != "none" || body["top_p"] != 0.9 {
		t.Errorf("body %v", body)
	}
	for _, k := range []string{"seed", "verbosity", "max_completion_tokens"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent: Mistral's schema is closed", k)
		}
	}
	if body["tool_choice"].(map[string]any)["function"].(map[string]any)["name"] != builtin.Name {
		t.Errorf("tool_choice %v", body["tool_choice"])
	}
	custom := json.RawMessage(`[{"type":"function","function":{"name":"judge","parameters":{"type":"object","properties":{"d":{"type":"string","enum":["1","0"]}}}}}]`)
	for choice, want := range map[string]string{`"any"`: `"any"`, `"required"`: `"required"`, `null`: `"auto"`, `"judge"`: `{"function":{"name":"judge"},"type":"function"}`} {
		a, _ := New("c", Settings{Role: "user", CustomTools: custom, ToolChoice: json.RawMessage(choice)})
		b := bodyOf(t, a, &Call{Model: &Model{Name: "m"}, Question: "q"})
		var got struct {
			ToolChoice json.RawMessage `json:"tool_choice"`
		}
		_ = json.Unmarshal(b, &got)
		if string(got.ToolChoice) != want {
			t.Errorf("tool_choice %s -> %s, want %s", choice, got.ToolChoice, want)
		}
	}
}

func TestMistralParse(t *testing.T) {
	a, _ := New("c", Settings{Builtin: screen.BuiltinTool(true, false, false)})
	ok := `{"model":"mistral-small-latest","choices":[{"finish_reason":"tool_calls","message":{"content":"","tool_calls":[{"function":{"name":"inclusion_decision_simple","arguments":%s}}]}}],"usage":{"prompt_tokens":40,"completion_tokens":4}}`
	for _, args := range []string{`"{\"decision_llm\":\"0\"}"`, `{"decision_llm":"0"}`} {
		r := parseOf(a, strings.Replace(ok, "%s", args, 1))
		if err := r.Err(); err != nil || r.Decision.Raw != "0" || r.Usage.Prompt != 40 {
			t.Errorf("arguments %s: %+v %v", args, r, err)
		}
	}
	err := parseOf(a, `{"choices":[{"finish_reason":"error","message":{}}]}`).Err()
	var fa *FailedAttempt
	if !errors.As(err, &fa) {
		t.Errorf("finish_reason error must be a failed attempt: %v", err)
	}
	err = parseOf(a, `{"choices":[{"finish_reason":"model_length","message":{}}]}`).Err()
	if err == nil || errors.As(err, &fa) {
		t.Errorf("model_length: %v", err)
	}
}

func TestMistralErrorMessages(t *testing.T) {
	cases := map[string]string{
		`{"object":"error","message":"Rate limit exceeded","type":"rate_limited","code":"1300"}`:               "Rate limit exceeded",
		`{"detail":[{"type":"extra_forbidden","loc":["body","seed"],"msg":"Extra inputs are not permitted"}]}`: "Extra inputs are not permitted ([body seed])",
		`{"object":"error","message":{"detail":[{"loc":["body","model"],"msg":"Field required"}]},"type":"x"}`: "Field required",
		`<html>bad gateway</html>`: "bad gateway",
	}
	for body, want := range cases {
		if got := mistralErrorMessage(422, []byte(body)); !strings.Contains(got, want) {
			t.Errorf("%s -> %q", body, got)
		}
	}
}
