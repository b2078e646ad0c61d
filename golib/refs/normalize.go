package refs

import (
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

var (
	htmlTag = regexp.MustCompile(`</?[a-zA-Z][a-zA-Z0-9]*(\s[^<>]*)?/?>`)
	// What catalogues append to a title: "[Review] [70 refs]", "[Article in German]",
	// "[Electronic Resource]".
	trailingNotes = regexp.MustCompile(`(\s*\[[^\[\]]*\]\s*\.?)+\s*$`)
	doiPrefix     = regexp.MustCompile(`(?i)^(?:https?://(?:dx\.)?doi\.org/|doi:?\s*)`)
	leadArticles  = []string{"the ", "a ", "an "}
)

// foldText is text reduced to what two exports of one record share whatever their tools did to
// it: HTML entities and tags decoded or dropped, diacritics dropped (NFKD without combining
// marks), lower case, "&" as "and", every run of other characters one space.
func foldText(s string) string {
	if strings.ContainsAny(s, "&<") {
		s = html.UnescapeString(htmlTag.ReplaceAllString(s, ""))
		s = strings.ReplaceAll(s, "&", " and ")
	}
	var b strings.Builder
	b.Grow(len(s))
	space := true
	for _, r := range norm.NFKD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
			space = false
		case !space:
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}

// normTitle is a title for matching: folded, without a leading "the", "a" or "an" (exporters and
// catalogues drop or keep them). It is never empty when the title has a letter or a digit: a
// record without a title enters no comparison.
func normTitle(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		// MEDLINE's translated titles are in brackets, often followed by the language
		// ("[Title]. [Japanese]") or by the original title after a marker ("[Title] TO: ...").
		s = bracketed(s)
	} else if t := trailingNotes.ReplaceAllString(s, ""); foldText(t) != "" {
		s = t
	}
	t := foldText(s)
	for _, a := range leadArticles {
		if strings.HasPrefix(t, a) && len(t) > len(a) {
			return t[len(a):]
		}
	}
	return t
}

// bracketed is the text inside the bracket that opens s, or s without its brackets when that
// bracket never closes.
func bracketed(s string) string {
	depth := 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return s[1:i]
			}
		}
	}
	return strings.NewReplacer("[", " ", "]", " ").Replace(s)
}

// mainTitle is the title before its subtitle (a colon, a question mark or " - "), folded, when
// that part is long enough to identify a work; "" otherwise.
func mainTitle(s string) string {
	i := strings.IndexAny(s, ":?")
	if j := strings.Index(s, " - "); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i <= 0 {
		return ""
	}
	t := normTitle(s[:i])
	if strings.Count(t, " ") < 3 {
		return ""
	}
	return t
}

// normDOI is a DOI without its resolver prefix, %-escapes decoded, in lower case (DOIs are case
// insensitive), without the punctuation that ends a sentence; "" for what is not a DOI.
func normDOI(s string) string {
	// A DOI has no white space: what follows it is another field an exporter glued on (Rayyan
	// writes "DO  - 10.1038/x     LK  - https://...").
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return ""
	}
	s = fields[0]
	if strings.EqualFold(s, "doi:") && len(fields) > 1 {
		s = fields[1]
	}
	s = doiPrefix.ReplaceAllString(s, "")
	if strings.Contains(s, "%") {
		if u, err := url.PathUnescape(s); err == nil {
			s = u
		}
	}
	s = strings.ToLower(trimDOI(strings.TrimSpace(s)))
	if !strings.HasPrefix(s, "10.") {
		return ""
	}
	return s
}

