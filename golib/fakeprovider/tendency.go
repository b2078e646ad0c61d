package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Without a tendency every answer is drawn alone, with the same weights for every record; a real
// model is consistent about most records and hesitates over a few. With one, each record has an
// include probability p_r, drawn once from a mixture of Beta distributions, and every answer
// about the record includes with that probability:
//
//   - p_r is a pure function of the seed and the record's part of the question (recordPart), so
//     a record has the same p_r in every call, run and protocol, whatever the prompt;
//   - a model named in Models sees p_r through its sharpness s: p' = p^s / (p^s + (1-p)^s), the
//     log-odds multiplied by s. s > 1 pushes p' towards 0 or 1 (a stronger, more consistent
//     model), s < 1 towards 0.5 (a cheaper one); the transform keeps 0.5 in place, so every
//     model puts a record on the same side;
//   - an answer includes ("1") with probability p', else excludes ("0"); of its includes, a share
//     Uncertain x 4p'(1-p') is "uncertain" ("1.1", which screening counts as an include) when the
//     tool allows it. A clear record is never uncertain, and the share of answers that count as
//     includes stays p' with either tool.
//
// The tendency decides the enum that holds both "1" and "0" (the decision); other enums are drawn
// as without it. An answer's own draw depends on the seed, the user text, the model and the
// answer's occurrence among that model's answers to the text, so that two runs with the same seed
// give each record the same answers from each model, in whatever order the requests arrive.

// Tendency is the per-record answer model (Config.Tendency). Its zero value is off. In JSON:
// null or false (off), true (DefaultTendency), or an object with the fields below, where an
// absent or empty components and an absent uncertain take the defaults.
type Tendency struct {
	on bool
	// Components are the mixture p_r is drawn from: a component is chosen with probability
	// proportional to its weight, then p_r from its Beta(a, b).
	Components []TendencyComponent `json:"components"`
	// Models maps a part of a model's name (case-insensitive; the longest that the requested name
	// contains applies) to its sharpness (> 0); models named nowhere have sharpness 1.
	Models WeightMap `json:"models"`
	// Uncertain scales the share of uncertain answers among a doubtful record's includes (0 to 1).
	Uncertain float64 `json:"uncertain"`
}

// TendencyComponent is one Beta(A, B) of the mixture, chosen with probability proportional to
// Weight; Label only names it.
type TendencyComponent struct {
	Label  string  `json:"label,omitempty"`
	Weight float64 `json:"weight"`
	A      float64 `json:"a"`
	B      float64 `json:"b"`
}

// DefaultTendency is the mixture of `tendency: true`: most records clear, a fifth doubtful.
// Beta(0.3, 12) has mean 0.024, median 0.006 and 94 % of its mass below 0.1; Beta(12, 0.3)
// mirrors it; Beta(1.5, 1.5) spreads over (0, 1) around 0.5, 72 % of it between 0.2 and 0.8.
func DefaultTendency() Tendency {
	return Tendency{
		on: true,
		Components: []TendencyComponent{
			{Label: "clear exclude", Weight: 0.70, A: 0.3, B: 12},
			{Label: "clear include", Weight: 0.10, A: 12, B: 0.3},
			{Label: "doubtful", Weight: 0.20, A: 1.5, B: 1.5},
		},
		Uncertain: 0.2,
	}
}

// On tells whether the tendency applies.
func (t Tendency) On() bool { return t.on }

// MarshalJSON implements json.Marshaler: null when off, else the object.
func (t Tendency) MarshalJSON() ([]byte, error) {
	if !t.on {
		return []byte("null"), nil
	}
	type plain Tendency
	return json.Marshal(plain(t))
}

// UnmarshalJSON implements json.Unmarshaler (unknown fields are errors).
func (t *Tendency) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "null", "false":
		*t = Tendency{}
		return nil
	case "true":
		*t = DefaultTendency()
		return nil
	}
	var x struct {
		Components []TendencyComponent `json:"components"`
		Models     WeightMap           `json:"models"`
		Uncertain  *float64            `json:"uncertain"`
	}
	if err := strictUnmarshal(b, &x); err != nil {
		return fmt.Errorf("tendency must be true, false or an object with components, models and uncertain: %w", err)
	}
	d := DefaultTendency()
	if len(x.Components) > 0 {
		d.Components = x.Components
	}
	d.Models = x.Models
	if x.Uncertain != nil {
		d.Uncertain = *x.Uncertain
	}
	*t = d
	return nil
}

