# read_refs() and write_refs() on the bundled real exports (inst/extdata) and on small hand-made
# fixtures (tests/testthat/fixtures). The real exports of ../shared/data/refs-corpus are read in
# test-refs-corpus.R; deduplication is tested in test-refs-dedup.R.

extdata <- function(...) system.file("extdata", ..., package = "tabscreen", mustWork = TRUE)
fixture <- function(name) test_path("fixtures", name)

named_columns <- c("title", "abstract", "authors", "year", "journal", "doi", "pmid", "keywords", "type",
  "database_id", "accession_number", "editors", "date", "secondary_title", "journal_full",
  "journal_abbrev", "volume", "issue", "start_page", "end_page", "issn", "publisher", "place",
  "language", "url", "notes")

# The parse error a call raises, checked for its classes, file and line.
expect_parse_error <- function(expr, file, line) {
  cnd <- expect_error(expr, class = "tabscreen_error_refs_parse")
  expect_s3_class(cnd, "tabscreen_error_refs")
  expect_s3_class(cnd, "tabscreen_error")
  expect_equal(cnd$file, file)
  expect_equal(cnd$line, line)
  expect_match(conditionMessage(cnd), file, fixed = TRUE)
  if (!is.null(line)) expect_match(conditionMessage(cnd), paste0("line ", line), fixed = TRUE)
  invisible(cnd)
}

# Every column of `a` but `except` is in `b` with the same values.
expect_same_fields <- function(b, a, except = character()) {
  for (name in setdiff(names(a), except)) {
    expect_identical(b[[name]], a[[name]], label = paste0("column ", name))
  }
}

# ---- the bundled exports ----------------------------------------------------------------------

test_that("the bundled exports have 90, 180 and 72 records", {
  inc <- read_refs(extdata("fft_include.ris"))
  exc <- read_refs(extdata("fft_exclude.ris"))
  psy <- read_refs(extdata("psycinfo_sample.ris"))
  expect_equal(nrow(inc), 90)
  expect_equal(nrow(exc), 180)
  expect_equal(nrow(psy), 72)
  expect_s3_class(inc, "tbl_df")
  expect_identical(names(inc)[1:2], c("title", "abstract"))
  expect_identical(names(inc), c(named_columns, "U1", "source_file"))
  expect_true(all(inc$source_file == "fft_include.ris"))
  expect_type(inc$year, "integer")
})

test_that("fft_include.ris has the titles, abstracts and authors of filges2015_dat's included records", {
  inc <- read_refs(extdata("fft_include.ris"))
  included <- filges2015_dat[filges2015_dat$human_code == 1, ]
  # U1 holds the EPPI-Reviewer id; the export lists the records in the data set's order.
  expect_identical(inc$U1, included$eppi_id)
  expect_identical(inc$title, included$title)
  expect_identical(inc$abstract, included$abstract)
  expect_equal(sum(is.na(inc$abstract)), 21)
  # The data set joins the AU lines with " and ".
  expect_identical(gsub("; ", " and ", inc$authors, fixed = TRUE), included$author)

  exc <- read_refs(extdata("fft_exclude.ris"))
  excluded <- filges2015_dat[filges2015_dat$human_code == 0, ]
  expect_identical(exc$U1, excluded$eppi_id)
  expect_identical(exc$title, excluded$title)
  expect_equal(sum(is.na(exc$abstract)), 7)
})

test_that("fields of the first FFT record are read as written in the file", {
  inc <- read_refs(extdata("fft_include.ris"))
  # The first record of the file, read by eye.
  expect_equal(inc$type[1:4], c("JOUR", "CHAP", "JOUR", "BOOK"))
  expect_equal(inc$authors[1], "Stevens D E")
  expect_equal(inc$authors[2], "Liddle H A; Dakof G A")
  expect_equal(inc$year[1:2], c(2002L, 1995L))
  expect_equal(inc$journal[1], "Evidence Based Mental Health")
  expect_equal(inc$keywords[1], "eppi-reviewer4")
  expect_equal(inc$volume[1], "5")
  expect_equal(inc$start_page[1], "53")
  expect_equal(inc$issn[1], "1362-0347")
  expect_equal(inc$U1[1], "9431078")
  # "CY  - NA", "PB  - NA", "AN  - NA": the export's missing values; 15 records have an AN.
  expect_true(is.na(inc$place[1]))
  expect_true(is.na(inc$publisher[1]))
  expect_true(is.na(inc$accession_number[1]))
  expect_equal(sum(!is.na(inc$accession_number)), 15)
  expect_equal(inc$accession_number[which(!is.na(inc$accession_number))[1]], "Book: 2003-00618-006")
  expect_equal(inc$place[2], "Rockville, MD")
  # No record repeats a single-valued tag, so there is no repeated_tags column.
  expect_false("repeated_tags" %in% names(inc))
})

