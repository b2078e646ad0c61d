# Reading and writing reference files: the exports of databases and reference managers (RIS,
# PubMed's MEDLINE, Web of Science's tagged format, BibTeX, CSV).
#
# The parsing is Go's (golib/refs): it streams the file and hands back an Arrow table, so that a
# search of 75,000 records reads in about a second. R checks the arguments, converts a file in
# another encoding to UTF-8 first, words the errors, gives CSV columns their types and binds the
# tables of several files. The design goal is that read_refs() -> write_refs() -> read_refs()
# gives back every field unchanged: tags without a named column keep their tag as column name,
# and repeats of single-valued RIS tags are kept in `repeated_tags` as RIS lines, which
# write_refs() writes back as they were.

# Every table of a tagged format has these columns, in this order (all NA when no record has the
# field), so that tables of different exports have the same shape; other fields follow (the same
# names as golib/refs/table.go).
ris_core_columns <- c("title", "abstract", "authors", "year", "journal", "doi", "pmid", "keywords", "type", "database_id")
ris_more_columns <- c("accession_number", "editors", "date", "secondary_title", "journal_full",
  "journal_abbrev", "volume", "issue", "start_page", "end_page", "issn", "publisher", "place",
  "language", "url", "notes")

# Columns of several values, joined by "; ".
ris_multi_columns <- c("authors", "editors", "keywords")

# The tag each named column is written with, in the order of the written record (TY comes first and
# `journal` is written only when it is not derived from another column; see ris_text()). RIS has
# no PubMed id: it is written as PM, Web of Science's tag, which read_refs() reads back.
ris_write_tags <- c(title = "TI", authors = "AU", editors = "A2", year = "PY", date = "DA",
  secondary_title = "T2", journal = "JO", journal_full = "JF", journal_abbrev = "JA", volume = "VL",
  issue = "IS", start_page = "SP", end_page = "EP", issn = "SN", publisher = "PB", place = "CY",
  language = "LA", doi = "DO", pmid = "PM", url = "UR", database_id = "ID", accession_number = "AN",
  notes = "N1", keywords = "KW", abstract = "AB")

# Columns that are text whatever they look like (a volume "5" or an id "9431078" stays text), so
# that a CSV written by write_refs() reads back with the types a RIS file gives; also the fields
# of tagged formats kept under their tag (U1, PMID's neighbours such as JID, DA_medline).
ris_text_columns <- function() {
  c(ris_core_columns[ris_core_columns != "year"], ris_more_columns, "merged_ids", "repeated_tags",
    "tabscreen_decision", "tabscreen_note")
}
tag_column_pattern <- "^[A-Z][A-Z0-9]{1,3}(_[a-z]+)?$"

# The keyword and note prefixes of the screening results and of the records a deduplication
# merged, which write_refs() adds and read_refs() takes out (golib/refs/ris.go).
tabscreen_prefix <- "tabscreen: "
merged_prefix <- "tabscreen merged: "

# The formats of read_refs(), as `format` names them.
ref_formats <- c("auto", "ris", "medline", "wos", "bibtex", "csv")

