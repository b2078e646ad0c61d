package refs

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// FuzzRead: whatever the bytes, reading them ends with a table whose chunks encode as valid Arrow
// with valid UTF-8, or with a refs.Error; never a panic or a hang.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		"TY  - JOUR\nTI  - A\nAU  - B\nER  - \n",
		"1.\nTY  - JOUR\nTI\t- A\nER  -\nNL  - x\n\nLink: y\n",
		"PMID- 1\nTI  - A\n      b\nFAU - C, D\n\nPMID- 2\n",
		"FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nAU A\n   B\nTI T\nER\nEF\n",
		"@article{k, title = {A {B} \\\"o}, author = {A and B}, year = 2000}\n",
		"title;abstract\n\"a\"\"b\";\"c\nd\"\n",
		"SEARCH QUERY,x\n---\n\nTitle,Year\nA,2000\n",
	} {
		for format := range 6 {
			f.Add([]byte(seed), format)
		}
	}
	formats := append([]string{"auto"}, Formats...)
	f.Fuzz(func(t *testing.T, data []byte, format int) {
		opt := Options{Format: formats[(format%len(formats)+len(formats))%len(formats)], NA: []string{"", "NA"}}
		rd, err := OpenBytes(data, opt, 3)
		if err == nil {
			var chunks []*Chunk
			if chunks, err = ReadAll(rd); err == nil {
				for _, ch := range chunks {
					for _, c := range decodedChunk(t, ch).Columns {
						for _, s := range c.Str {
							if !utf8.ValidString(s) {
								t.Fatalf("column %s holds invalid UTF-8", c.Name)
							}
						}
					}
				}
				return
			}
		}
		var re *Error
		if !errors.As(err, &re) || re.Message == "" {
			t.Fatalf("not a refs.Error: %v", err)
		}
	})
}

// FuzzDedup: any titles, authors, years, DOIs and pages give groups (one per record) and one kept
// record per group, never a panic.
func FuzzDedup(f *testing.F) {
	f.Add("The Title: a subtitle.", "Smith, J", 2001, "10.1/x", "12", "Cancer", "A title", "Smith J", 2002, "https://doi.org/10.1/X", "S12", "J Cancer")
	f.Add("", "", 0, "", "", "", "&amp; <i>x</i>", "Ünal", -5, "doi:", "e1", "Proceedings")
	f.Fuzz(func(t *testing.T, t1, a1 string, y1 int, d1, p1, j1, t2, a2 string, y2 int, d2, p2, j2 string) {
		tb := arrowio.NewTable(3).
			AddStr("title", []string{t1, t2, t1}, nil).AddStr("authors", []string{a1, a2, a2}, nil).
			AddI32("year", []int32{int32(y1), int32(y2), int32(y1)}, nil).AddStr("doi", []string{d1, d2, d1}, nil).
			AddStr("start_page", []string{p1, p2, p2}, nil).AddStr("journal", []string{j1, j2, j2}, nil)
		out, sum, err := Dedup(tb, DedupOptions{})
		if err != nil {
			t.Fatal(err)
		}
		g, _ := out.Col("group")
		k, _ := out.Col("kept")
		kept := map[int32]int{}
		for i, v := range g.I32 {
			if k.Bool[i] {
				kept[v]++
			}
		}
		for grp, n := range kept {
			if n != 1 {
				t.Fatalf("group %d keeps %d records", grp, n)
			}
		}
		if len(kept) != 3-sum.Duplicates {
			t.Fatalf("%d groups kept, %d duplicates of 3", len(kept), sum.Duplicates)
		}
	})
}
