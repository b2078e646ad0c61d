package screen

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestField(t *testing.T) {
	cases := []struct {
		in    string
		valid bool
		want  string
		blank bool
	}{
		{"", false, NoInformation, true},
		{"", true, NoInformation, true},
		{" \t\n ", true, NoInformation, true},
		{"NA", true, NoInformation, true},
		{"criteria for\na systematic review", true, "criteria for a systematic review", false},
		{"a\r\n\r\nb\n\n\nc", true, "a b c", false},
		{"  Jørgensen  ", true, "Jørgensen", false},
	}
	for _, c := range cases {
		got, blank := Field(c.in, c.valid)
		if got != c.want || blank != c.blank {
			t.Errorf("Field(%q, %v) = %q, %v; want %q, %v", c.in, c.valid, got, blank, c.want, c.blank)
		}
	}
}

func TestQuestionOrderAndDelimiters(t *testing.T) {
	q := Question("Is it about\nfamily therapy?", "T", "A")
	if !strings.HasPrefix(q, "Is it about family therapy?") {
		t.Fatalf("prompt must come first with line breaks as spaces: %q", q)
	}
	if !strings.Contains(q, "<title>T</title>") || !strings.HasSuffix(q, "<abstract>A</abstract>") {
		t.Fatalf("record not delimited: %q", q)
	}
}