#' Read references from the files databases and reference managers export
#'
#' Reads the references exported by bibliographic databases and reference managers (PubMed,
#' Embase, Scopus, Web of Science, the Cochrane Library, Ovid, EBSCOhost, EndNote, Zotero,
#' Covidence, Rayyan, EPPI-Reviewer, ...) into one tibble with a row per reference, ready for
#' [dedup_refs()] and the screening functions: the titles are in `title` and the abstracts in
#' `abstract`, e.g. `tabscreen_a.tools(refs, prompt, title = title, abstract = abstract)`. Several
#' files, of any formats, are read into one table.
#'
#' @section Formats:
#' The format of each file is found from its content, not its name (a PubMed export named `.ris`
#' is read as PubMed's): the first line that only one format has decides.
#'
#' * **RIS** (`.ris`, `.txt`): records from a `TY` line to an `ER` line.
#' * **PubMed MEDLINE** (`.nbib`, `.txt`; PubMed's "Save, format PubMed"): records opened by
#'   `PMID- `.
#' * **Web of Science tagged** (`.ciw`, `.txt`; "Plain text file" or "Other file formats"; also
#'   Zoological Record): starts with `FN Clarivate Analytics Web of Science`, records end with `ER`.
#' * **BibTeX** (`.bib`): `@article{key, title = {...}, ...}` entries.
#' * **CSV**: comma-, semicolon- or tab-separated (Excel saves semicolons in many locales), with a
#'   title column; lines before the header (Embase's search query) are skipped.
#'
#' A file in none of them is an error that lists the formats tried and shows its first line.
#' `format` names the format of files whose content is ambiguous.
#'
#' @section RIS files:
#' A record runs from its `TY` line to its `ER` line; each line in between is a tag of two
#' characters (a capital letter, then a capital letter or a digit), two spaces (or a tab), a
#' hyphen, a space and the value. A line without a tag continues the value of the tag above it
#' (the lines are joined with a space; under `KW` each line is a keyword, as EndNote writes them).
#' Blank lines are ignored, and so are byte-order marks, Windows (CRLF) line ends and what
#' exporters put around the records: record numbers (`1.`), Ovid's "Link to the Ovid Full Text"
#' lines, the Cochrane Library's `Record #3 of 18`, `Provider:` and `Content:` lines. Tags between
#' an `ER` and the next `TY` (Ovid's `NL`) belong to the record above; tags closed by an `ER`
#' without a `TY` are a record without a type. A record whose `TY` has no value is read with
#' `type` `NA`. A value that is one of `na` (by default empty, or the text `NA` that some exports
#' write for a missing field) is missing.
#'
#' The tags become these columns:
#'
#' | Column | Tags | Notes |
#' |---|---|---|
#' | `title` | `TI`, `T1` | the first of them in the record |
#' | `abstract` | `AB`, `N2` | the first of them |
#' | `authors` | `AU`, `A1` | every author, in order, joined by `"; "` |
#' | `year` | `PY`, `Y1`, `DA` | integer: the first four-digit year of `PY`, else of `Y1`, else of `DA` |
#' | `journal` | `JO` | else the value of `JF`, `JA` or `T2`, the first present |
#' | `doi` | `DO` | else a DOI in `L3` or `M3` (EBSCOhost), else a doi.org link in `UR` or `N1` |
#' | `pmid` | `PM` | else `AN` of a record from PubMed (`DP` or `DB` `NLM`), a note `PUBMED 123` (`C3`), a PubMed link |
#' | `keywords` | `KW` | every keyword, joined by `"; "` |
#' | `type` | `TY` | the reference type, e.g. `JOUR`, `CHAP` |
#' | `database_id` | `ID` | the record's id in the database |
#' | `accession_number` | `AN` | |
#' | `editors` | `A2`, `ED` | every one, joined by `"; "` (`A2`, secondary author, is the editor of a book or chapter) |
#' | `date` | `Y1`, `DA` | the full date as written, e.g. `2010/08/01/Aug 2010`; also a `PY` that is not just a year |
#' | `secondary_title`, `journal_full`, `journal_abbrev` | `T2`, `JF`, `JA` | book title or journal name; full and abbreviated journal name |
#' | `volume`, `issue`, `start_page`, `end_page`, `issn` | `VL`, `IS`, `SP`, `EP`, `SN` | text (`SN` is the ISSN or ISBN) |
#' | `publisher`, `place`, `language`, `url`, `notes` | `PB`, `CY`, `LA`, `UR`, `N1` | |
#'
#' These columns are always there, in this order (`NA` where a record does not have the field),
#' so that the tables of different exports have the same shape. Any other tag keeps its name as
#' column name (e.g. `U1`, which EPPI-Reviewer uses for its record id, or `DB`), after the named
#' columns, when a record has it.
#'
#' A tag of a single-valued column that a record repeats (a second `T1`, the electronic and the
#' print ISSN in two `SN` lines, `TI` and `T1` both) does not lose its value: the first value is
#' the column's value and every later one is kept in the column `repeated_tags` as a RIS line
#' (`"T1  - Test1"`; several lines are joined by a line break). The column is there only when a
#' record repeats a tag; [write_refs()] writes those lines back as they were.
#'
#' Keywords and notes that start with `"tabscreen: "` are the screening results [write_refs()]
#' adds; they go to the columns `tabscreen_decision` (the decisions, e.g. `"Include"`) and
#' `tabscreen_note` (the notes), not to `keywords` and `notes`. A note that starts with
#' `"tabscreen merged: "` goes to `merged_ids` (see [dedup_refs()]).
#'
#' @section MEDLINE, Web of Science and BibTeX files:
#' Their fields go to the same named columns as RIS tags (the table has all of them), and the
#' fields without a named column keep their tag or field name (`MH`, `OWN`, `PHST`, `WC`, `UT`,
#' `month`, ...; a tag that RIS uses for another field gets the format's name after it, e.g.
#' MEDLINE's `DA` is `DA_medline`). Several values of such a field are joined by `"; "`.
#'
#' * MEDLINE: `PMID` is `pmid`, `TI` `title`, `AB` `abstract`, the full names `FAU` (else `AU`)
#'   `authors`, `DP` `date` (and `year`), `JT` `journal_full` and `journal`, `TA`
#'   `journal_abbrev`, `VI`, `IP`, `IS` `volume`, `issue`, `issn`, `PG` the pages, the `LID` or
#'   `AID` marked `[doi]` `doi`, `OT` and `MH` `keywords`; the type is `JOUR` (or `BOOK`, `CHAP`
#'   for PubMed's books).
#' * Web of Science: `TI`, `AB`, `AF` (else `AU`), `PY`, `SO`, `JI`, `DI`, `PM`, `DE` and `ID`
#'   (keywords), `VL`, `IS`, `BP`, `EP`, `SN`, `PU`, `PI`, `LA`, `UT`; `PT J` is `JOUR`.
#' * BibTeX: the key is `database_id`; `author` and `editor` are split at "and"; LaTeX accents
#'   (`{\"o}`) become letters and case-protecting braces go; the entry type gives `type`
#'   (`article` is `JOUR`).
#'
#' @section CSV files:
#' Read as UTF-8 (a byte-order mark is ignored), with every column kept. The columns of the
#' major exports get the named columns' names: `Title`, `Article Title`, `Document Title` become
#' `title`; `Abstract`, `Abstract Note` `abstract`; `Authors`, `Author`, `Author Names`,
#' `Author(s)`, `Author/s` `authors`; `Year`, `Publication Year`, `Published Year` `year`;
#' `Source title`, `Journal`, `Journal Title`, `Publication Title`, `Journal/Book`, `Source`
#' `journal`; `DOI` `doi`; `PMID`, `PubMed ID`, `Medline PMID` `pmid`; `Keywords`,
#' `Author Keywords` `keywords`; `TY`, `Type of Reference` `type`; `Volume`, `Issue`, `Number`,
#' `Start Page`, `Page start`, `First Page`, `Pages`, `End Page`, `ISSN`, `Publisher`, `Language`,
#' `URL`, `Link`, `Notes`, RIS tags (`TI`, `AU`, ...) and Web of Science's (its tab-delimited
#' export: `SO`, `DI`, `PM`, `UT`, `BP`, ...) likewise (any case; the first of a
#' column's names that a file has wins, the others keep their names). A file without a title
#' column is an error; one without an abstract column gets an `abstract` column of `NA`. The
#' named columns and the columns with a quoted value stay text (write_refs() quotes text) and
#' `year` becomes integer (a year written as a date, e.g. `2014//`, is also kept in `date`, as a
#' RIS `PY` is), so that a CSV written by [write_refs()] reads back as the original did; other
#' columns get their natural type (numbers, logicals), except columns with no value at all, which
#' stay text.
#'
#' @section The source column:
#' The last column (`source_file`, or the name given in `source_col`) holds the name of the file
#' each record comes from (its base name), so that the records of several files can be told
#' apart, e.g. included and excluded references exported separately.
#' A CSV file that already has that column (one written by [write_refs()]) keeps its values.
#' `source_col = NULL` adds no column.
#'
#' @section Errors:
#' Errors have the class `tabscreen_error_refs` (and `tabscreen_error`). A file that does not
#' exist or cannot be read is an error of class `tabscreen_error_refs_files`; a bad `format`,
#' `source_col`, `na` or `encoding` one of class `tabscreen_error_refs_<argument>`; these are
#' also of class `tabscreen_error_arg`. A file that cannot be read is an error of class
#' `tabscreen_error_refs_parse`, whose message and fields `file` and `line` say where (lines are
#' numbered as `wc -l` and editors count them: a carriage return alone does not end a line): a
#' record without its `ER` line at the end of the file or before the next `TY` line (a truncated
#' export), tags outside any record, NUL bytes (a binary file), a CSV quote that is never closed.
#' A file in none of the formats is also of class `tabscreen_error_refs_unknown`. Text that is not
#' valid in `encoding` (an export in another encoding, typically Windows-1252, read as UTF-8) is
#' an error of class `tabscreen_error_encoding` too, as in the screening functions: its message
#' gives the number of lines affected, the first of them, and the `encoding` to give
#' (`"windows-1252"` when the text reads as such). Nothing is converted by guess. A CSV without a
#' title column is an error of class `tabscreen_error_refs_columns`.
#'
#' @param files Paths of one or more exported files.
#' @param format `"auto"` (the default): each file's format is found from its content. Or one of
#'   `"ris"`, `"medline"`, `"wos"`, `"bibtex"`, `"csv"`: one for all files or one per file.
#' @param source_col The name of the column naming each record's file, or `NULL` for none.
#' @param na The values that mean missing (after white space is trimmed).
#' @param encoding The files' encoding. Exports are UTF-8 nearly always; for an older export in
#'   another encoding give it, e.g. `"latin1"` or `"windows-1252"`. Files that start with a UTF-16
#'   byte-order mark are read as UTF-16 whatever this says.
#' @return A tibble with one row per reference: `title` and `abstract` first, then the other
#'   fields (for the tagged formats: `authors`, `year`, `journal`, `doi`, `pmid`, `keywords`,
#'   `type`, `database_id`, ..., see above), then the source column. All columns are text except
#'   `year` (integer) and, in CSV files, columns of numbers or logicals.
#' @seealso [dedup_refs()] to remove the duplicates of several exports, [write_refs()] to write
#'   references and screening results.
#' @export
#' @examples
#' # The references a review included and excluded, exported from EPPI-Reviewer.
#' files <- system.file("extdata", c("fft_include.ris", "fft_exclude.ris"), package = "tabscreen")
#' refs <- read_refs(files)
#' refs
#' table(refs$source_file)
#' sum(is.na(refs$abstract))
#'
#' # A PsycInfo export: a second title and a second ISSN are kept in `repeated_tags`.
#' psy <- read_refs(system.file("extdata", "psycinfo_sample.ris", package = "tabscreen"))
#' psy[1, c("title", "year", "date", "journal", "journal_abbrev", "issn")]
#' cat(psy$repeated_tags[1])
#'
#' # CSV files: a database's column names become the named columns.
#' csv <- tempfile(fileext = ".csv")
#' write.csv(data.frame(Title = refs$title[1:3], Abstract = refs$abstract[1:3],
#'   Authors = refs$authors[1:3], "Publication Year" = refs$year[1:3], check.names = FALSE),
#'   csv, row.names = FALSE)
#' read_refs(csv)
#'
#' # PubMed's format, whatever the file's name.
#' nbib <- tempfile(fileext = ".txt")
#' writeLines(c("PMID- 12345678", "TI  - A trial of family therapy.", "FAU - Doe, Jane",
#'   "DP  - 2020 Mar", "LID - 10.1000/xyz.1 [doi]", ""), nbib)
#' read_refs(nbib)[, c("title", "authors", "year", "doi", "pmid")]
read_refs <- function(files, format = c("auto", "ris", "medline", "wos", "bibtex", "csv"), source_col = "source_file",
                      na = c("", "NA"), encoding = "UTF-8") {
  call <- rlang::current_env()
  check_ref_files(files, call)
  format <- check_read_format(format, length(files), call)
  if (!is.null(source_col) && (!rlang::is_string(source_col) || !nzchar(source_col))) {
    abort_refs_arg("{.arg source_col} must be a column name (a single string) or {.code NULL}.", "source_col", call)
  }
  if (!is.character(na) || anyNA(na)) {
    abort_refs_arg("{.arg na} must be a character vector of the values that mean missing, e.g. {.code c(\"\", \"NA\")}.", "na", call)
  }
  known <- rlang::is_string(encoding) && nzchar(encoding) &&
    !is.na(tryCatch(iconv("a", encoding, "UTF-8"), error = function(e) NA_character_))
  if (!known) {
    abort_refs_arg(c("{.arg encoding} must name an encoding, e.g. {.val UTF-8} or {.val latin1}.",
      "i" = "{.code iconvlist()} lists the encodings this system knows."), "encoding", call)
  }
  tables <- lapply(seq_along(files), function(i) {
    read_ref_file(files[[i]], format[[i]], source_col, na, encoding, call)
  })
  bind_refs(tables, source_col)
}