test_that("the PsycInfo export keeps repeated tags, every keyword and the full date", {
  psy <- read_refs(extdata("psycinfo_sample.ris"))
  first <- psy[1, ]
  expect_equal(first$title, "Preschool-to-third grade programs and practices: A review of research")
  expect_equal(first$authors, "Reynolds, Arthur J.; Magnuson, Katherine A.; Ou, Suh-Ruu")
  expect_equal(first$year, 2010L)
  expect_equal(first$date, "2010/08/01/Aug 2010")
  expect_equal(first$journal, "Children and Youth Services Review")
  expect_equal(first$journal_full, "Children and Youth Services Review")
  expect_equal(first$journal_abbrev, "Child Youth Serv Rev")
  expect_equal(first$doi, "10.1016/j.childyouth.2009.10.017")
  expect_equal(first$database_id, "2010-02099-001")
  expect_equal(first$accession_number, "2010-02099-001")
  expect_equal(first$issn, "1873-7765")
  expect_equal(first$publisher, "Elsevier Science")
  expect_equal(first$DB, "psyh")
  expect_equal(first$keywords, paste(c("preschool programs & practices", "school age programs & practices",
    "intervention programs", "school transition", "Educational Programs", "Elementary Education",
    "Preschool Education", "School Based Intervention", "School Transition", "Early Intervention"), collapse = "; "))
  # The second T1, the second SN and the second U1 of the record.
  expect_equal(first$U1, "Sponsor: Foundation for Child Development, US. Recipients: No recipient indicated")
  expect_equal(strsplit(first$repeated_tags, "\n")[[1]], c(
    "T1  - Test1", "SN  - 0190-7409",
    "U1  - Sponsor: National Institute of Child Health and Human Development, US. Grant: HD034294. Recipients: No recipient indicated"))
  # Counts in the file (grep -c): 1438 KW lines, 381 AU lines, 143 SN lines, 73 T1 lines.
  n_values <- function(x) ifelse(is.na(x), 0, lengths(strsplit(x, "; ", fixed = TRUE)))
  expect_equal(sum(n_values(psy$keywords)), 1438)
  expect_equal(sum(n_values(psy$authors)), 381)
  repeated <- unlist(strsplit(psy$repeated_tags[!is.na(psy$repeated_tags)], "\n"))
  expect_equal(sum(startsWith(repeated, "SN  - ")) + sum(!is.na(psy$issn)), 143)
  expect_equal(sum(startsWith(repeated, "T1  - ")) + sum(!is.na(psy$title)), 73)
  expect_equal(sum(startsWith(repeated, "T1  - ")), 1)
  expect_true(all(!is.na(psy$abstract)))
  # The one record with editors (ED lines).
  expect_equal(sum(!is.na(psy$editors)), 1)
  expect_equal(psy$editors[!is.na(psy$editors)],
    "Reynolds, Arthur J.; Rolnick, Arthur J.; Englund, Michelle M.; Temple, Judy A.")
})

test_that("several files are read into one table with their file names", {
  refs <- read_refs(extdata(c("fft_include.ris", "fft_exclude.ris", "psycinfo_sample.ris")))
  expect_equal(nrow(refs), 342)
  expect_equal(as.vector(table(refs$source_file)[c("fft_include.ris", "fft_exclude.ris", "psycinfo_sample.ris")]),
    c(90, 180, 72))
  expect_identical(names(refs)[1:length(named_columns)], named_columns)
  expect_identical(names(refs)[ncol(refs)], "source_file")
  expect_identical(refs$title[91:270], read_refs(extdata("fft_exclude.ris"))$title)
  # psycinfo's tags without a name are NA for the FFT records, and the reverse.
  expect_true(all(is.na(refs$DB[1:270])))
  expect_identical(refs$U1[1:90], filges2015_dat$eppi_id[filges2015_dat$human_code == 1])

  custom <- read_refs(extdata("fft_include.ris"), source_col = "export")
  expect_true(all(custom$export == "fft_include.ris"))
  expect_false("source_file" %in% names(custom))
  expect_false(any(c("source_file", "export") %in% names(read_refs(extdata("fft_include.ris"), source_col = NULL))))
})

# ---- hand-made RIS fixtures -------------------------------------------------------------------

test_that("a byte-order mark, CRLF line ends, header lines and blank lines are handled", {
  refs <- read_refs(fixture("bom_crlf.ris"))
  expect_equal(nrow(refs), 2)
  expect_equal(refs$title, c("Family therapy for adolescents: a pilot trial", "Treating drug use in young people"))
  expect_equal(refs$type, c("JOUR", "BOOK"))
  expect_equal(refs$authors, c("Nørgaard, Åse; Müller, Jürgen", "Smith, Anna"))
  expect_equal(Encoding(refs$authors[1]), "UTF-8")
  expect_equal(refs$year, c(2019L, 2001L))
  expect_equal(refs$journal, c("Journal of Family Studies", NA))
  expect_equal(refs$publisher, c(NA, "Example Press"))
  # "N1  -" with nothing after it is an empty, hence missing, note.
  expect_equal(refs$notes, c(NA_character_, NA_character_))
  expect_equal(refs$abstract, c("We report a pilot trial of family therapy (n = 40).", NA))
  expect_false(any(grepl("\r", unlist(refs[c("title", "abstract", "authors")]), fixed = TRUE)))
})

