# Deduplication of references: the matching is Go's (golib/refs/dedup.go); R prepares the fields,
# keeps one record per group with the ids of the others, and reports the groups.

dedup_rules <- c("doi", "pmid", "title", "citation")

#' Remove the duplicate records of several exports of a search
#'
#' A search run in several databases finds many records more than once (20 to 50 % of them is
#' common), and each duplicate would be screened, and paid for, `reps` times. `dedup_refs()`
#' finds the records that are one reference, keeps the most complete of each group with the ids
#' of the others in `merged_ids`, and reports the groups so that you can check them.
#'
#' @section Matching:
#' Two records are one reference when one of these rules (`match`) says so:
#'
#' * `"doi"`: the same DOI (whatever its form: `10.1000/x`, `https://doi.org/10.1000/X`,
#'   `doi:10.1000/x`), and titles alike (one DOI of a journal supplement can stand for many
#'   conference abstracts): similar, one the other without its subtitle, or, for a translation,
#'   the same first author and first page;
#' * `"pmid"`: the same PubMed id (and titles alike when the volumes, issues or pages disagree);
#' * `"title"`: the same title once case, punctuation, HTML (`&amp;`, `<i>`), diacritics, a leading
#'   "The", "A" or "An", trailing notes such as `[Review]` and a trailing period are set aside
#'   (a title in brackets, as MEDLINE writes translated titles, is its words without the brackets,
#'   the language after it or the original title after "TO:"), or titles that differ in at most
#'   one character in twenty, or one is the other without its subtitle; and the same first
#'   author's family name (whatever the form: "Smith, John", "Smith J", "John Smith", "Le,
#'   Quintrec M.") and years at most one apart. Short titles ("Editorial") need the same first
#'   author and year;
#' * `"citation"`: the same journal, volume, page range, year and first author (an article that
#'   one database lists under its original title and another translated), but never for a record
#'   on a single page or typed as a conference abstract: one page of a supplement holds several
#'   abstracts, often by one group;
#'
#' and nothing says otherwise: two different PubMed ids or DOIs, years two or more apart, first
#' pages that cannot be one record's, or, unless a DOI or PubMed id agrees, different volumes or
#' issue numbers (an editor's column recurs in every issue). Pages are compared as numbers in
#' their exports' forms: several ranges in any order, a range a spreadsheet made a date
#' ("01-Jun" for 1-6), and an article number ("e12724", "106482") or a page count ("1-6", "11"),
#' which says nothing against another page. For titles, journals whose names cannot be one
#' journal's (a conference abstract and the article that followed it are two records) keep
#' records apart unless the pages agree. Journal names match in their abbreviations ("J Clin
#' Microbiol" and "Journal of Clinical Microbiology") and initials ("ICIS" and "International
#' Conference on Information Systems"). Records linked in a chain are one group.
#'
#' On labelled real searches (the duplicates people found in searches of systematic reviews),
#' record-level sensitivity is 0.986 to 0.999 and specificity 1 (pairwise: every pair found is
#' right, and 98.0 to 99.9 % of the pairs are found); see bench/README.md and the package's tests.
#'
#' @section What is kept:
#' Of each group the record with the most fields filled is kept (then the one with the longest
#' abstract, then the first); the table keeps the order of `refs`. Its column `merged_ids` holds
#' the ids of the records merged into it, joined by `"; "` (`NA` for records without
#' duplicates), also those a previous deduplication merged into them. The ids are the values of
#' the column `id` names, or by default the file and the record's place in it
#' (`"pubmed.nbib:12"`) when `refs` has the `source_file` column of [read_refs()], else the row
#' numbers. [write_refs()] writes them (a note `tabscreen merged: ...` in RIS, the column in
#' CSV), also those of a screening of the deduplicated table, and [read_refs()] reads them back.
#'
#' @param refs A data frame of references with a title column, e.g. from [read_refs()]. The
#'   other fields used are found under read_refs()'s names or the export's (`authors`, `year`,
#'   `journal`, `doi`, `pmid`, `volume`, `issue`, `start_page`, `end_page`, `type`, ...).
#' @param match The rules that may join records: some of `"doi"`, `"pmid"`, `"title"`,
#'   `"citation"`.
#' @param id The name of the column of record ids, or `NULL` (see "What is kept").
#' @param messages `FALSE` to say nothing about what was found.
#' @return `refs` without its duplicates, with the column `merged_ids`. The groups are the
#'   attribute `"dedup_groups"`, also given by [dedup_groups()].
#' @seealso [dedup_groups()] for the groups, [read_refs()], [write_refs()].
#' @export
#' @examples
#' refs <- read_refs(system.file("extdata", c("fft_include.ris", "fft_exclude.ris"), package = "tabscreen"))
#' # The same references exported again by another database, with their titles in capitals, the
#' # authors abbreviated and the DOI as a link.
#' again <- refs[1:5, ]
#' again$title <- toupper(again$title)
#' again$authors <- sub(",.*", "", again$authors)
#' again$source_file <- "again.ris"
#' unique_refs <- dedup_refs(rbind(refs, again))
#' nrow(unique_refs)
#' dedup_groups(unique_refs)[, c("group", "id", "kept", "match", "title")]
#' unique_refs$merged_ids[!is.na(unique_refs$merged_ids)]
dedup_refs <- function(refs, match = dedup_rules, id = NULL, messages = TRUE) {
  call <- rlang::current_env()
  if (!is.data.frame(refs)) {
    abort_dedup_arg("{.arg refs} must be a data frame of references, not {.obj_type_friendly {refs}}.", "refs", call)
  }
  mapped <- ref_column_names(names(refs))
  if (!"title" %in% mapped) {
    abort_dedup_arg(c("{.arg refs} has no title column.", "i" = "Its columns are {.val {names(refs)}}."), "refs", call)
  }
  if (!is.character(match) || length(match) == 0 || anyNA(match) || !all(match %in% dedup_rules)) {
    abort_dedup_arg("{.arg match} must be some of {.val {dedup_rules}}.", "match", call)
  }
  if (!is.null(id) && (!rlang::is_string(id) || !id %in% names(refs))) {
    abort_dedup_arg(c("{.arg id} must name a column of {.arg refs} (a single string) or be {.code NULL}.",
      "i" = "Its columns are {.val {names(refs)}}."), "id", call)
  }
  if (!rlang::is_bool(messages)) {
    abort_dedup_arg("{.arg messages} must be {.code TRUE} or {.code FALSE}.", "messages", call)
  }
  ids <- dedup_ids(refs, id)
  if (!is.null(id) && anyDuplicated(ids[!is.na(ids)])) {
    abort_dedup_arg("The ids in column {.field {id}} must be unique: {.val {unique(ids[duplicated(ids)])[1]}} is there twice.", "id", call)
  }
  out <- refs_call(list(op = "dedup", dedup = list(match = as.list(match))), df_to_ipc(dedup_fields(refs, mapped)), call)
  found <- out$table[[1]]
  summary <- out$meta
  previous <- if ("merged_ids" %in% names(refs)) as_text(refs$merged_ids) else rep(NA_character_, nrow(refs))
  # The ids each dropped record brings to its group: its own and those merged into it before.
  brought <- ifelse(is.na(previous), ids, paste(ids, previous, sep = "; "))
  dropped <- !found$kept
  per_group <- collapse_by(found$group[dropped], brought[dropped], "; ", max(c(0L, found$group)))
  kept <- which(found$kept)
  merged <- per_group[found$group[kept]]
  merged <- ifelse(is.na(previous[kept]), merged, ifelse(is.na(merged), previous[kept], paste(previous[kept], merged, sep = "; ")))
  result <- tibble::as_tibble(refs[kept, , drop = FALSE])
  result$merged_ids <- merged
  groups <- dedup_group_table(refs, mapped, ids, found)
  attr(result, "dedup_groups") <- groups
  tabscreen_inform(c(
    "{nrow(refs)} record{?s}: {summary$duplicates} duplicate{?s} in {summary$groups} group{?s}, {nrow(result)} kept.",
    "i" = if (summary$groups > 0) "Check the groups with {.code dedup_groups(x)}; the ids merged into each record are in {.field merged_ids}."
  ), messages)
  result
}