read_ref_file <- function(file, format, source_col, na, encoding, call) {
  name <- basename(file)
  path <- utf8_ref_file(file, name, encoding, call)
  if (!identical(path, file)) on.exit(unlink(path), add = TRUE)
  opened <- refs_call(list(op = "open", path = enc2utf8(normalizePath(path)), read = list(format = format, na = as.list(na))),
    call = call, file = name)$meta
  # Go parses the file while R takes its table in chunks; an error or an interrupt stops it.
  done <- FALSE
  on.exit(if (!done) refs_call(list(op = "close", handle = opened$handle)), add = TRUE)
  chunks <- list()
  repeat {
    out <- refs_call(list(op = "next", handle = opened$handle), call = call, file = name)
    if (isTRUE(out$meta$done)) break
    chunks[[length(chunks) + 1L]] <- out$table
  }
  done <- TRUE
  tbl <- bind_chunks(chunks)
  if (identical(opened$format, "csv")) {
    tbl <- csv_column_types(tbl, unlist(out$meta$text_columns), source_col)
  }
  if (!is.null(source_col) && !source_col %in% names(tbl)) {
    tbl[[source_col]] <- rep(name, nrow(tbl))
  }
  tbl
}

# The chunks of one file's table (as the C reader returns them) -> its tibble: a column a chunk
# lacks (no record of the chunk had the field) is missing there.
bind_chunks <- function(chunks) {
  n <- vapply(chunks, function(ch) as.integer(ch[[2]]), integer(1))
  if (length(chunks) == 1) {
    return(refs_tibble(chunks[[1]][[1]], n))
  }
  columns <- unique(unlist(lapply(chunks, function(ch) names(ch[[1]]))))
  cols <- lapply(columns, function(name) {
    parts <- lapply(seq_along(chunks), function(i) chunks[[i]][[1]][[name]] %||% rep(if (name == "year") NA_integer_ else NA_character_, n[i]))
    unlist(parts, use.names = FALSE)
  })
  names(cols) <- columns
  refs_tibble(cols, sum(n))
}

