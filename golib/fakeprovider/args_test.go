package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func schemaOf(t *testing.T, s string) map[string]any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(s)))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

// TestFillArgsValid: generated arguments validate against the tool schema.
func TestFillArgsValid(t *testing.T) {
	schemasJSON := []string{
		`{"type":"object","properties":{"d":{"type":"string","enum":["1","0","1.1"]},"r":{"type":"string"}}}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":-3,"maximum":-1},
		  "x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":0.05},
		  "m":{"type":"number","minimum":10},"k":{"type":"integer","exclusiveMaximum":0},
		  "s":{"type":"string","minLength":60,"maxLength":70},"t":{"type":"string","maxLength":3}}}`,
		`{"type":"object","properties":{"list":{"type":"array","items":{"type":"string","enum":["a","b"]},"minItems":2},
		  "empty":{"type":"array","items":{"type":"integer"},"maxItems":0},
		  "nested":{"type":"object","properties":{"ok":{"type":"boolean"},"why":{"type":["string","null"]}},
		   "required":["ok","why"],"additionalProperties":false}},"required":["list","nested"]}`,
		`{"type":"object","$defs":{"level":{"type":"integer","enum":[1,2,3]}},
		  "properties":{"a":{"$ref":"#/$defs/level"},"b":{"anyOf":[{"type":"null"},{"const":"fixed"}]},
		  "c":{"oneOf":[{"type":"number","minimum":5,"maximum":6}]},"d":{"type":"null"}}}`,
		`{"type":"object"}`,
	}
	c := jsonschema.NewCompiler()
	for i, sj := range schemasJSON {
		s := schemaOf(t, sj)
		url := fmt.Sprintf("mem://s%d.json", i)
		if err := c.AddResource(url, s); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(0); seed < 200; seed++ {
			args := fillArgs(s, seed, nil)
			b, _ := json.Marshal(args)
			inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err := sch.Validate(inst); err != nil {
				t.Fatalf("schema %d seed %d: %s does not validate: %v", i, seed, b, err)
			}
		}
	}
}

func TestEnumDraws(t *testing.T) {
	s := schemaOf(t, `{"type":"object","properties":{"d":{"type":"string","enum":["1","0","1.1"]},
	  "level":{"type":"integer","enum":[1,2]}, "tag":{"type":"string","enum":["x","y"]}}}`)
	count := map[string]int{}
	levels := map[string]int{}
	n := 6000
	for i := 0; i < n; i++ {
		a := fillArgs(s, hash(uint64(i)), map[string]float64{"1": 0.3, "0": 0.6, "1.1": 0.1})
		m := a.(map[string]any)
		count[m["d"].(string)]++
		levels[enumKey(m["level"])]++
		count["tag="+m["tag"].(string)]++
	}
	for k, want := range map[string]float64{"1": 0.3, "0": 0.6, "1.1": 0.1} {
		if got := float64(count[k]) / float64(n); got < want-0.03 || got > want+0.03 {
			t.Errorf("share of %q %.3f, want %.1f", k, got, want)
		}
	}
	// the numeric enum [1, 2] holds the weighted "1" only: always 1
	if levels["1"] != n {
		t.Errorf("levels %v", levels)
	}
	// no weights apply to [x, y]: uniform
	if x := float64(count["tag=x"]) / float64(n); x < 0.45 || x > 0.55 {
		t.Errorf("tag x share %.3f", x)
	}
	// deterministic
	a, _ := json.Marshal(fillArgs(s, 42, nil))
	b, _ := json.Marshal(fillArgs(s, 42, nil))
	if !bytes.Equal(a, b) {
		t.Error("not deterministic")
	}
}

func TestBreakEnum(t *testing.T) {
	s := schemaOf(t, `{"type":"object","properties":{"a":{"type":"string"},
	  "inner":{"type":"object","properties":{"lvl":{"type":"integer","enum":[1,5,3]}}}},"required":["a"]}`)
	args := fillArgs(s, 1, nil)
	if !breakEnum(args, s) {
		t.Fatal("nothing broken")
	}
	if v := args.(map[string]any)["inner"].(map[string]any)["lvl"]; enumKey(v) != "6" {
		t.Errorf("lvl %v", v)
	}
	// no enum: the first required property goes
	s = schemaOf(t, `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)
	args = fillArgs(s, 1, nil)
	if !breakEnum(args, s) || len(args.(map[string]any)) != 0 {
		t.Errorf("args %v", args)
	}
	if got := outsideEnum([]any{"2", "1", "0"}); got != "3" {
		t.Errorf("outside %v", got)
	}
}

// TestDecisionsDifferAcrossRepetitions: repeated requests for one record can
// differ, a run is reproducible after a reset, and the request's seed fixes
// the answer.
func TestDecisionsDifferAcrossRepetitions(t *testing.T) {
	s, base := startServer(t, `{"seed":11}`)
	url := base + "/v1/chat/completions"
	run := func(extra string) []string {
		var out []string
		for i := 0; i < 30; i++ {
			a := toolArgs(t, post(t, url, "k", chatBody("Title: same record", extra)))
			out = append(out, fmt.Sprint(a["decision"], a["confidence"]))
		}
		return out
	}
	first := run("")
	distinct := map[string]bool{}
	for _, d := range first {
		distinct[d] = true
	}
	if len(distinct) < 5 {
		t.Errorf("repetitions hardly differ: %v", first)
	}
	s.Reset()
	if again := run(""); fmt.Sprint(again) != fmt.Sprint(first) {
		t.Errorf("not reproducible after reset:\n%v\n%v", first, again)
	}
	seeded := run(`"seed":5`)
	for _, d := range seeded {
		if d != seeded[0] {
			t.Fatalf("same seed, different answers: %v", seeded)
		}
	}
	configure(t, base, `{"decisions":{"1.1":1}}`)
	if d := toolArgs(t, post(t, url, "k", chatBody("y", "")))["decision"]; d != "1.1" {
		t.Errorf("decision %v", d)
	}
}
