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
#' @section Unsure pairs:
#' Some pairs are close to a match with one or two fields against it: alike titles of one first
#' author with two different DOIs, two page ranges, two volumes or issues, two journals' names or
#' years two or more apart (an export's mistake, a journal under two names, a Cochrane review and
#' its update, and as often two works: an editor's column in two issues, a conference abstract and
#' its article), the same title under two first authors at one place, or one volume, page range and
#' year under a title translated and without authors. They are "unsure": never merged by the
#' rules, listed by [dedup_unsure()] with the rule that came closest and the fields that conflict,
#' for you to decide. Two different PubMed ids and short titles ("Editorial") are never unsure.
#' Of two groups only one pair is listed. On labelled searches 3 to 8 pairs per 1,000 records are
#' unsure, and decided right they raise record-level sensitivity to 0.999-1 (see bench/README.md).
#'
#' Decide them on a page with [dedup_review()] (the keys of [screen_review()]: `i` the same
#' record, `e` different records), or in `decisions`: a data frame with the columns `id_a`, `id_b` (two record ids, see
#' "What is kept") and `decision`, `"same"` or `"different"` (`NA` for undecided); the table of
#' [dedup_unsure()] with its `decision` column filled in will do. `"same"` merges the two
#' records' groups (their `match` is then `"person"`); `"different"` takes the pair, and every
#' other unsure pair of the two groups, off the list. A `"different"` does not split a group that
#' the rules or other `"same"` decisions made: check those with [dedup_groups()].
#'
#' Decisions are kept: each is written, with the two records' ids and titles, to a CSV file beside
#' the answer store of `options(tabscreen.store)`, named after it (`answers.sqlite`, the default
#' in `tools::R_user_dir("tabscreen", "data")`, keeps them in `answers-dedup-decisions.csv`).
#' A later `dedup_refs()` of records with those ids and titles applies them without being given
#' them again; a new decision on a pair replaces the old. With `options(tabscreen.store = FALSE)`
#' nothing is kept.
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
#' @param decisions A person's decisions on unsure pairs, or `NULL` (see "Unsure pairs"): a data
#'   frame with the columns `id_a`, `id_b` and `decision` (`"same"`, `"different"` or `NA`).
#' @return `refs` without its duplicates, with the column `merged_ids`. The groups are the
#'   attribute `"dedup_groups"`, also given by [dedup_groups()]; the unsure pairs still to decide
#'   the attribute `"dedup_unsure"`, given by [dedup_unsure()].
#' @seealso [dedup_groups()] for the groups, [dedup_unsure()] and [dedup_review()] for the pairs
#'   to decide, [read_refs()], [write_refs()].
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
#'
#' # One title of one author at two page ranges: unsure, decided by a person.
#' speich <- data.frame(id = c("a", "b"), authors = "Speich, N", year = 2004, journal = "J Med Microbiol",
#'   volume = "53", start_page = c("125-128", "2-8"),
#'   title = "Human papillomavirus study of 2916 cytological samples by PCR and DNA sequencing")
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))
#' x <- dedup_refs(speich, id = "id")
#' pairs <- dedup_unsure(x)
#' pairs[, c("id_a", "id_b", "rule", "conflicts")]
#' pairs$decision <- "same"
#' nrow(dedup_refs(speich, id = "id", decisions = pairs))
#' # The decision was kept: a second call applies it.
#' nrow(dedup_refs(speich, id = "id"))
#' options(old)
dedup_refs <- function(refs, match = dedup_rules, id = NULL, messages = TRUE, decisions = NULL) {
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
  titles <- as_text(refs[[which(mapped == "title")[1]]])
  titles[is.na(titles)] <- ""
  decided <- dedup_decisions(decisions, ids, titles, call)
  fields <- dedup_fields(refs, mapped)
  pairs <- function(d) lapply(seq_len(nrow(d)), function(k) c(d$a[k], d$b[k]) - 1L)
  out <- refs_call(list(op = "dedup", dedup = list(match = as.list(match), same = pairs(decided[decided$decision == "same", ]),
    different = pairs(decided[decided$decision == "different", ]))), df_to_ipc(fields), call)
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
  unsure <- dedup_unsure_table(summary$unsure, ids, titles, fields)
  attr(result, "dedup_unsure") <- unsure
  n_unsure <- nrow(unsure)
  tabscreen_inform(c(
    "{nrow(refs)} record{?s}: {summary$duplicates} duplicate{?s} in {summary$groups} group{?s}, {nrow(result)} kept.",
    "i" = if (summary$groups > 0) "Check the groups with {.code dedup_groups(x)}; the ids merged into each record are in {.field merged_ids}.",
    "!" = if (n_unsure > 0) "{n_unsure} pair{?s} unsure, not merged: decide them with {.code dedup_review(x)}, or see {.code dedup_unsure(x)} and give your decisions in {.arg decisions}.",
    "i" = if (nrow(decided) > 0) "{nrow(decided)} decision{?s} on pairs applied."
  ), messages)
  result
}