# A tibble of columns that are known to be plain vectors of n values, made without
# tibble::new_tibble()'s checks: their first run in a session (loading what they use) costs a
# fifth of a second, a third of the time the reading of 50,000 records takes.
refs_tibble <- function(cols, n) {
  structure(cols, class = c("tbl_df", "tbl", "data.frame"), row.names = .set_row_names(as.integer(n)))
}

# A call of the Go core's reference functions (TsRefs): list(meta, table), the table as the C
# reader returns it, list(columns, nrow, error) (a tibble per chunk of a file would cost more
# than the file's parsing).
refs_call <- function(request, table = raw(), call = rlang::caller_env(), file = NULL) {
  out <- go_call(C_refs, as.character(to_json(request)), table, simplify = FALSE, decode = FALSE,
                 on_error = function(err) abort_refs_read(err, file, call), call = call)
  list(meta = out$meta, table = out$table)
}

check_ref_files <- function(files, call) {
  if (!is.character(files) || length(files) == 0 || anyNA(files) || any(!nzchar(files))) {
    abort_refs_arg(c("{.arg files} must hold the paths of one or more exported files (RIS, MEDLINE, Web of Science, BibTeX, CSV).",
      "i" = "E.g. {.code read_refs(\"export.ris\")} or {.code read_refs(c(\"pubmed.nbib\", \"embase.ris\"))}."),
      "files", call)
  }
  missing <- files[!file.exists(files)]
  if (length(missing) > 0) {
    abort_refs_arg(c("{cli::qty(length(missing))}{?The file/These files} of {.arg files} {?does/do} not exist: {.file {missing}}.",
      "i" = "The working directory is {.file {getwd()}}."), "files", call)
  }
  dirs <- files[dir.exists(files)]
  if (length(dirs) > 0) {
    abort_refs_arg(c("{.arg files} must name files, not folders: {.file {dirs}}.",
      "i" = "E.g. {.code read_refs(list.files(\"{dirs[1]}\", pattern = \"[.]ris$\", full.names = TRUE))}."),
      "files", call)
  }
  unreadable <- files[file.access(files, 4) != 0]
  if (length(unreadable) > 0) {
    abort_refs_arg("{cli::qty(length(unreadable))}{?This file/These files} of {.arg files} cannot be read (permission denied): {.file {unreadable}}.",
      "files", call)
  }
  invisible(files)
}

check_read_format <- function(format, n, call) {
  if (identical(format, ref_formats)) {
    return(rep("auto", n))
  }
  if (!is.character(format) || anyNA(format) || !all(tolower(format) %in% ref_formats) || !length(format) %in% c(1, n)) {
    abort_refs_arg(c("{.arg format} must be {.or {.val {ref_formats}}}: one for all files or one per file.",
      if (is.character(format) && length(format) %in% c(1, n)) c("x" = "{.val {setdiff(format, ref_formats)}} {?is/are} not one of them.")),
      "format", call)
  }
  rep_len(tolower(format), n)
}

abort_refs_arg <- function(message, arg, call, .envir = parent.frame()) {
  abort_arg(message, class = c(paste0("tabscreen_error_refs_", arg), "tabscreen_error_refs"), arg = arg,
    call = call, .envir = .envir)
}

# A malformed file: names the file and the line.
abort_refs_parse <- function(message, file, line, call, class = NULL, .envir = parent.frame()) {
  # The file and line are interpolated from an environment of their own, so that names of the
  # caller (or of attached packages: stats::line) cannot stand in for them.
  env <- new.env(parent = .envir)
  env$.refs_file <- file
  env$.refs_line <- line
  where <- if (is.null(line)) "{.file {(.refs_file)}}: " else "{.file {(.refs_file)}}, line {(.refs_line)}: "
  message[1] <- paste0(where, message[1])
  tabscreen_abort(message, class = c(class, "tabscreen_error_refs_parse", "tabscreen_error_refs"),
    file = file, line = line, call = call, .envir = env)
}

# The lines of a file's bytes as UTF-8 text. Refuses what no export contains: NUL bytes (a binary
# file, or UTF-16 without its byte-order mark) and bytes that are not valid in the encoding.

# The error of a file the Go core could not read, in R's words: `err` is its error document
# (golib/refs.Error in `refs`).
abort_refs_read <- function(err, file, call) {
  e <- err$refs
  if (is.null(e)) {
    if (identical(err$class, "tabscreen_error_refs_files")) {
      abort_refs_arg(c("{.file {file}} cannot be read.", "x" = "{err$message}"), "files", call)
    }
    rlang::abort(err$message, class = c(err$class, "tabscreen_error_refs", "tabscreen_error"), call = call)
  }
  line <- if (is.null(e$line) || e$line == 0) NULL else e$line
  switch(e$class,
    tabscreen_error_encoding = abort_refs_encoding(e$n_bad, unlist(e$bad_lines), e$suggest, file, "UTF-8", call),
    tabscreen_error_refs_columns = tabscreen_abort(
      c("{.file {file}} has no title column: no column is named {.or {.val {c('title', 'TI', 'Article Title', 'Document Title')}}} (any case).",
        "i" = "Its columns are {.val {unlist(e$columns)}}; rename the title column {.field title}."),
      class = c("tabscreen_error_refs_columns", "tabscreen_error_refs"), file = file, call = call),
    tabscreen_error_refs_unknown = abort_refs_parse(
      c("{e$message}.",
        "x" = "Formats tried: {paste(unlist(e$tried), collapse = ', ')}.",
        "i" = "Its first line: {.val {e$first_line}}.",
        "i" = "Export the references in one of these formats, or name the format with {.arg format}."),
      file, NULL, call, class = "tabscreen_error_refs_unknown"),
    abort_refs_parse(c("{e$message}.", "i" = if (!is.null(e$hint)) "{e$hint}"), file, line, call)
  )
}

