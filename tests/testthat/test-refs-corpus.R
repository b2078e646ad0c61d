# read_refs() and write_refs() on the 125 real export files of ../shared/data/refs-corpus (six
# public projects' test fixtures and example data; MANIFEST.md there names each file's source,
# commit and licence). expected.json gives what a correct reader returns, counted independently
# of this package. All of them must read right.

corpus_files <- function() {
  dir <- shared_data("refs-corpus")
  expected <- jsonlite::fromJSON(file.path(dir, "expected.json"), simplifyVector = FALSE)
  list(dir = dir, expected = expected)
}

# Counts of expected.json that the files contradict. Embase's CSV exports open with three lines
# about the search ("SEARCH QUERY", a line of dashes, a blank line) before the header: the files
# have 14 lines, 10 records, as the RIS export of the same search (_baseline_embase.ris: 10); 12
# counts the dashes and the header as records.
corpus_corrections <- c("citation-file-formatting/_baseline_embase.csv" = 10,
  "citation-file-formatting/_baseline_excel.csv" = 10)

filled <- function(x) sum(!is.na(x) & nzchar(trimws(x)))

test_that("every real export reads into its independently counted records, or a clear error", {
  corpus <- corpus_files()
  right <- 0
  for (name in names(corpus$expected)) {
    e <- corpus$expected[[name]]
    path <- file.path(corpus$dir, name)
    res <- tryCatch(read_refs(path), tabscreen_error_refs = function(cnd) cnd)
    if (inherits(res, "condition")) {
      # Malformed files: a classed error naming the file (and the line, when it is one line's fault).
      expect_identical(e$kind, "error_or", label = paste(name, "fails:", conditionMessage(res)))
      expect_equal(res$file, basename(name))
      expect_match(conditionMessage(res), basename(name), fixed = TRUE)
      if (!is.null(res$line)) expect_match(conditionMessage(res), paste0("line ", res$line), fixed = TRUE)
      right <- right + 1
      next
    }
    n <- if (name %in% names(corpus_corrections)) corpus_corrections[[name]] else unlist(e$n)
    ok <- nrow(res) %in% n
    expect_true(ok, label = sprintf("%s: %d records, expected %s", name, nrow(res), paste(n, collapse = " or ")))
    if (!is.null(e$n_title)) {
      ok <- ok && filled(res$title) == e$n_title
      expect_equal(filled(res$title), e$n_title, label = paste(name, "titles"))
    }
    if (!is.null(e$n_abstract)) {
      ok <- ok && filled(res$abstract) == e$n_abstract
      expect_equal(filled(res$abstract), e$n_abstract, label = paste(name, "abstracts"))
    }
    right <- right + ok
  }
  expect_equal(right, length(corpus$expected))
  message(sprintf("refs corpus: %d of %d files read right", right, length(corpus$expected)))
})

test_that("the malformed exports are errors that say where", {
  dir <- shared_data("refs-corpus")
  # Several TY lines before any ER.
  cnd <- expect_error(read_refs(file.path(dir, "jabref/RisImporterTest1.ris")), class = "tabscreen_error_refs_parse")
  expect_equal(cnd$line, 3)
  expect_match(conditionMessage(cnd), "RisImporterTest1.ris', line 3", fixed = TRUE)
  expect_match(conditionMessage(cnd), "starts at line 2 has no ER line", fixed = TRUE)
  # A CSV without a title column names its columns.
  cnd <- expect_error(read_refs(file.path(dir, "asreview/generic_labels_no_title.csv")), class = "tabscreen_error_refs_columns")
  expect_match(conditionMessage(cnd), "publication_year", fixed = TRUE)
})

