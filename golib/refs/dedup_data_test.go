package refs

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// The labelled duplicate sets of ../shared/data/dedup (from the repository's root; not part of the
// repository): people grouped the duplicates of real systematic-review searches. Pairwise
// precision and recall of Dedup against their groups, with the floors this package keeps.
const dedupDir = "../../../shared/data/dedup"

// A labelled set: records_<name>.csv holds every field its source has (issue, PubMed id, abstract
// where there is one) under read_refs()'s names; truth_<truth>.csv its groups. The floors are
// pairwise precision and recall and record-level sensitivity and specificity.
// With the unsure pairs decided by the labels, sensitivity must reach minBandSensitivity, the
// specificity stay at minSpecificity, and at most maxUnsure pairs per 1,000 records go to a person.
type labelledSet struct {
	name, truth                    string
	minPrecision, minRecall        float64
	minSensitivity, minSpecificity float64
	minBandSensitivity, maxUnsure  float64
}

var labelledSets = []labelledSet{
	{"asysd_diabetes", "asysd_diabetes", 0.99, 0.98, 0.98, 0.999, 0.99, 20},
	{"asysd_diabetes", "asysd_diabetes_curated", 0.99, 0.98, 0.98, 0.999, 0.99, 20},
	{"sra_cytology", "sra_cytology", 0.99, 0.98, 0.98, 0.999, 0.99, 20},
	{"sra_respiratory", "sra_respiratory", 0.99, 0.97, 0.98, 0.999, 0.99, 20},
	{"bibdedupe_special_cases", "bibdedupe_special_cases", 0.5, 0.5, 0, 0, 0, 1000},
}

func readCSVFile(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("no labelled data: %v", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]string, 0, len(rows)-1)
	for _, r := range rows[1:] {
		m := map[string]string{}
		for k, name := range rows[0] {
			m[name] = r[k]
		}
		out = append(out, m)
	}
	return out
}

// pairScores is pairwise precision and recall of predicted groups against true ones.
func pairScores(pred, truth []string) (precision, recall float64, tp, fp, fn int) {
	type pair struct{ a, b int }
	count := func(g []string) map[pair]bool {
		by := map[string][]int{}
		for i, k := range g {
			by[k] = append(by[k], i)
		}
		out := map[pair]bool{}
		for _, m := range by {
			for x := 0; x < len(m); x++ {
				for y := x + 1; y < len(m); y++ {
					out[pair{m[x], m[y]}] = true
				}
			}
		}
		return out
	}
	p, tr := count(pred), count(truth)
	for k := range p {
		if tr[k] {
			tp++
		} else {
			fp++
		}
	}
	fn = len(tr) - tp
	return float64(tp) / float64(tp+fp), float64(tp) / float64(tp+fn), tp, fp, fn
}

// recordScores is the record-level count of the published tools (the removal convention): of
// each true group one record should be kept. Each further record kept is a false negative, a true
// group none of whose records is kept a false positive, a group that keeps one a true negative,
// and every record rightly removed a true positive.
func recordScores(kept []bool, truth []string) (sens, spec float64, tp, fn, fp, tn int) {
	nKept, size := map[string]int{}, map[string]int{}
	for i, g := range truth {
		size[g]++
		if kept[i] {
			nKept[g]++
		}
	}
	for g, n := range size {
		switch k := nKept[g]; {
		case k == 0:
			fp++
			tp += n - 1
		default:
			tn++
			fn += k - 1
			tp += n - k
		}
	}
	return float64(tp) / float64(tp+fn), float64(tn) / float64(tn+fp), tp, fn, fp, tn
}

// labelledTable is a labelled set as Dedup's input, with its records' keys.
func labelledTable(t *testing.T, name string) (*arrowio.Table, []map[string]string) {
	t.Helper()
	recs := readCSVFile(t, filepath.Join(dedupDir, "records_"+name+".csv"))
	n := len(recs)
	tb := arrowio.NewTable(n)
	filled, abstract := make([]int32, n), make([]int32, n)
	for i, r := range recs {
		for _, v := range r {
			if v != "" {
				filled[i]++
			}
		}
		abstract[i] = int32(len(r["abstract"]))
	}
	for _, c := range [][2]string{{"title", "title"}, {"author", "authors"}, {"doi", "doi"}, {"journal", "journal"},
		{"pages", "start_page"}, {"volume", "volume"}, {"issue", "issue"}, {"pmid", "pmid"}} {
		v, ok := make([]string, n), make([]bool, n)
		for i, r := range recs {
			v[i] = r[c[0]]
			if v[i] == "" && c[0] == "journal" {
				// Conference papers name their proceedings in the secondary title.
				v[i] = r["secondary_title"]
			}
			ok[i] = v[i] != "" && v[i] != "NA"
		}
		tb.AddStr(c[1], v, ok)
	}
	years, yok := make([]int32, n), make([]bool, n)
	for i, r := range recs {
		if y, err := strconv.Atoi(r["year"]); err == nil {
			years[i], yok[i] = int32(y), true
		}
	}
	tb.AddI32("year", years, yok).AddI32("filled", filled, nil).AddI32("abstract_chars", abstract, nil)
	return tb, recs
}

