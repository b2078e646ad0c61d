# Reading and writing reference files: RIS exports of reference managers and databases, and CSV.
#
# A RIS record is read into one row whose columns are named fields (title, abstract, authors...).
# The design goal is that read_refs() -> write_refs() -> read_refs() gives back every field
# unchanged, so nothing of an export is dropped silently: tags without a named column keep their
# tag as column name, and repeats of single-valued tags (a second T1, a second ISSN) are kept in
# `repeated_tags` as RIS lines, which write_refs() writes back as they were.

# The RIS tags read_refs() gives a column name. `multi` columns keep every value, joined by "; ";
# for the others the first value is the column's value.
ris_tags <- data.frame(
  tag = c("TY", "TI", "T1", "AB", "N2", "AU", "A1", "A2", "ED", "KW", "Y1", "DA", "JO", "JF", "JA",
    "T2", "DO", "ID", "AN", "UR", "SN", "VL", "IS", "SP", "EP", "N1", "LA", "PB", "CY"),
  column = c("type", "title", "title", "abstract", "abstract", "authors", "authors", "editors",
    "editors", "keywords", "date", "date", "journal", "journal_full", "journal_abbrev",
    "secondary_title", "doi", "database_id", "accession_number", "url", "issn", "volume", "issue",
    "start_page", "end_page", "notes", "language", "publisher", "place"),
  stringsAsFactors = FALSE
)

ris_multi_columns <- c("authors", "editors", "keywords")

# Every RIS table has these columns, in this order (all NA when no record has the field), so that
# tables of different exports have the same shape; tags without a name follow.
ris_core_columns <- c("title", "abstract", "authors", "year", "journal", "doi", "keywords", "type", "database_id")
ris_more_columns <- c("accession_number", "editors", "date", "secondary_title", "journal_full",
  "journal_abbrev", "volume", "issue", "start_page", "end_page", "issn", "publisher", "place",
  "language", "url", "notes")

# The tag each named column is written with, in the order of the written record (TY comes first and
# `journal` is written only when it is not derived from another column; see ris_record_chunks()).
ris_write_tags <- c(title = "TI", authors = "AU", editors = "A2", year = "PY", date = "DA",
  secondary_title = "T2", journal = "JO", journal_full = "JF", journal_abbrev = "JA", volume = "VL",
  issue = "IS", start_page = "SP", end_page = "EP", issn = "SN", publisher = "PB", place = "CY",
  language = "LA", doi = "DO", url = "UR", database_id = "ID", accession_number = "AN",
  notes = "N1", keywords = "KW", abstract = "AB")

# Columns that are text whatever they look like (a volume "5" or an id "9431078" stays text), so
# that a CSV written by write_refs() reads back with the types a RIS file gives.
ris_text_columns <- function() {
  c(unique(ris_tags$column), "repeated_tags", "tabscreen_decision", "tabscreen_note")
}

# Column names that mean the title or the abstract in CSV exports (compared in lower case, in this
# order of preference): RIS tags, and the headers of common exports ("Abstract Note" is Zotero's).
title_candidates <- c("title", "ti", "t1", "article title", "primary title", "document title")
abstract_candidates <- c("abstract", "ab", "n2", "abstract note")

ris_tag_pattern <- "^[A-Z][A-Z0-9]  -( |$)"

# The keyword and note prefix of the screening results write_refs() adds and read_refs() takes out.
tabscreen_prefix <- "tabscreen: "