# A file in another encoding than UTF-8 (named, or UTF-16 by its byte-order mark) is converted to
# a temporary UTF-8 file for the Go reader, line by line so that lines keep their numbers; a UTF-8
# file is read as it is.
utf8_ref_file <- function(file, name, encoding, call) {
  con <- file(file, "rb")
  start <- readBin(con, "raw", 2)
  close(con)
  utf16 <- if (identical(start, as.raw(c(0xff, 0xfe)))) {
    "UTF-16LE"
  } else if (identical(start, as.raw(c(0xfe, 0xff)))) {
    "UTF-16BE"
  }
  if (is.null(utf16) && toupper(encoding) %in% c("UTF-8", "UTF8")) {
    return(file)
  }
  bytes <- readBin(file, "raw", n = file.size(file))
  if (!is.null(utf16)) {
    text <- tryCatch(iconv(list(bytes[-(1:2)]), utf16, "UTF-8"), error = function(e) NA_character_)
    if (is.na(text)) {
      abort_refs_parse("the file starts like {utf16} text but is not valid {utf16}.", name, NULL, call)
    }
  } else {
    nul <- which(bytes == as.raw(0))
    if (length(nul) > 0) {
      abort_refs_parse(c("the file holds NUL bytes: it is not a text export (a binary file?).",
        "i" = "Export the references as text (RIS, MEDLINE, CSV)."),
        name, sum(bytes[seq_len(nul[1])] == as.raw(10)) + 1, call)
    }
    lines <- strsplit(rawToChar(bytes), "\n", fixed = TRUE, useBytes = TRUE)[[1]]
    converted <- iconv(lines, encoding, "UTF-8")
    bad <- which(is.na(converted))
    if (length(bad) > 0) {
      abort_refs_encoding(length(bad), head(bad, 5), suggested_encoding(lines[bad]), name, encoding, call)
    }
    text <- paste0(converted, collapse = "\n")
  }
  path <- tempfile(fileext = ".txt")
  writeBin(charToRaw(enc2utf8(text)), path)
  path
}

# Lines of a file are not valid in its encoding: says how many, which, and which encoding to give
# (as for text in a data frame, R/text.R).
abort_refs_encoding <- function(n_bad, first_bad, suggest, file, encoding, call) {
  fix <- sprintf("read_refs(\"%s\", encoding = \"%s\")", file, suggest)
  abort_refs_parse(
    c("the text is not valid {encoding} in {n_bad} line{?s}: {first_bad}{if (n_bad > length(first_bad)) ', ...' else ''}.",
      "i" = "This is what an export in another encoding gives (or a file that is not text).",
      "i" = if (suggest == "windows-1252") {
        "The text reads as Windows-1252: give that encoding, {.code {fix}}."
      } else {
        "Give the file's encoding, e.g. {.code {fix}}."
      }),
    file, first_bad[1], call, class = "tabscreen_error_encoding"
  )
}

# A CSV table's columns (text from Go) get their types: `year` integer (a date in it also goes
# to `date`);
# the named columns, the columns with a quoted value and tag-named columns stay text; others get
# their natural type, except columns with no value at all, which stay text.
csv_column_types <- function(tbl, text_columns, source_col) {
  text <- c(ris_text_columns(), source_col, text_columns)
  for (name in setdiff(names(tbl), c("title", "abstract"))) {
    x <- tbl[[name]]
    if (name == "year") {
      if (!all(is.na(x) | grepl("^-?[0-9]+$", x))) {
        # A year written as a date ("2014//", "2019 Mar"): the year, and the text as the date,
        # as a RIS file's PY gives them.
        date <- if ("date" %in% names(tbl)) tbl[["date"]] else rep(NA_character_, length(x))
        tbl$date <- ifelse(is.na(date) & !grepl("^-?[0-9]+$", x), x, date)
        x <- four_digit_year(x)
      }
      tbl[[name]] <- as.integer(x)
    } else if (!name %in% text && !grepl(tag_column_pattern, name) && !all(is.na(x))) {
      tbl[[name]] <- utils::type.convert(x, as.is = TRUE, na.strings = character())
    }
  }
  tbl
}


# Values joined per record (NA for records without any), in line order.
collapse_by <- function(rec, value, sep, n_records) {
  out <- rep(NA_character_, n_records)
  if (length(rec) > 0) {
    joined <- vapply(split(value, rec), paste, character(1), collapse = sep)
    out[as.integer(names(joined))] <- joined
  }
  out
}

# The tables of several files -> one: columns in the order of ris_core/more_columns, then others
# by first appearance, the screening results and the source column last; a column whose type
# differs between files becomes text.
bind_refs <- function(tables, source_col) {
  if (length(tables) == 1) {
    tbl <- tables[[1]]
    return(tbl[ref_column_order(names(tbl), source_col)])
  }
  columns <- ref_column_order(unique(unlist(lapply(tables, names))), source_col)
  n <- vapply(tables, nrow, integer(1))
  cols <- lapply(columns, function(name) {
    parts <- lapply(seq_along(tables), function(i) tables[[i]][[name]])
    present <- !vapply(parts, is.null, logical(1))
    types <- unique(vapply(parts[present], function(x) class(x)[1], character(1)))
    if (length(types) > 1) {
      numbers <- all(types %in% c("integer", "numeric"))
      parts[present] <- lapply(parts[present], if (numbers) as.numeric else as.character)
    }
    template <- parts[present][[1]][0]
    parts[!present] <- lapply(n[!present], function(k) rep(template[NA_integer_], k))
    do.call(c, unname(parts))
  })
  names(cols) <- columns
  refs_tibble(cols, sum(n))
}

ref_column_order <- function(names, source_col) {
  known <- c(ris_core_columns, ris_more_columns)
  last <- c("repeated_tags", "tabscreen_decision", "tabscreen_note", source_col)
  front <- c("title", "abstract", known[known %in% names])
  unique(c(front, setdiff(names, c(front, last)), intersect(last, names)))
}