test_that("continuation lines, repeated tags, editors, dates and journals are read", {
  refs <- read_refs(fixture("multiline.ris"))
  expect_equal(nrow(refs), 2)
  expect_equal(refs$title[1], "Brief strategic family therapy: engaging families in treatment")
  expect_equal(refs$abstract[1], "First line of the abstract second line of the abstract third line after a blank line.")
  expect_equal(refs$authors[1], "Jones, Kim; Lee, Sam")
  expect_equal(refs$editors[1], "Brown, Editor; Green, Editor")
  expect_equal(refs$keywords[1], "family therapy; adolescents; substance use")
  expect_equal(refs$year, c(2004L, 2007L))
  expect_equal(refs$date, c("2004/03/15/March 2004", "2007///"))
  expect_equal(refs$secondary_title[1], "Handbook of adolescent treatment")
  expect_equal(refs$journal, c("Handbook of adolescent treatment", "Full Journal Name"))
  expect_equal(refs$journal_full, c(NA, "Full Journal Name"))
  expect_equal(refs$journal_abbrev, c(NA, "Full J Name"))
  expect_equal(refs$url[1], "https://example.org/a")
  expect_equal(refs$C1, c("custom one", NA))
  expect_equal(refs$doi, c(NA, "10.1000/example.1"))
  expect_equal(refs$database_id, c(NA, "rec-2"))
  expect_equal(refs$accession_number, c(NA, "123456"))
  expect_equal(refs$repeated_tags, c(
    "TI  - Another title of the same chapter\nUR  - https://example.org/b",
    "DA  - 2007/06/01\nPY  - 2008"))
  expect_identical(names(refs), c(named_columns, "C1", "repeated_tags", "source_file"))
})

test_that("abstracts are present or missing as in the file", {
  refs <- read_refs(fixture("missing_abstract.ris"))
  expect_equal(refs$title, c("With an abstract", "Without an AB line", "With AB NA", "With an empty AB", "Abstract in N2"))
  expect_equal(refs$abstract, c("An abstract.", NA, NA, NA, "The abstract in N2."))
  expect_equal(refs$year, c(NA, 2010L, NA, NA, NA))
  # With only empty values missing, the text NA is a value.
  expect_equal(read_refs(fixture("missing_abstract.ris"), na = "")$abstract[3], "NA")
})

test_that("really broken RIS files are errors naming the file and the line", {
  cnd <- expect_parse_error(read_refs(fixture("truncated.ris")), "truncated.ris", 9)
  expect_match(conditionMessage(cnd), "truncated", fixed = TRUE)
  cnd <- expect_parse_error(read_refs(fixture("missing_er.ris")), "missing_er.ris", 8)
  expect_match(conditionMessage(cnd), "line 5 has no ER line", fixed = TRUE)
  cnd <- expect_parse_error(read_refs(fixture("junk.ris")), "junk.ris", 4)
  expect_match(conditionMessage(cnd), "NUL", fixed = TRUE)
  cnd <- expect_parse_error(read_refs(fixture("latin1.ris")), "latin1.ris", 2)
  expect_match(conditionMessage(cnd), "UTF-8", fixed = TRUE)
  # Which file of several is named.
  expect_parse_error(read_refs(c(extdata("fft_include.ris"), fixture("truncated.ris"))), "truncated.ris", 9)
  dir <- withr::local_tempdir()
  path <- file.path(dir, "x.ris")
  writeLines(c("TI  - Tags before any record", "TY  - JOUR", "ER  - "), path)
  cnd <- expect_parse_error(read_refs(path), "x.ris", 1)
  expect_match(conditionMessage(cnd), "TI is outside a record", fixed = TRUE)
  writeLines(c("", "  "), path)
  expect_parse_error(read_refs(path), "x.ris", NULL)
})

test_that("what exporters put around records is passed over; an empty TY is a record", {
  # A line of text before the first record (record numbers, "Record #3 of 18", ...).
  expect_equal(read_refs(fixture("text_before_ty.ris"))$title, "First")
  refs <- read_refs(fixture("empty_ty.ris"))
  expect_equal(refs$title, c("First", "Second"))
  expect_equal(refs$type, c("JOUR", NA))
  dir <- withr::local_tempdir()
  path <- file.path(dir, "x.ris")
  # A tag after ER (Ovid's NL) belongs to the record above.
  writeLines(c("TY  - JOUR", "TI  - One", "ER  - ", "NL  - Abbr", "", "Link to the Ovid Full Text or citation: x"), path)
  expect_equal(read_refs(path)$NL, "Abbr")
  # Tags closed by an ER with no TY: a record without type.
  writeLines(c("TI  - One", "ER  - "), path)
  refs <- read_refs(path)
  expect_equal(refs$title, "One")
  expect_true(is.na(refs$type))
  # An ER without a record loses nothing.
  writeLines(c("TY  - JOUR", "TI  - One", "ER  - ", "ER  - "), path)
  expect_equal(nrow(read_refs(path)), 1)
})

