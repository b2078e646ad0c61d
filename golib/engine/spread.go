package engine

import (
	"math"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// The statistical rule's model of how the answers of one prompt and model spread over the records
// (docs/decisions/0026-statistical-rule-spread.md). Each group's answers are independent draws with
// the group's own include probability p; the p of the groups follow a distribution G over (0, 1),
// the run's spread, estimated from every group's answers so far: the groups are binomial counts
// (k includes of n answers), G is the maximum-likelihood mixing distribution on a fixed grid
// (found by EM), refitted as the answers come in. A group's remaining includes are then a mixture
// of binomials under G updated with the group's own answers.
//
// Every group with an answer counts, not only the groups that have ended: the groups that settle
// first are the clear-cut ones, and a spread fitted to them says doubtful records are rarer than
// they are. Stopping a group early does not bias the fit, since whether a group stops depends
// only on its answers (the likelihood of the answers is the same as with a fixed number).

const (
	// spreadGrid is how many values of p the spread puts mass on: (i + 0.5) / spreadGrid.
	spreadGrid = 200
	// minSpreadGroups is how many groups with at least two answers the fit needs: one answer per
	// group tells the mean include rate and nothing of how it spreads over the records.
	minSpreadGroups = 30
	// spreadRefit: the spread is refitted once the answers counted have grown by this share.
	spreadRefit = 0.05
	// spreadIterations are the EM steps of a refit, which starts from the previous fit (the first
	// from a flat spread, with firstSpreadIterations).
	spreadIterations      = 50
	firstSpreadIterations = 200
	// A fit mixes in a flat spread, as if spreadPseudoGroups groups had been spread evenly over
	// (0, 1), and never less than spreadFloor of it: a grid fitted to a few hundred groups puts no
	// mass where it saw no group, and a rule that trusted it would take a rare kind of record to be
	// impossible.
	spreadPseudoGroups = 30
	spreadFloor        = 0.02
)

// spreadGridP, spreadLogP and spreadLog1P are the grid's values of p, log p and log(1 - p).
var spreadGridP, spreadLogP, spreadLog1P = func() (p, lp, l1p []float64) {
	p, lp, l1p = make([]float64, spreadGrid), make([]float64, spreadGrid), make([]float64, spreadGrid)
	for i := range p {
		p[i] = (float64(i) + 0.5) / spreadGrid
		lp[i], l1p[i] = math.Log(p[i]), math.Log1p(-p[i])
	}
	return
}()

// spread is what a run has learned of one prompt and model's groups, all asked reps times.
type spread struct {
	reps int
	// cells[n*(reps+1)+k] counts the groups with n answers of which k include (n >= 1).
	cells             []int
	answers, fittedAt int
	informative       int       // groups with two answers or more
	weights           []float64 // over the grid; nil before the first fit
	change            []float64 // by cell: the change probability under weights, NaN until asked
}

func newSpread(reps int) *spread {
	return &spread{reps: reps, cells: make([]int, (reps+1)*(reps+1))}
}

// count moves a group from n-1 answers (k0 includes) to n answers (k includes).
func (s *spread) count(n, k0, k int) {
	if n > 1 {
		s.cells[(n-1)*(s.reps+1)+k0]--
	}
	s.cells[n*(s.reps+1)+k]++
	s.answers++
	if n == 2 {
		s.informative++
	}
}

// changeProbability is the probability that the reps - answered repetitions not answered yet
// change the verdict over a group's answers so far (every one taken as answered: a failure leaves
// incl_p where the answers put it); ok is false while the spread is not known well enough.
func (s *spread) changeProbability(c screen.Cutoffs, answered, included int) (p float64, ok bool) {
	left := s.reps - answered
	if left <= 0 {
		return 0, true
	}
	if answered == 0 || s.informative < minSpreadGroups {
		return 1, false
	}
	if s.weights == nil || float64(s.answers) >= float64(s.fittedAt)*(1+spreadRefit) {
		s.fit()
	}
	cell := answered*(s.reps+1) + included
	if math.IsNaN(s.change[cell]) {
		s.change[cell] = predictChange(c, s.weights, s.reps, answered, included)
	}
	return s.change[cell], true
}

// fit runs EM for the grid's weights over the groups counted: each step gives each grid value
// the share of the groups' posterior mass it holds.
func (s *spread) fit() {
	iterations := spreadIterations
	if s.weights == nil {
		iterations = firstSpreadIterations
		s.weights = make([]float64, spreadGrid)
		for i := range s.weights {
			s.weights[i] = 1.0 / spreadGrid
		}
	}
	type cell struct {
		groups     float64
		likelihood []float64
	}
	var cells []cell
	total := 0.0
	for n := 1; n <= s.reps; n++ {
		for k := 0; k <= n; k++ {
			if g := s.cells[n*(s.reps+1)+k]; g > 0 {
				cells = append(cells, cell{float64(g), binomialLikelihood(n, k)})
				total += float64(g)
			}
		}
	}
	flat := math.Max(spreadFloor, spreadPseudoGroups/(spreadPseudoGroups+total))
	next := make([]float64, spreadGrid)
	post := make([]float64, spreadGrid)
	for it := 0; it < iterations; it++ {
		clear(next)
		for _, c := range cells {
			sum := 0.0
			for i, l := range c.likelihood {
				post[i] = s.weights[i] * l
				sum += post[i]
			}
			if sum == 0 {
				continue
			}
			for i := range post {
				next[i] += c.groups * post[i] / sum
			}
		}
		for i := range next {
			s.weights[i] = (1-flat)*next[i]/total + flat/spreadGrid
		}
	}
	s.fittedAt = s.answers
	s.change = make([]float64, len(s.cells))
	for i := range s.change {
		s.change[i] = math.NaN()
	}
}

// binomialLikelihood is p^k (1-p)^(n-k) at each grid value (the binomial coefficient is common to
// all and cancels).
func binomialLikelihood(n, k int) []float64 {
	out := make([]float64, spreadGrid)
	for i := range out {
		out[i] = math.Exp(float64(k)*spreadLogP[i] + float64(n-k)*spreadLog1P[i])
	}
	return out
}

// predictChange sums, over the outcomes of the remaining repetitions that change the verdict, their
// probability under the weights updated with the group's answers.
func predictChange(c screen.Cutoffs, weights []float64, reps, answered, included int) float64 {
	left := reps - answered
	now, _ := c.Label(float64(included)/float64(answered), true)
	post := binomialLikelihood(answered, included)
	sum := 0.0
	for i := range post {
		post[i] *= weights[i]
		sum += post[i]
	}
	if sum == 0 {
		return 1
	}
	p := 0.0
	for x := 0; x <= left; x++ {
		if v, _ := c.Label(float64(included+x)/float64(reps), true); v == now {
			continue
		}
		lc := logChoose(left, x)
		for i, w := range post {
			p += w / sum * math.Exp(lc+float64(x)*spreadLogP[i]+float64(left-x)*spreadLog1P[i])
		}
	}
	return math.Min(p, 1)
}

func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
