package provider

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

func TestPoliciesFollowTheModelRules(t *testing.T) {
	luna := `{"reasoning_values":"none|low|medium|high|xhigh|max","tools_need_none":"TRUE","accepts_reasoning_field":"TRUE","accepts_verbosity":"TRUE","top_p_ok":"TRUE","force_class":"small_default"}`
	gpt4o := `{"reasoning_values":"","tools_need_none":"FALSE","accepts_reasoning_field":"FALSE","accepts_verbosity":"FALSE","top_p_ok":"TRUE","force_class":"small_old"}`
	haiku := `{"reasoning_values":"low|medium|high","accepts_reasoning_field":"TRUE","thinking_default_on":"TRUE","can_disable_thinking":"TRUE","thinking_off_efforts":"low|medium|high","forced_tool_ok":"TRUE","sampling_ok":"FALSE"}`
	opus := `{"reasoning_values":"low|medium|high|xhigh|max","accepts_reasoning_field":"TRUE","thinking_default_on":"TRUE","can_disable_thinking":"FALSE","thinking_off_efforts":"","forced_tool_ok":"FALSE","sampling_ok":"FALSE"}`
	ministral := `{"reasoning_values":"","accepts_reasoning_field":"FALSE","top_p_ok":"TRUE"}`
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
			m := PolicyModel{Name: "m", Reps: 1, Rules: json.RawMessage(tc.rules)}
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

// Every row of each provider's rules file is one its policy decodes: the file names exactly the
// columns of the policy's struct, in the forms it reads.
func TestRulesFilesAreDecodedByTheirPolicy(t *testing.T) {
	for _, d := range All() {
		f, err := os.Open(filepath.Join("..", "..", "inst", "extdata", "model_rules", d.Letter+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		_ = f.Close()
		if err != nil || len(rows) < 2 {
			t.Fatalf("%s: %d rows, %v", d.Letter, len(rows), err)
		}
		for _, row := range rows[1:] {
			rules := map[string]string{}
			var name string
			for i, col := range rows[0] {
				switch col {
				case "model":
					name = row[i]
				case "min_cache_tokens", "notes": // read by R and the engine, not by the policy
				default:
					rules[col] = row[i]
				}
			}
			js, _ := json.Marshal(rules)
			m := PolicyModel{Name: name, Reps: 1, Rules: js}
			_, err := d.Policy(m, PolicyArgs{ReasoningEffort: "none", TopP: []float64{1}, Builtin: true})
			var ae *ArgError
			if err != nil && !errors.As(err, &ae) {
				t.Errorf("%s %s: %v", d.Letter, name, err)
			}
			if _, err := d.Probe(m); err != nil {
				t.Errorf("%s %s probe: %v", d.Letter, name, err)
			}
		}
	}
}

func TestRulesAreDecodedStrictly(t *testing.T) {
	a, _ := Lookup("a")
	good := map[string]string{"reasoning_values": "none|low", "tools_need_none": "TRUE", "accepts_reasoning_field": "TRUE",
		"accepts_verbosity": "TRUE", "top_p_ok": "TRUE", "force_class": "large"}
	for name, change := range map[string]func(map[string]string){
		"an unknown column":    func(r map[string]string) { r["thinking_default_on"] = "FALSE" },
		"a missing column":     func(r map[string]string) { delete(r, "top_p_ok") },
		"a logical not TRUE":   func(r map[string]string) { r["top_p_ok"] = "yes" },
		"an unknown class":     func(r map[string]string) { r["force_class"] = "huge" },
		"a value not a string": nil,
	} {
		rules := maps.Clone(good)
		var js []byte
		if change == nil {
			js = []byte(`{"top_p_ok": true}`)
		} else {
			change(rules)
			js, _ = json.Marshal(rules)
		}
		_, err := a.Policy(PolicyModel{Name: "m", Reps: 1, Rules: js}, PolicyArgs{ReasoningEffort: "none"})
		var ae *ArgError
		if err == nil || errors.As(err, &ae) {
			t.Errorf("%s: got %v, want an internal error", name, err)
		}
	}
	js, _ := json.Marshal(good)
	if _, err := a.Policy(PolicyModel{Name: "m", Reps: 1, Rules: js}, PolicyArgs{ReasoningEffort: "none"}); err != nil {
		t.Fatal(err)
	}
}

func TestProviderAGuardsRepetitionsByForceClass(t *testing.T) {
	a, _ := Lookup("a")
	rules := func(class string) json.RawMessage {
		return json.RawMessage(`{"reasoning_values":"","tools_need_none":"FALSE","accepts_reasoning_field":"FALSE",` +
			`"accepts_verbosity":"FALSE","top_p_ok":"TRUE","force_class":"` + class + `"}`)
	}
	for _, tc := range []struct {
		rules   json.RawMessage
		reps    int
		force   bool
		refused bool
	}{
		{rules("small_default"), 50, false, false},
		{rules("small_old"), 10, false, false}, {rules("small_old"), 11, false, true}, {rules("small_old"), 11, true, false},
		{rules("large"), 1, false, false}, {rules("large"), 2, false, true}, {rules("large"), 2, true, false},
		{nil, 10, false, false}, {nil, 11, false, true}, {nil, 11, true, false},
	} {
		_, err := a.Policy(PolicyModel{Name: "m", Reps: tc.reps, Rules: tc.rules}, PolicyArgs{ReasoningEffort: "none", Force: tc.force})
		var ae *ArgError
		if refused := errors.As(err, &ae) && ae.Classes[0] == "tabscreen_error_force" && ae.Arg == "reps"; refused != tc.refused {
			t.Errorf("%s x%d force %v: %v", tc.rules, tc.reps, tc.force, err)
		}
	}
}

func TestProviderBChecksSamplingAgainstTheRules(t *testing.T) {
	b, _ := Lookup("b")
	model := func(name, ok string) PolicyModel {
		return PolicyModel{Name: name, Rules: json.RawMessage(`{"reasoning_values":"","accepts_reasoning_field":"FALSE",` +
			`"thinking_default_on":"FALSE","can_disable_thinking":"TRUE","thinking_off_efforts":"","forced_tool_ok":"TRUE","sampling_ok":"` + ok + `"}`)}
	}
	takes, rejects, custom := model("haiku-4", "TRUE"), model("sonnet-5", "FALSE"), PolicyModel{Name: "mine"}
	for _, tc := range []struct {
		models  []PolicyModel
		fields  []string
		refused bool
	}{
		{[]PolicyModel{rejects}, []string{"metadata"}, false},
		{[]PolicyModel{rejects}, []string{"temperature"}, true},
		{[]PolicyModel{takes}, []string{"temperature"}, false},
		{[]PolicyModel{takes}, []string{"temperature", "top_p"}, true},
		{[]PolicyModel{custom}, []string{"temperature", "top_p"}, false},
	} {
		err := b.CheckBody(tc.models, tc.fields)
		var ae *ArgError
		if refused := errors.As(err, &ae) && ae.Classes[0] == "tabscreen_error_model_sampling"; refused != tc.refused {
			t.Errorf("%v %v: %v", tc.models, tc.fields, err)
		}
	}
}