test_that("exports joined with cat, each with its byte-order mark, are read", {
  dir <- withr::local_tempdir()
  path <- file.path(dir, "joined.ris")
  parts <- lapply(c("bom_crlf.ris", "bom_crlf.ris"), function(f) readBin(fixture(f), "raw", file.size(fixture(f))))
  writeBin(c(parts[[1]], parts[[2]]), path)
  refs <- read_refs(path)
  expect_equal(nrow(refs), 4)
  expect_equal(refs$title[3], "Family therapy for adolescents: a pilot trial")
})

test_that("tags with one space before the hyphen (as the TY line) or a tab are read", {
  dir <- withr::local_tempdir()
  path <- file.path(dir, "spacing.ris")
  writeLines(c("TY - JOUR", "TI - One", "AU - Doe, J", "ER - "), path)
  refs <- read_refs(path)
  expect_equal(refs$title, "One")
  expect_equal(refs$authors, "Doe, J")
  writeLines(c("TY  - JOUR", "A1\t- Doe, J", "TI\t-\tTwo", "ER  - "), path)
  refs <- read_refs(path)
  expect_equal(refs$title, "Two")
  expect_equal(refs$authors, "Doe, J")
})

test_that("lines are numbered as wc -l counts them: a lone carriage return is not a line end", {
  dir <- withr::local_tempdir()
  path <- file.path(dir, "cr.ris")
  writeBin(charToRaw("TY  - JOUR\nAB  - one\rtwo\rthree\nER  - \nTY  - JOUR\nTI  - cut\n"), path)
  expect_parse_error(read_refs(path), "cr.ris", 4)
  writeBin(charToRaw("TY  - JOUR\nAB  - one\rtwo\nER  - \n"), path)
  expect_equal(read_refs(path)$abstract, "one two")
})

test_that("text in another encoding is an error giving the lines and the encoding to name", {
  dir <- withr::local_tempdir()
  path <- file.path(dir, "windows.ris")
  # A Windows-1252 export: curly quotes and accented letters, on lines 2, 3 and 5.
  lines <- c("TY  - JOUR", "TI  - \x93Functional\x94 family therapy", "AB  - Caf\xe9 study", "ER  - ",
    "TY  - JOUR", "TI  - Th\xe9rapie", "ER  - ")
  writeBin(charToRaw(paste0(paste(lines, collapse = "\n"), "\n")), path)
  cnd <- expect_parse_error(read_refs(path), "windows.ris", 2)
  expect_s3_class(cnd, "tabscreen_error_encoding")
  msg <- gsub("\\s+", " ", conditionMessage(cnd))
  expect_match(msg, "not valid UTF-8 in 3 lines: 2, 3, and 6", fixed = TRUE)
  expect_match(msg, "read_refs(\"windows.ris\", encoding = \"windows-1252\")", fixed = TRUE)
  # and read with that encoding
  refs <- read_refs(path, encoding = "windows-1252")
  expect_equal(refs$title, c("\u201cFunctional\u201d family therapy", "Th\u00e9rapie"))
  # Bytes that Windows-1252 does not define: any encoding that fits must be named.
  writeBin(charToRaw("TY  - JOUR\nTI  - \x81\x8d odd\nER  - \n"), path)
  cnd <- expect_parse_error(read_refs(path), "windows.ris", 2)
  expect_match(gsub("\\s+", " ", conditionMessage(cnd)), "encoding = \"latin1\"", fixed = TRUE)
  cnd <- expect_parse_error(read_refs(path, encoding = "windows-1252"), "windows.ris", 2)
  expect_s3_class(cnd, "tabscreen_error_encoding")
  expect_match(conditionMessage(cnd), "not valid windows-1252", fixed = TRUE)
})

test_that("other encodings are read when named, and UTF-16 by its byte-order mark", {
  refs <- read_refs(fixture("latin1.ris"), encoding = "latin1")
  expect_equal(refs$title, "Andr\u00e9 and the therapy")
  dir <- withr::local_tempdir()
  path <- file.path(dir, "utf16.ris")
  text <- "TY  - JOUR\r\nTI  - Caf\u00e9 study\r\nER  - \r\n"
  writeBin(c(as.raw(c(0xff, 0xfe)), iconv(text, "UTF-8", "UTF-16LE", toRaw = TRUE)[[1]]), path)
  expect_equal(read_refs(path)$title, "Caf\u00e9 study")
})

# ---- CSV --------------------------------------------------------------------------------------

test_that("CSV files: title and abstract columns are found and named, other columns kept", {
  refs <- read_refs(fixture("upper_headers.csv"))
  # The export's column names become the named columns: Year, Authors, Volume.
  expect_identical(names(refs), c("title", "abstract", "authors", "year", "volume", "human_code", "source_file"))
  expect_equal(refs$title, c("Functional family therapy, a review", "Thérapie familiale"))
  expect_equal(refs$abstract, c("He said \"it works\".\nSecond paragraph.", NA))
  expect_equal(refs$year, c(2015L, NA))
  expect_equal(refs$authors, c("Doe, J; Roe, R", NA))
  expect_equal(refs$human_code, c(1L, 0L))
  expect_equal(refs$volume, c("12", NA))
  expect_equal(refs$source_file, c("upper_headers.csv", "upper_headers.csv"))

  # A file named otherwise is read as CSV when its first line is not a TY line.
  dir <- withr::local_tempdir()
  txt <- file.path(dir, "export.txt")
  file.copy(fixture("upper_headers.csv"), txt)
  expect_equal(read_refs(txt)$title, refs$title)
  ris_txt <- file.path(dir, "export2.txt")
  file.copy(fixture("multiline.ris"), ris_txt)
  expect_equal(nrow(read_refs(ris_txt)), 2)
  # And format = "csv" reads any file as CSV.
  expect_error(read_refs(fixture("multiline.ris"), format = "csv"), class = "tabscreen_error_refs")
})