#' Write references and screening results to RIS or CSV
#'
#' Writes references, or the references of a screening with their decisions, to a RIS file that
#' reference managers and screening tools import (Zotero, EndNote, EPPI-Reviewer, Rayyan, ...) or
#' to a CSV file. [read_refs()] reads both back: a table written and read again has the same
#' fields, with the decisions in the columns `tabscreen_decision` and `tabscreen_note`.
#'
#' @section What is written:
#' `x` is either a data frame of references (e.g. from [read_refs()]) or a screening result (an
#' object of class `llm` from [tabscreen_a.tools()], [tabscreen_b()] or [tabscreen_c()]). Of a
#' result, each reference is written once, in the order of the screened data, with its title,
#' abstract and your other columns as the screening carried them (the study id under the name of
#' its column, when you named one), plus its decisions: those of `answer_data_aggregated` when the
#' result has it (`reps > 1`: the final decision and `incl_p`), else those of `answer_data`
#' (`decision_binary` 1 is `Include`, 0 `Exclude`; a request that failed, in `error_data`, is
#' `Check`, to be screened by hand).
#'
#' RIS: one record per reference, `TY` first (the `type` column; else `JOUR` for a reference with
#' a journal, `GEN` otherwise), then the fields of [read_refs()]'s columns with their tags (`TI`,
#' `AU` once per author, `A2` per editor, `PY`, `DA`, `T2`, `JO`, `JF`, `JA`, `VL`, `IS`, `SP`,
#' `EP`, `SN`, `PB`, `CY`, `LA`, `DO`, `PM` (the PubMed id, as Web of Science tags it), `UR`, `ID`,
#' `AN`, `N1`, `KW` once per keyword, `AB`), the columns named as RIS tags (e.g. `U1`), the lines
#' of `repeated_tags`, the ids of the records a deduplication merged (a note
#' `tabscreen merged: ...`, see [dedup_refs()]), the screening results and `ER`. A table from
#' elsewhere, e.g. a database's CSV read with `read.csv()`, is written with the fields its
#' columns hold: the column names [read_refs()] maps (`Authors`, `Publication Year`, `DOI`,
#' `Source title`, `TY`, ...; see its section on CSV files) are written as those fields. The
#' columns of several values (`authors`, `editors`, `keywords`) are split at `"; "` (as
#' [read_refs()] joins them; an author or keyword that itself holds `"; "` would become two).
#' Line breaks inside a value become spaces, since a RIS value is one line. `JO` is left out when
#' `journal` is the value of `JF`, `JA` or `T2` (read back, it is taken from them). Other columns
#' (e.g. `human_code`, `source_file`, a MEDLINE export's `PHST`) are not RIS fields and are not
#' written: write a CSV to keep them. The file is UTF-8 with CRLF line ends, as the RIS
#' specification asks, and a blank line after each record.
#'
#' CSV: UTF-8, one row per reference with every column of the references and the columns
#' `tabscreen_decision` and `tabscreen_note`; text is quoted, missing values are empty fields.
#'
#' @section The screening results in RIS:
#' Each reference gets, for every prompt and model (and `top_p`) of the result:
#' * a keyword `tabscreen: Include` (or `tabscreen: Exclude`, `tabscreen: Check`). With several
#'   prompts, models or `top_p` values, each keyword names its combination, e.g.
#'   `tabscreen: Include (prompt 2, gpt-6-luna)`.
#' * a note with the details, e.g.
#'   ```
#'   N1  - tabscreen: Include; incl_p = 0.8 (10 reps, 0 missing); prompt 1; model gpt-6-luna (gpt-6-luna-2026-03-01); top_p 1; run 2026-05-01 10:00:00
#'   ```
#'   With `reps = 1` it gives the raw decision (`decision_llm = 1.1`) in place of `incl_p`, and
#'   for a failed request `no answer (the request failed)`. The submodel is named when it
#'   differs from the model, `top_p` where the provider has it.
#'   For an ensemble ([screen_ensemble()]) the note ends with each member's verdict
#'   (`members a: Include (0.67); b: Exclude (0.00)`) before the run date.
#'
#' Keywords and notes are the two fields that every tool imports and keeps: Zotero turns
#' keywords into tags (filter the library by the tag `tabscreen: Include`) and notes into child
#' notes; EndNote imports them as Keywords and Notes (search or make a smart group on the
#' keyword); EPPI-Reviewer keeps both. The label (`LB`) and custom fields (`C1` to `C8`) are
#' left alone: only EndNote maps them, and reviewers often use them for their own codes, which
#' a second tag would overwrite or duplicate on import.
#'
#' In the CSV file the same decisions and notes are the columns `tabscreen_decision` (several
#' combinations joined by `"; "`) and `tabscreen_note` (one line per combination). A screening
#' result's own earlier `tabscreen_decision` and `tabscreen_note` columns (the data came from a
#' file written here) are replaced by the new results.
#'
#' @section Errors:
#' Errors have the classes `tabscreen_error_refs`, `tabscreen_error_arg` and
#' `tabscreen_error_refs_<argument>`: `tabscreen_error_refs_x` for an `x` that is neither a data
#' frame nor a result or that has no title column, `tabscreen_error_refs_format` for a format
#' other than `"ris"` or `"csv"`, `tabscreen_error_refs_file` for a path that cannot be written
#' (a missing folder, no permission), `tabscreen_error_refs_dots` for arguments in `...`.
#' Nothing is written when there is an error.
#'
#' @param x A data frame of references with a title column (`title`, or a name [read_refs()]
#'   recognises, e.g. `Title`, `TI`), or a screening result of class `llm`.
#' @param file The path of the file to write (replaced if it exists).
#' @param format `"ris"` or `"csv"`. By default `"csv"` when `file` ends in `.csv`, else `"ris"`.
#' @param ... Not used; must be empty.
#' @return The table written, invisibly: the references (for a screening result, with the
#'   columns `tabscreen_decision` and `tabscreen_note`).
#' @seealso [read_refs()].
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' refs <- read_refs(system.file("extdata", "fft_include.ris", package = "tabscreen"))
#'
#' # Screen a few references (here with a local stand-in for the provider) ...
#' res <- tabscreen_a.tools(
#'   refs[1:4, ], prompt = "Is this study about functional family therapy?",
#'   title = title, abstract = abstract, api_url = fake$url, api_key = "not-a-real-key", reps = 2,
#'   progress = FALSE, messages = FALSE
#' )
#'
#' # ... and write them with their decisions for a reference manager.
#' ris <- tempfile(fileext = ".ris")
#' write_refs(res, ris)
#' writeLines(strtrim(readLines(ris, n = 16), 90))
#' read_refs(ris)[, c("title", "tabscreen_decision")]
#'
#' # The same as CSV, e.g. for a spreadsheet.
#' csv <- tempfile(fileext = ".csv")
#' write_refs(res, csv)
#' read_refs(csv)[, c("title", "tabscreen_decision", "tabscreen_note")]
#'
#' # References without screening results.
#' write_refs(refs, tempfile(fileext = ".ris"))
#' fake$stop()
#' options(old)
write_refs <- function(x, file, format = c("ris", "csv"), ...) {
  call <- rlang::current_env()
  if (...length() > 0) {
    abort_refs_arg(c("{.arg ...} must be empty.",
      "i" = "Did you misspell an argument? {.fn write_refs} takes {.arg x}, {.arg file} and {.arg format}."),
      "dots", call)
  }
  if (missing(file) || !rlang::is_string(file) || !nzchar(file)) {
    abort_refs_arg("{.arg file} must be the path of the file to write (a single string).", "file", call)
  }
  if (missing(format)) {
    format <- if (grepl("[.]csv$", file, ignore.case = TRUE)) "csv" else "ris"
  } else if (!rlang::is_string(format) || !tolower(format) %in% c("ris", "csv")) {
    shown <- if (rlang::is_string(format)) format else rlang::expr_deparse(format)[1]
    abort_refs_arg("{.arg format} must be {.val ris} or {.val csv}, not {.val {shown}}.", "format", call)
  }
  format <- tolower(format)
  refs <- refs_to_write(x, call)
  text <- if (format == "ris") ris_text(refs) else csv_text(refs)
  write_ref_bytes(text, file, call)
  invisible(refs)
}

