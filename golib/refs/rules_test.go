package refs

import (
	"strings"
	"testing"
)

// A reading rule and the smallest input that shows it: the rows' values of some columns ("" for
// a missing value), or the error's kind and line. Tables are read in chunks of two rows.
type ruleCase struct {
	name     string
	text     string
	format   string
	want     map[string][]string
	errKind  string
	errLine  int
	errClass string
}

func runRules(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tt, err := readText(t, c.text, Options{Format: c.format})
			if c.errKind != "" {
				if err == nil {
					t.Fatalf("read %d rows, want a %s error", tt.rows, c.errKind)
				}
				if err.Kind != c.errKind || err.Line != c.errLine {
					t.Fatalf("error %s at line %d (%s), want %s at line %d", err.Kind, err.Line, err.Message, c.errKind, c.errLine)
				}
				if c.errClass != "" && err.Class != c.errClass {
					t.Fatalf("class %s, want %s", err.Class, c.errClass)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s at line %d: %s", err.Kind, err.Line, err.Message)
			}
			for col, want := range c.want {
				if len(want) != tt.rows {
					t.Fatalf("%d rows, want %d", tt.rows, len(want))
				}
				for i, w := range want {
					if got := tt.value(col, i); got != w {
						t.Errorf("%s[%d] = %q, want %q", col, i, got, w)
					}
				}
			}
		})
	}
}

