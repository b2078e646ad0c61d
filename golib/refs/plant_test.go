package refs

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// Near-duplicates planted among real records (a Scopus export of the corpus): each of the first
// 150 records gets a copy changed as another database or a person would change it, without its
// DOI unless the change is the DOI's form. Dedup must find every copy's original and nothing else.
var plantings = []struct {
	name   string
	change func(title, authors, journal string, year int32) (string, string, string, int32)
}{
	{"title in capitals", func(t, a, j string, y int32) (string, string, string, int32) { return strings.ToUpper(t), a, j, y }},
	{"punctuation, a trailing period", func(t, a, j string, y int32) (string, string, string, int32) {
		return strings.NewReplacer(":", " -", ",", "", "-", " ").Replace(t) + ".", a, j, y
	}},
	{"HTML", func(t, a, j string, y int32) (string, string, string, int32) {
		return strings.Replace(strings.Replace(t, " and ", " &amp; ", 1), " ", " <i>", 1) + "</i>", a, j, y
	}},
	{"diacritics", func(t, a, j string, y int32) (string, string, string, int32) {
		return strings.NewReplacer("e", "é", "a", "à", "o", "ö").Replace(t), strings.NewReplacer("e", "ë", "o", "ø").Replace(a), j, y
	}},
	{"a leading article", func(t, a, j string, y int32) (string, string, string, int32) { return "The " + t, a, j, y }},
	{"the subtitle dropped", func(t, a, j string, y int32) (string, string, string, int32) {
		if i := strings.Index(t, ":"); i > 0 && strings.Count(t[:i], " ") >= 3 {
			return t[:i], a, j, y
		}
		return t + " [Review]", a, j, y
	}},
	{"authors abbreviated, the year online first", func(t, a, j string, y int32) (string, string, string, int32) {
		first := strings.Split(a, "; ")[0]
		if sur, given, ok := strings.Cut(first, ", "); ok && given != "" {
			first = sur + " " + given[:1]
		}
		return t, first, j, y - 1
	}},
	{"a typo", func(t, a, j string, y int32) (string, string, string, int32) {
		b := []byte(t)
		b[len(b)/2] = 'x'
		return string(b), a, j, y
	}},
	{"the journal abbreviated", func(t, a, j string, y int32) (string, string, string, int32) {
		var ab []string
		for _, w := range strings.Fields(j) {
			if len(w) > 4 {
				w = w[:4]
			}
			ab = append(ab, w)
		}
		return t, a, strings.Join(ab, " "), y
	}},
	{"the DOI as a link in capitals", nil},
}

func TestDedupPlanted(t *testing.T) {
	src, err := readTestFile(filepath.Join(corpusDir, "revtools/restoration_scopus.ris"), Options{NA: []string{"", "NA"}})
	if err != nil {
		t.Skipf("no corpus: %v", err)
	}
	const planted = 150
	n := src.rows + planted
	cols := map[string][]string{}
	for _, c := range []string{"title", "authors", "journal", "doi", "volume", "start_page"} {
		v, _ := src.col(c)
		cols[c] = append(append([]string(nil), v...), make([]string, planted)...)
	}
	years := make([]int32, n)
	for i := 0; i < src.rows; i++ {
		y, _ := strconv.Atoi(src.value("year", i))
		years[i] = int32(y)
	}
	for k := 0; k < planted; k++ {
		i, p := src.rows+k, plantings[k%len(plantings)]
		t0, a, j := src.value("title", k), src.value("authors", k), src.value("journal", k)
		cols["volume"][i], cols["start_page"][i] = src.value("volume", k), src.value("start_page", k)
		if p.change == nil {
			cols["title"][i], cols["authors"][i], cols["journal"][i], years[i] = t0, a, j, years[k]
			cols["doi"][i] = "https://doi.org/" + strings.ToUpper(src.value("doi", k))
			continue
		}
		cols["title"][i], cols["authors"][i], cols["journal"][i], years[i] = p.change(t0, a, j, years[k])
	}
	tb := arrowio.NewTable(n).AddI32("year", years, nil)
	for c, v := range cols {
		valid := make([]bool, n)
		for i := range v {
			valid[i] = v[i] != ""
		}
		tb.AddStr(c, v, valid)
	}
	out, _, err := Dedup(tb, DedupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := out.Col("group")
	pred := make([]string, n)
	truth := make([]string, n)
	for i := range pred {
		pred[i] = strconv.Itoa(int(g.I32[i]))
		truth[i] = strconv.Itoa(i)
		if i >= src.rows {
			truth[i] = strconv.Itoa(i - src.rows)
		}
	}
	p, r, tp, fp, fn := pairScores(pred, truth)
	t.Logf("planted near-duplicates: %d real records and %d copies: pairwise precision %.4f recall %.4f (tp %d, fp %d, fn %d)",
		src.rows, planted, p, r, tp, fp, fn)
	for k := 0; k < planted; k++ {
		if pred[k] != pred[src.rows+k] {
			t.Errorf("%s: %q not found as a copy of %q", plantings[k%len(plantings)].name, cols["title"][src.rows+k], cols["title"][k])
		}
	}
	if p < 1 {
		t.Errorf("precision %.4f: records joined that are not copies", p)
	}
}
