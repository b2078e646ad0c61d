package refs

import (
	"strings"
	"testing"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// A pair of records and whether Dedup must take them for one. Pairs marked "real" are two
// records of a labelled set of ../shared/data/dedup (the set and the record keys given), with
// the fields that matter copied as the set has them; the others are made by hand after the forms
// real exports have, as their comments say.
type dedupPair struct {
	name string
	a, b map[string]string // read_refs() column -> value; "year" as text
	same bool
	rule string // the rule that must link them, when same
	// unsure, when given, is the unsure verdict the pair must have ("title: doi, pages"), or
	// "none" for a pair that must not be unsure.
	unsure string
}

var pairColumns = []string{"title", "authors", "journal", "volume", "issue", "start_page", "end_page", "doi", "pmid", "type"}

func runDedupPairs(t *testing.T, cases []dedupPair) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := arrowio.NewTable(2)
			for _, col := range pairColumns {
				v := []string{c.a[col], c.b[col]}
				tb.AddStr(col, v, []bool{v[0] != "", v[1] != ""})
			}
			years, ok := make([]int32, 2), make([]bool, 2)
			for i, r := range []map[string]string{c.a, c.b} {
				for _, ch := range r["year"] {
					years[i], ok[i] = years[i]*10+int32(ch-'0'), true
				}
			}
			tb.AddI32("year", years, ok)
			out, sum, err := Dedup(tb, DedupOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c.unsure != "" {
				got := "none"
				if len(sum.Unsure) > 0 {
					got = sum.Unsure[0].Rule + ": " + strings.Join(sum.Unsure[0].Conflicts, ", ")
				}
				if got != c.unsure {
					t.Errorf("unsure %q, want %q", got, c.unsure)
				}
			}
			g, _ := out.Col("group")
			m, _ := out.Col("match")
			if got := g.I32[0] == g.I32[1]; got != c.same {
				t.Fatalf("one record: %v, want %v", got, c.same)
			}
			if c.same && c.rule != "" && m.Str[0] != c.rule {
				t.Errorf("linked by %q, want %q", m.Str[0], c.rule)
			}
		})
	}
}