// validate lists what is wrong with an active tendency.
func (t Tendency) validate(bad func(format string, a ...any)) {
	if !t.on {
		return
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	total := 0.0
	for i, c := range t.Components {
		if !finite(c.Weight) || c.Weight < 0 {
			bad("tendency: components[%d]: weight must be >= 0", i)
		} else {
			total += c.Weight
		}
		if !finite(c.A) || !finite(c.B) || c.A <= 0 || c.B <= 0 {
			bad("tendency: components[%d]: a and b (the Beta distribution's shapes) must be > 0", i)
		}
	}
	if total <= 0 {
		bad("tendency: the components' weights must add up to more than 0")
	}
	for k, s := range t.Models {
		if strings.TrimSpace(k) == "" {
			bad("tendency: models: model name parts must not be empty")
		}
		if !finite(s) || s <= 0 {
			bad("tendency: models: the sharpness of %q must be > 0 (1 leaves answers as drawn)", k)
		}
	}
	if !finite(t.Uncertain) || t.Uncertain < 0 || t.Uncertain > 1 {
		bad("tendency: uncertain must be in [0, 1]")
	}
}

// recordPart is the record a question asks about: the text from the last "<title>" to the last
// "</abstract>" (a question ends with the record's title and abstract so tagged), or the whole
// text when it has no such part. It leaves out the prompt, which differs between runs, and
// whatever else a provider's request adds.
func recordPart(text string) string {
	end := strings.LastIndex(text, "</abstract>")
	if end < 0 {
		return text
	}
	start := strings.LastIndex(text[:end], "<title>")
	if start < 0 {
		return text
	}
	return text[start:end]
}

// recordP draws a record's p_r from the mixture, and says which component it came from.
func (t Tendency) recordP(seed int64, record uint64) (p float64, component int) {
	total := 0.0
	for _, c := range t.Components {
		total += c.Weight
	}
	u := unit(hash(uint64(seed), saltTendency, record))
	acc := 0.0
	component = len(t.Components) - 1
	for i, c := range t.Components {
		acc += c.Weight / total
		if u < acc && c.Weight > 0 {
			component = i
			break
		}
	}
	c := t.Components[component]
	x := gammaDraw(c.A, &drawStream{key: hash(uint64(seed), saltTendency, record, 1)})
	y := gammaDraw(c.B, &drawStream{key: hash(uint64(seed), saltTendency, record, 2)})
	if x+y == 0 { // both underflowed (shapes far below 1): the mean
		return c.A / (c.A + c.B), component
	}
	return x / (x + y), component
}

// sharpness is a model's sharpness: that of the longest key its name contains.
func (t Tendency) sharpness(model string) float64 {
	s, longest := 1.0, -1
	name := strings.ToLower(model)
	for k, v := range t.Models {
		if len(k) > longest && strings.Contains(name, strings.ToLower(k)) {
			s, longest = v, len(k)
		}
	}
	return s
}

// sharpen multiplies p's log-odds by s.
func sharpen(p, s float64) float64 {
	if s == 1 {
		return p
	}
	a, b := math.Pow(p, s), math.Pow(1-p, s)
	return a / (a + b)
}

// leaningOf is how the model answers the record of a user text.
func (t Tendency) leaningOf(seed int64, model, userText string) *leaning {
	p, _ := t.recordP(seed, hashString(recordPart(userText)))
	p = sharpen(p, t.sharpness(model))
	return &leaning{include: p, uncertain: t.Uncertain * 4 * p * (1 - p)}
}

// leaning is one request's tendency: its include probability, and the share of its includes that
// are uncertain.
type leaning struct {
	include, uncertain float64
}

// pick chooses the decision for the draw u in [0, 1) when values hold "1" and "0"; ok is false
// for any other enum.
func (l *leaning) pick(values []any, u float64) (v any, ok bool) {
	one, zero, unsure := -1, -1, -1
	for i, x := range values {
		switch enumKey(x) {
		case "1":
			one = i
		case "0":
			zero = i
		case "1.1":
			unsure = i
		}
	}
	switch {
	case one < 0 || zero < 0:
		return nil, false
	case u >= l.include:
		return values[zero], true
	case unsure >= 0 && u < l.include*l.uncertain:
		return values[unsure], true
	}
	return values[one], true
}

// drawStream is a sequence of hashes, for draws that take an unknown number of them.
type drawStream struct {
	key uint64
	n   uint64
}

func (d *drawStream) next() uint64 {
	d.n++
	return hash(d.key, d.n)
}

// gammaDraw draws from Gamma(shape, 1) (Marsaglia and Tsang; a shape below 1 through
// Gamma(shape+1) x U^(1/shape)).
func gammaDraw(shape float64, d *drawStream) float64 {
	if shape < 1 {
		return gammaDraw(shape+1, d) * math.Pow(1-unit(d.next()), 1/shape)
	}
	k := shape - 1.0/3
	c := 1 / math.Sqrt(9*k)
	for range 1000 { // each try succeeds with probability above 0.95
		x := normal(d.next(), d.next())
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if u := 1 - unit(d.next()); math.Log(u) < 0.5*x*x+k-k*v+k*math.Log(v) {
			return k * v
		}
	}
	return shape
}
