package refs

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// DedupRules are the rules that can join two records (see Dedup).
var DedupRules = []string{"doi", "pmid", "title", "citation"}

// DedupOptions chooses the rules that may join two records, and carries a person's decisions
// on pairs (0-based row numbers): Same joins the two records' groups, Different keeps the pair,
// and every other pair between the two groups, out of Unsure. A Different decision does not
// split a group the rules or Same decisions made.
type DedupOptions struct {
	Match     []string `json:"match"` // some of DedupRules; all when empty
	Same      [][2]int `json:"same"`
	Different [][2]int `json:"different"`
}

// UnsurePair is a pair the rules neither join nor set apart with confidence (see Dedup): A and B
// are 1-based row numbers (A < B), Rule the rule that would have joined them, Conflicts the
// fields that disagree.
type UnsurePair struct {
	A         int      `json:"a"`
	B         int      `json:"b"`
	Rule      string   `json:"rule"`
	Conflicts []string `json:"conflicts"`
}

// DedupSummary counts what Dedup found.
type DedupSummary struct {
	Records    int            `json:"records"`
	Groups     int            `json:"groups"`     // groups of two records or more
	Duplicates int            `json:"duplicates"` // records in those groups that are not kept
	ByRule     map[string]int `json:"by_rule"`    // links made by each rule, "person" for Same decisions
	Unsure     []UnsurePair   `json:"unsure"`     // one pair per two groups, in the order found
}

// A record as the matching sees it.
type dedupRec struct {
	title, main, prefix string
	words               int
	year                int32
	hasYear             bool
	surname, particle   string // the first author's family name; with a particle cut off before it
	doi, pmid           string
	pages               pageSpan
	page, volume, issue string
	journal             string
	conference          bool // typed as a conference paper or abstract
	filled, abstract    int32
}

// Dedup finds the records of one search exported from several databases, or twice from one: two
// records are the same when
//
//   - "doi": their DOIs are equal (after the resolver prefix, case and %-escapes) and their titles
//     are alike (similar, one without its subtitle, or a translation at the same first page by
//     the same first author), since one supplement's DOI can stand for many conference abstracts;
//   - "pmid": their PubMed ids are equal (and the titles alike when volumes, issues or pages
//     disagree);
//   - "title": their titles, folded (case, punctuation, HTML, diacritics, a leading article, the
//     brackets of a translated title), are equal or nearly so (at most one character in twenty
//     differs, or one is the other's title without its subtitle), the first authors' family names
//     agree and the years are at most one apart (an online-first year and the issue's year);
//   - "citation": the same journal, volume, page range, year and first author (an article
//     exported with its original title by one database and translated by another), never for a
//     record on one page or typed as a conference abstract;
//
// and none of these says otherwise: two different PubMed ids or DOIs, years two or more apart,
// first pages that cannot be one record's (see pagesAgree), or, unless a DOI or PubMed id agrees,
// volumes or issues that differ (when written as plain numbers); for titles also two journals
// whose names cannot be one journal's (a conference abstract and its article), unless the pages
// agree. Groups are the connected records; each keeps its most complete record (the most filled
// fields, then the longest abstract, then the first).
//
// A pair the rules do not join is unsure (see doubtful) when it is close to a rule's match but
// one or two fields speak against it: alike titles of one first author with a different DOI,
// pages, volume or issue, journal, or years apart; or one place in one journal (volume, page
// range, year) under unlike titles, or with the first author missing from one record. Unsure
// pairs are never joined by the rules: they are listed in the summary, one per two groups that
// no decision has set apart, for a person to decide (DedupOptions.Same and Different).
//
// t has the columns of read_refs() that matching uses (title; year, authors, doi, pmid, journal,
// volume, issue, start_page, end_page, type when present) and two integers, filled and
// abstract_chars, that rank completeness. The result has one row per record: group (1-based,
// numbered by first record), kept, and match (the rules that linked the record, for records in a
// group).
func Dedup(t *arrowio.Table, opt DedupOptions) (*arrowio.Table, *DedupSummary, error) {
	recs, err := dedupRecords(t)
	if err != nil {
		return nil, nil, err
	}
	rules := map[string]bool{}
	for _, m := range DedupRules {
		rules[m] = len(opt.Match) == 0
	}
	for _, m := range opt.Match {
		if _, ok := rules[m]; !ok {
			return nil, nil, fmt.Errorf("unknown match rule %q: the rules are %s", m, strings.Join(DedupRules, ", "))
		}
		rules[m] = true
	}
	n := len(recs)
	uf := newUnionFind(n)
	linkRules := make([][]string, n)
	sum := &DedupSummary{Records: n, ByRule: map[string]int{}}
	var doubts []UnsurePair
	join := func(i, j int, rule string) {
		linkRules[i] = addRule(linkRules[i], rule)
		linkRules[j] = addRule(linkRules[j], rule)
		if uf.union(i, j) {
			sum.ByRule[rule]++
		}
	}
	link := func(i, j int) {
		v := sameRecord(&recs[i], &recs[j], rules)
		switch {
		case v.unsure:
			doubts = append(doubts, UnsurePair{A: min(i, j) + 1, B: max(i, j) + 1, Rule: v.rule, Conflicts: v.conflicts})
		case v.rule != "":
			join(i, j, v.rule)
		}
	}
	for _, bucket := range candidateBuckets(recs) {
		for x := 0; x < len(bucket); x++ {
			for y := x + 1; y < len(bucket); y++ {
				if uf.find(bucket[x]) != uf.find(bucket[y]) {
					link(bucket[x], bucket[y])
				}
			}
		}
	}
	for _, p := range opt.Same {
		if err := checkPair(p, n); err != nil {
			return nil, nil, err
		}
		join(p[0], p[1], "person")
	}
	for _, p := range opt.Different {
		if err := checkPair(p, n); err != nil {
			return nil, nil, err
		}
	}
	sum.Unsure = openDoubts(doubts, opt.Different, uf)
	group := make([]int32, n)
	kept := make([]bool, n)
	match := make([]string, n)
	matchValid := make([]bool, n)
	best := map[int]int{}
	ids := map[int]int32{}
	size := map[int]int{}
	for i := range recs {
		root := uf.find(i)
		size[root]++
		if _, ok := ids[root]; !ok {
			ids[root] = int32(len(ids) + 1)
			best[root] = i
		} else if moreComplete(&recs[i], &recs[best[root]]) {
			best[root] = i
		}
		group[i] = ids[root]
	}
	for i := range recs {
		root := uf.find(i)
		kept[i] = best[root] == i
		if size[root] > 1 {
			match[i], matchValid[i] = strings.Join(linkRules[i], ", "), true
			if kept[i] {
				sum.Groups++
			} else {
				sum.Duplicates++
			}
		}
	}
	out := arrowio.NewTable(n).AddI32("group", group, nil).AddBool("kept", kept, nil).AddStr("match", match, matchValid)
	return out, sum, nil
}