test_that("a CSV without a title column is an error naming the file and its columns", {
  cnd <- expect_error(read_refs(fixture("no_title.csv")), class = "tabscreen_error_refs_columns")
  expect_s3_class(cnd, "tabscreen_error_refs")
  expect_equal(cnd$file, "no_title.csv")
  expect_match(conditionMessage(cnd), "no_title.csv", fixed = TRUE)
  expect_match(conditionMessage(cnd), "Name", fixed = TRUE)
})

test_that("semicolon- and tab-separated CSV files are read", {
  refs <- read_refs(fixture("semicolon.csv"))
  expect_equal(refs$title, "A title")
  expect_equal(refs$abstract, "An abstract")
  dir <- withr::local_tempdir()
  path <- file.path(dir, "tab.txt")
  writeLines(c("Title\tAbstract\tPublication Year", "A\tB\t2020"), path)
  refs <- read_refs(path)
  expect_equal(refs$title, "A")
  expect_equal(refs$year, 2020L)
})

test_that("a CSV with an abstract column missing gets one of NA; Zotero's headers are recognised", {
  dir <- withr::local_tempdir()
  path <- file.path(dir, "zotero.csv")
  writeLines(c('"Key","Item Type","Title","Abstract Note","Publication Year"',
    '"K1","journalArticle","A title","An abstract","2020"'), path)
  refs <- read_refs(path)
  expect_identical(names(refs), c("title", "abstract", "year", "Key", "Item Type", "source_file"))
  expect_equal(refs$year, 2020L)
  expect_equal(refs$abstract, "An abstract")
  writeLines(c("Title", "Only a title"), path)
  refs <- read_refs(path)
  expect_identical(names(refs), c("title", "abstract", "source_file"))
  expect_true(is.na(refs$abstract))
})

test_that("RIS and CSV files are read together", {
  refs <- read_refs(c(fixture("bom_crlf.ris"), fixture("upper_headers.csv")))
  expect_equal(nrow(refs), 4)
  expect_equal(refs$title[3:4], c("Functional family therapy, a review", "Thérapie familiale"))
  expect_equal(refs$authors, c("Nørgaard, Åse; Müller, Jürgen", "Smith, Anna", "Doe, J; Roe, R", NA))
  expect_equal(refs$human_code, c(NA, NA, 1L, 0L))
  expect_equal(refs$source_file, c("bom_crlf.ris", "bom_crlf.ris", "upper_headers.csv", "upper_headers.csv"))
  expect_identical(names(refs)[ncol(refs)], "source_file")
  # One format per file.
  both <- read_refs(c(fixture("bom_crlf.ris"), fixture("upper_headers.csv")), format = c("ris", "csv"))
  expect_identical(both, refs)
})

test_that("bad arguments of read_refs() are classed errors naming the argument", {
  cnd <- expect_error(read_refs(c(extdata("fft_include.ris"), "no/such/file.ris")), class = "tabscreen_error_refs_files")
  expect_s3_class(cnd, "tabscreen_error_arg")
  expect_s3_class(cnd, "tabscreen_error_refs")
  expect_equal(cnd$arg, "files")
  expect_match(conditionMessage(cnd), "no/such/file.ris", fixed = TRUE)
  expect_error(read_refs(character()), class = "tabscreen_error_refs_files")
  expect_error(read_refs(tempdir()), class = "tabscreen_error_refs_files")
  cnd <- expect_error(read_refs(extdata("fft_include.ris"), format = "bib"), class = "tabscreen_error_refs_format")
  expect_equal(cnd$arg, "format")
  expect_error(read_refs(extdata("fft_include.ris"), format = c("ris", "csv")), class = "tabscreen_error_refs_format")
  expect_error(read_refs(extdata("fft_include.ris"), source_col = 1), class = "tabscreen_error_refs_source_col")
  expect_error(read_refs(extdata("fft_include.ris"), na = NA), class = "tabscreen_error_refs_na")
  expect_error(read_refs(extdata("fft_include.ris"), encoding = "no-such-encoding"), class = "tabscreen_error_refs_encoding")
})

# ---- write_refs() of references ---------------------------------------------------------------

test_that("references written to RIS read back with every field unchanged", {
  dir <- withr::local_tempdir()
  for (files in list(extdata(c("fft_include.ris", "fft_exclude.ris")), extdata("psycinfo_sample.ris"),
    fixture("multiline.ris"), fixture("bom_crlf.ris"), fixture("missing_abstract.ris"))) {
    refs <- read_refs(files)
    out <- file.path(dir, "out.ris")
    written <- write_refs(refs, out)
    expect_identical(written, refs)
    back <- read_refs(out)
    expect_identical(names(back), names(refs))
    expect_same_fields(back, refs, except = "source_file")
    expect_true(all(back$source_file == "out.ris"))
  }
})

