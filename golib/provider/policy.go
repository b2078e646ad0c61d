package provider

// The per-model request policy: from a model's rules (a row of the package's rules table) and the
// user's arguments, what one request body holds for that model, or why the arguments cannot be
// sent to it. Each provider's policy sits in its adapter file; this file holds what they share.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// A model's rules are one row of its provider's rules file (inst/extdata/model_rules/<letter>.csv),
// as R reads it: every column a string. The shared code carries the row as it came; each policy
// decodes it into a struct of its own (DecodeRules), so a protocol's columns are its own.

// PolicyModel is a model of the call: its name, its repetitions and, unless it is a custom model
// or priced by the user without rules, its rules.
type PolicyModel struct {
	Name  string          `json:"name"`
	Reps  int             `json:"reps"`
	Rules json.RawMessage `json:"rules"`
}

// hasRules says whether the model has a rules row.
func (m PolicyModel) hasRules() bool {
	return len(m.Rules) > 0 && string(m.Rules) != "null"
}

// DecodeRules reads a model's rules into a policy's struct of string, bool ("TRUE" or "FALSE") and
// []string ("|"-separated) fields named by their json tags: a column the struct does not name, one
// of its columns missing or a value of the wrong form is an error (the file and the policy
// disagree).
func DecodeRules(m PolicyModel, dst any) error {
	var row map[string]string
	if err := json.Unmarshal(m.Rules, &row); err != nil {
		return fmt.Errorf("rules of model %q: %w", m.Name, err)
	}
	v := reflect.ValueOf(dst).Elem()
	known := map[string]bool{}
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		known[name] = true
		s, ok := row[name]
		if !ok {
			return fmt.Errorf("rules of model %q: no column %q", m.Name, name)
		}
		switch f := v.Field(i); f.Kind() {
		case reflect.Bool:
			if s != "TRUE" && s != "FALSE" {
				return fmt.Errorf("rules of model %q: column %q holds %q, not TRUE or FALSE", m.Name, name, s)
			}
			f.SetBool(s == "TRUE")
		case reflect.Slice:
			if s != "" {
				f.Set(reflect.ValueOf(strings.Split(s, "|")))
			}
		default:
			f.SetString(s)
		}
	}
	for name := range row {
		if !known[name] {
			return fmt.Errorf("rules of model %q: unknown column %q", m.Name, name)
		}
	}
	return nil
}

// Given says which arguments the user passed (the others hold the function's defaults).
type Given struct {
	ReasoningEffort bool `json:"reasoning_effort"`
	Verbosity       bool `json:"verbosity"`
	TopP            bool `json:"top_p"`
}

// PolicyArgs are the user's arguments that shape a request.
type PolicyArgs struct {
	ReasoningEffort string    `json:"reasoning_effort"`
	Verbosity       string    `json:"verbosity"`
	TopP            []float64 `json:"top_p"`
	Given           Given     `json:"given"`
	// Builtin is true when the built-in tool is used (no custom tools).
	Builtin bool `json:"builtin"`
	// Force lifts the guards on repetitions that a policy applies (the spec's `force`).
	Force bool `json:"force"`
}

// ModelSettings are the request fields of one model, as the run options carry them. A nil field
// is left out of the request.
type ModelSettings struct {
	ReasoningEffort *string `json:"reasoning_effort"`
	Verbosity       *string `json:"verbosity"`
	SendTopP        *bool   `json:"send_top_p"`
	Thinking        *string `json:"thinking"`
	ForcedTool      *bool   `json:"forced_tool"`
	// AllowanceEffort sizes the reasoning of the price estimate's answers.
	AllowanceEffort *string `json:"allowance_effort"`
}

// Policy decides the settings of one model.
type Policy func(m PolicyModel, a PolicyArgs) (ModelSettings, error)

// ArgError is an argument the model cannot take: R raises it as an argument error of these
// classes, naming the argument. Bullets are cli-style: the first has the name "", the others
// "i" or "x".
type ArgError struct {
	Classes []string `json:"class"`
	Arg     string   `json:"arg"`
	Bullets []Bullet `json:"bullets"`
}

// Bullet is one line of an error message.
type Bullet struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

func (e *ArgError) Error() string {
	parts := make([]string, len(e.Bullets))
	for i, b := range e.Bullets {
		parts[i] = b.Text
	}
	return strings.Join(parts, " ")
}

func argError(class, arg string, text string, hints ...string) *ArgError {
	e := &ArgError{Classes: []string{class, "tabscreen_error_model"}, Arg: arg, Bullets: []Bullet{{"", text}}}
	for _, h := range hints {
		e.Bullets = append(e.Bullets, Bullet{"i", h})
	}
	return e
}

// Settings applies a provider's policy to each model, in order.
func (d Descriptor) Settings(models []PolicyModel, a PolicyArgs) ([]ModelSettings, error) {
	if d.Policy == nil {
		return nil, fmt.Errorf("provider %q has no request policy", d.Letter)
	}
	out := make([]ModelSettings, len(models))
	for i, m := range models {
		s, err := d.Policy(m, a)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// SettingsJSON writes a model's settings with only the fields the provider uses
// (Descriptor.SettingFields), in that order.
func (d Descriptor) SettingsJSON(s ModelSettings) (json.RawMessage, error) {
	all, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var byName map[string]json.RawMessage
	if err := json.Unmarshal(all, &byName); err != nil {
		return nil, err
	}
	buf := []byte{'{'}
	for i, f := range d.SettingFields {
		v, ok := byName[f]
		if !ok {
			return nil, fmt.Errorf("provider %q: no setting %q", d.Letter, f)
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		k, _ := json.Marshal(f)
		buf = append(append(append(buf, k...), ':'), v...)
	}
	return append(buf, '}'), nil
}

// asGiven are the settings of a model without rules (a custom model, or one priced by the user):
// exactly what the user gave, and top_p only when given. A provider without verbosity ignores it.
func asGiven(a PolicyArgs) ModelSettings {
	s := ModelSettings{SendTopP: boolp(a.Given.TopP)}
	if a.Given.ReasoningEffort {
		s.ReasoningEffort = str(a.ReasoningEffort)
	}
	if a.Given.Verbosity {
		s.Verbosity = str(a.Verbosity)
	}
	s.AllowanceEffort = s.ReasoningEffort
	return s
}

// quoted writes "a", "b" or "c" as R's cli does for a vector of values.
func quoted(values []string, conj string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	case 2:
		return q[0] + " " + conj + " " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + ", " + conj + " " + q[len(q)-1]
}

func str(s string) *string { return &s }
func boolp(b bool) *bool   { return &b }

func allOne(topP []float64) bool {
	return !slices.ContainsFunc(topP, func(t float64) bool { return t != 1 })
}

// effortNotTaken is the error of an effort outside the model's values.
func effortNotTaken(model, effort string, takes []string) *ArgError {
	return argError("tabscreen_error_model_reasoning", "reasoning_effort",
		fmt.Sprintf("Model %q does not take `reasoning_effort = %q`.", model, effort),
		"It takes "+quoted(takes, "or")+".")
}

// topPNotTaken is the error of a top_p other than 1 for a model that takes none.
func topPNotTaken(model, withEffort string) *ArgError {
	return argError("tabscreen_error_model_top_p", "top_p",
		fmt.Sprintf("Model %q does not take a `top_p` other than 1%s.", model, withEffort),
		"Keep `top_p = 1` for this model, or screen it in a separate call.")
}