#' The duplicate groups found by dedup_refs()
#'
#' @param x The result of [dedup_refs()].
#' @return A tibble with a row per record of each group of two or more: `group` (1, 2, ...),
#'   `id` (the record's id, see [dedup_refs()]), `kept` (`TRUE` for the record kept), `match`
#'   (the rules that linked the record to others of its group, e.g. `"doi, title"`), and the
#'   record's `title`, `authors`, `year`, `journal`, `doi`, `pmid` and `source_file` when `refs`
#'   had them. Ordered by group, the kept record first.
#' @seealso [dedup_refs()].
#' @export
#' @examples
#' refs <- read_refs(system.file("extdata", "fft_include.ris", package = "tabscreen"))
#' twice <- dedup_refs(rbind(refs, refs[1:2, ]), messages = FALSE)
#' dedup_groups(twice)
dedup_groups <- function(x) {
  groups <- attr(x, "dedup_groups", exact = TRUE)
  if (is.null(groups)) {
    abort_dedup_arg(c("{.arg x} has no duplicate groups: it is not a result of {.fn dedup_refs}.",
      "i" = "Subsetting a result keeps the groups only if it keeps its attributes."), "x", rlang::current_env())
  }
  groups
}

abort_dedup_arg <- function(message, arg, call, .envir = parent.frame()) {
  abort_arg(message, class = c(paste0("tabscreen_error_dedup_", arg), "tabscreen_error_dedup"), arg = arg,
    call = call, .envir = .envir)
}

