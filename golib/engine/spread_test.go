package engine

import (
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// sequenceChange is the change probability by brute force: every sequence of the remaining answers
// at every grid value, weighted by the grid value's posterior mass.
func sequenceChange(c screen.Cutoffs, weights []float64, reps, answered, included int) float64 {
	now, _ := c.Label(float64(included)/float64(answered), true)
	left := reps - answered
	post := make([]float64, len(weights))
	sum := 0.0
	for i, w := range weights {
		p := spreadGridP[i]
		post[i] = w * math.Pow(p, float64(included)) * math.Pow(1-p, float64(answered-included))
		sum += post[i]
	}
	want := 0.0
	for seq := 0; seq < 1<<left; seq++ {
		x := 0
		for b := 0; b < left; b++ {
			x += seq >> b & 1
		}
		if v, _ := c.Label(float64(included+x)/float64(reps), true); v == now {
			continue
		}
		for i, w := range post {
			p := spreadGridP[i]
			want += w / sum * math.Pow(p, float64(x)) * math.Pow(1-p, float64(left-x))
		}
	}
	return want
}

func TestPredictChangeAgainstEverySequence(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	flat, twoPeaks, random := make([]float64, spreadGrid), make([]float64, spreadGrid), make([]float64, spreadGrid)
	for i := range flat {
		flat[i] = 1.0 / spreadGrid
		random[i] = rng.Float64()
	}
	twoPeaks[4], twoPeaks[150] = 0.8, 0.2
	for name, weights := range map[string][]float64{"flat": flat, "two peaks": twoPeaks, "random": random} {
		for _, cut := range adaptiveCutoffs {
			for reps := 2; reps <= 8; reps++ {
				for answered := 1; answered < reps; answered++ {
					for included := 0; included <= answered; included++ {
						got := predictChange(cut, weights, reps, answered, included)
						want := sequenceChange(cut, weights, reps, answered, included)
						if math.Abs(got-want) > 1e-9 {
							t.Fatalf("%s, cut-offs %+v, %d of %d answered, %d included: %g, brute force %g",
								name, cut, answered, reps, included, got, want)
						}
					}
				}
			}
		}
	}
}

// countGroups counts groups drawn from a spread with the given mass at grid values, each asked
// `answers` times, in their expected numbers (rounded), into a spread of reps repetitions.
func countGroups(s *spread, mass map[int]float64, groups, answers int) {
	for i, m := range mass {
		p := spreadGridP[i]
		for k := 0; k <= answers; k++ {
			n := int(math.Round(m * float64(groups) * math.Exp(logChoose(answers, k)) *
				math.Pow(p, float64(k)) * math.Pow(1-p, float64(answers-k))))
			for g := 0; g < n; g++ {
				inc := 0
				for a := 1; a <= answers; a++ {
					k0 := inc
					if a <= k {
						inc++
					}
					s.count(a, k0, inc)
				}
			}
		}
	}
}

// The fit finds the spread the groups were drawn from: its moments up to the answers' number
// (all that counts of includes can tell), and the change probabilities that follow from it.
func TestSpreadFitFindsTheGroupsSpread(t *testing.T) {
	cut := screen.EffectiveCutoffs(nil, nil)
	mass := map[int]float64{2: 0.65, 30: 0.15, 100: 0.1, 196: 0.1}
	s := newSpread(10)
	countGroups(s, mass, 20000, 6)
	truth := make([]float64, spreadGrid)
	for i, m := range mass {
		truth[i] = m
	}
	for answered := 1; answered <= 6; answered++ {
		for included := 0; included <= answered; included++ {
			got, ok := s.changeProbability(cut, answered, included)
			if !ok {
				t.Fatal("no fit over 20,000 groups")
			}
			want := predictChange(cut, truth, 10, answered, included)
			if math.Abs(got-want) > 0.03 {
				t.Errorf("%d of %d included: change probability %.4f, from the true spread %.4f", included, answered, got, want)
			}
		}
	}
	for m := 1; m <= 3; m++ {
		got, want := 0.0, 0.0
		for i, w := range s.weights {
			got += w * math.Pow(spreadGridP[i], float64(m))
			want += truth[i] * math.Pow(spreadGridP[i], float64(m))
		}
		if math.Abs(got-want) > 0.01 {
			t.Errorf("moment %d: %.4f, true %.4f", m, got, want)
		}
	}
}

func TestSpreadWaitsForGroupsWithTwoAnswers(t *testing.T) {
	cut := screen.EffectiveCutoffs(nil, nil)
	s := newSpread(10)
	for g := 0; g < 1000; g++ {
		s.count(1, 0, g%2)
	}
	for g := 0; g < minSpreadGroups-1; g++ {
		s.count(2, g%2, g%2)
	}
	if _, ok := s.changeProbability(cut, 2, 0); ok {
		t.Fatal("fitted before enough groups had two answers")
	}
	s.count(2, 0, 0)
	if _, ok := s.changeProbability(cut, 2, 0); !ok {
		t.Fatal("no fit with enough groups of two answers")
	}
	if p, ok := s.changeProbability(cut, 10, 3); p != 0 || !ok {
		t.Fatalf("a group with every answer: %g, %v", p, ok)
	}
}

// The fit follows the answers: once they have grown by spreadRefit it is redone.
func TestSpreadRefitsAsAnswersComeIn(t *testing.T) {
	cut := screen.EffectiveCutoffs(nil, nil)
	s := newSpread(10)
	countGroups(s, map[int]float64{2: 1}, 200, 3)
	before, _ := s.changeProbability(cut, 3, 0)
	countGroups(s, map[int]float64{60: 1}, 200, 3)
	after, _ := s.changeProbability(cut, 3, 0)
	if !(after > before+0.05) {
		t.Fatalf("the change probability of 0 of 3 stayed %.4f -> %.4f once doubtful groups came in", before, after)
	}
}

// mixtureDraws draws n include probabilities from a mixture of Beta distributions (weight, a, b),
// by inverting its distribution function on a fine grid.
func mixtureDraws(rng *rand.Rand, n int, components [][3]float64) []float64 {
	const points = 20000
	cdf := make([]float64, points)
	total := 0.0
	for i := range cdf {
		p := (float64(i) + 0.5) / points
		for _, c := range components {
			total += c[0] * math.Exp((c[1]-1)*math.Log(p)+(c[2]-1)*math.Log1p(-p)-lbetaFn(c[1], c[2]))
		}
		cdf[i] = total
	}
	out := make([]float64, n)
	for j := range out {
		u := rng.Float64() * total
		i := sort.SearchFloat64s(cdf, u)
		out[j] = (float64(min(i, points-1)) + 0.5) / points
	}
	return out
}

func lbetaFn(a, b float64) float64 {
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}

// On seeded runs of many groups drawn from the stand-in's default mixture (answers coming in
// rounds, every open group answered once a round), the statistical rule's verdicts differ from the
// full run's on no more than `level` of the groups, and it sends no more than the exact rule.
func TestStatisticalRuleKeepsItsLevelOnSeededRuns(t *testing.T) {
	mixture := [][3]float64{{0.70, 0.3, 12}, {0.10, 12, 0.3}, {0.20, 1.5, 1.5}}
	const groups, reps = 5000, 10
	upper, band := 0.5, 0.2
	for _, cut := range []screen.Cutoffs{screen.EffectiveCutoffs(nil, nil), screen.EffectiveCutoffs(&upper, nil),
		{Upper: 0.8, Lower: band}} {
		for seed := int64(1); seed <= 3; seed++ {
			rng := rand.New(rand.NewSource(seed))
			answers := make([][]int32, groups)
			for g, p := range mixtureDraws(rng, groups, mixture) {
				answers[g] = make([]int32, reps)
				for r := range answers[g] {
					if rng.Float64() < p {
						answers[g][r] = 1
					}
				}
			}
			sent := map[string]int{}
			var differ int
			for _, rule := range []string{RuleExact, RuleStatistical} {
				a := &adaptive{opts: AdaptiveOptions{Rule: rule, Level: 0.01}, cut: cut, spreads: make([]*spread, 1),
					reps: make([]int32, groups), answered: make([]int32, groups), included: make([]int32, groups), pm: make([]int32, groups)}
				open := make([]bool, groups)
				for g := range open {
					a.reps[g], open[g] = reps, true
				}
				for r := 0; r < reps; r++ {
					for g := range open {
						if open[g] {
							a.known(int32(g), answers[g][r])
							sent[rule]++
						}
					}
					for g := range open {
						if open[g] && a.decide(int32(g)) {
							open[g] = false
						}
					}
				}
				for g := range answers {
					full := 0
					for _, v := range answers[g] {
						full += int(v)
					}
					want, _ := cut.Label(float64(full)/reps, true)
					got, _ := cut.Label(float64(a.included[g])/float64(a.answered[g]), true)
					if want != got {
						if rule == RuleExact {
							t.Fatalf("cut-offs %+v seed %d: the exact rule's verdict differs", cut, seed)
						}
						differ++
					}
				}
			}
			if differ > groups/100 {
				t.Errorf("cut-offs %+v seed %d: %d of %d verdicts differ at level 0.01", cut, seed, differ, groups)
			}
			if sent[RuleStatistical] > sent[RuleExact] {
				t.Errorf("cut-offs %+v seed %d: the statistical rule sent %d, the exact one %d", cut, seed, sent[RuleStatistical], sent[RuleExact])
			}
			t.Logf("cut-offs %+v seed %d: exact %.3f, statistical %.3f of the requests, %d differ", cut, seed,
				float64(sent[RuleExact])/(groups*reps), float64(sent[RuleStatistical])/(groups*reps), differ)
		}
	}
}