test_that("the RIS text has one line per field, authors and keywords split, CRLF line ends", {
  dir <- withr::local_tempdir()
  out <- file.path(dir, "two.ris")
  write_refs(read_refs(fixture("multiline.ris")), out)
  bytes <- readBin(out, "raw", file.size(out))
  text <- rawToChar(bytes)
  Encoding(text) <- "UTF-8"
  lines <- strsplit(text, "\r\n", fixed = TRUE)[[1]]
  expect_false(grepl("[^\r]\n", text))
  expect_equal(lines[1:15], c(
    "TY  - CHAP",
    "TI  - Brief strategic family therapy: engaging families in treatment",
    "AU  - Jones, Kim",
    "AU  - Lee, Sam",
    "A2  - Brown, Editor",
    "A2  - Green, Editor",
    "PY  - 2004",
    "DA  - 2004/03/15/March 2004",
    "T2  - Handbook of adolescent treatment",
    "SP  - 10",
    "EP  - 25",
    "UR  - https://example.org/a",
    "KW  - family therapy",
    "KW  - adolescents",
    "KW  - substance use"))
  expect_equal(lines[16:20], c(
    "AB  - First line of the abstract second line of the abstract third line after a blank line.",
    "C1  - custom one",
    "TI  - Another title of the same chapter",
    "UR  - https://example.org/b",
    "ER  - "))
  expect_equal(lines[21], "")
  # JO is not written where the journal is JF's value.
  second <- lines[22:length(lines)]
  expect_false(any(startsWith(second, "JO  - ")))
  expect_true("JF  - Full Journal Name" %in% second)
})

test_that("a data frame from elsewhere is written with its title, abstract and authors", {
  dir <- withr::local_tempdir()
  out <- file.path(dir, "df.ris")
  df <- data.frame(Title = c("First title", "Second\ntitle"), abstract = c("Text.", NA),
    author = c("A, B; C, D", NA), human_code = c(1, 0), journal = c(NA, "J"))
  write_refs(df, out)
  lines <- readLines(out)
  expect_equal(lines, c("TY  - GEN", "TI  - First title", "AU  - A, B", "AU  - C, D", "AB  - Text.", "ER  - ", "",
    "TY  - JOUR", "TI  - Second title", "JO  - J", "ER  - ", ""))
  back <- read_refs(out)
  expect_equal(back$title, c("First title", "Second title"))
  expect_equal(back$authors, c("A, B; C, D", NA))
})

test_that("references written to CSV read back identical, source file included", {
  dir <- withr::local_tempdir()
  refs <- read_refs(c(extdata("psycinfo_sample.ris"), fixture("multiline.ris"), fixture("upper_headers.csv")))
  out <- file.path(dir, "refs.csv")
  write_refs(refs, out)
  back <- read_refs(out)
  expect_identical(back, refs)
  # UTF-8 without byte-order mark, text quoted, missing values empty.
  bytes <- readBin(out, "raw", 3)
  expect_false(identical(bytes, as.raw(c(0xef, 0xbb, 0xbf))))
  header <- readLines(out, n = 1, encoding = "UTF-8")
  expect_true(startsWith(header, "\"title\",\"abstract\",\"authors\",\"year\","))
  filges <- filges2015_dat[1:3, ]
  write_refs(filges, out, format = "csv")
  back <- read_refs(out)
  expect_equal(back$title, filges$title)
  expect_equal(back$abstract, filges$abstract)
  expect_equal(back$studyid, filges$studyid)
  expect_equal(back$human_code, filges$human_code)
  expect_equal(as.character(back$eppi_id), filges$eppi_id)
})

test_that("the format follows the file's extension unless given", {
  dir <- withr::local_tempdir()
  refs <- read_refs(fixture("bom_crlf.ris"))
  write_refs(refs, file.path(dir, "a.CSV"))
  expect_equal(readLines(file.path(dir, "a.CSV"), n = 1), paste0("\"", paste(names(refs), collapse = "\",\""), "\""))
  write_refs(refs, file.path(dir, "a.txt"))
  expect_equal(readLines(file.path(dir, "a.txt"), n = 1), "TY  - JOUR")
  write_refs(refs, file.path(dir, "b.csv"), format = "ris")
  expect_equal(readLines(file.path(dir, "b.csv"), n = 1), "TY  - JOUR")
})