#' The unsure pairs of dedup_refs(), for a person to decide
#'
#' @param x The result of [dedup_refs()].
#' @return A tibble with a row per unsure pair still to decide (see "Unsure pairs" in
#'   [dedup_refs()]): `id_a`, `id_b` (the records' ids), `title_a`, `title_b`, `rule` (the rule
#'   that came closest: `"title"`, `"doi"`, `"citation"`), `conflicts` (the fields that disagree,
#'   e.g. `"doi"` or `"pages, journal"`), `source_a`, `source_b` (first author, year, journal,
#'   volume, issue, pages, DOI and PubMed id of each record, in one line) and `decision` (`NA`):
#'   fill it with `"same"` or `"different"` and give the table to [dedup_refs()] in `decisions`,
#'   or decide the pairs on a page with [dedup_review()].
#' @seealso [dedup_refs()], [dedup_groups()].
#' @export
#' @examples
#' refs <- data.frame(title = "Human papillomavirus study of 2916 cytological samples by PCR and DNA sequencing",
#'   authors = "Speich, N", year = 2004, journal = "J Med Microbiol", volume = "53", start_page = c("125-128", "2-8"))
#' dedup_unsure(dedup_refs(refs, messages = FALSE))
dedup_unsure <- function(x) {
  dedup_attr(x, "dedup_unsure", "unsure pairs", rlang::current_env())
}

# What dedup_refs() left on its result, or a classed error for anything else.
dedup_attr <- function(x, which, what, call) {
  value <- attr(x, which, exact = TRUE)
  if (is.null(value)) {
    abort_dedup_arg(c("{.arg x} has no {what}: it is not a result of {.fn dedup_refs}.",
      "i" = "Subsetting a result keeps them only if it keeps its attributes."), "x", call)
  }
  value
}

# The unsure pairs of the Go summary (1-based rows) as the table of dedup_unsure().
dedup_unsure_table <- function(unsure, ids, titles, fields) {
  a <- vapply(unsure, function(u) as.integer(u$a), integer(1))
  b <- vapply(unsure, function(u) as.integer(u$b), integer(1))
  tibble::tibble(id_a = ids[a], id_b = ids[b], title_a = titles[a], title_b = titles[b],
    rule = vapply(unsure, function(u) as.character(u$rule), character(1)),
    conflicts = vapply(unsure, function(u) paste(unlist(u$conflicts), collapse = ", "), character(1)),
    source_a = dedup_citation(fields[a, , drop = FALSE]), source_b = dedup_citation(fields[b, , drop = FALSE]),
    decision = rep(NA_character_, length(a)))
}

# Where each record was published, in one line: "Speich N; 2004; J Med Microbiol 53(2):125-128; doi 10.1/x".
dedup_citation <- function(f) {
  part <- function(x, fmt = "%s") ifelse(is.na(x) | !nzchar(x), "", sprintf(fmt, x))
  first_author <- sub("(;| and ).*$", "", f$authors)
  place <- paste0(part(f$journal), part(f$volume, " %s"), part(f$issue, "(%s)"), part(f$start_page, ":%s"), part(f$end_page, "-%s"))
  out <- vapply(seq_len(nrow(f)), function(i) {
    bits <- c(part(first_author[i]), part(f$year[i]), place[i], part(f$doi[i], "doi %s"), part(f$pmid[i], "PMID %s"))
    paste(bits[nzchar(bits)], collapse = "; ")
  }, character(1))
  out
}

# The decisions on pairs to apply: those given (checked, then kept in the decisions file) and
# those kept before on records with the same ids and titles. A data frame of rows a, b and
# decision.
dedup_decisions <- function(decisions, ids, titles, call) {
  file <- dedup_decisions_file(call)
  kept <- dedup_read_decisions(file)
  if (!is.null(decisions)) {
    given <- dedup_check_decisions(decisions, ids, call)
    if (nrow(given) > 0) {
      given$title_a <- titles[match(given$id_a, ids)]
      given$title_b <- titles[match(given$id_b, ids)]
      kept <- dedup_keep_decisions(given, kept, file, call)
    }
  }
  a <- match(kept$id_a, ids)
  b <- match(kept$id_b, ids)
  # A decision is about two records: the same ids with other titles are other records.
  ok <- !is.na(a) & !is.na(b)
  ok[ok] <- a[ok] != b[ok] & titles[a[ok]] == kept$title_a[ok] & titles[b[ok]] == kept$title_b[ok]
  data.frame(a = a[ok], b = b[ok], decision = kept$decision[ok], stringsAsFactors = FALSE)
}