# x -> the table to write: the references with their decision columns.
refs_to_write <- function(x, call) {
  if (inherits(x, "llm")) {
    return(llm_references(x, call))
  }
  if (!is.data.frame(x)) {
    abort_refs_arg(c("{.arg x} must be a data frame of references or a screening result of class {.cls llm}, not {.obj_type_friendly {x}}."),
      "x", call)
  }
  refs <- tibble::as_tibble(as.list(x), .name_repair = "minimal")
  mapped <- ref_column_names(names(refs))
  title <- which(mapped == "title")[1]
  if (is.na(title)) {
    abort_refs_arg(c("{.arg x} has no title column: no column is named {.or {.val {c('title', 'TI', 'Article Title', 'Document Title')}}} (any case).",
      "i" = "Its columns are {.val {names(refs)}}; rename the title column {.field title}."), "x", call)
  }
  names(refs)[title] <- "title"
  abstract <- which(mapped == "abstract")[1]
  if (!is.na(abstract)) names(refs)[abstract] <- "abstract"
  refs
}

# The names read_refs() gives columns of these names (golib/refs.ColumnNames): the column names
# of the major exports become the named columns ("Authors" authors, "Publication Year" year).
ref_column_names <- function(names) {
  if (length(names) == 0) {
    return(character())
  }
  unlist(refs_call(list(op = "columns", names = as.list(enc2utf8(names))))$meta$names)
}

# The references of a screening result, one row each in the order of the screened data, with
# their decisions of every prompt x model (x top_p) as keyword and note texts.
llm_references <- function(x, call) {
  rows <- x$answer_data_aggregated
  aggregated <- !is.null(rows)
  if (!aggregated) {
    rows <- rbind_rows(x$answer_data, x$error_data)
  }
  if (is.null(rows) || !is.data.frame(rows) || !all(c("studyid", "title") %in% names(rows))) {
    abort_refs_arg("{.arg x} is a screening result without answers: it has no references to write.", "x", call)
  }
  ids <- attr(x, "record_ids") %||% unique(rows$studyid)
  ids <- ids[ids %in% rows$studyid]
  first <- match(ids, rows$studyid)
  screening_cols <- c(setdiff(result_column_names(), c("title", "abstract")), "tabscreen_decision", "tabscreen_note",
    "member_decisions")
  keep <- setdiff(names(rows), screening_cols)
  refs <- tibble::as_tibble(as.list(rows[first, , drop = FALSE])[keep])
  front <- c("title", intersect("abstract", keep))
  id_col <- attr(x, "arg_list")$studyid
  if (!is.null(id_col)) {
    refs[[id_col]] <- ids
    front <- c(front, id_col)
  }
  refs <- refs[c(front, setdiff(names(refs), front))]

  has_top_p <- "top_p" %in% names(rows)
  top_p <- if (has_top_p) rows$top_p else rep(NA_real_, nrow(rows))
  combo <- paste(rows$promptid, rows$model, top_p, sep = "\r")
  several <- length(unique(combo)) > 1
  if (aggregated) {
    decision <- rows$final_decision_llm
    decision[is.na(decision)] <- "Check"
    detail <- paste0("incl_p = ", ifelse(is.na(rows$incl_p), "NA", format_number(rows$incl_p)),
      " (", rows$reps, " reps, ", rows$n_mis_answers, " missing)")
  } else {
    binary <- rows$decision_binary
    decision <- ifelse(is.na(binary), "Check", ifelse(binary == 1, "Include", "Exclude"))
    detail <- ifelse(is.na(binary), "no answer (the request failed)", paste0("decision_llm = ", rows$decision_llm))
  }
  label <- if (several) {
    paste0(" (prompt ", rows$promptid, ", ", rows$model,
      if (has_top_p && length(unique(top_p)) > 1) paste0(", top_p ", format_number(top_p)) else "", ")")
  } else {
    ""
  }
  submodel <- rows$submodel
  model <- ifelse(is.na(submodel) | !nzchar(submodel) | submodel == rows$model, rows$model,
    paste0(rows$model, " (", submodel, ")"))
  note <- paste0(tabscreen_prefix, decision, label, "; ", detail, "; prompt ", rows$promptid, "; model ", model,
    if (has_top_p) paste0("; top_p ", format_number(top_p)) else "",
    if (!is.null(rows[["member_decisions"]])) paste0("; members ", rows[["member_decisions"]]) else "",
    if (!is.null(x$run_date)) paste0("; run ", x$run_date) else "")
  record <- match(rows$studyid, ids)
  ok <- !is.na(record)
  refs$tabscreen_decision <- collapse_by(record[ok], paste0(decision, label)[ok], "; ", length(ids))
  refs$tabscreen_note <- collapse_by(record[ok], note[ok], "\n", length(ids))
  refs
}