func checkPair(p [2]int, n int) error {
	if p[0] < 0 || p[0] >= n || p[1] < 0 || p[1] >= n || p[0] == p[1] {
		return fmt.Errorf("a decided pair (%d, %d) is not two rows of the %d records", p[0]+1, p[1]+1, n)
	}
	return nil
}

// openDoubts are the unsure pairs still to decide: of two records now in one group, or of two
// groups a Different decision set apart, none; of two groups, the first found.
func openDoubts(doubts []UnsurePair, different [][2]int, uf *unionFind) []UnsurePair {
	type groups struct{ a, b int }
	key := func(i, j int) groups {
		a, b := uf.find(i), uf.find(j)
		return groups{min(a, b), max(a, b)}
	}
	seen := map[groups]bool{}
	for _, p := range different {
		seen[key(p[0], p[1])] = true
	}
	out := []UnsurePair{}
	for _, d := range doubts {
		k := key(d.A-1, d.B-1)
		if k.a == k.b || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, d)
	}
	return out
}

func addRule(rules []string, r string) []string {
	for _, x := range rules {
		if x == r {
			return rules
		}
	}
	rules = append(rules, r)
	sort.Strings(rules)
	return rules
}

func moreComplete(a, b *dedupRec) bool {
	if a.filled != b.filled {
		return a.filled > b.filled
	}
	return a.abstract > b.abstract
}