# Adds the decisions given (id_a, id_b, decision, title_a, title_b) to those kept, a new one on a
# pair replacing the old, and writes them to the file (none when the store is off).
dedup_keep_decisions <- function(given, kept, file, call) {
  given <- given[c("id_a", "id_b", "decision", "title_a", "title_b")]
  # One pair, whichever record is named first.
  swap <- given$id_a > given$id_b
  given[swap, c("id_a", "id_b", "title_a", "title_b")] <- given[swap, c("id_b", "id_a", "title_b", "title_a")]
  given$decided_at <- rep(format(Sys.time(), "%Y-%m-%dT%H:%M:%SZ", tz = "UTC"), nrow(given))
  key <- function(d) paste(d$id_a, d$id_b, d$title_a, d$title_b, sep = "\r")
  given <- given[!duplicated(key(given), fromLast = TRUE), , drop = FALSE]
  kept <- rbind(kept[!key(kept) %in% key(given), , drop = FALSE], given)
  if (!is.null(file)) dedup_write_decisions(kept, file, call)
  kept
}

dedup_check_decisions <- function(decisions, ids, call) {
  if (!is.data.frame(decisions) || !all(c("id_a", "id_b", "decision") %in% names(decisions))) {
    abort_dedup_arg(c("{.arg decisions} must be a data frame with the columns {.field id_a}, {.field id_b} and {.field decision}.",
      "i" = "Fill in the {.field decision} column of {.code dedup_unsure(x)} and give that table."), "decisions", call)
  }
  d <- data.frame(id_a = as_text(decisions$id_a), id_b = as_text(decisions$id_b), decision = tolower(as_text(decisions$decision)),
    stringsAsFactors = FALSE)
  d <- d[!is.na(d$decision), , drop = FALSE]
  bad <- !d$decision %in% c("same", "different")
  if (any(bad)) {
    abort_dedup_arg(c("The {.field decision} of {.arg decisions} must be {.val same}, {.val different} or {.code NA}.",
      "x" = "It is {.val {d$decision[bad][1]}} for the pair {.val {d$id_a[bad][1]}} and {.val {d$id_b[bad][1]}}."), "decisions", call)
  }
  unknown <- is.na(d$id_a) | is.na(d$id_b) | !(d$id_a %in% ids & d$id_b %in% ids)
  unknown[!unknown] <- d$id_a[!unknown] == d$id_b[!unknown]
  if (any(unknown)) {
    abort_dedup_arg(c("Every pair of {.arg decisions} must be two record ids of {.arg refs}.",
      "x" = "{.val {d$id_a[unknown][1]}} and {.val {d$id_b[unknown][1]}} are not.",
      "i" = "The ids are those of {.fn dedup_unsure}, from {.arg id} or the records' files and places."), "decisions", call)
  }
  d
}

# The decisions file beside the answer store, one per store, or NULL when the store is off.
dedup_decisions_file <- function(call) {
  store <- configured_store(call)
  if (is.null(store)) NULL else paste0(sub("[.]sqlite$", "", store), "-dedup-decisions.csv")
}

dedup_read_decisions <- function(file) {
  empty <- data.frame(id_a = character(), id_b = character(), decision = character(), title_a = character(),
    title_b = character(), decided_at = character(), stringsAsFactors = FALSE)
  if (is.null(file) || !file.exists(file)) {
    return(empty)
  }
  kept <- utils::read.csv(file, colClasses = "character", encoding = "UTF-8", na.strings = character())
  kept[names(empty)]
}

dedup_write_decisions <- function(kept, file, call) {
  dir.create(dirname(file), recursive = TRUE, showWarnings = FALSE)
  # Written whole to a new file, then moved: a decisions file is never left half written.
  tmp <- paste0(file, ".tmp")
  ok <- tryCatch({
    utils::write.csv(kept, tmp, row.names = FALSE, fileEncoding = "UTF-8", na = "")
    file.rename(tmp, file)
  }, error = function(e) FALSE, warning = function(w) FALSE)
  if (!isTRUE(ok)) {
    tabscreen_abort(c("The decisions on unsure pairs cannot be kept in {.file {file}}.",
      "i" = "Point {.code options(tabscreen.store = ...)} at a folder you can write, or set it to FALSE to keep none."),
      class = "tabscreen_error_dedup_decisions_file", call = call)
  }
  invisible(file)
}

#' The duplicate groups found by dedup_refs()
#'
#' @param x The result of [dedup_refs()].
#' @return A tibble with a row per record of each group of two or more: `group` (1, 2, ...),
#'   `id` (the record's id, see [dedup_refs()]), `kept` (`TRUE` for the record kept), `match`
#'   (the rules that linked the record to others of its group, e.g. `"doi, title"`, and
#'   `"person"` for a person's decision on an unsure pair), and the
#'   record's `title`, `authors`, `year`, `journal`, `doi`, `pmid` and `source_file` when `refs`
#'   had them. Ordered by group, the kept record first.
#' @seealso [dedup_refs()]; [dedup_unsure()] for the pairs not merged because unsure.
#' @export
#' @examples
#' refs <- read_refs(system.file("extdata", "fft_include.ris", package = "tabscreen"))
#' twice <- dedup_refs(rbind(refs, refs[1:2, ]), messages = FALSE)
#' dedup_groups(twice)
dedup_groups <- function(x) {
  dedup_attr(x, "dedup_groups", "duplicate groups", rlang::current_env())
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
