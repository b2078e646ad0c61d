package refs

import (
	"regexp"
	"strings"
)

var (
	// A DOI as exporters write it in a field of its own (EBSCOhost's L3, M3): bare, after "doi:",
	// or as a doi.org link.
	doiValue = regexp.MustCompile(`(?i)^(?:doi:?\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+)$`)
	// A doi.org link anywhere in a URL or a note.
	doiLink = regexp.MustCompile(`(?i)https?://(?:dx\.)?doi\.org/(10\.\d{4,9}/[^\s"<>]+)`)
	// A PubMed id in a note such as the Cochrane Library's C3 ("PUBMED 21314913") or a PubMed link.
	pmidNote = regexp.MustCompile(`(?i)^pubmed:?\s*(\d{1,9})$`)
	pmidLink = regexp.MustCompile(`(?i)(?:pubmed\.ncbi\.nlm\.nih\.gov/|ncbi\.nlm\.nih\.gov/pubmed/)(\d{1,9})\b`)
	pubmedDB = regexp.MustCompile(`(?i)pubmed|medline|\bnlm\b`)
)

// trimDOI drops the punctuation that ends the sentence around a DOI, and a closing parenthesis
// that has no opening one in the DOI.
func trimDOI(d string) string {
	for len(d) > 0 {
		last := d[len(d)-1]
		switch {
		case last == '.' || last == ',' || last == ';':
			d = d[:len(d)-1]
		case last == ')' && strings.Count(d, "(") < strings.Count(d, ")"):
			d = d[:len(d)-1]
		default:
			return d
		}
	}
	return d
}

// fillDOI fills doi, when the record has none, from the first of `own` (fields that hold a DOI
// alone) that is one, else from the first doi.org link in `linked`.
func fillDOI(r *row, own, linked []string) {
	if r.has("doi") {
		return
	}
	for _, col := range own {
		for _, v := range r.values(col) {
			if m := doiValue.FindStringSubmatch(strings.TrimSpace(v)); m != nil {
				r.add("doi", trimDOI(m[1]))
				return
			}
		}
	}
	for _, col := range linked {
		for _, v := range r.values(col) {
			if !strings.Contains(v, "doi.org/") && !strings.Contains(v, "DOI.ORG/") {
				continue // most URLs and notes: no regexp run for them
			}
			if m := doiLink.FindStringSubmatch(v); m != nil {
				r.add("doi", trimDOI(m[1]))
				return
			}
		}
	}
}

// fillPMID fills pmid, when the record has none, from what RIS exporters write: the accession
// number of a record from PubMed (EndNote: AN with DP or DB "NLM"), a note "PUBMED 21314913",
// Embase's C5, a PubMed link.
func fillPMID(r *row) {
	if r.has("pmid") {
		return
	}
	if an := r.first("accession_number"); an != "" && allDigits(an) && len(an) <= 9 &&
		(fromPubMed(r.first("DP")) || fromPubMed(r.first("DB"))) {
		r.add("pmid", an)
		return
	}
	for _, col := range []string{"C3", "C2", "C1"} {
		if v := r.first(col); len(v) < 6 || !strings.EqualFold(v[:6], "pubmed") {
			continue
		}
		if m := pmidNote.FindStringSubmatch(r.first(col)); m != nil {
			r.add("pmid", m[1])
			return
		}
	}
	// Embase writes the MEDLINE PubMed id of a record it shares with MEDLINE in C5.
	if c5 := r.first("C5"); allDigits(c5) && len(c5) <= 9 && (fromEmbase(r.values("DB")) || fromEmbase(r.values("DP"))) {
		r.add("pmid", c5)
		return
	}
	for _, col := range []string{"url", "L2"} {
		for _, v := range r.values(col) {
			if !strings.Contains(v, "pubmed") {
				continue
			}
			if m := pmidLink.FindStringSubmatch(v); m != nil {
				r.add("pmid", m[1])
				return
			}
		}
	}
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func fromPubMed(db string) bool { return db != "" && pubmedDB.MatchString(db) }

// fromEmbase: a record Embase exported, its own ("Embase") or one it shares with MEDLINE (then
// named "Medline" alone).
func fromEmbase(dbs []string) bool {
	for _, db := range dbs {
		if strings.Contains(strings.ToLower(db), "embase") || fromPubMed(db) {
			return true
		}
	}
	return false
}
