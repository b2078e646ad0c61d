package fakeprovider

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// question is a screening question as a client builds it: the prompt, then the record.
func question(prompt, title, abstract string) string {
	return prompt + "\n\nNow evaluate the following record.\n<title>" + title + "</title>\n<abstract>" +
		abstract + "</abstract>"
}

// answerDigest hashes the tool arguments of a fixed sequence of requests over the three protocols:
// repeated records, the requests' own seeds, n > 1.
func answerDigest(t *testing.T, base string) string {
	t.Helper()
	h := sha256.New()
	for i := 0; i < 12; i++ {
		user := question("Screen this.", fmt.Sprint("T", i%4), fmt.Sprint("A", i%4))
		for _, r := range []reply{
			post(t, base+"/v1/chat/completions", "k", chatBody(user, `"n":2`)),
			postAnthropic(t, base, anthropicBody(t, user, "")),
			post(t, mistralURL(base), "k", mistralBody(t, user, `"random_seed":null`)),
			post(t, mistralURL(base), "k", mistralBody(t, user, "")),
		} {
			for _, d := range answerDecisions(t, r) {
				fmt.Fprintln(h, d)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// answerDecisions returns the tool arguments of every answer in a reply of any protocol, as JSON
// with sorted keys.
func answerDecisions(t *testing.T, r reply) []string {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var out []string
	m := r.json(t)
	if choices, ok := m["choices"].([]any); ok {
		for _, ch := range choices {
			msg := ch.(map[string]any)["message"].(map[string]any)
			out = append(out, string(mustJSON(mistralArgs(t, msg))))
		}
		return out
	}
	for _, b := range contentBlocks(t, r) {
		if b["type"] == "tool_use" {
			out = append(out, string(mustJSON(b["input"])))
		}
	}
	return out
}

// decisionsOf returns the "decision" argument of every answer in a reply of any protocol.
func decisionsOf(t *testing.T, r reply) []string {
	t.Helper()
	var out []string
	for _, a := range answerDecisions(t, r) {
		var args map[string]any
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			t.Fatal(err)
		}
		out = append(out, args["decision"].(string))
	}
	return out
}

// Without a tendency the answers are those the fake gave before tendencies existed (digests
// taken from that build).
func TestTendencyOffAnswersUnchanged(t *testing.T) {
	cases := []struct {
		config, digest string
	}{
		{`{"seed":3}`, "261f5e092dc51d37"},
		{`{"seed":3,"tendency":false}`, "261f5e092dc51d37"},
		{`{"seed":3,"tendency":null}`, "261f5e092dc51d37"},
		{`{"seed":3,"decisions":{"1":0.3,"0":0.6,"1.1":0.1}}`, "e01c9f798de7b6b1"},
	}
	for _, c := range cases {
		_, base := startServer(t, c.config)
		if got := answerDigest(t, base); got != c.digest {
			t.Errorf("%s: digest %s, want %s", c.config, got, c.digest)
		}
	}
	// the tendency changes them
	_, base := startServer(t, `{"seed":3,"tendency":true}`)
	if got := answerDigest(t, base); got == "261f5e092dc51d37" {
		t.Error("tendency: the answers did not change")
	}
}

func TestTendencyConfig(t *testing.T) {
	def := DefaultTendency()
	cases := []struct {
		patch string
		want  Tendency // compared as JSON
		err   string   // part of the error; "" for none
	}{
		{patch: `{"tendency":true}`, want: def},
		{patch: `{"tendency":false}`, want: Tendency{}},
		{patch: `{"tendency":{}}`, want: def},
		{patch: `{"tendency":{"models":{"large":3,"3b":0.5}}}`,
			want: Tendency{on: true, Components: def.Components, Models: WeightMap{"large": 3, "3b": 0.5}, Uncertain: 0.2}},
		{patch: `{"tendency":{"components":[{"weight":1,"a":2,"b":5}],"uncertain":0,"models":[]}}`,
			want: Tendency{on: true, Components: []TendencyComponent{{Weight: 1, A: 2, B: 5}}}},
		{patch: `{"tendency":{"component":[]}}`, err: `unknown field "component"`},
		{patch: `{"tendency":{"components":[{"weight":1,"a":2,"b":5,"mean":0.3}]}}`, err: `unknown field "mean"`},
		{patch: `{"tendency":"yes"}`, err: "tendency must be true, false or an object"},
		{patch: `{"tendency":{"components":[{"weight":1,"a":0,"b":5}]}}`, err: "components[0]: a and b"},
		{patch: `{"tendency":{"components":[{"weight":-1,"a":1,"b":5},{"weight":0,"a":1,"b":1}]}}`,
			err: "components[0]: weight must be >= 0"},
		{patch: `{"tendency":{"components":[{"weight":0,"a":1,"b":1}]}}`, err: "weights must add up to more than 0"},
		{patch: `{"tendency":{"models":{"large":0}}}`, err: `sharpness of "large" must be > 0`},
		{patch: `{"tendency":{"models":{" ":2}}}`, err: "model name parts must not be empty"},
		{patch: `{"tendency":{"uncertain":1.5}}`, err: "uncertain must be in [0, 1]"},
	}
	for _, c := range cases {
		got, err := DefaultConfig().Merge([]byte(c.patch))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one with %q", c.patch, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.patch, err)
			continue
		}
		if got.Tendency.On() != c.want.On() || string(mustJSON(got.Tendency)) != string(mustJSON(c.want)) {
			t.Errorf("%s: %s (on %v), want %s", c.patch, mustJSON(got.Tendency), got.Tendency.On(), mustJSON(c.want))
		}
		// what GET /_fake/config shows configures the same again
		again, err := DefaultConfig().Merge(mustJSON(got))
		if err != nil || string(mustJSON(again)) != string(mustJSON(got)) {
			t.Errorf("%s: round trip %v: %s", c.patch, err, mustJSON(again.Tendency))
		}
	}
}

func TestRecordPart(t *testing.T) {
	rec := "<title>T</title>\n<abstract>A</abstract>"
	cases := []struct{ text, want string }{
		{question("Is it about X?", "T", "A"), "<title>T</title>\n<abstract>A"},
		{question("Is it about Y? Think hard.", "T", "A"), "<title>T</title>\n<abstract>A"},
		// an example record before the one asked about
		{question("Like this:", "E", "F") + "\n" + question("", "T", "A"), "<title>T</title>\n<abstract>A"},
		{"prompt\n" + rec + "\n", "<title>T</title>\n<abstract>A"},
		{"Title: T. Abstract: A.", "Title: T. Abstract: A."},
		{"only </abstract>", "only </abstract>"},
		{"", ""},
	}
	for _, c := range cases {
		if got := recordPart(c.text); got != c.want {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
}

// The mixture's components are drawn with their weights, and each one's values have its Beta's
// mean and variance.
func TestTendencyMixture(t *testing.T) {
	mixtures := []Tendency{
		DefaultTendency(),
		{on: true, Components: []TendencyComponent{{Weight: 3, A: 0.5, B: 0.5}, {Weight: 1, A: 4, B: 2}}},
	}
	const n = 20000
	for _, mix := range mixtures {
		total := 0.0
		for _, c := range mix.Components {
			total += c.Weight
		}
		count := make([]float64, len(mix.Components))
		sum := make([]float64, len(mix.Components))
		sumSq := make([]float64, len(mix.Components))
		for i := 0; i < n; i++ {
			p, k := mix.recordP(5, hashString(fmt.Sprint("record ", i)))
			if p < 0 || p > 1 || math.IsNaN(p) {
				t.Fatalf("p %v", p)
			}
			count[k]++
			sum[k] += p
			sumSq[k] += p * p
		}
		for k, c := range mix.Components {
			if share := count[k] / n; math.Abs(share-c.Weight/total) > 0.015 {
				t.Errorf("%+v: share %.3f, want %.3f", c, share, c.Weight/total)
			}
			mean := sum[k] / count[k]
			variance := sumSq[k]/count[k] - mean*mean
			wantMean := c.A / (c.A + c.B)
			wantVar := c.A * c.B / ((c.A + c.B) * (c.A + c.B) * (c.A + c.B + 1))
			if math.Abs(mean-wantMean) > 0.01 || math.Abs(variance-wantVar) > 0.1*wantVar+0.001 {
				t.Errorf("%+v: mean %.4f variance %.4f, want %.4f and %.4f", c, mean, variance, wantMean, wantVar)
			}
		}
	}
	// the default: most records near 0 or 1 (0.772 by the Beta distributions' functions)
	near := 0
	for i := 0; i < n; i++ {
		if p, _ := DefaultTendency().recordP(9, uint64(i)); p < 0.1 || p > 0.9 {
			near++
		}
	}
	if share := float64(near) / n; math.Abs(share-0.772) > 0.015 {
		t.Errorf("share of p_r below 0.1 or above 0.9: %.3f", share)
	}
}

// pick gives the includes and the uncertain answers their shares exactly, over a grid of draws.
func TestLeaningPick(t *testing.T) {
	str := func(v ...string) []any {
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = x
		}
		return out
	}
	cases := []struct {
		values      []any
		include     float64
		uncertain   float64
		want        map[string]float64
		notAnswered bool
	}{
		{values: str("1", "0", "1.1"), include: 0.5, uncertain: 0.2, want: map[string]float64{"1": 0.4, "1.1": 0.1, "0": 0.5}},
		{values: str("1", "0"), include: 0.3, uncertain: 0.2, want: map[string]float64{"1": 0.3, "0": 0.7}},
		{values: str("0", "1.1", "1"), include: 0.9, uncertain: 0, want: map[string]float64{"1": 0.9, "0": 0.1}},
		{values: []any{json.Number("1"), json.Number("0")}, include: 0.25, want: map[string]float64{"1": 0.25, "0": 0.75}},
		{values: str("1", "1.1"), include: 0.5, notAnswered: true},
		{values: str("a", "b"), include: 0.5, notAnswered: true},
	}
	const grid = 1000
	for _, c := range cases {
		l := &leaning{include: c.include, uncertain: c.uncertain}
		got := map[string]float64{}
		for i := 0; i < grid; i++ {
			v, ok := l.pick(c.values, (float64(i)+0.5)/grid)
			if ok == c.notAnswered {
				t.Fatalf("%v: ok %v", c.values, ok)
			}
			if ok {
				got[enumKey(v)] += 1.0 / grid
			}
		}
		for k, w := range c.want {
			if math.Abs(got[k]-w) > 1e-9 {
				t.Errorf("%v include %.2f: shares %v, want %v", c.values, c.include, got, c.want)
				break
			}
		}
	}
}

// recordWithin returns the title of a record (abstract "An abstract.") whose p_r, under tend,
// lies in [lo, hi].
func recordWithin(t *testing.T, tend Tendency, seed int64, lo, hi float64) (string, float64) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		title := fmt.Sprint("Record ", i)
		if p, _ := tend.recordP(seed, hashString(recordPart(question("", title, "An abstract.")))); p >= lo && p <= hi {
			return title, p
		}
	}
	t.Fatal("no such record")
	return "", 0
}

// includeShare is the share of decisions that count as includes ("1" and "1.1").
func includeShare(ds []string) float64 {
	n := 0
	for _, d := range ds {
		if d != "0" {
			n++
		}
	}
	return float64(n) / float64(len(ds))
}

// A record's p_r is the same in every protocol and call, whatever prompt precedes the record, and
// the share of its includes over many answers is near p_r.
func TestTendencySameAcrossProtocols(t *testing.T) {
	s, base := startServer(t, `{"seed":21,"tendency":true}`)
	tend := s.cfg.Load().Tendency
	for _, rng := range [][2]float64{{0.3, 0.45}, {0.6, 0.8}, {0, 0.02}} {
		title, p := recordWithin(t, tend, 21, rng[0], rng[1])
		ask := func(prompt string) string { return question(prompt, title, "An abstract.") }
		protocols := []struct {
			name string
			get  func() []string
			reps int
		}{
			{"openai", func() []string {
				return decisionsOf(t, post(t, base+"/v1/chat/completions", "k", chatBody(ask("Is it about A?"), `"n":100`)))
			}, 3},
			{"anthropic", func() []string {
				// the prompt and the record as two blocks, as a client caching the prompt sends them
				blocks := `[{"type":"text","text":"Is it about B?"},{"type":"text","text":` + quoteJSON(ask("")) + `}]`
				return decisionsOf(t, postAnthropic(t, base, anthropicBody(t, "", `"messages":[{"role":"user","content":`+blocks+`}]`)))
			}, 300},
			{"mistral", func() []string {
				return decisionsOf(t, post(t, mistralURL(base), "k", mistralBody(t, ask("Is it about C?"), `"random_seed":null,"n":100`)))
			}, 3},
		}
		for _, pr := range protocols {
			var ds []string
			for i := 0; i < pr.reps; i++ {
				ds = append(ds, pr.get()...)
			}
			got := includeShare(ds)
			t.Logf("%s: p_r %.3f, share of includes %.3f", pr.name, p, got)
			if math.Abs(got-p) > 0.09 {
				t.Errorf("%s: p_r %.3f, share of includes %.3f over %d answers", pr.name, p, got, len(ds))
			}
		}
	}
}

// A sharper model answers a record more consistently, on the side the others take, so a
// cascade of models can be measured.
func TestTendencyModelSharpness(t *testing.T) {
	tend := DefaultTendency()
	tend.Models = WeightMap{"strong": 3, "cheap": 0.5, "cheap-but-tuned": 2}
	cases := []struct {
		model string
		want  float64
	}{
		{"gpt-strong", 3}, {"CHEAP-1", 0.5}, {"cheap-but-tuned-2", 2}, {"plain", 1},
	}
	for _, c := range cases {
		if got := tend.sharpness(c.model); got != c.want {
			t.Errorf("sharpness of %s: %v, want %v", c.model, got, c.want)
		}
	}
	// over many records: the same side for every model; the sharper, the less doubt (p(1-p))
	doubt := map[string]float64{}
	for i := 0; i < 5000; i++ {
		text := question("P", fmt.Sprint("T", i), "A")
		side := 0
		for _, m := range []string{"cheap", "plain", "strong"} {
			l := tend.leaningOf(4, m, text)
			doubt[m] += l.include * (1 - l.include)
			s := 1
			if l.include < 0.5 {
				s = -1
			}
			if side != 0 && s != side {
				t.Fatalf("record %d: %s on another side (%.3f)", i, m, l.include)
			}
			side = s
		}
	}
	if !(doubt["strong"] < doubt["plain"] && doubt["plain"] < doubt["cheap"]) {
		t.Errorf("mean p(1-p) by model: %v", doubt)
	}

	// through the server: on doubtful records the strong model's answers agree more often
	_, base := startServer(t, `{"seed":8,"tendency":{"models":{"strong":3,"cheap":0.5}}}`)
	agree := map[string]int{}
	for i := 0; i < 4; i++ {
		title, p := recordWithin(t, tend, 8, 0.15+0.2*float64(i), 0.25+0.2*float64(i))
		for _, m := range []string{"gpt-cheap", "gpt-strong"} {
			ds := decisionsOf(t, post(t, base+"/v1/chat/completions", "k",
				chatBody(question("P", title, "An abstract."), `"n":100,"model":"`+m+`"`)))
			for _, d := range ds {
				if (d != "0") == (p >= 0.5) {
					agree[m]++
				}
			}
		}
	}
	t.Logf("answers on the record's side out of 400: %v; mean p(1-p) x 5000: %v", agree, doubt)
	if agree["gpt-strong"] <= agree["gpt-cheap"]+40 {
		t.Errorf("answers on the record's side out of 400: %v", agree)
	}
}

// The k-th answer to a record is fixed by the seed: after a reset, and in another server with the
// same configuration, the same answers come back; another seed gives others.
func TestTendencyReproducible(t *testing.T) {
	config := `{"seed":13,"tendency":{"models":{"haiku":2}}}`
	s, base := startServer(t, config)
	first := answerDigest(t, base)
	s.Reset()
	if again := answerDigest(t, base); again != first {
		t.Errorf("after a reset: %s, then %s", first, again)
	}
	_, other := startServer(t, config)
	if again := answerDigest(t, other); again != first {
		t.Errorf("another server: %s, then %s", first, again)
	}
	_, reseeded := startServer(t, strings.Replace(config, "13", "14", 1))
	if again := answerDigest(t, reseeded); again == first {
		t.Error("another seed, the same answers")
	}
}

// Two models asked about one record get the same answers whatever order their requests arrive in.
func TestTendencyModelsCountedApart(t *testing.T) {
	config := `{"seed":2,"tendency":{"models":{"strong":3}}}`
	user := question("P", "T", "A")
	answers := func(order []string) map[string][]string {
		_, base := startServer(t, config)
		out := map[string][]string{}
		for _, m := range order {
			r := post(t, base+"/v1/chat/completions", "k", chatBody(user, `"model":"`+m+`"`))
			out[m] = append(out[m], answerDecisions(t, r)...)
		}
		return out
	}
	one := answers([]string{"gpt-strong", "gpt-strong", "gpt-strong", "gpt-cheap", "gpt-cheap", "gpt-cheap"})
	other := answers([]string{"gpt-cheap", "gpt-strong", "gpt-cheap", "gpt-strong", "gpt-cheap", "gpt-strong"})
	for _, m := range []string{"gpt-strong", "gpt-cheap"} {
		if fmt.Sprint(one[m]) != fmt.Sprint(other[m]) {
			t.Errorf("%s:\n%v\n%v", m, one[m], other[m])
		}
	}
	if fmt.Sprint(one["gpt-strong"]) == fmt.Sprint(one["gpt-cheap"]) {
		t.Error("the two models gave the same answers")
	}
}