func TestRISRules(t *testing.T) {
	runRules(t, []ruleCase{
		{name: "a tab after the tag", text: "TY  - JOUR\nA1\t- Smith, J\nTI\t-\tA title\nID \t- 12\nER  - \n",
			want: map[string][]string{"authors": {"Smith, J"}, "title": {"A title"}, "database_id": {"12"}}},
		{name: "an empty TY is a record without type", text: "TY  -\nER  -\nTY  - GEN\nTI  - B\nER  -\n",
			want: map[string][]string{"type": {"", "GEN"}, "title": {"", "B"}}},
		{name: "Ovid: record numbers, NL after ER, link lines", text: "1.\nTY  - JOUR\nTI  - A\nER  -\nNL  - J Abbr\n\nLink to the Ovid Full Text or citation: http://x\n\n2. \nTY  - JOUR\nTI  - B\nER  -\n",
			want: map[string][]string{"title": {"A", "B"}, "NL": {"J Abbr", ""}}},
		{name: "Cochrane: record header lines", text: "Record #3 of 18\nProvider: John Wiley & Sons, Ltd.\nContent: text/plain; charset=\"UTF-8\"\n\nTY  -  JOUR\nTI  -  A trial\nC3  -  PUBMED 21314913\nER  -  \n",
			want: map[string][]string{"title": {"A trial"}, "pmid": {"21314913"}, "type": {"JOUR"}}},
		{name: "tags closed by an ER without TY are a record", text: "TY  - JOUR\nTI  - A\nER  - \nTI  - B\nER  - \n",
			want: map[string][]string{"title": {"A", "B"}, "type": {"JOUR", ""}}},
		{name: "an ER without a record is skipped", text: "TY  - JOUR\nTI  - A\nER  - \nER  - \n",
			want: map[string][]string{"title": {"A"}}},
		{name: "one space before the hyphen, as the TY line", text: "TY - JOUR\nTI - One\nAU - Doe, J\nER - \n",
			want: map[string][]string{"title": {"One"}, "authors": {"Doe, J"}}},
		{name: "continuation lines, KW one per line", text: "TY  - JOUR\nAB  - first\nsecond\n\nthird\nKW  - a\nb\nER  - \n",
			want: map[string][]string{"abstract": {"first second third"}, "keywords": {"a; b"}}},
		{name: "repeats and the year", text: "TY  - JOUR\nT1  - A\nTI  - B\nY1  - 2001/02/03\nPY  - 2004\nPY  - 2005\nSN  - 1\nSN  - 2\nER  - \n",
			want: map[string][]string{"title": {"A"}, "year": {"2004"}, "date": {"2001/02/03"},
				"repeated_tags": {"TI  - B\nPY  - 2005\nSN  - 2"}, "issn": {"1"}}},
		{name: "DOIs where exporters put them", text: "TY  - JOUR\nL3  - 10.1000/a.1\nER  - \nTY  - JOUR\nM3  - doi: 10.1000/b\nER  - \n" +
			"TY  - JOUR\nUR  - https://doi.org/10.1000/c(1).\nER  - \nTY  - JOUR\nN1  - see http://dx.doi.org/10.1000/D2\nM3  - Journal article\nER  - \n" +
			"TY  - JOUR\nDO  - 10.1000/e\nL3  - 10.1000/other\nER  - \n",
			want: map[string][]string{"doi": {"10.1000/a.1", "10.1000/b", "10.1000/c(1)", "10.1000/D2", "10.1000/e"}}},
		{name: "PubMed ids", text: "TY  - JOUR\nAN  - 21553931\nDP  - NLM\nER  - \nTY  - JOUR\nAN  - 123\nER  - \nTY  - JOUR\nPM  - 77\nER  - \nTY  - JOUR\nUR  - https://pubmed.ncbi.nlm.nih.gov/555/\nER  - \n",
			want: map[string][]string{"pmid": {"21553931", "", "77", "555"}, "accession_number": {"21553931", "123", "", ""}}},
		// Embase's RIS (../shared/data/refs-corpus/asreview/embase.ris): the MEDLINE id in C5.
		{name: "Embase: the PubMed id in C5", text: "TY  - JOUR\nU2  - L39097156\nC5  - 15368318\nDB  - Embase\nDB  - Medline\nER  - \n" +
			"TY  - JOUR\nU2  - L373791783\nDB  - Embase\nER  - \nTY  - JOUR\nC5  - 12\nER  - \n" +
			"TY  - JOUR\nU2  - L644585435\nC5  - 38906957\nDB  - Medline\nER  - \n",
			want: map[string][]string{"pmid": {"15368318", "", "", "38906957"}}},
		{name: "screening results and merged ids", text: "TY  - JOUR\nKW  - x\nKW  - tabscreen: Include\nN1  - tabscreen: Include; incl_p = 1\nN1  - tabscreen merged: a.ris:2; b.ris:7\nN1  - a note\nER  - \n",
			want: map[string][]string{"keywords": {"x"}, colDecision: {"Include"}, colNote: {"tabscreen: Include; incl_p = 1"},
				colMerged: {"a.ris:2; b.ris:7"}, "notes": {"a note"}}},
		{name: "the journal", text: "TY  - JOUR\nJF  - Full\nJA  - Abbr\nER  - \nTY  - CHAP\nT2  - Book\nER  - \nTY  - JOUR\nJO  - Jo\nJF  - Full\nER  - \n",
			want: map[string][]string{"journal": {"Full", "Book", "Jo"}}},
		{name: "missing values", text: "TY  - JOUR\nAB  - NA\nTI  -\nCY  - NA \nER  - \n",
			want: map[string][]string{"abstract": {""}, "title": {""}, "place": {""}}},
		{name: "a lone CR is white space", text: "TY  - JOUR\nAB  - a\rb\r c\r\nER  - \n",
			want: map[string][]string{"abstract": {"a b  c"}}},
		{name: "a lone CR does not count as a line", text: "TY  - JOUR\nAB  - a\rb\rc\nER  - \nTY  - JOUR\nTI  - x\n",
			errKind: "truncated", errLine: 4},
		{name: "CRLF and byte-order marks of joined exports", text: "\ufeffTY  - JOUR\r\nTI  - A\r\nER  - \r\n\ufeffTY  - JOUR\r\nTI  - B\r\nER  - \r\n",
			want: map[string][]string{"title": {"A", "B"}}},
		{name: "an old Mac file: lines end with CR", text: "TY  - JOUR\rTI  - A\rER  - \r",
			want: map[string][]string{"title": {"A"}}},
		{name: "a TY before the ER", text: "TY  - JOUR\nTI  - A\nER  - \n\nTY  - JOUR\nTI  - B\n\nTY  - JOUR\nER  - \n",
			errKind: "no_er", errLine: 8},
		{name: "tags before any record", text: "TI  - A\nAU  - B\nTY  - JOUR\nER  - \n", errKind: "outside", errLine: 1},
		{name: "NUL bytes", text: "TY  - JOUR\nTI  - A\nER  - \n\x89PNG\x00\x00\n", errKind: "binary", errLine: 4},
		{name: "not UTF-8", text: "TY  - JOUR\nTI  - caf\xe9\nER  - \nTY  - JOUR\nTI  - ok\nER  - \nTY  - JOUR\nTI  - \x93x\x94\nER  - \n",
			errKind: "encoding", errLine: 2, errClass: ClassEncoding},
	})
}