func TestDedupPairs(t *testing.T) {
	runDedupPairs(t, []dedupPair{
		// A bracketed translated title followed by the language became an empty title.
		{name: "translated title with its language (real: asysd_diabetes 852, 620)",
			a: map[string]string{"title": "[Protective effects of incretin on atherosclerosis]", "authors": "Mita T.Watada H.", "year": "2011",
				"journal": "Nihon Rinsho", "volume": "69", "issue": "5", "start_page": "831-5"},
			b: map[string]string{"title": "[Protective effects of incretin on atherosclerosis]. [Japanese]", "authors": "Mita T.Watada H.", "year": "2011",
				"journal": "Nippon rinsho", "volume": "Japanese journal of clinical medicine. 69", "issue": "5", "start_page": "831-835"},
			same: true, rule: "title"},
		{name: "a translation marker's leftover (real: sra_respiratory id_0000601, id_0000602)",
			a: map[string]string{"title": "[Incentive spirometry with expiratory positive airway pressure brings benefits after myocardial revascularization]",
				"authors": "Ferreira, Gloria Menz and Haeffner, Mauren Porto", "year": "2010", "journal": "Arquivos Brasileiros de Cardiologia",
				"volume": "94", "start_page": "230-5, 246-51, 233-8"},
			b: map[string]string{"title": "[Incentive spirometry with expiratory positive airway pressure brings benefits after myocardial revascularization] TO: Espirometria incentivada con presion positiva espiratoria es benefica despues de revascularizacion miocardica",
				"authors": "Ferreira, G. M. and Haeffner, M. P.", "year": "2010", "journal": "Arquivos Brasileiros de Cardiologia",
				"volume": "94", "start_page": "233-8, 230-5, 246-51"},
			same: true, rule: "title"},

		// An equal DOI or PubMed id with volumes or issues that disagree (by hand, the forms the
		// issue names).
		{name: "one DOI, volumes 213(5) and 212(11)",
			a: map[string]string{"title": "Sodium intake and blood pressure in older adults", "authors": "Ruiz, A", "year": "2020",
				"journal": "J Hypertens", "volume": "213", "issue": "5", "start_page": "100-108", "doi": "10.1000/jh.2020.1"},
			b: map[string]string{"title": "Sodium intake and blood pressure in older adults.", "authors": "Ruiz A", "year": "2020",
				"journal": "Journal of Hypertension", "volume": "212", "issue": "11", "start_page": "100", "doi": "https://doi.org/10.1000/JH.2020.1"},
			same: true, rule: "doi"},
		{name: "one Cochrane review's DOI, volumes 9 and 2020(9)",
			a: map[string]string{"title": "Exercise for depression", "authors": "Cooney, G M", "year": "2020",
				"journal": "Cochrane Database of Systematic Reviews", "volume": "9", "start_page": "CD004366", "doi": "10.1002/14651858.CD004366.pub7"},
			b: map[string]string{"title": "Exercise for depression", "authors": "Cooney GM", "year": "2020",
				"journal": "Cochrane Database Syst Rev", "volume": "2020", "issue": "9", "start_page": "CD004366", "doi": "10.1002/14651858.CD004366.pub7"},
			same: true, rule: "doi"},
		{name: "one DOI, one title without its subtitle",
			a: map[string]string{"title": "Lipids: a randomised controlled trial of dietary advice in general practice with follow-up of two years",
				"authors": "Ng, K", "year": "2018", "journal": "BMJ", "volume": "360", "issue": "2", "doi": "10.1136/bmj.k1"},
			b:    map[string]string{"title": "Lipids", "authors": "Ng K", "year": "2018", "journal": "BMJ", "volume": "360", "issue": "3", "doi": "10.1136/bmj.k1"},
			same: true, rule: "doi"},
		{name: "one PubMed id, issues 4 and 5",
			a:    map[string]string{"title": "Statins after stroke", "authors": "Roe, R", "year": "2015", "journal": "Stroke", "volume": "46", "issue": "4", "pmid": "25700000"},
			b:    map[string]string{"title": "Statins after stroke.", "authors": "Roe R", "year": "2015", "journal": "Stroke", "volume": "46", "issue": "5", "pmid": "25700000"},
			same: true, rule: "pmid"},
		{name: "one PubMed id, two DOIs (by hand)",
			a:    map[string]string{"title": "Statins after stroke", "authors": "Roe, R", "year": "2015", "journal": "Stroke", "pmid": "25700000", "doi": "10.1161/strokeaha.1"},
			b:    map[string]string{"title": "Statins after stroke.", "authors": "Roe R", "year": "2015", "journal": "Stroke", "pmid": "25700000", "doi": "10.1161/str.1"},
			same: true, rule: "pmid"},
		{name: "two PubMed ids, one title (by hand)",
			a:    map[string]string{"title": "Statins after stroke", "authors": "Roe, R", "year": "2015", "journal": "Stroke", "pmid": "25700000"},
			b:    map[string]string{"title": "Statins after stroke", "authors": "Roe, R", "year": "2015", "journal": "Stroke", "pmid": "25700001"},
			same: false},
		{name: "one supplement's DOI, two abstracts on pages 51 and 52 (real: asysd_diabetes 494, 493)",
			a: map[string]string{"title": "Effects of incretin on artery lesions in a model of atherosclerosis in apolipoprotein E-deficient mice",
				"authors": "Chen R.Wang Y.Liang L.", "year": "2014", "journal": "Diabetes/Metabolism Research and Reviews", "volume": "3)", "issue": "S3",
				"start_page": "51", "doi": "http://dx.doi.org/10.1002/dmrr.2604"},
			b: map[string]string{"title": "The effects of incretin on artery lesions in a model of atherosclerosis in apolipoprotein E-deficient mice",
				"authors": "Chen R.Wang J.Yan C.Wang Y.Liang L.", "year": "2014", "journal": "Diabetes/Metabolism Research and Reviews", "volume": "3)",
				"start_page": "52", "doi": "http://dx.doi.org/10.1002/dmrr.2604"},
			same: false, unsure: "doi: pages"},
		{name: "one DOI, a supplement's page read as a number (real: asysd_diabetes 405, 1145)",
			a: map[string]string{"title": "Proximal tubular GLP-1 receptor activity is increased in CKD rat with myocardial infarction",
				"authors": "Kwon S. K.Kim S. J.Kim K.", "year": "2016", "journal": "Nephrology Dialysis Transplantation", "volume": "1)",
				"start_page": "i428", "doi": "http://dx.doi.org/10.1093/ndt/gfw188.21"},
			b: map[string]string{"title": "Proximal tubular GLP-1 receptor activity is increased in CKD rat with myocardial infarction",
				"authors": "Kwon S. K.Kim S. J.Kim K.", "year": "2016", "journal": "Nephrology Dialysis Transplantation", "volume": "31(SUPPL. 1)",
				"start_page": "1428-1428", "doi": "http://dx.doi.org/10.1093/ndt/gfw188.21"},
			same: true, rule: "doi"},

		// Different issues (by hand: an editor's column that recurs in every issue; two papers
		// of one author at the same pages of two issues).
		{name: "a recurring column in issues 1 and 2",
			a:    map[string]string{"title": "Editor's comments on the state of the field", "authors": "Rai, A", "year": "2019", "journal": "MIS Quarterly", "volume": "43", "issue": "1"},
			b:    map[string]string{"title": "Editor's comments on the state of the field", "authors": "Rai, Arun", "year": "2019", "journal": "MIS Quarterly", "volume": "43", "issue": "2"},
			same: false, unsure: "title: issue"},
		{name: "one author, the same pages, issues 3 and 4",
			a: map[string]string{"title": "Trust in online marketplaces and the buyers' intention to return", "authors": "Pavlou, P", "year": "2004",
				"journal": "Information Systems Research", "volume": "15", "issue": "3", "start_page": "37-59"},
			b: map[string]string{"title": "Trust in online marketplaces and the buyer's intentions to return", "authors": "Pavlou, P", "year": "2004",
				"journal": "Information Systems Research", "volume": "15", "issue": "4", "start_page": "37-59"},
			same: false},
		{name: "a recurring column with one DOI",
			a:    map[string]string{"title": "Editor's comments on the state of the field", "authors": "Rai, A", "year": "2019", "journal": "MIS Quarterly", "volume": "43", "issue": "1", "doi": "10.25300/misq/2019/43.1"},
			b:    map[string]string{"title": "Editor's comments on the state of the field", "authors": "Rai, Arun", "year": "2019", "journal": "MIS Quarterly", "volume": "43", "issue": "2", "doi": "10.25300/MISQ/2019/43.1"},
			same: true, rule: "doi"},

		// The citation rule and conference abstracts on one page.
		{name: "two abstracts on one page of a supplement (real: sra_respiratory id_0001369, id_0001372)",
			a: map[string]string{"title": "Talc not tetracycline pleurodesis induces hypoxaemia and increased DTPA clearance fro the contr lateral lung",
				"authors": "Maskell, N. A. and Gleeson, F. V. and Jones, E. and Davies, R. J. O.", "year": "2002",
				"journal": "American Journal of Respiratory and Critical Care Medicine", "volume": "165", "start_page": "B11"},
			b: map[string]string{"title": "The characterisitcs of 300 patients participating in the MRC/BTS multi-centre intra-pleural streptokinase vs placebo in empyema trial",
				"authors": "Maskell, N. A. and Davies, C. W. H. and Jones, E. L. and Davies, R. J. O.", "year": "2002",
				"journal": "American Journal of Respiratory and Critical Care Medicine", "volume": "165", "start_page": "B11"},
			same: false},
		{name: "two abstracts of one group on one page (real: sra_respiratory id_0001576, id_0001577)",
			a: map[string]string{"title": "Contemporary features, risk factors, and prognosis of the post-pericardiotomy syndrome",
				"authors": "Imazio, M. and Brucato, A. and Rovere, M. E.", "year": "2011", "journal": "European Heart Journal", "volume": "32", "start_page": "597"},
			b: map[string]string{"title": "Colchicine prevents early post-operative pericardial and pleural effusions",
				"authors": "Imazio, M. and Brucato, A. and Gandino, A.", "year": "2011", "journal": "European Heart Journal", "volume": "32", "start_page": "597"},
			same: false, unsure: "none"},
		{name: "conference abstracts by type, on one page range",
			a: map[string]string{"title": "Glucose variability in type 1 diabetes", "authors": "Lee, K", "year": "2017", "journal": "Diabetes", "volume": "66",
				"start_page": "A10-A11", "type": "Conference Abstract"},
			b: map[string]string{"title": "Insulin pumps in adolescents", "authors": "Lee, K", "year": "2017", "journal": "Diabetes", "volume": "66",
				"start_page": "A10-A11", "type": "Conference Abstract"},
			same: false},
		{name: "an article and its translation, one page range (by hand)",
			a: map[string]string{"title": "Behandlung der Herzinsuffizienz im Alter", "authors": "Müller, H", "year": "2012",
				"journal": "Dtsch Med Wochenschr", "volume": "137", "start_page": "1123", "end_page": "1128"},
			b: map[string]string{"title": "[Treatment of heart failure in the elderly]", "authors": "Muller H", "year": "2012",
				"journal": "Dtsch Med Wochenschr", "volume": "137", "start_page": "1123-8"},
			same: true, rule: "citation"},

		// Field forms.
		{name: "a particle cut off before the comma (by hand, the issue's form)",
			a:    map[string]string{"title": "Anti-TNF treatment in spondyloarthritis", "authors": "Quintrec, M.", "year": "2016", "journal": "Joint Bone Spine", "volume": "83", "start_page": "12-15"},
			b:    map[string]string{"title": "Anti-TNF treatment in spondyloarthritis.", "authors": "Le, Quintrec M.", "year": "2016", "journal": "Joint Bone Spine", "volume": "83", "start_page": "12-15"},
			same: true, rule: "title"},
		{name: "a family name that is also a particle (real: refs-corpus revtools/restoration_pubmed.nbib and restoration_scopus.ris)",
			a: map[string]string{"title": "Exercise training ameliorates bleomycin-induced epithelial mesenchymal transition and lung fibrosis through restoration of H2S synthesis",
				"authors": "Du, Shu-Fang; Wang, Xin-Liang", "year": "2019", "journal": "Acta physiologica (Oxford, England)", "volume": "225", "issue": "2", "start_page": "e13177"},
			b: map[string]string{"title": "Exercise training ameliorates bleomycin-induced epithelial mesenchymal transition and lung fibrosis through restoration of H2S synthesis",
				"authors": "Du, S.-F.; Wang, X.-L.", "year": "2019", "journal": "Acta Physiologica", "volume": "225", "issue": "2"},
			same: true, rule: "title"},
		{name: "a particle cut off, the last page given as the first (real: sra_cytology id_0001064, id_0001065)",
			a: map[string]string{"title": "Value of p16INK4a as a marker of progression/regression in cervical intraepithelial neoplasia grade 1",
				"authors": "del, Pino M and Garcia, S", "year": "2009", "journal": "American Journal of Obstetrics and Gynecology", "volume": "201", "start_page": "488"},
			b: map[string]string{"title": "Value of p16(INK4a) as a marker of progression/regression in cervical intraepithelial neoplasia grade 1",
				"authors": "del, Pino M and Garcia, S", "year": "2009", "journal": "American Journal of Obstetrics and Gynecology", "volume": "201", "start_page": "487-488"},
			same: true, rule: "title"},
		{name: "pages a spreadsheet made a date (real: sra_respiratory id_0000414, id_0000415)",
			a: map[string]string{"title": "Management of peripancreatic fluid collections following partial pancreatectomy: a comparison of percutaneous versus EUS-guided drainage",
				"authors": "Kwon, Y. M. and Gerdes, H", "year": "2013", "journal": "Surgical Endoscopy", "start_page": "01-Jun"},
			b: map[string]string{"title": "Management of peripancreatic fluid collections following partial pancreatectomy: a comparison of percutaneous versus EUS-guided drainage",
				"authors": "Kwon, Y. M. and Gerdes, H", "year": "2013", "journal": "Surg Endosc", "volume": "27", "start_page": "2422-2427"},
			same: true, rule: "title"},
		{name: "a page count against an article number (real: sra_cytology id_0000230, id_0000231)",
			a: map[string]string{"title": "Triage of women with minor cervical lesions: Data suggesting a \"test and treat\" approach for HPV E6/E7 mRNA testing",
				"authors": "Sorbye, S W and Fismen, S", "year": "2010", "journal": "PLoS ONE", "volume": "5", "start_page": "1-6"},
			b: map[string]string{"title": "Triage of women with minor cervical lesions: data suggesting a \"test and treat\" approach for HPV E6/E7 mRNA testing",
				"authors": "Sorbye, S W and Fismen, S", "year": "2010", "journal": "PLoS ONE", "volume": "5", "start_page": "e12724"},
			same: true, rule: "title"},
		{name: "an article number against a number of pages (by hand, the issue's form)",
			a: map[string]string{"title": "Digital platforms and the governance of data sharing", "authors": "Otto, B", "year": "2022",
				"journal": "Information & Management", "volume": "59", "start_page": "106482"},
			b: map[string]string{"title": "Digital platforms and the governance of data sharing", "authors": "Otto, B", "year": "2022",
				"journal": "Information and Management", "volume": "59", "start_page": "11"},
			same: true, rule: "title"},
		{name: "page ranges that overlap (real: sra_respiratory id_0000646, id_0000647)",
			a: map[string]string{"title": "Phase I trial of ATRA-IV and depakote in patients with advanced solid tumor malignancies",
				"authors": "David, K. A. and Mongan, N. P.", "year": "2010", "journal": "Cancer Biology and Therapy", "volume": "9", "start_page": "678-684"},
			b: map[string]string{"title": "Phase I trial of ATRA-IV and depakote in patients with advanced solid tumor malignancies",
				"authors": "David, K. A. and Mongan, N. P.", "year": "2010", "journal": "Cancer Biology and Therapy", "volume": "9", "start_page": "676-682"},
			same: true, rule: "title"},
		{name: "one Cochrane article number, a word more in one title (real: sra_respiratory id_0000560, id_0000561)",
			a: map[string]string{"title": "Medically assisted hydration for adult palliative care patients", "authors": "Good, P. and Cavenagh, J.", "year": "2008",
				"journal": "Cochrane Database of Systematic Reviews", "start_page": "CD006273"},
			b: map[string]string{"title": "Medically assisted hydration for palliative care patients", "authors": "Good, P. and Cavenagh, J.", "year": "2008",
				"journal": "Cochrane Database of Systematic Reviews", "start_page": "CD006273"},
			same: true, rule: "title"},
		{name: "two Cochrane article numbers (by hand)",
			a: map[string]string{"title": "Medically assisted hydration for adult palliative care patients", "authors": "Good, P.", "year": "2008",
				"journal": "Cochrane Database of Systematic Reviews", "start_page": "CD006273"},
			b: map[string]string{"title": "Medically assisted nutrition for adult palliative care patients", "authors": "Good, P.", "year": "2008",
				"journal": "Cochrane Database of Systematic Reviews", "start_page": "CD006274"},
			same: false},
		{name: "a conference by its acronym (by hand, the issue's form)",
			a: map[string]string{"title": "Algorithmic management and worker autonomy on gig platforms", "authors": "Wiener, M", "year": "2020",
				"journal": "International Conference on Information Systems"},
			b: map[string]string{"title": "Algorithmic management and worker autonomy on gig platforms", "authors": "Wiener, M", "year": "2020",
				"journal": "ICIS : Making Digital Inclusive"},
			same: true, rule: "title"},
	})
}

