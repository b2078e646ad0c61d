package screen

import (
	"regexp"
	"strings"
)

// Answer is one job's outcome as the aggregation needs it. Failed jobs have HasBinary false.
type Answer struct {
	Record, PromptID int32
	Model            string
	TopP             float64
	HasTopP          bool
	N                int32
	Binary           int32
	HasBinary        bool
	Description      string
	HasDescription   bool
	Confidence       float64
	HasConfidence    bool
	Submodel         string
	HasSubmodel      bool
}

// Aggregated is one record x prompt x model x top_p row of spec section 2.4.
type Aggregated struct {
	Record, PromptID   int32
	Model              string
	TopP               float64
	HasTopP            bool
	InclP              float64
	HasInclP           bool
	Final              string
	FinalNum           int32
	LongestAnswer      string
	HasLongestAnswer   bool
	MeanConfidence     float64
	HasMeanConfidence  bool
	Reps, MissingCount int32
	Submodel           string
	HasSubmodel        bool
}

// Cutoffs are the effective inclusion cut-offs (spec section 3).
type Cutoffs struct {
	Upper float64 `json:"upper"`
	Lower float64 `json:"lower"`
}

// DefaultUpper is the documented default of incl_cutoff_upper.
const DefaultUpper = 0.1

// EffectiveCutoffs applies spec section 3: the upper cut-off defaults to 0.1, the lower one to the
// upper one, and the lower one is ignored while the upper one is 0.1 or below.
func EffectiveCutoffs(upper, lower *float64) Cutoffs {
	c := Cutoffs{Upper: DefaultUpper}
	if upper != nil {
		c.Upper = *upper
	}
	c.Lower = c.Upper
	if lower != nil && c.Upper > DefaultUpper {
		c.Lower = *lower
	}
	return c
}

// cutoffTolerance absorbs the rounding of k/n so that 3 of 10 reps meet a cut-off typed as 0.3.
const cutoffTolerance = 1e-9

// Label maps an inclusion probability to the final decision. A record is included when incl_p is
// at least the upper cut-off: the spec's rule says "exceeds", but its own example (1 of 10
// repetitions at the default 0.1) needs "at least". A record without any answer is flagged Check
// so that it is never lost from view.
func (c Cutoffs) Label(inclP float64, known bool) (string, int32) {
	switch {
	case !known:
		return "Check", 1
	case inclP >= c.Upper-cutoffTolerance:
		return "Include", 1
	case inclP >= c.Lower-cutoffTolerance:
		return "Check", 1
	default:
		return "Exclude", 0
	}
}

// Labels maps inclusion probabilities to final decisions as Label does, nil for a missing one:
// the rule R applies to probabilities the engine did not aggregate (an ensemble's mean incl_p).
func (c Cutoffs) Labels(inclP []*float64) ([]string, []int32) {
	labels := make([]string, len(inclP))
	nums := make([]int32, len(inclP))
	for i, p := range inclP {
		if p == nil {
			labels[i], nums[i] = c.Label(0, false)
		} else {
			labels[i], nums[i] = c.Label(*p, true)
		}
	}
	return labels, nums
}

type groupKey struct {
	record, prompt int32
	model          string
	topP           float64
	hasTopP        bool
}

// Aggregate returns exactly one row per record x prompt x model x top_p, in order of first
// appearance, whatever mix of answered and failed reps or submodels the group holds.
func Aggregate(answers []Answer, c Cutoffs) []Aggregated {
	index := make(map[groupKey]int)
	var groups [][]int
	for i, a := range answers {
		k := groupKey{a.Record, a.PromptID, a.Model, a.TopP, a.HasTopP}
		if !a.HasTopP {
			k.topP = 0
		}
		g, ok := index[k]
		if !ok {
			g = len(groups)
			index[k] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	out := make([]Aggregated, len(groups))
	for gi, members := range groups {
		out[gi] = aggregateGroup(answers, members, c)
	}
	return out
}

// AggregateGroup aggregates the answers of one record x prompt x model x top_p, which a caller
// that has its rows in that order hands over group by group instead of all at once.
func AggregateGroup(group []Answer, c Cutoffs) Aggregated {
	members := make([]int, len(group))
	for i := range members {
		members[i] = i
	}
	return aggregateGroup(group, members, c)
}

func aggregateGroup(answers []Answer, members []int, c Cutoffs) Aggregated {
	first := answers[members[0]]
	row := Aggregated{Record: first.Record, PromptID: first.PromptID, Model: first.Model,
		TopP: first.TopP, HasTopP: first.HasTopP, Reps: int32(len(members))}
	var included, answered, confN int
	var confSum float64
	var submodels []string
	for _, i := range members {
		a := answers[i]
		if a.HasBinary {
			answered++
			if a.Binary == 1 {
				included++
			}
		} else {
			row.MissingCount++
		}
		if a.HasConfidence {
			confSum += a.Confidence
			confN++
		}
		if a.HasSubmodel && !contains(submodels, a.Submodel) {
			submodels = append(submodels, a.Submodel)
		}
	}
	if answered > 0 {
		row.InclP, row.HasInclP = float64(included)/float64(answered), true
	}
	row.Final, row.FinalNum = c.Label(row.InclP, row.HasInclP)
	if confN > 0 {
		row.MeanConfidence, row.HasMeanConfidence = confSum/float64(confN), true
	}
	if len(submodels) > 0 {
		row.Submodel, row.HasSubmodel = strings.Join(submodels, ", "), true
	}
	row.LongestAnswer, row.HasLongestAnswer = longestAnswer(answers, members)
	return row
}

var word = regexp.MustCompile(`\w+`)

// longestAnswer is the description with the most words across the answered reps, whatever their
// decision (spec 2.4: "the longest response across the repeats"); ties go to the earliest rep.
func longestAnswer(answers []Answer, members []int) (string, bool) {
	best, bestWords, found := "", -1, false
	for _, i := range members {
		a := answers[i]
		if !a.HasDescription || !a.HasBinary {
			continue
		}
		if n := len(word.FindAllStringIndex(a.Description, -1)); n > bestWords {
			best, bestWords, found = a.Description, n, true
		}
	}
	return best, found
}