func TestOtherFormats(t *testing.T) {
	runRules(t, []ruleCase{
		{name: "MEDLINE", text: "PMID- 1\nTI  - A title\n      wrapped.\nFAU - Doe, Jane\nAU  - Doe J\nAU  - Roe R\nDP  - 2019 Jan 28\nLID - 10.1/x [doi]\nPG  - 12-19\nMH  - Humans\nOT  - trial\nDA  - 20190101\n\nPMID- 2\nTI  - B\nAU  - Roe R\n",
			want: map[string][]string{"pmid": {"1", "2"}, "title": {"A title wrapped.", "B"}, "authors": {"Doe, Jane", "Roe R"},
				"year": {"2019", ""}, "doi": {"10.1/x", ""}, "start_page": {"12", ""}, "end_page": {"19", ""},
				"keywords": {"Humans; trial", ""}, "DA_medline": {"20190101", ""}, "type": {"JOUR", "JOUR"}}},
		{name: "Web of Science", text: "FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nAU Doe, J\n   Roe, R\nAF Doe, Jane\n   Roe, Rob\nTI A long\n   title\nSO JOURNAL\nDE a; b\nID C\nPY 2019\nDI 10.1/y\nSP Sponsor\nER\n\nEF\n",
			want: map[string][]string{"authors": {"Doe, Jane; Roe, Rob"}, "title": {"A long title"}, "journal": {"JOURNAL"},
				"keywords": {"a; b; C"}, "year": {"2019"}, "doi": {"10.1/y"}, "type": {"JOUR"}, "SP_wos": {"Sponsor"}}},
		{name: "BibTeX", text: "% a comment\n@string{jn = \"J. Test\"}\n@article{key1,\n  title = {The {DNA} of M{\\\"u}ller},\n  author = {M{\\\"u}ller, Hans and Smith, J.},\n  journal = jn,\n  year = 2019, pages = {1--5}, month = mar\n}\n@book(key2, title = \"A book\", year = {2001})\n",
			want: map[string][]string{"title": {"The DNA of Müller", "A book"}, "authors": {"Müller, Hans; Smith, J.", ""},
				"journal": {"J. Test", ""}, "year": {"2019", "2001"}, "start_page": {"1", ""}, "end_page": {"5", ""},
				"month": {"March", ""}, "type": {"JOUR", "BOOK"}, "database_id": {"key1", "key2"}}},
		{name: "BibTeX entry not closed", text: "@article{k,\n title = {A}\n", errKind: "truncated", errLine: 1},
		{name: "CSV: semicolons, a preamble, export names", text: "SEARCH QUERY;dino;;\n-----;;;\n;;;\nTitle;Authors;Publication Year;DOI;\nA;Doe J;2019;10.1/z;\nB;;;;\n",
			want: map[string][]string{"title": {"A", "B"}, "authors": {"Doe J", ""}, "year": {"2019", ""}, "doi": {"10.1/z", ""}, "abstract": {"", ""}}},
		// OpenAlex's CSV (../shared/data/refs-corpus/citation-file-formatting/_baseline_openalex.csv).
		{name: "CSV: OpenAlex's PubMed id", text: "title,ids.openalex,ids.pmid\nA,https://openalex.org/W1,https://pubmed.ncbi.nlm.nih.gov/38584612\n",
			want: map[string][]string{"pmid": {"38584612"}}},
		{name: "CSV: tabs, quotes over lines", text: "title\tabstract\n\"A \"\"quoted\"\" title\"\t\"line one\nline two\"\n",
			want: map[string][]string{"title": {"A \"quoted\" title"}, "abstract": {"line one\nline two"}}},
		{name: "CSV: a quote that never closes", text: "title,abstract\nA,\"never closed\nB,b\n", errKind: "csv_quote", errLine: 2},
		{name: "CSV without a title column", text: "name,abstract\nx,y\n", errKind: "no_title", errLine: 1, errClass: ClassColumns},
		{name: "RIS forced as CSV", text: "TY  - JOUR\nTI  - A\nER  - \n", format: FormatCSV, errKind: "no_title", errLine: 1},
		{name: "a file in no format", text: "Hello,\nthis is a letter.\n", errKind: "unknown_format", errClass: ClassUnknown},
		{name: "an empty file", text: "\n  \n", errKind: "empty"},
	})
}

// The unknown-format error lists the formats and shows the first line.
func TestUnknownFormatMessage(t *testing.T) {
	_, err := readText(t, "\n\nDear reviewer, here are the references\n", Options{})
	if err == nil || len(err.Tried) != 5 || err.FirstLine != "Dear reviewer, here are the references" {
		t.Fatalf("%+v", err)
	}
}

func TestColumnNames(t *testing.T) {
	got := ColumnNames([]string{"Authors", "Author full names", "Title", "Year", "Source title", "DOI", "TY", "Link", "PubMed ID", "abstract "})
	want := []string{"authors", "Author full names", "title", "year", "journal", "doi", "type", "url", "pmid", "abstract"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%q\nwant %q", got, want)
	}
	// Web of Science's tab-delimited export is headed by its tags.
	got = ColumnNames([]string{"PT", "AU", "TI", "SO", "PY", "DI", "PM", "UT", "BP", "EP"})
	if strings.Join(got, "|") != "PT|authors|title|journal|year|doi|pmid|accession_number|start_page|end_page" {
		t.Fatalf("%q", got)
	}
	// A column already named as read_refs() names it wins over the export's names.
	got = ColumnNames([]string{"Authors", "authors", "TI", "title"})
	if strings.Join(got, "|") != "Authors|authors|TI|title" {
		t.Fatalf("%q", got)
	}
}