test_that("formats are found from the content, whatever the file's name", {
  dir <- shared_data("refs-corpus")
  # PubMed's MEDLINE format in a file named .ris.
  pubmed <- read_refs(file.path(dir, "citation-file-formatting/_baseline_pubmed.ris"))
  expect_equal(nrow(pubmed), 50)
  expect_true(all(grepl("^[0-9]+$", pubmed$pmid)))
  # Web of Science in a .txt, BibTeX in a .txt.
  expect_equal(nrow(read_refs(file.path(dir, "synthesisr/WoS_txt_example.txt"))), 4)
  expect_equal(read_refs(file.path(dir, "synthesisr/litsearchr.txt"))$database_id, "grames2019automated")
  # A file in no format says which were tried, with its first line.
  path <- file.path(withr::local_tempdir(), "letter.ris")
  writeLines(c("Dear reviewer,", "here are the references we found."), path)
  cnd <- expect_error(read_refs(path), class = "tabscreen_error_refs_unknown")
  expect_s3_class(cnd, "tabscreen_error_refs_parse")
  msg <- gsub("\\s+", " ", conditionMessage(cnd))
  expect_match(msg, "letter.ris", fixed = TRUE)
  expect_match(msg, "RIS, PubMed MEDLINE (.nbib), Web of Science tagged (.ciw), BibTeX (.bib), CSV", fixed = TRUE)
  expect_match(msg, "Dear reviewer,", fixed = TRUE)
})

test_that("MEDLINE, Web of Science and BibTeX fields go to read_refs()'s columns, the others keep their tags", {
  dir <- shared_data("refs-corpus")
  nbib <- read_refs(file.path(dir, "revtools/restoration_pubmed.nbib"))
  first <- nbib[1, ]
  expect_equal(first$pmid, "30689646")
  expect_match(first$title, "^Ecosystem services changes between 2000 and 2015 in the Loess Plateau, China: A response")
  expect_equal(first$doi, "10.1371/journal.pone.0209483")
  expect_equal(first$authors, "Wu, Dan; Zou, Changxin; Cao, Wei; Xiao, Tong; Gong, Guoli")
  expect_equal(first$year, 2019L)
  expect_equal(first$journal, "PloS one")
  expect_equal(first$journal_abbrev, "PLoS One")
  expect_equal(first$volume, "14")
  expect_equal(first$start_page, "e0209483")
  expect_equal(first$PT, "Journal Article")
  expect_equal(first$JID, "101285081")
  expect_equal(sum(!is.na(nbib$pmid)), 104)

  wos <- read_refs(file.path(dir, "revtools/restoration_WoS.ciw"))
  first <- wos[1, ]
  expect_equal(first$title, "Do magnetic phosphorus adsorbents used for lake restoration impact on zooplankton community?")
  expect_equal(first$authors, "Alvarez-Manzaneda, I.; Guerreroc, F.; del Arco, I.; Funes, A.; Cruz-Pizarro, L.; de Vicente, I.")
  expect_equal(first$doi, "10.1016/j.scitotenv.2018.11.375")
  expect_equal(first$pmid, "30529964")
  expect_equal(first$accession_number, "WOS:000455039600059")
  expect_equal(first$journal, "SCIENCE OF THE TOTAL ENVIRONMENT")
  expect_equal(c(first$volume, first$start_page, first$end_page), c("656", "598", "607"))
  expect_equal(first$type, "JOUR")
  expect_equal(first$TC, "0")

  bib <- read_refs(file.path(dir, "synthesisr/litsearchr.txt"))
  expect_equal(bib$authors, "Grames, Eliza M; Stillman, Andrew N; Tingley, Morgan W; Elphick, Chris S")
  expect_equal(c(bib$start_page, bib$end_page), c("1645", "1654"))
  expect_equal(bib$journal, "Methods in Ecology and Evolution")
  expect_equal(bib$year, 2019L)
})

test_that("DOIs are taken where the exporter put them", {
  dir <- shared_data("refs-corpus")
  # EBSCOhost (CINAHL) puts the DOI in L3 and has no DO.
  cinahl <- read_refs(file.path(dir, "citation-file-formatting/_baseline_cinahl.ris"))
  expect_identical(cinahl$doi, cinahl$L3)
  expect_equal(sum(!is.na(cinahl$doi)), 9)
  # The Cochrane Library's C3 holds the PubMed id.
  cochrane <- read_refs(file.path(dir, "citation-file-formatting/_baseline_cochrane_endnote.ris"))
  expect_equal(cochrane$pmid[1], "21314913")
})