test_that("bad arguments of write_refs() are classed errors naming the argument, and write nothing", {
  dir <- withr::local_tempdir()
  refs <- read_refs(fixture("bom_crlf.ris"))
  out <- file.path(dir, "out.ris")
  cnd <- expect_error(write_refs(refs, out, format = "bibtex"), class = "tabscreen_error_refs_format")
  expect_s3_class(cnd, "tabscreen_error_arg")
  expect_equal(cnd$arg, "format")
  expect_match(conditionMessage(cnd), "bibtex", fixed = TRUE)
  cnd <- expect_error(write_refs(data.frame(name = "x", abstract = "y"), out), class = "tabscreen_error_refs_x")
  expect_equal(cnd$arg, "x")
  expect_match(conditionMessage(cnd), "title", fixed = TRUE)
  expect_error(write_refs(list(title = "x"), out), class = "tabscreen_error_refs_x")
  cnd <- expect_error(write_refs(refs, file.path(dir, "no", "such", "folder", "out.ris")), class = "tabscreen_error_refs_file")
  expect_equal(cnd$arg, "file")
  expect_error(write_refs(refs, dir), class = "tabscreen_error_refs_file")
  expect_error(write_refs(refs, c("a.ris", "b.ris")), class = "tabscreen_error_refs_file")
  expect_error(write_refs(refs, out, formt = "csv"), class = "tabscreen_error_refs_dots")
  # A path under a file, which no user can create.
  plain <- file.path(dir, "plain.txt")
  writeLines("x", plain)
  cnd <- expect_error(write_refs(refs, file.path(plain, "out.ris")), class = "tabscreen_error_refs_file")
  expect_match(conditionMessage(cnd), "plain.txt", fixed = TRUE)
  expect_false(file.exists(out))
})

# ---- write_refs() of screening results --------------------------------------------------------

# 20 references of the two FFT exports (10 included, 10 excluded), screened against the fake.
screened_refs <- function() {
  refs <- read_refs(extdata(c("fft_include.ris", "fft_exclude.ris")))
  refs[c(1:10, 91:100), ]
}

test_that("a screening written to RIS reads back with every field and the decisions", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-refs")
  fake <- local_fake_provider(seed = 7, decisions = list("1" = 0.5, "0" = 0.5))
  refs <- screened_refs()
  res <- tabscreen_a.tools(refs, prompt = test_prompt, title = title, abstract = abstract,
    api_url = fake$url, reps = 2, progress = FALSE, messages = FALSE)
  agg <- res$answer_data_aggregated
  expect_equal(nrow(agg), 20)
  dir <- withr::local_tempdir()
  out <- file.path(dir, "screened.ris")
  write_refs(res, out)
  back <- read_refs(out)
  expect_equal(nrow(back), 20)
  expect_same_fields(back, refs, except = "source_file")
  expect_identical(back$tabscreen_decision, agg$final_decision_llm)
  expect_true(all(back$tabscreen_decision %in% c("Include", "Exclude", "Check")))
  expected_notes <- paste0("tabscreen: ", agg$final_decision_llm, "; incl_p = ", agg$incl_p,
    " (2 reps, 0 missing); prompt 1; model gpt-6-luna (", agg$submodel, "); top_p 1; run ", res$run_date)
  expect_identical(back$tabscreen_note, expected_notes)
  # The decision as a keyword after the export's own keyword, and as a note.
  lines <- readLines(out)
  first <- lines[seq_len(which(lines == "ER  - ")[1])]
  expect_equal(first[startsWith(first, "KW  - ")], c("KW  - eppi-reviewer4", paste0("KW  - tabscreen: ", agg$final_decision_llm[1])))
  expect_equal(first[startsWith(first, "N1  - ")], paste0("N1  - ", expected_notes[1]))
  expect_identical(back$keywords, refs$keywords)
  expect_identical(back$notes, refs$notes)
})

test_that("a screening written to CSV reads back with every field and the decisions", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-refs")
  fake <- local_fake_provider(seed = 8)
  refs <- screened_refs()
  res <- tabscreen_a.tools(refs, prompt = test_prompt, title = title, abstract = abstract,
    api_url = fake$url, reps = 2, progress = FALSE, messages = FALSE)
  dir <- withr::local_tempdir()
  out <- file.path(dir, "screened.csv")
  written <- write_refs(res, out)
  back <- read_refs(out)
  expect_identical(back[names(written)], written)
  # The source file read first is kept.
  expect_same_fields(back, refs)
  expect_identical(back$tabscreen_decision, res$answer_data_aggregated$final_decision_llm)
  expect_identical(names(back), c(names(refs)[-length(refs)], "tabscreen_decision", "tabscreen_note", "source_file"))
})

test_that("all-exclude and all-include screenings give those decisions; a re-screen replaces them", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-refs")
  fake <- local_fake_provider(decisions = list("0" = 1))
  refs <- screened_refs()[1:5, ]
  res <- tabscreen_a.tools(refs, prompt = test_prompt, title = title, abstract = abstract,
    api_url = fake$url, reps = 2, progress = FALSE, messages = FALSE)
  dir <- withr::local_tempdir()
  out <- file.path(dir, "a.ris")
  write_refs(res, out)
  excluded <- read_refs(out)
  expect_equal(excluded$tabscreen_decision, rep("Exclude", 5))
  expect_true(all(grepl("; incl_p = 0 (2 reps, 0 missing);", excluded$tabscreen_note, fixed = TRUE)))

  fake$configure(decisions = list("1" = 1))
  # The same records and prompt again: screened anew, not the completed run's answers.
  withr::local_options(tabscreen.store_reuse = FALSE)
  res2 <- tabscreen_a.tools(excluded, prompt = test_prompt, title = title, abstract = abstract,
    api_url = fake$url, reps = 2, progress = FALSE, messages = FALSE)
  write_refs(res2, out)
  lines <- readLines(out)
  expect_equal(sum(lines == "KW  - tabscreen: Include"), 5)
  expect_false(any(grepl("Exclude", lines, fixed = TRUE)))
  expect_equal(read_refs(out)$tabscreen_decision, rep("Include", 5))
})