// dedupRecords reads the matching fields of each record.
func dedupRecords(t *arrowio.Table) ([]dedupRec, error) {
	if _, ok := t.Col("title"); !ok {
		return nil, fmt.Errorf("the records table has no title column")
	}
	str := func(name string) func(int) string {
		c, ok := t.Col(name)
		if !ok || c.Kind != arrowio.KindUtf8 {
			return func(int) string { return "" }
		}
		return func(i int) string {
			if c.IsNull(i) {
				return ""
			}
			return c.Str[i]
		}
	}
	i32 := func(name string) func(int) (int32, bool) {
		c, ok := t.Col(name)
		if !ok || c.Kind != arrowio.KindInt32 {
			return func(int) (int32, bool) { return 0, false }
		}
		return func(i int) (int32, bool) { return c.I32[i], !c.IsNull(i) }
	}
	title, authors, doi, pmid := str("title"), str("authors"), str("doi"), str("pmid")
	journal, volume, issue, page, endPage, typ := str("journal"), str("volume"), str("issue"), str("start_page"), str("end_page"), str("type")
	year, filled, abstract := i32("year"), i32("filled"), i32("abstract_chars")
	recs := make([]dedupRec, t.NumRows)
	for i := range recs {
		r := &recs[i]
		r.title = normTitle(title(i))
		r.words = strings.Count(r.title, " ") + 1
		r.main = mainTitle(title(i))
		r.prefix = prefixKey(r.title)
		r.year, r.hasYear = year(i)
		r.surname, r.particle = firstSurname(authors(i))
		r.doi = normDOI(doi(i))
		r.pmid = firstNumber(pmid(i))
		r.pages = parsePages(page(i), endPage(i))
		if len(r.pages.starts) > 0 {
			r.page = r.pages.starts[0]
		}
		r.volume = volumeKey(volume(i))
		r.issue = issueKey(issue(i), volume(i))
		r.conference = isConferenceType(typ(i))
		r.journal = foldText(journal(i))
		r.filled, _ = filled(i)
		r.abstract, _ = abstract(i)
	}
	return recs, nil
}

// prefixKey is the start of a folded title, for the block of titles that differ further on.
func prefixKey(t string) string {
	if len(t) > 24 {
		return t[:24]
	}
	return t
}

// bucketCap bounds the blocks of the fuzzy keys: a common family name in one year, a common
// title start ("effect of the") would otherwise cost a comparison per pair of thousands of
// records, for matches those records' exact keys find anyway.
const bucketCap = 200