// firstNumber is the first run of digits in s, without leading zeros: a PMID written "PMID: 123",
// a page "S354" or "iii613", a volume "38 (Supplement 1)".
func firstNumber(s string) string {
	i := 0
	for i < len(s) && !isDigit(s[i]) {
		i++
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	return strings.TrimLeft(s[i:j], "0")
}

// firstSurname is the family name of the first author, folded, in the forms exports write: "Smith,
// John" and "Smith, J" (RIS, MEDLINE's FAU), "Smith J" and "Smith JA" (MEDLINE's AU, Embase),
// "John Smith", "Smith, J and Jones, K" (BibTeX), "Smith J.Jones K." (EndNote's glued lists).
// When the name before the comma is a particle ("Le, Quintrec M.", "del, Pino M": the rest of the
// name cut off by an export), withParticle is it with the word after the comma; the particle
// alone may also be a family name ("Du, Shu-Fang").
func firstSurname(authors string) (surname, withParticle string) {
	a := authors
	for _, sep := range []string{"; ", " and ", ";"} {
		if i := strings.Index(a, sep); i > 0 {
			a = a[:i]
		}
	}
	if i := strings.IndexByte(a, ','); i > 0 {
		name := foldText(a[:i])
		if nameParticles[name] {
			if rest := strings.Fields(foldText(a[i+1:])); len(rest) > 0 && len(rest[0]) > 1 {
				return name, name + " " + rest[0]
			}
		}
		return name, ""
	}
	words := strings.Fields(a)
	if len(words) == 0 {
		return "", ""
	}
	var name []string
	for k, w := range words {
		if k > 0 && isInitials(w) {
			return foldText(strings.Join(name, " ")), ""
		}
		name = append(name, w)
	}
	return foldText(words[len(words)-1]), ""
}

// nameParticles begin family names ("Le Quintrec", "van der Berg", "del Pino").
var nameParticles = map[string]bool{"le": true, "la": true, "de": true, "da": true, "di": true, "du": true, "des": true,
	"del": true, "della": true, "dos": true, "van": true, "von": true, "der": true, "den": true, "ten": true, "ter": true,
	"el": true, "al": true, "lo": true, "mac": true, "st": true}

// isInitials: "J", "JA", "J.", "J.A.", "D.Gronros" (an initial glued to the next name).
func isInitials(w string) bool {
	letters := 0
	for i, r := range w {
		switch {
		case r == '.' || r == '-':
			if i == 1 && letters == 1 {
				return true
			}
		case unicode.IsUpper(r):
			letters++
		default:
			return false
		}
	}
	return letters > 0 && letters <= 3
}

var journalStopWords = map[string]bool{"and": true, "of": true, "the": true, "for": true, "a": true, "an": true,
	"in": true, "on": true, "de": true, "la": true, "le": true, "und": true, "fur": true}

// journalWords are a folded journal name's words without the small ones, which abbreviations
// drop.
func journalWords(j string) []string {
	var out []string
	for _, w := range strings.Fields(j) {
		if !journalStopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// journalsAgree: two folded journal names can name one journal: equal, or the words of the
// shorter are, in order, the starts of words of the longer, beginning with its first ("j clin
// microbiol" and "journal of clinical microbiology"; "obesity" and "obesity silver spring";
// "microcirculation" and "microcirculation conference 24th ..."), or the shorter begins with the
// initials of the longer ("icis 2019 proceedings" and "international conference on information
// systems").
func journalsAgree(a, b string) bool {
	if a == "" || b == "" || a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	wa, wb := journalWords(a), journalWords(b)
	if len(wa) == 0 {
		return true
	}
	if acronymOf(wa[0], wb) || acronymOf(strings.Fields(b)[0], wa) {
		return true
	}
	k := 0
	for i, w := range wb {
		if k < len(wa) && strings.HasPrefix(w, wa[k]) {
			k++
		} else if i == 0 {
			return false
		}
	}
	return k == len(wa)
}

// acronymOf: w is the initials of the words (three or more), as conferences name themselves.
func acronymOf(w string, words []string) bool {
	if len(words) < 3 || len(w) != len(words) {
		return false
	}
	for i, x := range words {
		if x[0] != w[i] {
			return false
		}
	}
	return true
}

var (
	cleanPage = regexp.MustCompile(`^([A-Za-z]{0,3})0*(\d+)[A-Za-z]?$`)
	// A page range a spreadsheet took for a date: "1-6" became "01-Jun".
	spreadsheetPage = regexp.MustCompile(`^0*(\d{1,2})-(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)$`)
	monthNumbers    = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8,
		"sep": 9, "oct": 10, "nov": 11, "dec": 12}
)

// pageSpan is where a record is in its journal, as far as its pages tell.
type pageSpan struct {
	starts   []string // the first page of each range ("233-8, 230-5" has two), as numbers
	end      string   // the last page of the first range, when written
	prefixed bool     // the first page has letters before its number ("S354", "i428")
	// An article number ("e0209483", "CD006273", "106482") or a page count ("1-6", "11"): it does
	// not say where in the volume the record is, so it tells no record from another.
	number bool
	// The article number itself ("cd6273"), when it is long enough to name one article of a
	// journal.
	article string
}

// The letters of article numbers (PLoS's "e0209483", BMJ's "a1754", the Cochrane Library's
// "CD006273"); supplements' pages ("S354", "B11", "iii613") are pages.
var articlePrefix = map[string]bool{"e": true, "a": true, "c": true, "cd": true, "art": true}

// pageKey is the first start page of pages, or "".
func pageKey(pages string) string {
	if p := parsePages(pages, ""); len(p.starts) > 0 {
		return p.starts[0]
	}
	return ""
}

// parsePages reads pages written as one page or ranges ("125", "S354-S355", "831-5",
// "233-8, 230-5", "233-238+230-235"), and the end page when an export gives it apart; garbled
// pages ("Suppl-29") give nothing: only clean pages may tell two records apart.
func parsePages(pages, endPage string) pageSpan {
	var p pageSpan
	pages = strings.TrimSpace(pages)
	if m := spreadsheetPage.FindStringSubmatch(strings.ToLower(pages)); m != nil {
		a, b := strings.TrimLeft(m[1], "0"), strconv.Itoa(monthNumbers[m[2]])
		p.starts, p.end, p.number = []string{a}, b, a == "1" || b == "1"
		return p
	}
	for k, part := range strings.FieldsFunc(pages, func(r rune) bool { return r == ',' || r == '+' || r == ';' }) {
		start, end, _ := strings.Cut(strings.TrimSpace(part), "-")
		m := cleanPage.FindStringSubmatch(strings.TrimSpace(start))
		if m == nil {
			if k == 0 {
				return pageSpan{}
			}
			continue
		}
		p.starts = append(p.starts, m[2])
		if k > 0 {
			continue
		}
		p.prefixed = m[1] != ""
		if e := cleanPage.FindStringSubmatch(strings.TrimSpace(end)); e != nil {
			p.end = expandEnd(m[2], e[2])
		}
		p.number = end == "" && (articlePrefix[strings.ToLower(m[1])] || len(m[2]) >= 5) || m[2] == "1" && p.end != "" && p.end != "1"
		if p.number && end == "" && len(m[2]) >= 4 {
			p.article = strings.ToLower(m[1]) + m[2]
		}
	}
	if p.end == "" && len(p.starts) > 0 {
		if e := cleanPage.FindStringSubmatch(strings.TrimSpace(endPage)); e != nil {
			p.end = expandEnd(p.starts[0], e[2])
			p.number = p.number || p.starts[0] == "1" && p.end != "1"
		}
	}
	return p
}

// expandEnd is an end page written short ("831-5") in full.
func expandEnd(start, end string) string {
	if len(end) < len(start) {
		return start[:len(start)-len(end)] + end
	}
	return end
}

// pagesAgree: no pages that tell a and b apart (one of them missing or an article number, a
// first page in common, or one record's only page the other's last).
func pagesAgree(a, b pageSpan) bool {
	if len(a.starts) == 0 || len(b.starts) == 0 || a.number || b.number {
		return true
	}
	for _, x := range a.starts {
		for _, y := range b.starts {
			if x == y {
				return true
			}
		}
	}
	if a.prefixed != b.prefixed {
		// A supplement's letter read as a digit by one export ("i428" and "1428").
		x, y := a.starts[0], b.starts[0]
		if len(x) < len(y) {
			x, y = y, x
		}
		if len(x) == len(y)+1 && strings.HasSuffix(x, y) {
			return true
		}
	}
	if a.end != "" && b.end != "" {
		// Ranges that overlap: one export's pages are off (a typo, a supplement's pages); two
		// articles of one issue never share a page range.
		return pageNumber(a.starts[0]) <= pageNumber(b.end) && pageNumber(b.starts[0]) <= pageNumber(a.end)
	}
	return a.end == "" && a.starts[0] == b.end || b.end == "" && b.starts[0] == a.end
}

func pageNumber(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// onePage: the record is on a single page, as a conference abstract is.
func (p pageSpan) onePage() bool {
	return len(p.starts) > 0 && !p.number && (p.end == "" || p.end == p.starts[0])
}

var (
	cleanVolume = regexp.MustCompile(`^0*(\d+)(\s*\(.*\))?$`)
	volumeIssue = regexp.MustCompile(`^\d+\s*\(0*(\d+)\)$`)
	cleanIssue  = regexp.MustCompile(`^0*(\d+)(\s*[-/]\s*\d+)?$`)
)

// volumeKey is a volume written as a number, perhaps with its supplement ("38 (Supplement 1)"),
// or "" for fragments exports leave ("1)").
func volumeKey(v string) string {
	if m := cleanVolume.FindStringSubmatch(strings.TrimSpace(v)); m != nil {
		return m[1]
	}
	return ""
}

// issueKey is an issue written as a number ("4", "04", "3-4"), else the issue in a volume
// written "69(5)"; "" for a supplement or anything else, which cannot tell records apart.
func issueKey(issue, volume string) string {
	if m := cleanIssue.FindStringSubmatch(strings.TrimSpace(issue)); m != nil {
		return m[1]
	}
	if strings.TrimSpace(issue) == "" {
		if m := volumeIssue.FindStringSubmatch(strings.TrimSpace(volume)); m != nil {
			return m[1]
		}
	}
	return ""
}

var proceedingsWords = regexp.MustCompile(`\b(conference|proceedings|symposium|workshop|congress|meeting)\b`)

// isProceedings: a folded source name of conference proceedings, which exports name in many ways
// ("Americas Conference on Information Systems", "AMCIS 2017 Proceedings").
func isProceedings(j string) bool { return proceedingsWords.MatchString(j) }

var conferenceType = regexp.MustCompile(`(?i)^(conf|cpaper|abst|inproceedings|proceedings)$|conference|meeting abstract`)

// isConferenceType: a record type of a conference paper or abstract (RIS "CONF", "ABST", BibTeX
// "inproceedings", Embase's "Conference Abstract").
func isConferenceType(t string) bool { return conferenceType.MatchString(strings.TrimSpace(t)) }