func TestBuiltinTools(t *testing.T) {
	cases := []struct {
		over, desc, conf bool
		name             string
		enum             []string
		order            []string
	}{
		{true, false, false, "inclusion_decision_simple", []string{"1", "0", "1.1"}, []string{DecisionField}},
		{true, true, false, "inclusion_decision", []string{"1", "0", "1.1"}, []string{DescriptionField, DecisionField}},
		{false, false, false, "inclusion_decision_simple_binary", []string{"1", "0"}, []string{DecisionField}},
		{false, true, true, "inclusion_decision_binary", []string{"1", "0"}, []string{DescriptionField, DecisionField, ConfidenceField}},
	}
	for _, c := range cases {
		tool := BuiltinTool(c.over, c.desc, c.conf)
		if tool.Name != c.name || !tool.Strict {
			t.Errorf("tool %v: name %q strict %v", c, tool.Name, tool.Strict)
		}
		var schema struct {
			Required             []string `json:"required"`
			AdditionalProperties bool     `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tool.Parameters, &schema); err != nil {
			t.Fatal(err)
		}
		if strings.Join(schema.Required, ",") != strings.Join(c.order, ",") || schema.AdditionalProperties {
			t.Errorf("%s: required %v, want %v in that order", c.name, schema.Required, c.order)
		}
		if got := enumOf(tool.Parameters, DecisionField); strings.Join(got, ",") != strings.Join(c.enum, ",") {
			t.Errorf("%s: enum %v want %v", c.name, got, c.enum)
		}
		// The schema text itself keeps the property order.
		pos := -1
		for _, p := range c.order {
			i := strings.Index(string(tool.Parameters), `"`+p+`":{`)
			if i <= pos {
				t.Errorf("%s: property %s out of order in %s", c.name, p, tool.Parameters)
			}
			pos = i
		}
	}
}

func TestReadDecision(t *testing.T) {
	simple := BuiltinTool(true, false, false)
	binary := BuiltinTool(false, true, false)
	custom := Tool{Name: "judge", Parameters: json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string","enum":["1","0"]},"why":{"type":"string"}}}`)}
	noEnum := Tool{Name: "free", Parameters: json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string"}}}`)}
	cases := []struct {
		name    string
		args    string
		tool    *Tool
		raw     string
		binary  int32
		wantErr string
	}{
		{"include", `{"decision_llm":"1"}`, &simple, "1", 1, ""},
		{"exclude", `{"decision_llm":"0"}`, &simple, "0", 0, ""},
		{"uncertain", `{"decision_llm":"1.1"}`, &simple, "1.1", 1, ""},
		{"uncertain not allowed when binary", `{"decision_llm":"1.1","detailed_description":"x"}`, &binary, "", 0, "not in the tool's enum"},
		{"word is not a decision", `{"decision_llm":"Include"}`, nil, "", 0, "must be"},
		{"ten is not one", `{"decision_llm":"10"}`, nil, "", 0, "must be"},
		{"number accepted", `{"decision_llm":1}`, nil, "1", 1, ""},
		{"custom tool single enum", `{"verdict":"0","why":"no"}`, &custom, "0", 0, ""},
		{"custom tool without enum", `{"verdict":"0"}`, &noEnum, "", 0, "no single enum"},
		{"missing field", `{}`, &simple, "", 0, "have no"},
	}
	for _, c := range cases {
		var args map[string]any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		d, err := ReadDecision(args, c.tool)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || d.Raw != c.raw || d.Binary != c.binary {
			t.Errorf("%s: got %+v, %v", c.name, d, err)
		}
	}
}

func reps(includes, excludes, failed int) []Answer {
	var out []Answer
	n := int32(0)
	add := func(k int, binary int32, has bool) {
		for i := 0; i < k; i++ {
			n++
			out = append(out, Answer{Record: 1, PromptID: 1, Model: "m", TopP: 1, HasTopP: true, N: n,
				Binary: binary, HasBinary: has, Submodel: "m-1", HasSubmodel: has})
		}
	}
	add(includes, 1, true)
	add(excludes, 0, true)
	add(failed, 0, false)
	return out
}

func f(x float64) *float64 { return &x }

// The worked edge cases of the incumbent's notes (aiscreenr.md 5.3), with this package's rules:
// ">=" for Include, and a record without answers flagged Check.
func TestAggregateEdgeCases(t *testing.T) {
	cases := []struct {
		name         string
		answers      []Answer
		upper, lower *float64
		inclP        float64
		hasInclP     bool
		label        string
		num          int32
		missing      int32
	}{
		{"1 of 10 at defaults", reps(1, 9, 0), nil, nil, 0.1, true, "Include", 1, 0},
		{"0 of 10 at defaults", reps(0, 10, 0), nil, nil, 0, true, "Exclude", 0, 0},
		{"1 of 10 at 0.5/0.2", reps(1, 9, 0), f(0.5), f(0.2), 0.1, true, "Exclude", 0, 0},
		{"2 of 10 at 0.5/0.2", reps(2, 8, 0), f(0.5), f(0.2), 0.2, true, "Check", 1, 0},
		{"5 of 10 at 0.5/0.2", reps(5, 5, 0), f(0.5), f(0.2), 0.5, true, "Include", 1, 0},
		{"4 of 10, only upper 0.5", reps(4, 6, 0), f(0.5), nil, 0.4, true, "Exclude", 0, 0},
		{"1 of 10 at 0.5/0.4", reps(1, 9, 0), f(0.5), f(0.4), 0.1, true, "Exclude", 0, 0},
		{"all uncertain", reps(10, 0, 0), nil, nil, 1, true, "Include", 1, 0},
		{"3 failed, 1 of 7", reps(1, 6, 3), nil, nil, 1.0 / 7, true, "Include", 1, 3},
		{"9 failed, single exclude", reps(0, 1, 9), nil, nil, 0, true, "Exclude", 0, 9},
		{"all failed", reps(0, 0, 10), nil, nil, 0, false, "Check", 1, 10},
		{"1 of 3 at defaults", reps(1, 2, 0), nil, nil, 1.0 / 3, true, "Include", 1, 0},
		{"3 of 10 at 0.3/0.3", reps(3, 7, 0), f(0.3), f(0.3), 0.3, true, "Include", 1, 0},
		{"lower ignored when upper is 0.1", reps(0, 10, 0), f(0.1), f(0.0), 0, true, "Exclude", 0, 0},
	}
	for _, c := range cases {
		got := Aggregate(c.answers, EffectiveCutoffs(c.upper, c.lower))
		if len(got) != 1 {
			t.Fatalf("%s: %d rows, want exactly 1", c.name, len(got))
		}
		g := got[0]
		if g.HasInclP != c.hasInclP || (c.hasInclP && math.Abs(g.InclP-c.inclP) > 1e-12) ||
			g.Final != c.label || g.FinalNum != c.num || g.MissingCount != c.missing || g.Reps != int32(len(c.answers)) {
			t.Errorf("%s: got %+v", c.name, g)
		}
	}
}

// Labels gives each probability the verdict the aggregation gives a group with that incl_p, and a
// missing one the verdict of a group without answers.
func TestLabelsAgreeWithAggregate(t *testing.T) {
	c := EffectiveCutoffs(f(0.5), f(0.2))
	in := []*float64{f(0), f(0.2), f(1.0 / 3), f(0.5), f(1), nil, f(0.5 - 1e-12)}
	final, num := c.Labels(in)
	want := []string{"Exclude", "Check", "Check", "Include", "Include", "Check", "Include"}
	wantNum := []int32{0, 1, 1, 1, 1, 1, 1}
	for i := range in {
		if final[i] != want[i] || num[i] != wantNum[i] {
			t.Errorf("incl_p %v: got %s/%d, want %s/%d", in[i], final[i], num[i], want[i], wantNum[i])
		}
	}
	for k := 0; k <= 10; k++ {
		agg := Aggregate(reps(k, 10-k, 0), c)[0]
		p := float64(k) / 10
		l, n := c.Labels([]*float64{&p})
		if l[0] != agg.Final || n[0] != agg.FinalNum {
			t.Errorf("%d of 10: Labels %s/%d, Aggregate %s/%d", k, l[0], n[0], agg.Final, agg.FinalNum)
		}
	}
	if l, n := c.Labels(nil); len(l) != 0 || len(n) != 0 {
		t.Errorf("no probabilities: got %v %v", l, n)
	}
}

func TestAggregateOneRowPerGroupWithMixedSubmodels(t *testing.T) {
	a := reps(2, 2, 1)
	a[1].Submodel = "m-2"
	b := reps(1, 0, 0)
	b[0].Record = 2
	got := Aggregate(append(a, b...), EffectiveCutoffs(nil, nil))
	if len(got) != 2 || got[0].Submodel != "m-1, m-2" || got[1].Record != 2 {
		t.Fatalf("got %+v", got)
	}
}

func TestLongestAnswerAcrossAllRepeats(t *testing.T) {
	cases := []struct {
		name         string
		descriptions []string // one per rep of reps(1, 2, 1): include, exclude, exclude, failed
		upper        *float64
		wantFinal    string
		want         string
		wantFound    bool
	}{
		{"longest disagrees with the final decision", []string{"include because of many good reasons here", "exclude: short",
			"exclude for a longer reason", ""}, f(0.5), "Exclude", "include because of many good reasons here", true},
		{"longest agrees with the final decision", []string{"include: short", "exclude: short",
			"exclude for a somewhat longer reason", ""}, nil, "Include", "exclude for a somewhat longer reason", true},
		{"words, not characters, and ties to the earliest rep", []string{"one two three", "a b c", "threeeeeeeeeee",
			""}, nil, "Include", "one two three", true},
		{"a failed rep's text is not an answer", []string{"", "", "", "failed with a very long reason of many words"},
			nil, "Include", "", false},
	}
	for _, c := range cases {
		a := reps(1, 2, 1)
		for i, d := range c.descriptions {
			if d != "" {
				a[i].Description, a[i].HasDescription = d, true
			}
		}
		got := Aggregate(a, EffectiveCutoffs(c.upper, nil))[0]
		if got.Final != c.wantFinal || got.LongestAnswer != c.want || got.HasLongestAnswer != c.wantFound {
			t.Errorf("%s: got %q (%v), final %s", c.name, got.LongestAnswer, got.HasLongestAnswer, got.Final)
		}
	}
}

func TestMeanConfidenceIgnoresMissing(t *testing.T) {
	a := reps(2, 0, 1)
	a[0].Confidence, a[0].HasConfidence = 80, true
	a[1].Confidence, a[1].HasConfidence = 60, true
	got := Aggregate(a, EffectiveCutoffs(nil, nil))[0]
	if !got.HasMeanConfidence || got.MeanConfidence != 70 {
		t.Fatalf("got %+v", got)
	}
}

func TestCostIsExactAndUsesCachedRate(t *testing.T) {
	p := Prices{In: 0.10, CachedIn: 0.01, Out: 0.50, HasIn: true, HasCachedIn: true, HasOut: true}
	in, out, ok := p.Cost(Usage{Prompt: 300, Cached: 100, Completion: 7})
	if !ok || math.Abs(in-(200*0.10+100*0.01)/1e6) > 1e-18 || math.Abs(out-7*0.50/1e6) > 1e-18 {
		t.Fatalf("in %g out %g", in, out)
	}
	if _, _, ok := (Prices{}).Cost(Usage{Prompt: 1}); ok {
		t.Fatal("unknown prices must not price")
	}
}

func TestCostPricesCacheWritesAtTheirOwnRate(t *testing.T) {
	// Provider B: 1,000 input tokens of which 300 cache reads and 200 cache writes.
	p := Prices{In: 1, CachedIn: 0.1, CacheWrite: 1.25, Out: 5, HasIn: true, HasCachedIn: true, HasCacheWrite: true, HasOut: true}
	in, out, ok := p.Cost(Usage{Prompt: 1000, Cached: 300, CacheWrite: 200, Completion: 10})
	want := (500*1 + 300*0.1 + 200*1.25) / 1e6
	if !ok || math.Abs(in-want) > 1e-18 || math.Abs(out-50/1e6) > 1e-18 {
		t.Fatalf("in %g (want %g) out %g", in, want, out)
	}
}

func TestConfidenceOutsideItsRangeIsMissing(t *testing.T) {
	tool := BuiltinTool(true, false, true)
	for raw, want := range map[string]bool{`80`: true, `0`: true, `100`: true, `101`: false, `-3`: false, `"high"`: false} {
		var args map[string]any
		_ = json.Unmarshal([]byte(`{"decision_llm":"1","confidence":`+raw+`}`), &args)
		d, err := ReadDecision(args, &tool)
		if err != nil || d.Binary != 1 || d.HasConfidence != want {
			t.Errorf("confidence %s: %+v %v", raw, d, err)
		}
	}
}

// With a custom tool the explanation is read from detailed_description, else from the one
// free-text argument that names a reason, else from the only free-text argument.
func TestExplanationOfCustomTools(t *testing.T) {
	tool := func(props string) *Tool {
		return &Tool{Name: "judge", Parameters: json.RawMessage(`{"type":"object","properties":{` + props + `}}`)}
	}
	verdict := `"verdict":{"type":"string","enum":["1","0"]}`
	cases := []struct {
		name string
		tool *Tool
		args string
		want string
		has  bool
	}{
		{"detailed_description first", tool(verdict + `,"detailed_description":{"type":"string"},"reason":{"type":"string"}`),
			`{"verdict":"1","detailed_description":"dd","reason":"r"}`, "dd", true},
		{"the argument that names a reason", tool(verdict + `,"population":{"type":"string"},"rationale":{"type":"string"}`),
			`{"verdict":"1","population":"adults","rationale":"because"}`, "because", true},
		{"nullable string", tool(verdict + `,"explanation":{"type":["string","null"]},"n":{"type":"integer"}`),
			`{"verdict":"0","explanation":"too small","n":3}`, "too small", true},
		{"the only free text", tool(verdict + `,"notes":{"type":"string"},"n":{"type":"integer"}`),
			`{"verdict":"0","notes":"see methods","n":3}`, "see methods", true},
		{"two reasons are ambiguous", tool(verdict + `,"reason_in":{"type":"string"},"reason_out":{"type":"string"}`),
			`{"verdict":"0","reason_in":"a","reason_out":"b"}`, "", false},
		{"two free texts without a reason are ambiguous", tool(verdict + `,"population":{"type":"string"},"design":{"type":"string"}`),
			`{"verdict":"0","population":"a","design":"b"}`, "", false},
		{"an enum is not an explanation", tool(`"decision_llm":{"type":"string","enum":["1","0"]},"reason":{"type":"string","enum":["x","y"]}`),
			`{"decision_llm":"0","reason":"x"}`, "", false},
		{"no explanation argument", tool(verdict), `{"verdict":"1"}`, "", false},
		{"the explanation is missing from the call", tool(verdict + `,"reason":{"type":"string"}`), `{"verdict":"1"}`, "", false},
	}
	for _, c := range cases {
		var args map[string]any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		d, err := ReadDecision(args, c.tool)
		if err != nil || d.Description != c.want || d.HasDescription != c.has {
			t.Errorf("%s: got %q (%v), %v", c.name, d.Description, d.HasDescription, err)
		}
	}
}