# The ids of the records: the column `id`, else file:number within the file, else row numbers.
dedup_ids <- function(refs, id) {
  if (!is.null(id)) {
    return(as_text(refs[[id]]))
  }
  if ("source_file" %in% names(refs)) {
    file <- as_text(refs$source_file)
    return(paste0(file, ":", stats::ave(seq_along(file), file, FUN = seq_along)))
  }
  as.character(seq_len(nrow(refs)))
}

# The fields the matching uses, under read_refs()'s names, and how complete each record is.
dedup_fields <- function(refs, mapped) {
  n <- nrow(refs)
  field <- function(name) {
    i <- which(mapped == name)[1]
    if (is.na(i)) rep(NA_character_, n) else enc2utf8(as_text(refs[[i]]))
  }
  year <- which(mapped == "year")[1]
  year <- if (is.na(year)) {
    rep(NA_integer_, n)
  } else if (is.numeric(refs[[year]])) {
    as.integer(refs[[year]])
  } else {
    four_digit_year(as_text(refs[[year]]))
  }
  abstract <- field("abstract")
  filled <- Reduce(`+`, lapply(refs, function(x) !is.na(x) & (!is.character(x) | nzchar(x))), 0L)
  data.frame(title = field("title"), authors = field("authors"), year = year, doi = field("doi"),
    pmid = field("pmid"), journal = field("journal"), volume = field("volume"), issue = field("issue"),
    start_page = field("start_page"), end_page = field("end_page"), type = field("type"),
    filled = as.integer(filled), abstract_chars = ifelse(is.na(abstract), 0L, nchar(abstract, type = "chars")),
    stringsAsFactors = FALSE)
}

# The records of the groups of two or more, for the user to check.
dedup_group_table <- function(refs, mapped, ids, found) {
  size <- tabulate(found$group)
  in_group <- size[found$group] > 1
  rows <- which(in_group)
  rows <- rows[order(found$group[rows], !found$kept[rows], rows)]
  out <- tibble::tibble(group = match(found$group[rows], unique(found$group[rows])), id = ids[rows],
    kept = found$kept[rows], match = found$match[rows])
  for (name in c("title", "authors", "year", "journal", "doi", "pmid")) {
    i <- which(mapped == name)[1]
    if (!is.na(i)) out[[name]] <- refs[[i]][rows]
  }
  if ("source_file" %in% names(refs)) out$source_file <- refs$source_file[rows]
  out
}

# The first four-digit number of each text ("2019", "2019 Mar 5", "2019///"), as an integer.
four_digit_year <- function(x) {
  at <- regexpr("(?<![0-9])[0-9]{4}(?![0-9])", x, perl = TRUE)
  out <- rep(NA_integer_, length(x))
  hit <- !is.na(at) & at > 0
  out[hit] <- as.integer(substr(x[hit], at[hit], at[hit] + 3))
  out
}