// candidateBuckets are the blocks of records compared pairwise: equal DOI, PMID, title or main
// title, and the fuzzy blocks (first author and year, title start, title end).
func candidateBuckets(recs []dedupRec) [][]int {
	exact := map[string][]int{}
	fuzzy := map[string][]int{}
	for i := range recs {
		r := &recs[i]
		if r.doi != "" {
			exact["d\x00"+r.doi] = append(exact["d\x00"+r.doi], i)
		}
		if r.pmid != "" {
			exact["p\x00"+r.pmid] = append(exact["p\x00"+r.pmid], i)
		}
		if r.volume != "" && r.page != "" && r.hasYear {
			// One place in a journal, for a translated title whose record lost its authors.
			k := fmt.Sprintf("c\x00%s\x00%s\x00%d", r.volume, r.page, r.year)
			fuzzy[k] = append(fuzzy[k], i)
		}
		if r.title == "" {
			continue
		}
		exact["t\x00"+r.title] = append(exact["t\x00"+r.title], i)
		if r.main != "" && r.main != r.title {
			exact["m\x00"+r.main] = append(exact["m\x00"+r.main], i)
			exact["t\x00"+r.main] = append(exact["t\x00"+r.main], i)
		}
		if r.surname != "" && r.hasYear {
			k := fmt.Sprintf("a\x00%s\x00%d", r.surname, r.year)
			fuzzy[k] = append(fuzzy[k], i)
		}
		fuzzy["f\x00"+r.prefix] = append(fuzzy["f\x00"+r.prefix], i)
		if len(r.title) > 24 {
			k := "l\x00" + r.title[len(r.title)-24:]
			fuzzy[k] = append(fuzzy[k], i)
		}
	}
	var out [][]int
	keys := make([]string, 0, len(exact)+len(fuzzy))
	for k := range exact {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same groups whatever the map order
	for _, k := range keys {
		if b := exact[k]; len(b) > 1 {
			out = append(out, b)
		}
	}
	keys = keys[:0]
	for k := range fuzzy {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if b := fuzzy[k]; len(b) > 1 && len(b) <= bucketCap {
			out = append(out, b)
		}
	}
	return out
}

// pairFacts is what two records' fields say for and against their being one record. The rules
// of sameRecord decide on them alone.
type pairFacts struct {
	idAgrees    string // "pmid" or "doi" when an identifier both records have is equal
	idConflicts string // "pmid" or "doi" when an identifier both records have differs
	yearsApart  bool   // years two or more apart
	pagesDiffer bool   // first pages that cannot be one record's
	issueDiffer bool   // volumes or issues that cannot be one record's
	samePlace   bool   // one place in a journal, whatever its name's spelling
	sameYear    bool
}

func comparePair(a, b *dedupRec, rules map[string]bool) pairFacts {
	var f pairFacts
	if rules["pmid"] && a.pmid != "" && b.pmid != "" {
		if a.pmid == b.pmid {
			f.idAgrees = "pmid"
		} else {
			f.idConflicts = "pmid"
		}
	}
	// An equal PubMed id outweighs DOIs that differ (an export's wrong DOI, a DOI of the
	// supplement).
	if rules["doi"] && a.doi != "" && b.doi != "" && f.idAgrees == "" && f.idConflicts == "" {
		if a.doi != b.doi {
			f.idConflicts = "doi"
		} else {
			f.idAgrees = "doi"
		}
	}
	f.yearsApart = a.hasYear && b.hasYear && (a.year-b.year > 1 || b.year-a.year > 1)
	f.pagesDiffer = !pagesAgree(a.pages, b.pages)
	f.issueDiffer = a.volume != "" && b.volume != "" && a.volume != b.volume || a.issue != "" && b.issue != "" && a.issue != b.issue
	// One first page and volume, or one page range when an export garbled the volume, or one
	// article number.
	f.samePlace = a.page != "" && a.page == b.page && (a.volume != "" && a.volume == b.volume ||
		a.pages.end != "" && a.pages.end != a.page && a.pages.end == b.pages.end) ||
		a.pages.article != "" && a.pages.article == b.pages.article
	f.sameYear = a.hasYear && b.hasYear && a.year == b.year
	return f
}

// verdict is sameRecord's decision on a pair: one record by rule; unsure, with the rule that came
// closest and the fields that speak against it (conflicts); or, with neither, two records.
type verdict struct {
	rule      string
	unsure    bool
	conflicts []string
}

// sameRecord decides on a pair. Every decision on a pair is made here, on the facts of
// comparePair. A rule left out of DedupOptions.Match is not used as evidence against a match
// either: without "doi", the DOIs are not compared at all.
func sameRecord(a, b *dedupRec, rules map[string]bool) verdict {
	f := comparePair(a, b, rules)
	if rule := matchRule(a, b, f, rules); rule != "" {
		return verdict{rule: rule}
	}
	return doubtful(a, b, f, rules)
}

// matchRule names the rule by which a and b are one record, or "".
func matchRule(a, b *dedupRec, f pairFacts, rules map[string]bool) string {
	if f.idConflicts != "" || f.yearsApart {
		return ""
	}
	if f.idAgrees != "" {
		// One identifier: volumes and issues that disagree are an export's mistakes ("213(5)" and
		// "212(11)", a Cochrane review's "9" and "2020(9)"), as long as the titles are alike.
		// Pages still tell a supplement's abstracts apart, which can share its DOI.
		// A PubMed id is one article's: alone it is enough.
		if f.idAgrees == "pmid" && (!f.pagesDiffer && !f.issueDiffer || titlesAlike(a, b)) ||
			f.idAgrees == "doi" && !f.pagesDiffer && titlesAlike(a, b) {
			return f.idAgrees
		}
		return ""
	}
	if f.pagesDiffer || f.issueDiffer {
		// Different pages or issues: a recurring column ("Editor's note" in issues 1 to 4), or
		// two papers of one author at the same pages of different issues.
		return ""
	}
	if rule := sameTitle(a, b, f.samePlace, f.sameYear); rule != "" && rules["title"] {
		return rule
	}
	if rules["citation"] && f.samePlace && f.sameYear && a.surname != "" && b.surname != "" && sameAuthor(a, b) && journalsAgree(a.journal, b.journal) &&
		citationEnough(a, b) {
		// One article in two languages (an original title and its translation).
		return "citation"
	}
	return ""
}

// doubtful is the verdict on a pair the rules did not join: unsure when it is close to a match
// but one or two fields speak against it, else two records. The misses of the rules on labelled
// searches are of these kinds: one title of one author with two DOIs (an export's wrong DOI),
// two page ranges (a misprint, an article and its supplement's reprint), two journals (a Chinese
// journal under two names), years apart (a Cochrane review and its update), two first authors
// (letters under one heading); and one volume, page range and year under a translated title
// without authors, or in two journals' names. Two PubMed ids are two articles; short titles ("Editorial") name many
// works.
func doubtful(a, b *dedupRec, f pairFacts, rules map[string]bool) verdict {
	if f.idConflicts == "pmid" {
		return verdict{}
	}
	sameAuth := a.surname != "" && b.surname != "" && sameAuthor(a, b)
	if rules["title"] && a.words >= 4 && b.words >= 4 && (sameAuth || f.samePlace && f.sameYear) {
		if near, close := titlesClose(a, b); close {
			var c []string
			if f.idConflicts == "doi" {
				c = append(c, "doi")
			}
			if f.yearsApart {
				c = append(c, "year")
			}
			if f.pagesDiffer {
				c = append(c, "pages")
			}
			if f.issueDiffer && f.idAgrees == "" {
				if a.volume != "" && b.volume != "" && a.volume != b.volume {
					c = append(c, "volume")
				} else {
					c = append(c, "issue")
				}
			}
			if !f.samePlace && !journalsAgree(a.journal, b.journal) && !(isProceedings(a.journal) && isProceedings(b.journal)) {
				c = append(c, "journal")
			}
			if !sameAuth {
				c = append(c, "authors")
			}
			if !near {
				c = append(c, "title")
			}
			if len(c) >= 1 && len(c) <= 2 {
				rule := "title"
				if f.idAgrees != "" {
					rule = f.idAgrees
				}
				return verdict{rule: rule, unsure: true, conflicts: c}
			}
			return verdict{}
		}
	}
	if rules["citation"] && f.idConflicts == "" && !f.issueDiffer && f.samePlace && f.sameYear && citationEnough(a, b) {
		// One volume, page range and year: a translation whose record lost its authors, or a
		// journal named in a form journalsAgree does not know ("Dtsch-Med-Wochenschr").
		var c []string
		if !sameAuth {
			c = append(c, "authors")
		}
		if !journalsAgree(a.journal, b.journal) {
			c = append(c, "journal")
		}
		if len(c) > 0 {
			return verdict{rule: "citation", unsure: true, conflicts: c}
		}
	}
	return verdict{}
}

// titlesClose: titles that may be one work's (close), and whether they are as near as the title
// rule asks when nothing else is against them (near).
func titlesClose(a, b *dedupRec) (near, close bool) {
	if a.title == b.title || a.main != "" && (a.main == b.title || a.main == b.main) || b.main != "" && b.main == a.title {
		return true, true
	}
	s := titleSimilarity(a.title, b.title, 0.85)
	return s >= 0.95, s >= 0.85
}

// titlesAlike: titles that can be one work's, with an identifier in common: similar, one the
// other without its subtitle, or one a translation (the same first author and first page).
func titlesAlike(a, b *dedupRec) bool {
	if a.title == "" || b.title == "" || titleSimilarity(a.title, b.title, 0.6) >= 0.6 {
		return true
	}
	if a.main != "" && (a.main == b.title || a.main == b.main) || b.main != "" && b.main == a.title ||
		strings.HasPrefix(a.title, b.title+" ") || strings.HasPrefix(b.title, a.title+" ") {
		return true
	}
	return a.page != "" && a.page == b.page && a.surname != "" && sameAuthor(a, b)
}

// citationEnough: the same place and first author are one record only for full articles with
// the same page range. Conference abstracts share a page with others (one page of a
// supplement holds several, often by one group).
func citationEnough(a, b *dedupRec) bool {
	if a.conference || b.conference || a.pages.onePage() || b.pages.onePage() || a.pages.number || b.pages.number {
		return false
	}
	return a.pages.end != "" && a.pages.end == b.pages.end
}

// sameTitle is "title" when a and b are one work by their titles (see Dedup).
func sameTitle(a, b *dedupRec, samePlace, sameYear bool) string {
	if a.title == "" || b.title == "" {
		return ""
	}
	if !samePlace && !journalsAgree(a.journal, b.journal) && !(isProceedings(a.journal) && isProceedings(b.journal)) {
		// One title in two journals: a conference abstract and its article, or a guideline
		// published in several journals, are different records.
		return ""
	}
	if !sameAuthor(a, b) {
		// Author lists garbled in one export (names swapped, a group as first author): the same
		// long title in the same journal and year is still one record.
		if a.title == b.title && a.words >= 6 && sameYear && (samePlace || a.journal != "" && b.journal != "") {
			return "title"
		}
		return ""
	}
	// Short titles ("Editorial", "Reply") name many works: they need the same first author and year.
	if a.words < 4 || b.words < 4 {
		if a.title != b.title || a.surname == "" || b.surname == "" || !sameYear {
			return ""
		}
		return "title"
	}
	if a.title == b.title || (a.main != "" && (a.main == b.title || a.main == b.main)) || (b.main != "" && b.main == a.title) {
		return "title"
	}
	if samePlace && sameYear && (strings.HasPrefix(a.title, b.title+" ") || strings.HasPrefix(b.title, a.title+" ")) {
		// One export added the study group's name or a subtitle after a full stop.
		return "title"
	}
	min := 0.95
	if samePlace && sameYear && a.surname != "" && b.surname != "" {
		// Characters an export lost (Greek letters, symbols) in a title at the same place.
		min = 0.85
	}
	if titleSimilarity(a.title, b.title, min) >= min {
		return "title"
	}
	return ""
}

// surnamesAgree: the same family name, or one of them missing or part of the other (a double
// name written in full in one export).
func surnamesAgree(a, b string) bool {
	if a == "" || b == "" || a == b {
		return true
	}
	ca, cb := strings.ReplaceAll(a, " ", ""), strings.ReplaceAll(b, " ", "")
	if ca == cb {
		return true
	}
	return len(ca) >= 4 && len(cb) >= 4 && (strings.Contains(ca, cb) || strings.Contains(cb, ca))
}

// sameAuthor: the first authors' family names agree, in the form each export wrote or with a
// particle an export cut off.
func sameAuthor(a, b *dedupRec) bool {
	return surnamesAgree(a.surname, b.surname) || a.particle != "" && surnamesAgree(a.particle, b.surname) ||
		b.particle != "" && surnamesAgree(a.surname, b.particle)
}

// titleSimilarity is 1 - edit distance / the longer length, computed only as far as needed to know
// whether it reaches min (below, it returns 0).
func titleSimilarity(a, b string, min float64) float64 {
	la, lb := len(a), len(b)
	long := max(la, lb)
	if long == 0 {
		return 1
	}
	maxDist := int(float64(long) * (1 - min))
	if la-lb > maxDist || lb-la > maxDist {
		return 0
	}
	d := boundedLevenshtein(a, b, maxDist)
	if d > maxDist {
		return 0
	}
	return 1 - float64(d)/float64(long)
}

// boundedLevenshtein is the edit distance of a and b (bytes), or maxDist+1 when it is larger:
// only the diagonal band of width 2*maxDist+1 is computed.
func boundedLevenshtein(a, b string, maxDist int) int {
	if len(a) < len(b) {
		a, b = b, a
	}
	n, m := len(a), len(b)
	const inf = 1 << 30
	prev := make([]int, m+1)
	cur := make([]int, m+1)
	for j := range prev {
		prev[j] = j
		if j > maxDist {
			prev[j] = inf
		}
	}
	for i := 1; i <= n; i++ {
		lo, hi := max(1, i-maxDist), min(m, i+maxDist)
		for j := range cur {
			cur[j] = inf
		}
		if i <= maxDist {
			cur[0] = i
		}
		best := cur[0]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := prev[j-1] + cost
			if prev[j]+1 < v {
				v = prev[j] + 1
			}
			if cur[j-1]+1 < v {
				v = cur[j-1] + 1
			}
			cur[j] = v
			best = min(best, v)
		}
		if best > maxDist {
			return maxDist + 1
		}
		prev, cur = cur, prev
	}
	return prev[m]
}

type unionFind struct{ parent, rank []int }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int, n), rank: make([]int, n)}
	for i := range u.parent {
		u.parent[i] = i
	}
	return u
}

func (u *unionFind) find(i int) int {
	for u.parent[i] != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = u.parent[i]
	}
	return i
}

// union joins the sets of i and j; false when they were one already.
func (u *unionFind) union(i, j int) bool {
	a, b := u.find(i), u.find(j)
	if a == b {
		return false
	}
	if u.rank[a] < u.rank[b] {
		a, b = b, a
	}
	u.parent[b] = a
	if u.rank[a] == u.rank[b] {
		u.rank[a]++
	}
	return true
}