func TestDedupLabelledSets(t *testing.T) {
	for _, set := range labelledSets {
		t.Run(set.truth, func(t *testing.T) {
			tb, recs := labelledTable(t, set.name)
			truthOf := map[string]string{}
			for _, r := range readCSVFile(t, filepath.Join(dedupDir, "truth_"+set.truth+".csv")) {
				truthOf[r["record_key"]] = r["group_id"]
			}
			n := len(recs)
			truth := make([]string, n)
			for i, r := range recs {
				truth[i] = truthOf[r["record_key"]]
				if truth[i] == "" {
					t.Fatalf("record %s has no group", r["record_key"])
				}
			}
			out, sum, err := Dedup(tb, DedupOptions{})
			if err != nil {
				t.Fatal(err)
			}
			g, _ := out.Col("group")
			k, _ := out.Col("kept")
			pred := make([]string, n)
			for i, v := range g.I32 {
				pred[i] = strconv.Itoa(int(v))
			}
			p, r, tp, fp, fn := pairScores(pred, truth)
			sens, spec, rtp, rfn, rfp, rtn := recordScores(k.Bool, truth)
			if os.Getenv("DEDUP_DEBUG") != "" {
				showErrors(t, recs, pred, truth)
			}
			t.Logf("%s: %d records, %d groups, pairwise precision %.4f recall %.4f (tp %d, fp %d, fn %d); "+
				"record level sensitivity %.4f specificity %.4f (tp %d, fn %d, fp %d, tn %d); links %v",
				set.truth, n, sum.Groups, p, r, tp, fp, fn, sens, spec, rtp, rfn, rfp, rtn, sum.ByRule)
			if p < set.minPrecision || r < set.minRecall {
				t.Errorf("precision %.4f (floor %.2f), recall %.4f (floor %.2f)", p, set.minPrecision, r, set.minRecall)
			}
			if sens < set.minSensitivity || spec < set.minSpecificity {
				t.Errorf("sensitivity %.4f (floor %.3f), specificity %.4f (floor %.3f)", sens, set.minSensitivity, spec, set.minSpecificity)
			}

			// The middle band, every pair decided as the labels say.
			var opt DedupOptions
			for _, u := range sum.Unsure {
				p := [2]int{u.A - 1, u.B - 1}
				if truth[p[0]] == truth[p[1]] {
					opt.Same = append(opt.Same, p)
				} else {
					opt.Different = append(opt.Different, p)
				}
				if os.Getenv("DEDUP_DEBUG") != "" {
					t.Logf("unsure %s %v, same %v: %s | %s", u.Rule, u.Conflicts, truth[p[0]] == truth[p[1]], recs[p[0]]["record_key"], recs[p[1]]["record_key"])
				}
			}
			out, again, err := Dedup(tb, opt)
			if err != nil {
				t.Fatal(err)
			}
			k, _ = out.Col("kept")
			bandSens, bandSpec, _, bfn, bfp, _ := recordScores(k.Bool, truth)
			perThousand := float64(len(sum.Unsure)) * 1000 / float64(n)
			t.Logf("%s: %d unsure pairs (%.1f per 1,000 records; %d same, %d different); decided by the labels: sensitivity %.4f specificity %.4f (fn %d, fp %d), %d unsure left",
				set.truth, len(sum.Unsure), perThousand, len(opt.Same), len(opt.Different), bandSens, bandSpec, bfn, bfp, len(again.Unsure))
			if bandSens < set.minBandSensitivity || bandSpec < set.minSpecificity || perThousand > set.maxUnsure {
				t.Errorf("with the band decided: sensitivity %.4f (floor %.3f), specificity %.4f (floor %.3f), %.1f unsure pairs per 1,000 (at most %.0f)",
					bandSens, set.minBandSensitivity, bandSpec, set.minSpecificity, perThousand, set.maxUnsure)
			}
			if len(again.Unsure) != 0 {
				t.Errorf("%d unsure pairs left once every one is decided", len(again.Unsure))
			}
		})
	}
}

func showErrors(t *testing.T, recs []map[string]string, pred, truth []string) {
	show := func(i int) string {
		r := recs[i]
		title := r["title"]
		if len(title) > 80 {
			title = title[:80]
		}
		a := r["author"]
		if len(a) > 25 {
			a = a[:25]
		}
		j := r["journal"]
		if len(j) > 20 {
			j = j[:20]
		}
		return r["record_key"] + ": " + title + " | " + r["year"] + " | " + a + " | " + j + " | " + r["doi"] + " | " + r["pages"] + " | " + r["volume"] + "(" + r["issue"] + ") || " + normTitle(r["title"]) + " | " + surnameOf(r["author"]) + " | " + foldText(r["journal"])
	}
	for i := range recs {
		for j := i + 1; j < len(recs); j++ {
			if pred[i] == pred[j] && truth[i] != truth[j] {
				t.Logf("FP\n  %s\n  %s", show(i), show(j))
			}
			if pred[i] != pred[j] && truth[i] == truth[j] {
				t.Logf("FN\n  %s\n  %s", show(i), show(j))
			}
		}
	}
}

func surnameOf(authors string) string {
	s, _ := firstSurname(authors)
	return s
}