test_that("database CSVs: semicolons, tabs, Embase's preamble, their column names", {
  dir <- shared_data("refs-corpus")
  embase <- read_refs(file.path(dir, "citation-file-formatting/_baseline_embase.csv"))
  excel <- read_refs(file.path(dir, "citation-file-formatting/_baseline_excel.csv"))
  expect_equal(nrow(embase), 10)
  # The same Embase export re-saved by Excel with semicolons reads the same.
  expect_identical(excel$title, embase$title)
  expect_identical(excel$authors, embase$authors)
  expect_equal(embase$year, rep(2024L, 10))
  expect_identical(embase$journal[1], "Nature Communications")
  semicolon <- read_refs(file.path(dir, "asreview/generic_semicolon.csv"))
  tab <- read_refs(file.path(dir, "asreview/generic_tab.csv"))
  expect_identical(semicolon[names(semicolon) != "source_file"], tab[names(tab) != "source_file"])
  scopus <- read_refs(file.path(dir, "citation-file-formatting/_baseline_scopus.csv"))
  expect_true(all(c("authors", "year", "journal", "doi", "volume", "issue", "start_page", "end_page", "url") %in% names(scopus)))
  expect_true(all(!is.na(scopus$doi)))
  expect_type(scopus$year, "integer")
})

# One file of each format and of the major exporters.
round_trip_files <- c("asreview/ovid_psycinfo.ris", "citation-file-formatting/_baseline_cochrane_endnote.ris",
  "asreview/baseline_reference_types.ris", "citation-file-formatting/_baseline_cinahl.ris",
  "revtools/restoration_scopus.ris", "revtools/restoration_pubmed.nbib", "revtools/restoration_WoS.ciw",
  "synthesisr/zoorec.txt", "synthesisr/litsearchr.txt", "citation-file-formatting/_baseline_scopus.csv",
  "citation-file-formatting/_baseline_embase.csv", "citation-file-formatting/_baseline_zotero.csv",
  "asreview/generic_semicolon.csv", "citation-file-formatting/_baseline_pubmed.ris")

test_that("read -> write -> read keeps every record and field, for every format", {
  dir <- shared_data("refs-corpus")
  out <- withr::local_tempdir()
  for (name in round_trip_files) {
    refs <- read_refs(file.path(dir, name))
    # CSV keeps every column.
    csv <- file.path(out, "back.csv")
    write_refs(refs, csv)
    expect_identical(read_refs(csv), refs, label = paste(name, "through CSV"))
    # RIS keeps every record and every column RIS has a place for (the named columns, the tags;
    # not a MEDLINE export's PHST or a CSV's "Author full names"); a value is one line.
    ris <- file.path(out, "back.ris")
    write_refs(refs, ris)
    back <- read_refs(ris)
    expect_equal(nrow(back), nrow(refs), label = paste(name, "through RIS: records"))
    # RIS needs a type: a record without one is written as JOUR (with a journal) or GEN.
    column <- function(col) if (col %in% names(refs)) refs[[col]] else rep(NA, nrow(refs))
    untyped <- is.na(column("type"))
    expect_equal(back$type[untyped], ifelse(is.na(column("journal")), "GEN", "JOUR")[untyped],
      label = paste(name, "through RIS: types written for records without one"))
    back$type[untyped] <- NA
    for (col in ris_columns(names(refs))) {
      expect_identical(one_line_text(back[[col]]), one_line_text(refs[[col]]), label = paste(name, "through RIS: column", col))
    }
  }
})

test_that("a database's CSV read with read.csv() is written to RIS with its authors, year, DOI, journal and type", {
  dir <- shared_data("refs-corpus")
  path <- file.path(dir, "citation-file-formatting/_baseline_scopus.csv")
  raw <- utils::read.csv(path, check.names = FALSE, encoding = "UTF-8", stringsAsFactors = FALSE)
  raw$TY <- "JOUR"
  ris <- file.path(withr::local_tempdir(), "scopus.ris")
  write_refs(raw, ris)
  lines <- readLines(ris, encoding = "UTF-8")
  first <- lines[seq_len(which(lines == "ER  - ")[1])]
  expect_equal(first[1], "TY  - JOUR")
  expect_equal(first[startsWith(first, "AU  - ")], paste0("AU  - ", strsplit(raw$Authors[1], "; ", fixed = TRUE)[[1]]))
  expect_true(paste0("PY  - ", raw$Year[1]) %in% first)
  expect_true(paste0("DO  - ", raw$DOI[1]) %in% first)
  expect_true(paste0("JO  - ", raw[["Source title"]][1]) %in% first)
  back <- read_refs(ris)
  expected <- read_refs(path)
  expect_identical(back$doi, expected$doi)
  expect_identical(back$year, expected$year)
  expect_identical(back$authors, expected$authors)
  expect_identical(back$journal, expected$journal)
})