#' Read references from RIS and CSV files
#'
#' Reads the references exported by reference managers and bibliographic databases (EndNote,
#' Zotero, EPPI-Reviewer, PsycInfo, ...) as RIS or CSV into one tibble with a row per reference,
#' ready for the screening functions: the titles are in `title` and the abstracts in `abstract`,
#' e.g. `tabscreen_a.tools(refs, prompt, title = title, abstract = abstract)`. Several files,
#' RIS and CSV mixed, are read into one table.
#'
#' @section RIS files:
#' A record runs from its `TY` line to its `ER` line; each line in between is a tag of two
#' characters (a capital letter, then a capital letter or a digit), two spaces, a hyphen, a space
#' and the value. A line without a tag continues the value of the tag above it (the lines are
#' joined with a space). Blank lines are ignored, and so are byte-order marks, Windows (CRLF)
#' line ends and the `Provider:`, `Database:` and `Content:` header lines some databases put
#' before the first record (exports joined into one file have them between records too). A value
#' that is one of `na` (by default empty, or the text `NA` that some exports write for a missing
#' field) is missing.
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
#' | `doi` | `DO` | |
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
#' `tabscreen_note` (the notes), not to `keywords` and `notes`. See [write_refs()].
#'
#' @section CSV files:
#' Read as UTF-8 (a byte-order mark is ignored), with every column kept under its name. The title
#' column is found whatever its case: `title`, `TI`, `T1`, `Article Title`, `Primary Title` or
#' `Document Title`, and renamed `title`; likewise the abstract column (`abstract`, `AB`, `N2`,
#' `Abstract Note`) is renamed `abstract`. A file without a title column is an error; one without
#' an abstract column gets an `abstract` column of `NA`. The columns named as in a RIS table
#' (e.g. `volume`, `issn`, `U1`) stay text and `year` becomes integer, so that a CSV written by
#' [write_refs()] reads back as the RIS file did; other columns get their natural type (numbers,
#' logicals), except columns with no value at all, which stay text.
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
#' also of class `tabscreen_error_arg`. A malformed file is an error of class
#' `tabscreen_error_refs_parse`, whose message and fields `file` and `line` say where: a record
#' without its `ER` line at the end of the file or before the next `TY` line (a truncated
#' export), a tag or text outside a record (e.g. before the first `TY` line), a `TY` without a
#' type, NUL bytes (a binary file), a CSV that cannot be parsed. Text that is not valid in
#' `encoding` (an export in another encoding, typically Windows-1252, read as UTF-8) is an error
#' of class `tabscreen_error_encoding` too, as in the screening functions: its message gives the
#' number of lines affected, the first of them, and the `encoding` to give (`"windows-1252"` when
#' the text reads as such). Nothing is converted by guess. A CSV without a title column is an
#' error of class `tabscreen_error_refs_columns`.
#'
#' @param files Paths of one or more RIS or CSV files.
#' @param format `"auto"` (the default), `"ris"` or `"csv"`; one for all files or one per file.
#'   `"auto"` reads files ending in `.ris` as RIS and files ending in `.csv` as CSV, and any
#'   other file as RIS when its first line that is not blank is a `TY` line, else as CSV.
#' @param source_col The name of the column naming each record's file, or `NULL` for none.
#' @param na The values that mean missing (after white space is trimmed).
#' @param encoding The files' encoding. Exports are UTF-8 nearly always; for an older export in
#'   another encoding give it, e.g. `"latin1"` or `"windows-1252"`. Files that start with a UTF-16
#'   byte-order mark are read as UTF-16 whatever this says.
#' @return A tibble with one row per reference: `title` and `abstract` first, then the other
#'   fields (for RIS: `authors`, `year`, `journal`, `doi`, `keywords`, `type`, `database_id`, ...,
#'   see above), then the source column. All columns are text except `year` (integer) and, in
#'   CSV files, columns of numbers or logicals.
#' @seealso [write_refs()] to write references and screening results.
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
#' # CSV files: the title and abstract columns are found whatever their names' case.
#' csv <- tempfile(fileext = ".csv")
#' write.csv(data.frame(Title = refs$title[1:3], Abstract = refs$abstract[1:3]), csv, row.names = FALSE)
#' read_refs(csv)
read_refs <- function(files, format = c("auto", "ris", "csv"), source_col = "source_file",
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
  size <- file.size(file)
  bytes <- readBin(file, "raw", n = max(size, 0))
  lines <- decode_ref_text(bytes, name, encoding, call)
  if (format == "auto") {
    format <- ref_format_of(file, lines)
  }
  tbl <- if (format == "ris") parse_ris(lines, name, na, call) else parse_ref_csv(lines, name, na, source_col, call)
  if (!is.null(source_col) && !source_col %in% names(tbl)) {
    tbl[[source_col]] <- rep(name, nrow(tbl))
  }
  tbl
}

