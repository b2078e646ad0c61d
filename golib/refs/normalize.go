package refs

import (
	"html"
	"net/url"
	"regexp"
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
// catalogues drop or keep them).
func normTitle(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") && strings.Count(s, "[") == 1 {
		// MEDLINE's translated titles are in brackets.
		s = strings.Trim(s, "[].")
	} else {
		s = trailingNotes.ReplaceAllString(s, "")
	}
	t := foldText(s)
	for _, a := range leadArticles {
		if strings.HasPrefix(t, a) {
			return t[len(a):]
		}
	}
	return t
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
func firstSurname(authors string) string {
	a := authors
	for _, sep := range []string{"; ", " and ", ";"} {
		if i := strings.Index(a, sep); i > 0 {
			a = a[:i]
		}
	}
	if i := strings.IndexByte(a, ','); i > 0 {
		return foldText(a[:i])
	}
	words := strings.Fields(a)
	if len(words) == 0 {
		return ""
	}
	var name []string
	for k, w := range words {
		if k > 0 && isInitials(w) {
			return foldText(strings.Join(name, " "))
		}
		name = append(name, w)
	}
	return foldText(words[len(words)-1])
}

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
// "microcirculation" and "microcirculation conference 24th ...").
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

var cleanPage = regexp.MustCompile(`^[A-Za-z]{0,3}0*(\d+)[A-Za-z]?$`)

// pageKey is the number of a first page written as one ("125", "S354", "e0209483", "iii613",
// "100A"), or "" for what exports garble ("Suppl-29", "01-Apr" from a spreadsheet): only clean
// pages may tell two records apart.
func pageKey(pages string) string {
	start, _, _ := strings.Cut(strings.TrimSpace(pages), "-")
	if m := cleanPage.FindStringSubmatch(strings.TrimSpace(start)); m != nil {
		return m[1]
	}
	return ""
}

var cleanVolume = regexp.MustCompile(`^0*(\d+)(\s*\(.*\))?$`)

// volumeKey is a volume written as a number, perhaps with its supplement ("38 (Supplement 1)"),
// or "" for fragments exports leave ("1)").
func volumeKey(v string) string {
	if m := cleanVolume.FindStringSubmatch(strings.TrimSpace(v)); m != nil {
		return m[1]
	}
	return ""
}

var proceedingsWords = regexp.MustCompile(`\b(conference|proceedings|symposium|workshop|congress|meeting)\b`)

// isProceedings: a folded source name of conference proceedings, which exports name in many ways
// ("Americas Conference on Information Systems", "AMCIS 2017 Proceedings").
func isProceedings(j string) bool { return proceedingsWords.MatchString(j) }
