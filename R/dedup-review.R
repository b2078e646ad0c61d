# The unsure pairs of dedup_refs() decided on the review app's page (golib/review): each pair is a
# record of a table the app reviews, Include standing for "same" and Exclude for "different".

#' Decide the unsure pairs of dedup_refs() on a page, with the keys of screen_review()
#'
#' `dedup_review()` opens the page of [screen_review()] on the unsure pairs of a deduplication
#' (see "Unsure pairs" in [dedup_refs()]), one pair at a time: its two records' titles, where each
#' was published and the fields that conflict. The keys are the review app's: `i` the same record
#' (the page says Include), `e` different records (Exclude), `u` not sure (left undecided), `n` a
#' note, arrows to move, `z` undo, `?` help. Every decision is written to the answer store as you
#' make it (see "Where the decisions are kept" in [screen_review()]); the same pairs reviewed
#' again continue where you stopped.
#'
#' `dedup_review_decisions()` reads the page's decisions, also while it is open, and keeps them
#' with the decisions of [dedup_refs()] (a CSV file beside the answer store, see "Unsure pairs"):
#' the next `dedup_refs()` of the same records applies them. A pair is `"same"` when every
#' reviewer who decided it chose Include, `"different"` when every one chose Exclude, else `NA`.
#' A decision taken back on the page after it was read stays kept: give the pair a new one.
#'
#' @param x The result of [dedup_refs()].
#' @param reviewer The reviewer's name (see [screen_review()]); for `dedup_review_decisions()`,
#'   `NULL` for every reviewer's decisions or the names of those to read.
#' @param port,open,wait As in [screen_review()].
#' @return `dedup_review()`: with `wait = TRUE`, the decisions as `dedup_review_decisions()`
#'   returns them; else the running app (invisibly), as [screen_review()] returns it.
#'   `dedup_review_decisions()`: the table of [dedup_unsure()] with its `decision` column filled
#'   in (`"same"`, `"different"` or `NA`), which [dedup_refs()] takes in `decisions`.
#' @seealso [dedup_refs()], [dedup_unsure()], [screen_review()].
#' @export
#' @examples
#' refs <- data.frame(id = c("a", "b"), authors = "Speich, N", year = 2004, journal = "J Med Microbiol",
#'   volume = "53", start_page = c("125-128", "2-8"),
#'   title = "Human papillomavirus study of 2916 cytological samples by PCR and DNA sequencing")
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))
#' x <- dedup_refs(refs, id = "id", messages = FALSE)
#' app <- dedup_review(x, reviewer = "ann", open = FALSE, wait = FALSE)
#' # ... the reviewer presses i on the page ...
#' dedup_review_decisions(x)
#' app$stop()
#' options(old)
dedup_review <- function(x, reviewer = NULL, port = NULL, open = interactive(), wait = interactive()) {
  pairs <- dedup_unsure(x)
  dedup_review_store(rlang::current_env())
  if (nrow(pairs) == 0) {
    cli::cli_inform(c("i" = "No unsure pairs to decide."), class = "tabscreen_message")
    return(invisible(pairs))
  }
  app <- screen_review(dedup_review_table(pairs), queue = "all", reviewer = reviewer, highlight = FALSE,
    title = "Duplicates: i = the same record, e = different records, u = not sure", port = port, open = open,
    wait = FALSE)
  if (!wait) {
    return(invisible(app))
  }
  review_wait(app)
  dedup_review_decisions(x)
}

#' @rdname dedup_review
#' @export
dedup_review_decisions <- function(x, reviewer = NULL) {
  call <- rlang::current_env()
  pairs <- dedup_unsure(x)
  dedup_review_store(call)
  if (nrow(pairs) == 0) {
    return(pairs)
  }
  table <- dedup_review_table(pairs)
  d <- screen_review_decisions(table, reviewer = reviewer)
  by <- split(d$decision, d$studyid)
  verdict <- vapply(by, function(v) {
    v <- unique(v)
    if (identical(v, "Include")) "same" else if (identical(v, "Exclude")) "different" else NA_character_
  }, character(1))
  pairs$decision <- unname(verdict[table$studyid])
  decided <- pairs[!is.na(pairs$decision), , drop = FALSE]
  if (nrow(decided) > 0) {
    file <- dedup_decisions_file(call)
    dedup_keep_decisions(as.data.frame(decided), dedup_read_decisions(file), file, call)
  }
  pairs
}

# The pairs as a table the review app takes: each pair a record in the Check queue, the two
# records' titles and places as its text.
dedup_review_table <- function(pairs) {
  text <- paste0("A (", pairs$id_a, "): ", pairs$title_a, "\n", pairs$source_a, "\n\n",
    "B (", pairs$id_b, "): ", pairs$title_b, "\n", pairs$source_b, "\n\n",
    "Close by the rule \"", pairs$rule, "\"; against it: ", pairs$conflicts, ".")
  tibble::tibble(studyid = paste(pairs$id_a, pairs$id_b, sep = " | "),
    title = paste0(pairs$title_a, "  |  ", pairs$title_b), abstract = text,
    final_decision_llm = "Check", final_decision_llm_num = NA_integer_, incl_p = NA_real_)
}

# The page keeps every click in the answer store: without one there is nowhere to keep them.
dedup_review_store <- function(call) {
  if (is.null(configured_store(call))) {
    tabscreen_abort(c("The answer store is off ({.code options(tabscreen.store = FALSE)}): the page's decisions could not be kept.",
      "i" = "Point {.code options(tabscreen.store)} at a file, or decide the pairs in {.code dedup_refs(decisions = )}."),
      class = c("tabscreen_error_dedup_store", "tabscreen_error_store"), call = call)
  }
}