format_number <- function(x) {
  out <- as.character(round(x, 4))
  out[is.na(x)] <- "NA"
  out
}

# Values of any column as text for writing: NA stays NA.
as_text <- function(x) {
  if (is.list(x)) {
    out <- vapply(x, function(v) if (length(v) == 0 || all(is.na(v))) NA_character_ else paste(as_text(v), collapse = "; "), character(1))
    return(out)
  }
  out <- if (is.double(x)) formatC(x, digits = 15, format = "fg") else as.character(x)
  out[is.na(x)] <- NA_character_
  out
}

ris_eol <- "\r\n"

# The table -> the text of a RIS file.
ris_text <- function(refs) {
  n <- nrow(refs)
  if (n == 0) {
    return("")
  }
  # A table from elsewhere (a database's CSV read with read.csv()) has its fields under the
  # export's names: `Authors`, `Year`, `DOI`, `TY` are written as the fields they are.
  names(refs) <- ref_column_names(names(refs))
  col <- function(name) if (name %in% names(refs)) one_line(as_text(refs[[name]])) else rep(NA_character_, n)
  chunks <- list()
  derived <- rep(NA_character_, n)
  for (other in c("journal_full", "journal_abbrev", "secondary_title")) {
    fill <- is.na(derived)
    derived[fill] <- col(other)[fill]
  }
  for (name in names(ris_write_tags)) {
    values <- col(name)
    if (name == "journal") {
      values[!is.na(values) & !is.na(derived) & values == derived] <- NA_character_
    }
    chunks[[name]] <- ris_lines(ris_write_tags[[name]], values, split = name %in% ris_multi_columns)
  }
  tag_cols <- setdiff(grep("^[A-Z][A-Z0-9]$", names(refs), value = TRUE), c("TY", "ER"))
  for (name in tag_cols) {
    chunks[[name]] <- ris_lines(name, col(name), split = name %in% c("AU", "A1", "A2", "ED", "KW"))
  }
  if ("repeated_tags" %in% names(refs)) {
    lines <- strsplit(as_text(refs$repeated_tags), "\r?\n")
    chunks$repeated_tags <- vapply(lines, function(l) {
      text_lines("", l[!is.na(l) & grepl("^[A-Z][A-Z0-9]  -( |$)", l)])
    }, character(1))
  }
  if ("merged_ids" %in% names(refs)) {
    ids <- col("merged_ids")
    chunks$merged <- ifelse(is.na(ids), "", paste0("N1  - ", merged_prefix, ids, ris_eol))
  }
  if ("tabscreen_decision" %in% names(refs)) {
    values <- strsplit(as_text(refs$tabscreen_decision), "; ", fixed = TRUE)
    chunks$decision <- vapply(values, function(v) {
      v <- trimws(v[!is.na(v)])
      text_lines(paste0("KW  - ", tabscreen_prefix), v[nzchar(v)])
    }, character(1))
  }
  if ("tabscreen_note" %in% names(refs)) {
    values <- strsplit(as_text(refs$tabscreen_note), "\r?\n")
    chunks$note <- vapply(values, function(v) {
      v <- trimws(v[!is.na(v)])
      v <- v[nzchar(v)]
      v <- ifelse(startsWith(v, tabscreen_prefix), v, paste0(tabscreen_prefix, v))
      text_lines("N1  - ", v)
    }, character(1))
  }
  type <- col("type")
  type[is.na(type)] <- ifelse(is.na(col("journal")[is.na(type)]), "GEN", "JOUR")
  body <- do.call(paste0, unname(chunks))
  paste0("TY  - ", type, ris_eol, body, "ER  - ", ris_eol, ris_eol, collapse = "")
}

# One chunk of text per record: "TAG  - value" lines (none for NA), a line per "; "-separated
# value when `split`.
ris_lines <- function(tag, values, split) {
  if (!split) {
    return(ifelse(is.na(values), "", paste0(tag, "  - ", values, ris_eol)))
  }
  vapply(strsplit(values, "; ", fixed = TRUE), function(v) {
    v <- trimws(v[!is.na(v)])
    text_lines(paste0(tag, "  - "), v[nzchar(v)])
  }, character(1))
}

# Lines of `prefix` and each value; "" for no values (paste0() would make one line of a
# zero-length vector).
text_lines <- function(prefix, values) {
  if (length(values) == 0) "" else paste0(prefix, values, ris_eol, collapse = "")
}

# A RIS value is one line: line breaks (and the white space around them) become one space.
one_line <- function(x) {
  x <- gsub("[ \t]*[\r\n]+[ \t]*", " ", x)
  x <- trimws(x)
  x[!is.na(x) & !nzchar(x)] <- NA_character_
  x
}

# The table -> the text of a CSV file: a header, text quoted (quotes doubled), NA empty.
csv_text <- function(refs) {
  field <- function(x) {
    quote <- !is.numeric(x) && !is.logical(x)
    text <- as_text(x)
    out <- if (quote) paste0("\"", gsub("\"", "\"\"", text, fixed = TRUE), "\"") else text
    out[is.na(text)] <- ""
    out
  }
  header <- paste0("\"", gsub("\"", "\"\"", names(refs), fixed = TRUE), "\"", collapse = ",")
  if (nrow(refs) == 0) {
    return(paste0(header, "\n"))
  }
  body <- do.call(paste, c(lapply(unname(as.list(refs)), field), sep = ","))
  paste0(header, "\n", paste0(body, "\n", collapse = ""))
}

write_ref_bytes <- function(text, file, call) {
  if (dir.exists(file)) {
    abort_refs_arg("{.arg file} is a folder: {.file {file}}. Give the path of a file inside it.", "file", call)
  }
  folder <- dirname(file)
  if (!dir.exists(folder)) {
    abort_refs_arg(c("{.arg file} cannot be written: the folder {.file {folder}} does not exist.",
      "i" = "Create it first, e.g. {.code dir.create(\"{folder}\", recursive = TRUE)}."), "file", call)
  }
  con <- tryCatch(file(file, open = "wb"), error = function(e) e, warning = function(w) w)
  if (inherits(con, "condition")) {
    abort_refs_arg(c("{.arg file} cannot be written: {.file {file}}.", "x" = conditionMessage(con)), "file", call)
  }
  on.exit(close(con))
  writeBin(charToRaw(enc2utf8(text)), con)
  invisible(file)
}
