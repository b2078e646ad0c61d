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

// A labelled set: its raw records (with the pages and volumes real exports have) and the names of
// their columns.
type labelledSet struct {
	name, raw, key, journal2 string
	minPrecision, minRecall  float64
}

var labelledSets = []labelledSet{
	{"asysd_diabetes", "raw/asysd_diabetes/labelled_test_set.csv", "record_id", "", 0.99, 0.97},
	{"asysd_diabetes_curated", "raw/asysd_diabetes/labelled_test_set.csv", "record_id", "", 0.99, 0.97},
	{"sra_cytology", "raw/sra_cytology/records_pre_merged.csv", "ID", "", 0.99, 0.95},
	{"sra_respiratory", "raw/sra_respiratory/records_pre_merged.csv", "ID", "", 0.99, 0.9},
	{"bibdedupe_special_cases", "raw/bibdedupe_special_cases/records_pre_merged.csv", "ID", "booktitle", 0.5, 0.5},
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

func TestDedupLabelledSets(t *testing.T) {
	for _, set := range labelledSets {
		t.Run(set.name, func(t *testing.T) {
			recs := readCSVFile(t, filepath.Join(dedupDir, set.raw))
			truthOf := map[string]string{}
			for _, r := range readCSVFile(t, filepath.Join(dedupDir, "truth_"+set.name+".csv")) {
				truthOf[r["record_key"]] = r["group_id"]
			}
			n := len(recs)
			tb := arrowio.NewTable(n)
			for _, c := range [][2]string{{"title", "title"}, {"author", "authors"}, {"doi", "doi"}, {"journal", "journal"},
				{"pages", "start_page"}, {"volume", "volume"}} {
				v, ok := make([]string, n), make([]bool, n)
				for i, r := range recs {
					v[i] = r[c[0]]
					if v[i] == "" && c[0] == "journal" && set.journal2 != "" {
						v[i] = r[set.journal2]
					}
					ok[i] = v[i] != "" && v[i] != "NA"
				}
				tb.AddStr(c[1], v, ok)
			}
			years, yok := make([]int32, n), make([]bool, n)
			truth := make([]string, n)
			for i, r := range recs {
				if y, err := strconv.Atoi(r["year"]); err == nil {
					years[i], yok[i] = int32(y), true
				}
				truth[i] = truthOf[r[set.key]]
				if truth[i] == "" {
					t.Fatalf("record %s has no group", r[set.key])
				}
			}
			tb.AddI32("year", years, yok)
			out, sum, err := Dedup(tb, DedupOptions{})
			if err != nil {
				t.Fatal(err)
			}
			g, _ := out.Col("group")
			pred := make([]string, n)
			for i, v := range g.I32 {
				pred[i] = strconv.Itoa(int(v))
			}
			p, r, tp, fp, fn := pairScores(pred, truth)
			if os.Getenv("DEDUP_DEBUG") != "" {
				showErrors(t, recs, pred, truth)
			}
			t.Logf("%s: %d records, %d groups, pairwise precision %.4f recall %.4f (tp %d, fp %d, fn %d); links %v",
				set.name, n, sum.Groups, p, r, tp, fp, fn, sum.ByRule)
			if p < set.minPrecision || r < set.minRecall {
				t.Errorf("precision %.4f (floor %.2f), recall %.4f (floor %.2f)", p, set.minPrecision, r, set.minRecall)
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
		return title + " | " + r["year"] + " | " + a + " | " + j + " | " + r["doi"] + " | " + r["pages"] + " | " + r["volume"] + " || " + normTitle(r["title"]) + " | " + firstSurname(r["author"]) + " | " + foldText(r["journal"])
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