check_ref_files <- function(files, call) {
  if (!is.character(files) || length(files) == 0 || anyNA(files) || any(!nzchar(files))) {
    abort_refs_arg(c("{.arg files} must hold the paths of one or more RIS or CSV files.",
      "i" = "E.g. {.code read_refs(\"export.ris\")} or {.code read_refs(c(\"included.ris\", \"excluded.ris\"))}."),
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
  values <- c("auto", "ris", "csv")
  if (identical(format, values)) {
    return(rep("auto", n))
  }
  if (!is.character(format) || anyNA(format) || !all(tolower(format) %in% values) || !length(format) %in% c(1, n)) {
    abort_refs_arg(c("{.arg format} must be {.or {.val {values}}}: one for all files or one per file.",
      if (is.character(format) && length(format) %in% c(1, n)) c("x" = "{.val {setdiff(format, values)}} {?is/are} not one of them.")),
      "format", call)
  }
  rep_len(tolower(format), n)
}

# An argument error of read_refs() or write_refs(), of class tabscreen_error_refs_<arg>.
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
decode_ref_text <- function(bytes, file, encoding, call) {
  utf16 <- if (length(bytes) >= 2 && bytes[1] == as.raw(0xff) && bytes[2] == as.raw(0xfe)) {
    "UTF-16LE"
  } else if (length(bytes) >= 2 && bytes[1] == as.raw(0xfe) && bytes[2] == as.raw(0xff)) {
    "UTF-16BE"
  }
  if (!is.null(utf16)) {
    text <- tryCatch(iconv(list(bytes[-(1:2)]), utf16, "UTF-8"), error = function(e) NA_character_)
    if (is.na(text)) {
      abort_refs_parse("the file starts like {utf16} text but is not valid {utf16}.", file, NULL, call)
    }
    bytes <- charToRaw(enc2utf8(text))
  }
  nul <- which(bytes == as.raw(0))
  if (length(nul) > 0) {
    line <- sum(bytes[seq_len(nul[1])] == as.raw(10)) + 1
    abort_refs_parse(c("the file holds NUL bytes: it is not a text export (a binary file?).",
      "i" = "Export the references as RIS or CSV text (UTF-8)."), file, line, call)
  }
  if (length(bytes) >= 3 && all(bytes[1:3] == as.raw(c(0xef, 0xbb, 0xbf)))) {
    bytes <- bytes[-(1:3)]
  }
  text <- rawToChar(bytes)
  utf8 <- toupper(encoding) %in% c("UTF-8", "UTF8") || !is.null(utf16)
  # Fixed-string steps: a regular expression split of a whole file takes quadratic time in R.
  text <- gsub("\r\n", "\n", text, fixed = TRUE, useBytes = TRUE)
  text <- gsub("\r", "\n", text, fixed = TRUE, useBytes = TRUE)
  lines <- strsplit(text, "\n", fixed = TRUE, useBytes = TRUE)[[1]]
  if (utf8) {
    bad <- which(!validUTF8(lines))
  } else {
    converted <- iconv(lines, encoding, "UTF-8")
    bad <- which(is.na(converted))
    if (length(bad) == 0) lines <- converted
  }
  if (length(bad) > 0) {
    abort_refs_encoding(lines[bad], bad, file, if (utf8) "UTF-8" else encoding, call)
  }
  Encoding(lines) <- "UTF-8"
  # Exports joined with `cat` carry the byte-order mark of each part at the start of a line.
  bom <- startsWith(lines, "\ufeff")
  lines[bom] <- substring(lines[bom], 2)
  lines
}

# Lines `bad` of a file are not valid in its encoding: says how many, and which encoding to give
# (as for text in a data frame, R/text.R).
abort_refs_encoding <- function(bad_lines, bad, file, encoding, call) {
  guess <- suggested_encoding(bad_lines)
  fix <- sprintf("read_refs(\"%s\", encoding = \"%s\")", file, guess)
  abort_refs_parse(
    c("the text is not valid {encoding} in {length(bad)} line{?s}: {head(bad, 5)}{if (length(bad) > 5) ', ...' else ''}.",
      "i" = "This is what an export in another encoding gives (or a file that is not text).",
      "i" = if (reads_as_windows_1252(bad_lines)) {
        "The text reads as Windows-1252: give that encoding, {.code {fix}}."
      } else {
        "Give the file's encoding, e.g. {.code {fix}}."
      }),
    file, bad[1], call, class = "tabscreen_error_encoding"
  )
}

ref_format_of <- function(file, lines) {
  ext <- tolower(sub("^.*[.]", "", basename(file)))
  if (ext %in% c("ris", "csv")) {
    return(ext)
  }
  content <- lines[nzchar(trimws(lines)) & !grepl("^(Provider|Database|Content): ", lines)]
  if (length(content) > 0 && grepl("^TY  -( |$)", sub("\\s+$", "", content[1]))) "ris" else "csv"
}

# One RIS file's lines -> one row per record.
parse_ris <- function(lines, file, na, call) {
  lines <- sub("\\s+$", "", lines)
  n <- length(lines)
  blank <- !nzchar(trimws(lines))
  is_tag <- grepl(ris_tag_pattern, lines)
  tag <- ifelse(is_tag, substr(lines, 1, 2), NA_character_)
  value <- ifelse(is_tag, trimws(substring(lines, 7)), NA_character_)
  is_ty <- is_tag & tag == "TY"
  is_er <- is_tag & tag == "ER"

  if (all(blank)) {
    abort_refs_parse("the file holds no references (it is empty).", file, NULL, call)
  }
  # One pass over the TY and ER lines checks the structure and reports the first problem by line:
  # TY and ER must alternate, and between an ER and the next TY there may only be blank lines
  # and the header lines of the RIS specification (of each part of exports joined together).
  first_ty <- which(is_ty)[1]
  header <- grepl("^(Provider|Database|Content): ", lines)
  content <- c(0L, cumsum(!blank & !header))
  check_gap <- function(from, to) {
    if (to >= from && content[to + 1] > content[from]) {
      i <- from - 1 + which(!blank[from:to] & !header[from:to])[1]
      excerpt <- if (nchar(lines[i]) > 40) paste0(substr(lines[i], 1, 40), "...") else lines[i]
      what <- if (is_tag[i]) "the tag {.field {tag[i]}} is outside a record" else "the text {.val {excerpt}} is outside a record"
      abort_refs_parse(c(paste0(what, ": a record starts with a {.code TY} line and ends with an {.code ER} line."),
        if (grepl("^[A-Z][A-Z0-9] ?- ?", lines[i])) c("i" = "A tag is followed by two spaces, a hyphen and a space; this line has a different spacing."),
        if (is.na(first_ty)) c("i" = "The file has no {.code TY} line: is it a RIS file? For a CSV file use {.code format = \"csv\"}.")),
        file, i, call)
    }
  }
  open <- NA_integer_
  last <- 0L
  for (i in which(is_ty | is_er)) {
    if (is.na(open)) {
      check_gap(last + 1L, i - 1L)
      if (is_er[i]) {
        abort_refs_parse("an {.code ER} line (end of record) without a record: no {.code TY} line opens one.", file, i, call)
      }
      if (!nzchar(value[i])) {
        abort_refs_parse("the {.code TY} line has no value: every record needs its type, e.g. {.val JOUR}.", file, i, call)
      }
      open <- i
    } else {
      if (is_ty[i]) {
        abort_refs_parse(c("a new record starts ({.code TY}) but the record that starts at line {open} has no {.code ER} line.",
          "i" = "Each record must end with an {.code ER} line; is a line missing or the export damaged?"),
          file, i, call)
      }
      open <- NA_integer_
    }
    last <- i
  }
  if (!is.na(open)) {
    abort_refs_parse(c("the record that starts at line {open} has no {.code ER} line: the file ends (line {n}) inside it.",
      "i" = "The file looks truncated: export the references again."), file, open, call)
  }
  check_gap(last + 1L, n)
  record <- cumsum(is_ty)
  inside <- record > cumsum(is_er) - is_er

  # Lines without a tag inside a record continue the value of the tag above them.
  continued <- inside & !is_tag & !blank
  if (any(continued)) {
    owner <- cummax(ifelse(is_tag, seq_len(n), 0L))
    parts <- split(trimws(lines[continued]), owner[continued])
    at <- as.integer(names(parts))
    value[at] <- vapply(seq_along(at), function(k) {
      pieces <- c(value[at[k]], parts[[k]])
      paste(pieces[nzchar(pieces)], collapse = " ")
    }, character(1))
  }

  field <- which(inside & is_tag & !is_er)
  ris_fields_table(record[field], tag[field], value[field], sum(is_ty), na)
}

# Records' (record number, tag, value) triples -> the table of read_refs().
ris_fields_table <- function(rec, tag, value, n_records, na) {
  missing <- value %in% na
  type <- rep(NA_character_, n_records)
  ty <- tag == "TY"
  type[rec[ty & !missing]] <- value[ty & !missing]
  keep <- !missing & !ty
  rec <- rec[keep]
  tag <- tag[keep]
  value <- value[keep]

  decision <- tag == "KW" & startsWith(value, tabscreen_prefix)
  note <- tag == "N1" & startsWith(value, tabscreen_prefix)
  results <- list(
    tabscreen_decision = collapse_by(rec[decision], substring(value[decision], nchar(tabscreen_prefix) + 1), "; ", n_records),
    tabscreen_note = collapse_by(rec[note], value[note], "\n", n_records)
  )
  results <- results[vapply(results, function(x) any(!is.na(x)), logical(1))]
  keep <- !decision & !note
  rec <- rec[keep]
  tag <- tag[keep]
  value <- value[keep]

  year <- ris_year(rec, tag, value, n_records)
  column <- ris_tags$column[match(tag, ris_tags$tag)]
  column[is.na(column)] <- tag[is.na(column)]
  # PY is the year: a plain first PY is fully held by `year`; a first PY with more than a year
  # (e.g. "2002/05/01/") is also a date; a later PY is a repeat.
  py <- which(tag == "PY")
  first_py <- py[!duplicated(rec[py])]
  column[py] <- ".repeat"
  column[first_py] <- ifelse(grepl("^[0-9]{4}$", value[first_py]), ".year", "date")
  multi <- column %in% ris_multi_columns
  first <- !duplicated(paste(rec, column, sep = "\r")) & column != ".repeat"
  single <- !multi & first & column != ".year"
  repeated <- !multi & !first

  names_seen <- unique(column[multi | single])
  cols <- list()
  for (name in unique(c(ris_core_columns, ris_more_columns, names_seen))) {
    if (name == "year") {
      cols$year <- year
    } else if (name %in% ris_multi_columns) {
      on <- multi & column == name
      cols[[name]] <- collapse_by(rec[on], value[on], "; ", n_records)
    } else {
      on <- single & column == name
      x <- rep(NA_character_, n_records)
      x[rec[on]] <- value[on]
      cols[[name]] <- x
    }
  }
  cols$type <- type
  # The journal: JO, else the full or abbreviated name, else the secondary title (a journal
  # article's journal or a chapter's book).
  for (other in c("journal_full", "journal_abbrev", "secondary_title")) {
    if (!is.null(cols[[other]])) {
      fill <- is.na(cols$journal)
      cols$journal[fill] <- cols[[other]][fill]
    }
  }
  if (any(repeated)) {
    cols$repeated_tags <- collapse_by(rec[repeated], paste0(tag[repeated], "  - ", value[repeated]), "\n", n_records)
  }
  tibble::new_tibble(c(cols, results), nrow = n_records)
}

# The year: the first four-digit number of the first PY, else of the first Y1, else of the first DA.
ris_year <- function(rec, tag, value, n_records) {
  on <- tag %in% c("PY", "Y1", "DA")
  on[on] <- !duplicated(paste(rec[on], tag[on]))
  year <- rep(NA_integer_, length(value))
  at <- regexpr("(?<![0-9])[0-9]{4}(?![0-9])", value, perl = TRUE)
  year[at > 0] <- as.integer(substr(value[at > 0], at[at > 0], at[at > 0] + 3))
  on <- on & !is.na(year)
  priority <- match(tag, c("PY", "Y1", "DA"))
  ord <- which(on)[order(rec[on], priority[on])]
  best <- ord[!duplicated(rec[ord])]
  out <- rep(NA_integer_, n_records)
  out[rec[best]] <- year[best]
  out
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

# One CSV file's lines -> its table, with the title and abstract columns named and first.
parse_ref_csv <- function(lines, file, na, source_col, call) {
  if (!any(nzchar(trimws(lines)))) {
    abort_refs_parse("the file holds no references (it is empty).", file, NULL, call)
  }
  con <- textConnection(lines, encoding = "UTF-8")
  on.exit(close(con))
  data <- withCallingHandlers(
    tryCatch(
      utils::read.csv(con, colClasses = "character", check.names = FALSE, na.strings = na,
        encoding = "UTF-8", comment.char = "", strip.white = FALSE, row.names = NULL),
      error = function(e) {
        abort_refs_parse(c("the file cannot be read as CSV.", "x" = conditionMessage(e)), file, NULL, call)
      }
    ),
    warning = function(w) {
      abort_refs_parse(c("the file cannot be read as CSV.", "x" = conditionMessage(w),
        "i" = "A quote that is not closed makes the rest of the file one field."), file, NULL, call)
    }
  )
  names(data) <- make.unique(names(data), sep = "_")
  title <- find_named_column(names(data), title_candidates)
  if (is.na(title)) {
    sep_hint <- if (length(names(data)) == 1 && grepl("[;\t]", names(data))) {
      c("i" = "The columns seem to be separated by semicolons or tabs: save the file with commas as separators.")
    }
    tabscreen_abort(c("{.file {file}} has no title column: no column is named {.or {.val {c('title', 'TI', 'T1', 'Article Title')}}} (any case).",
      "i" = "Its columns are {.val {names(data)}}; rename the title column {.field title}.", sep_hint),
      class = c("tabscreen_error_refs_columns", "tabscreen_error_refs"), file = file, call = call)
  }
  names(data)[title] <- "title"
  abstract <- find_named_column(names(data), abstract_candidates)
  if (is.na(abstract)) {
    data$abstract <- rep(NA_character_, nrow(data))
  } else {
    names(data)[abstract] <- "abstract"
  }
  text <- c(ris_text_columns(), source_col, grep("^[A-Z][A-Z0-9]$", names(data), value = TRUE))
  for (name in setdiff(names(data), c("title", "abstract"))) {
    x <- data[[name]]
    if (name == "year") {
      if (all(is.na(x) | grepl("^-?[0-9]+$", x))) data[[name]] <- as.integer(x)
    } else if (!name %in% text && !all(is.na(x))) {
      # An empty column stays text rather than becoming logical.
      data[[name]] <- utils::type.convert(x, as.is = TRUE, na.strings = character())
    }
  }
  data <- data[c("title", "abstract", setdiff(names(data), c("title", "abstract")))]
  tibble::as_tibble(data)
}

# The first column whose name is one of `candidates` (ignoring case; an exact match first).
find_named_column <- function(names, candidates) {
  exact <- match(candidates[1], names)
  if (!is.na(exact)) {
    return(exact)
  }
  low <- tolower(trimws(names))
  for (candidate in candidates) {
    i <- which(low == candidate)
    if (length(i) > 0) {
      return(i[1])
    }
  }
  NA_integer_
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
  tibble::new_tibble(cols, nrow = sum(n))
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
#' `EP`, `SN`, `PB`, `CY`, `LA`, `DO`, `UR`, `ID`, `AN`, `N1`, `KW` once per keyword, `AB`), the
#' columns named as RIS tags (e.g. `U1`), the lines of `repeated_tags`, the screening results
#' and `ER`. The columns of several values (`authors`, `editors`, `keywords`; for another table
#' also `author`) are split at `"; "` (as [read_refs()] joins them; an author or keyword that
#' itself holds `"; "` would become two). Line breaks inside a value become spaces, since a RIS value
#' is one line. `JO` is left out when `journal` is the value of `JF`, `JA` or `T2` (read back, it
#' is taken from them). Other columns (e.g. `human_code`, `source_file`) are not RIS fields and
#' are not written: write a CSV to keep them. The file is UTF-8 with CRLF line ends, as the RIS
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
#' \dontshow{fake <- tabscreen:::example_fake_start()}
#' refs <- read_refs(system.file("extdata", "fft_include.ris", package = "tabscreen"))
#'
#' # Screen a few references (here with a local stand-in for the provider) ...
#' res <- tabscreen_a.tools(
#'   refs[1:4, ], prompt = "Is this study about functional family therapy?",
#'   title = title, abstract = abstract, api_url = fake$url, reps = 2,
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
#' \dontshow{tabscreen:::example_fake_stop(fake)}
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
  title <- find_named_column(names(refs), title_candidates)
  if (is.na(title)) {
    abort_refs_arg(c("{.arg x} has no title column: no column is named {.or {.val {c('title', 'TI', 'T1', 'Article Title')}}} (any case).",
      "i" = "Its columns are {.val {names(refs)}}; rename the title column {.field title}."), "x", call)
  }
  names(refs)[title] <- "title"
  abstract <- find_named_column(names(refs), abstract_candidates)
  if (!is.na(abstract)) names(refs)[abstract] <- "abstract"
  refs
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
  screening_cols <- c(setdiff(result_column_names(), c("title", "abstract")), "tabscreen_decision", "tabscreen_note")
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
  col <- function(name) if (name %in% names(refs)) one_line(as_text(refs[[name]])) else rep(NA_character_, n)
  chunks <- list()
  authors <- if ("authors" %in% names(refs)) "authors" else if ("author" %in% names(refs)) "author" else NULL
  derived <- rep(NA_character_, n)
  for (other in c("journal_full", "journal_abbrev", "secondary_title")) {
    fill <- is.na(derived)
    derived[fill] <- col(other)[fill]
  }
  for (name in names(ris_write_tags)) {
    values <- if (name == "authors" && !is.null(authors)) col(authors) else col(name)
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
      text_lines("", l[!is.na(l) & grepl(ris_tag_pattern, l)])
    }, character(1))
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