func TestNormTitleNeverEmpty(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"[Clinical aspects of the complement system]. [Japanese]", "clinical aspects of the complement system"},
		{"[Protective effects of incretin on atherosclerosis]. [Japanese]", "protective effects of incretin on atherosclerosis"},
		{"[Title] TO: Titulo", "title"},
		{"[Review]", "review"},
		{"A trial of A. [Review] [70 refs]", "trial of a"},
		{"[An unclosed bracket", "unclosed bracket"},
		{"The", "the"},
	} {
		if got := normTitle(c.in); got != c.want {
			t.Errorf("normTitle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The middle band: pairs close to a match with one or two fields against it are unsure, never
// joined, whatever the rule that came closest; the pairs the rules decide are not.
func TestDedupUnsurePairs(t *testing.T) {
	runDedupPairs(t, []dedupPair{
		{name: "one title of one author, two DOIs (real: asysd_diabetes 1610, 599)",
			a: map[string]string{"title": "Liraglutide and linagliptin improves glycemic control but show differential anti-obesity and hypolipidemic efficacy in a novel hamster model of diet-induced obesity and hypercholesterolemia",
				"authors": "Hansen F.Hansen G.Pedersen P. J.Jelsing J.Vrang N.Hansen H. B.", "year": "2012", "journal": "Appetite", "volume": "1", "start_page": "e24",
				"doi": "10.1016/j.regpep.2012.05.039"},
			b: map[string]string{"title": "Liraglutide and linagliptin improves glycemic control but show differential anti-obesity and hypolipidemic efficacy in a novel hamster model of diet-induced obesity and hypercholesterolemia",
				"authors": "Hansen F.Hansen G.Pedersen P. J.Jelsing J.Vrang N.Hansen H. B.", "year": "2012", "journal": "Appetite", "volume": "1)", "start_page": "e24",
				"doi": "http://dx.doi.org/10.1016/j.appet.2012.05.003"},
			unsure: "title: doi"},
		{name: "one title of one author, two page ranges (real: sra_cytology id_0000228, id_0000229)",
			a: map[string]string{"title": "Human papillomavirus (HPV) study of 2916 cytological samples by PCR and DNA sequencing: Genotype spectrum of patients from the west German area",
				"authors": "Speich, N and Schmitt, C and Bollmann, R and Bollmann, M", "year": "2004", "journal": "Journal of Medical Microbiology", "volume": "53", "start_page": "125-128"},
			b: map[string]string{"title": "Human papillomavirus (HPV) study of 2916 cytological samples by PCR and DNA sequencing: genotype spectrum of patients from the west German area",
				"authors": "Speich, N and Schmitt, C and Bollmann, R and Bollmann, M", "year": "2004", "journal": "Journal of Medical Microbiology", "volume": "53", "start_page": "2-8"},
			unsure: "title: pages"},
		{name: "a Cochrane review and its update (real: sra_respiratory id_0000418, id_0000420)",
			a: map[string]string{"title": "\"Treatment for POEMS (polyneuropathy, organomegaly, endocrinopathy, M-protein, and skin changes) syndrome\"",
				"authors": "Kuwabara, Satoshi and Dispenzieri, Angela", "year": "2012", "journal": "Cochrane Database of Systematic Reviews", "volume": "6", "start_page": "CD006828"},
			b: map[string]string{"title": "\"Treatment for POEMS (polyneuropathy, organomegaly, endocrinopathy, M-protein, and skin changes) syndrome\"",
				"authors": "Kuwabara, Satoshi and Dispenzieri, Angela", "year": "2008", "journal": "Cochrane Database of Systematic Reviews", "start_page": "CD006828"},
			unsure: "title: year"},
		{name: "one Chinese article in a journal under two names (real: sra_respiratory id_0000009, id_0000010)",
			a: map[string]string{"title": "[Clinical research on recombinant human Ad-p53 injection combined with cisplatin in treatment of malignant pleural effusion induced by lung cancer]",
				"authors": "Zhao, Wei-Zhu and Wang, Jian-Wei", "year": "2009", "journal": "Aizheng", "volume": "28", "start_page": "1324-1327"},
			b: map[string]string{"title": "Clinical research on recombinant human Ad-p53 injection combined with cisplatin in treatment of malignant pleural effusion induced by lung cancer",
				"authors": "Zhao, W. Z. and Wang, J. W.", "year": "2009", "journal": "Chinese Journal of Cancer", "volume": "28", "start_page": "84-87"},
			unsure: "title: pages, journal"},
		{name: "two first authors under one title at one place (real: sra_respiratory id_0000213, id_0000709)",
			a: map[string]string{"title": "A trial of intrapleural streptokinase", "authors": "Rosa, Ute W.", "year": "2005",
				"journal": "New England Journal of Medicine", "volume": "352", "start_page": "2243-5; author reply 2243-5"},
			b: map[string]string{"title": "A trial of intrapleural streptokinase", "authors": "Bouros, Demosthenes", "year": "2005",
				"journal": "New England Journal of Medicine", "volume": "352", "start_page": "2243-5; author reply 2243-5"},
			unsure: "title: authors"},
		{name: "a translated title, one record without authors, one place (real: sra_respiratory id_0000091, id_0000799)",
			a: map[string]string{"title": "[Postoperative immunostimulation in non-small-cell bronchial carcinoma. Outcome and complications]", "authors": "Toomes, H.",
				"year": "1984", "journal": "Deutsche Medizinische Wochenschrift", "volume": "109", "start_page": "935-940"},
			b: map[string]string{"title": "Postoperative local immunostimulation in non-oatcell bronchial carcinoma",
				"year": "1984", "journal": "Dtsch-Med-Wochenschr", "volume": "109", "start_page": "935-940"},
			unsure: "citation: authors, journal"},

		// Decided pairs are not unsure.
		{name: "two PubMed ids, one title (by hand)",
			a:      map[string]string{"title": "Statins after stroke in older adults", "authors": "Roe, R", "year": "2015", "journal": "Stroke", "pmid": "25700000"},
			b:      map[string]string{"title": "Statins after stroke in older adults", "authors": "Roe, R", "year": "2015", "journal": "Stroke", "pmid": "25700001"},
			unsure: "none"},
		{name: "short titles of one author in two issues (by hand)",
			a:      map[string]string{"title": "Editorial", "authors": "Rai, A", "year": "2019", "journal": "MIS Quarterly", "volume": "43", "issue": "1"},
			b:      map[string]string{"title": "Editorial", "authors": "Rai, A", "year": "2019", "journal": "MIS Quarterly", "volume": "43", "issue": "2"},
			unsure: "none"},
		{name: "unlike titles of one author, three fields against (by hand)",
			a: map[string]string{"title": "Exercise training after myocardial infarction in older adults", "authors": "Lee, K", "year": "2010",
				"journal": "Heart", "volume": "96", "start_page": "100-105"},
			b: map[string]string{"title": "Exercise training after myocardial infarction in older adults", "authors": "Lee, K", "year": "2016",
				"journal": "Lancet", "volume": "387", "start_page": "10-15"},
			unsure: "none"},
		{name: "a title match is decided (by hand)",
			a:    map[string]string{"title": "Statins after stroke in older adults", "authors": "Roe, R", "year": "2015", "journal": "Stroke"},
			b:    map[string]string{"title": "Statins after stroke in older adults.", "authors": "Roe R", "year": "2015", "journal": "Stroke"},
			same: true, rule: "title", unsure: "none"},
	})
}

// A person's decisions: Same joins two records' groups (rule "person"), Different takes the
// pair, and any other pair of the two groups, out of the unsure ones; a Different decision does
// not split a group.
func TestDedupDecisions(t *testing.T) {
	col := func(v ...string) ([]string, []bool) {
		ok := make([]bool, len(v))
		for i := range v {
			ok[i] = v[i] != ""
		}
		return v, ok
	}
	tb := arrowio.NewTable(4)
	title := "Human papillomavirus study of 2916 cytological samples by PCR and DNA sequencing"
	for _, c := range []struct {
		name string
		v    []string
	}{
		{"title", []string{title, title, title, "Another paper on something else entirely"}},
		{"authors", []string{"Speich, N", "Speich, N", "Speich, N", "Speich, N"}},
		{"journal", []string{"J Med Microbiol", "J Med Microbiol", "J Med Microbiol", "J Med Microbiol"}},
		{"volume", []string{"53", "53", "53", "53"}},
		{"start_page", []string{"125-128", "125-128", "2-8", "9-12"}},
	} {
		v, ok := col(c.v...)
		tb.AddStr(c.name, v, ok)
	}
	tb.AddI32("year", []int32{2004, 2004, 2004, 2004}, nil)
	run := func(opt DedupOptions) ([]int32, *DedupSummary) {
		t.Helper()
		out, sum, err := Dedup(tb, opt)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := out.Col("group")
		return g.I32, sum
	}
	g, sum := run(DedupOptions{})
	if g[0] != g[1] || g[0] == g[2] || len(sum.Unsure) != 1 || sum.Unsure[0].B != 3 {
		t.Fatalf("groups %v, unsure %+v: want rows 1 and 2 joined, one unsure pair with row 3", g, sum.Unsure)
	}
	g, sum = run(DedupOptions{Same: [][2]int{{1, 2}}})
	if g[0] != g[2] || g[1] != g[2] || len(sum.Unsure) != 0 || sum.ByRule["person"] != 1 {
		t.Fatalf("after same: groups %v, unsure %+v, links %v", g, sum.Unsure, sum.ByRule)
	}
	// Different on another pair of the same two groups settles them both.
	g, sum = run(DedupOptions{Different: [][2]int{{1, 2}}})
	if g[0] == g[2] || len(sum.Unsure) != 0 {
		t.Fatalf("after different: groups %v, unsure %+v", g, sum.Unsure)
	}
	g, _ = run(DedupOptions{Different: [][2]int{{0, 1}}})
	if g[0] != g[1] {
		t.Fatalf("a different decision split a group the rules made: %v", g)
	}
	if _, _, err := Dedup(tb, DedupOptions{Same: [][2]int{{0, 4}}}); err == nil {
		t.Fatal("a pair beyond the rows is accepted")
	}
}