test_that("several prompts: one record per reference with each prompt's decision", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-refs")
  fake <- local_fake_provider(decisions = list("1" = 1))
  refs <- screened_refs()[1:3, ]
  fake$configure(fail_matching = list(list(substring = "second prompt", kind = "500")))
  res <- tabscreen_a.tools(refs, prompt = c("The first prompt.", "The second prompt."), title = title,
    abstract = abstract, api_url = fake$url, max_tries = 1, progress = FALSE, messages = FALSE)
  expect_equal(nrow(res$answer_data), 3)
  expect_equal(nrow(res$error_data), 3)
  dir <- withr::local_tempdir()
  out <- file.path(dir, "p.ris")
  write_refs(res, out)
  back <- read_refs(out)
  expect_equal(nrow(back), 3)
  expect_same_fields(back, refs, except = "source_file")
  expect_equal(back$tabscreen_decision, rep("Include (prompt 1, gpt-6-luna); Check (prompt 2, gpt-6-luna)", 3))
  notes <- strsplit(back$tabscreen_note[1], "\n")[[1]]
  expect_length(notes, 2)
  expect_match(notes[1], "^tabscreen: Include \\(prompt 1, gpt-6-luna\\); decision_llm = 1(\\.1)?; prompt 1; model gpt-6-luna")
  expect_match(notes[2], "^tabscreen: Check \\(prompt 2, gpt-6-luna\\); no answer \\(the request failed\\); prompt 2;")
  lines <- readLines(out)
  expect_equal(sum(lines == "KW  - tabscreen: Include (prompt 1, gpt-6-luna)"), 3)
  expect_equal(sum(lines == "KW  - tabscreen: Check (prompt 2, gpt-6-luna)"), 3)
})

test_that("a screening of a data frame with its own study ids writes them to CSV under their name", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-refs")
  fake <- local_fake_provider(decisions = list("0" = 1))
  recs <- filges2015_dat[c(1, 2, 181), ]
  res <- tabscreen_a.tools(recs, prompt = test_prompt, studyid = eppi_id, title = title, abstract = abstract,
    api_url = fake$url, progress = FALSE, messages = FALSE)
  dir <- withr::local_tempdir()
  out <- file.path(dir, "f.csv")
  write_refs(res, out)
  back <- read_refs(out)
  # filges2015_dat's column studyid has the name of a result column: the screening left it out.
  # Its `author` is read back as read_refs() names authors.
  expect_identical(names(back), c("title", "abstract", "authors", "eppi_id", "human_code",
    "tabscreen_decision", "tabscreen_note", "source_file"))
  expect_equal(as.character(back$eppi_id), recs$eppi_id)
  expect_equal(back$human_code, recs$human_code)
  expect_equal(back$tabscreen_decision, rep("Exclude", 3))
  expect_match(back$tabscreen_note, "^tabscreen: Exclude; decision_llm = 0; prompt 1; model gpt-6-luna")
})

test_that("provider B's results (no top_p) and several top_p values are written as such", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-refs", PROVIDER_B_API_KEY = "sk-ant-test-refs")
  fake <- local_fake_provider(decisions = list("1" = 1))
  refs <- screened_refs()[1:2, ]
  res_b <- tabscreen_b(refs, prompt = test_prompt, title = title, abstract = abstract,
    api_url = fake$url_b, progress = FALSE, messages = FALSE)
  expect_false("top_p" %in% names(res_b$answer_data))
  dir <- withr::local_tempdir()
  out <- file.path(dir, "b.ris")
  write_refs(res_b, out)
  back <- read_refs(out)
  expect_same_fields(back, refs, except = "source_file")
  expect_equal(back$tabscreen_decision, c("Include", "Include"))
  model <- res_b$answer_data$model[1]
  expect_match(back$tabscreen_note, paste0("^tabscreen: Include; decision_llm = 1(\\.1)?; prompt 1; model ", model))
  expect_false(any(grepl("top_p", back$tabscreen_note, fixed = TRUE)))

  res_a <- tabscreen_a.tools(refs, prompt = test_prompt, title = title, abstract = abstract, top_p = c(0.5, 1),
    api_url = fake$url, progress = FALSE, messages = FALSE)
  write_refs(res_a, out)
  back <- read_refs(out)
  expect_equal(back$tabscreen_decision,
    rep("Include (prompt 1, gpt-6-luna, top_p 0.5); Include (prompt 1, gpt-6-luna, top_p 1)", 2))
  notes <- strsplit(back$tabscreen_note[2], "\n")[[1]]
  expect_match(notes, "; top_p (0.5|1); run ")
})
