package provider

import (
	"encoding/json"
	"errors"
	"testing"
)

func rulesOf(t *testing.T, js string) *ModelRule {
	t.Helper()
	var r ModelRule
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestPoliciesFollowTheModelRules(t *testing.T) {
	luna := `{"reasoning_values":"none|low|medium|high|xhigh|max","tools_need_none":true,"accepts_reasoning_field":true,"accepts_verbosity":true,"top_p_ok":true,"forced_tool_ok":true}`
	gpt4o := `{"reasoning_values":"","accepts_reasoning_field":false,"accepts_verbosity":false,"top_p_ok":true,"forced_tool_ok":true}`
	haiku := `{"reasoning_values":"low|medium|high","accepts_reasoning_field":true,"top_p_ok":false,"thinking_default_on":true,"can_disable_thinking":true,"thinking_off_efforts":"low|medium|high","forced_tool_ok":true}`
	opus := `{"reasoning_values":"low|medium|high|xhigh|max","accepts_reasoning_field":true,"thinking_default_on":true,"can_disable_thinking":false,"forced_tool_ok":false}`
	ministral := `{"reasoning_values":"","accepts_reasoning_field":false,"top_p_ok":true}`
	tests := []struct {
		name      string
		provider  string
		rules     string // "" for a model without rules
		args      PolicyArgs
		want      string // SettingsJSON, or the error class
		wantError bool
	}{
		{"A default effort becomes none", "a", luna, PolicyArgs{ReasoningEffort: "medium", Verbosity: "low", TopP: []float64{1}},
			`{"reasoning_effort":"none","verbosity":"low","send_top_p":true}`, false},
		{"A explicit effort other than none", "a", luna, PolicyArgs{ReasoningEffort: "high", Given: Given{ReasoningEffort: true}},
			"tabscreen_error_model_reasoning", true},
		{"A non-reasoning model gets no fields", "a", gpt4o, PolicyArgs{ReasoningEffort: "medium", Verbosity: "low", TopP: []float64{0.5}},
			`{"reasoning_effort":null,"verbosity":null,"send_top_p":true}`, false},
		{"A verbosity given to a model without it", "a", gpt4o, PolicyArgs{ReasoningEffort: "medium", Verbosity: "high", Given: Given{Verbosity: true}},
			"tabscreen_error_model_verbosity", true},
		{"A custom model gets what was given", "a", "", PolicyArgs{ReasoningEffort: "high", Verbosity: "low", Given: Given{ReasoningEffort: true, TopP: true}},
			`{"reasoning_effort":"high","verbosity":null,"send_top_p":true}`, false},
		{"B small model: thinking off, tool forced", "b", haiku, PolicyArgs{ReasoningEffort: "medium", Builtin: true},
			`{"reasoning_effort":"medium","thinking":"disabled","forced_tool":true,"allowance_effort":null}`, false},
		{"B thinking model is asked, not forced", "b", opus, PolicyArgs{ReasoningEffort: "medium", Builtin: true},
			`{"reasoning_effort":"medium","thinking":null,"forced_tool":false,"allowance_effort":"medium"}`, false},
		{"B none for a model that cannot turn thinking off", "b", opus, PolicyArgs{ReasoningEffort: "none", Given: Given{ReasoningEffort: true}},
			"tabscreen_error_model_reasoning", true},
		{"B custom none disables thinking", "b", "", PolicyArgs{ReasoningEffort: "none", Given: Given{ReasoningEffort: true}, Builtin: true},
			`{"reasoning_effort":null,"thinking":"disabled","forced_tool":true,"allowance_effort":null}`, false},
		{"C none is left out for a model without reasoning", "c", ministral, PolicyArgs{ReasoningEffort: "none", TopP: []float64{1}},
			`{"reasoning_effort":null,"send_top_p":true}`, false},
		{"C high for a model without reasoning", "c", ministral, PolicyArgs{ReasoningEffort: "high"},
			"tabscreen_error_model_reasoning", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := Lookup(tc.provider)
			m := PolicyModel{Name: "m"}
			if tc.rules != "" {
				m.Rules = rulesOf(t, tc.rules)
			}
			got, err := d.Settings([]PolicyModel{m}, tc.args)
			if tc.wantError {
				var ae *ArgError
				if !errors.As(err, &ae) || ae.Classes[0] != tc.want || len(ae.Bullets) == 0 || ae.Arg == "" {
					t.Fatalf("got %v, want an argument error %s", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			js, err := d.SettingsJSON(got[0])
			if err != nil || string(js) != tc.want {
				t.Fatalf("got %s (%v)\nwant %s", js, err, tc.want)
			}
		})
	}
}

func TestRegistryDescribesEveryProvider(t *testing.T) {
	all := All()
	if len(all) < 3 {
		t.Fatalf("%d providers", len(all))
	}
	for _, d := range all {
		if d.DefaultURL == "" || d.DefaultModel == "" || d.KeyVar == "" || d.New == nil || d.Policy == nil || d.Probe == nil ||
			len(d.ModelFields) == 0 || len(d.SettingFields) == 0 || (d.ToolFormat != "chat" && d.ToolFormat != "messages") {
			t.Errorf("incomplete descriptor %+v", d)
		}
		if byProtocol, ok := Lookup(d.Protocol); !ok || byProtocol.Letter != d.Letter {
			t.Errorf("%s is not found by its protocol", d.Letter)
		}
	}
	if _, ok := Lookup("zz"); ok {
		t.Fatal("an unknown provider was found")
	}
}

func TestEndpointFollowsTheURLForm(t *testing.T) {
	b, _ := Lookup("b")
	a, _ := Lookup("a")
	for in, want := range map[string]string{
		"https://api.anthropic.com":              "https://api.anthropic.com/v1/messages",
		"https://api.anthropic.com/":             "https://api.anthropic.com/v1/messages",
		"http://127.0.0.1:9/proxy/v1/messages":   "http://127.0.0.1:9/proxy/v1/messages",
		"http://127.0.0.1:9/proxy/v1/messages//": "http://127.0.0.1:9/proxy/v1/messages",
	} {
		if got := b.Endpoint(in); got != want {
			t.Errorf("B %s -> %s, want %s", in, got, want)
		}
	}
	if got := a.Endpoint("http://x/v1/chat/completions"); got != "http://x/v1/chat/completions" {
		t.Errorf("A endpoint %s", got)
	}
}
