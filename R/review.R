# The human review of a screening: screen_review() serves a page (golib/review) on which a reviewer
# decides records one at a time; every decision goes into the answer store the moment it is made.
# R builds the page's records and queues, starts the server in a child R process and reads the
# decisions back; it never writes them itself.

#' Review the records of a screening in the browser, one at a time
#'
#' @description
#' `screen_review()` opens a page (in RStudio's viewer or the browser) on which you decide the
#' records of a screening one at a time: Include, Exclude or Unsure, with an optional note, from
#' the keyboard. It shows each record's study id, title and abstract (the prompt's key terms
#' highlighted), the prompt, the model's explanation(s), the inclusion probability with the
#' cut-offs, the model's verdict and, when you name one, an earlier human decision.
#'
#' Every decision is written to the answer store (see [screen_store()]) the moment you make it,
#' before the page says "Saved". Closing the browser, stopping or killing R, or a power cut loses
#' nothing: call `screen_review()` again on the same result and you go on where you stopped (a
#' tab left open reconnects by itself). Decisions made while the app is not running wait in the
#' browser and are sent when it is back.
#'
#' * `screen_review_decisions()` reads the decisions at any time, also while the page is open.
#' * `screen_review_merge()` puts them into the result as a column of human decisions (1 include,
#'   0 exclude, `NA` none or unsure) that [screen_analyzer()], [screen_report()], [screen_thresholds()]
#'   and [write_refs()] take as they are.
#' * `screen_review_audit()` reports what the audit sample supports: the includes found among the
#'   model's audited Excludes, an exact upper confidence bound for the includes in the whole
#'   Exclude pile, and a lower bound for recall. [screen_audit_plan()] says how large an audit
#'   to draw.
#'
#' @section Queues:
#' The page has five queues (keys `1` to `5`):
#' * **Check** (the default): the records the model flagged for a human: verdict `"Check"`
#'   (an inclusion probability between the cut-offs), an uncertain answer (`"1.1"`) of a screening
#'   asked once, and records without a model decision (every request failed).
#' * **Disagreements**: the records where the model's decision (Include and Check count as
#'   include) differs from the earlier human decision in `human_decision`.
#' * **Audit**: a simple random sample of `audit` of the model's Excludes, drawn with `seed`
#'   (for each prompt, model and `top_p`), in the order drawn. The run keeps the seed: open the
#'   app again with a larger `audit` and the records already drawn stay in the sample.
#' * **All**: every record.
#' * **Conflicts**: records that two or more reviewers decided differently. Outside this queue a
#'   reviewer never sees the others' decisions.
#'
#' @section Keys:
#' `i` Include, `e` Exclude, `u` Unsure (each goes on to the next record without your decision),
#' `n` a note, left and right arrows for the previous and next record, `z` undo (again to go
#' further back; undo survives a restart), `1`-`5` queues, `r` change the reviewer, `?` help.
#' The progress line shows how many records of the queue you decided, your median time per
#' record and the time left at that pace. The page is readable on a phone-sized window (420
#' pixels) and prints the record shown.
#'
#' @section Reviewers:
#' Each decision belongs to a reviewer (`reviewer`, or a name typed on the page). Two reviewers
#' can review the same run at the same time, in two tabs or two R sessions on the same store.
#'
#' @section Where the decisions are kept:
#' In the answer store of the screening (its run id); `store` chooses another file. A table or
#' data frame (e.g. read back from a CSV file) is kept under a run id made from its records
#' (`review-` and a hash of the study ids, titles, prompts and models), in the store
#' `options(tabscreen.store)` names or in `store`: the same table reviewed again continues.
#' The tables (open them with DBI): `review_decisions` (the current decision of each record,
#' group and reviewer: `run_id`, `studyid`, `grp` (`promptid/model/top_p`), `promptid`, `model`,
#' `top_p`, `reviewer`, `decision`, `note`, `seconds` (time on the record), `queue`, `audit`,
#' `decided_at`), `review_events` (every decision and note, in order; `undone` marks the ones
#' taken back), `review_audits` (the seed and size of a run's audit sample) and `review_access`
#' (the port and token of the run's page). [screen_store_delete()] leaves them alone: a run's
#' answers can be deleted without its reviewers' work.
#'
#' The app is a small web server on 127.0.0.1 in a child R process: it answers while your R
#' session is busy and ends with it. Only a page that has the run's token (it is in the address
#' `screen_review()` opens) can read or write decisions.
#'
#' @param x A screening result (class `llm`), its `answer_data_aggregated` or (each record asked
#'   once) `answer_data`, or a data frame with their columns, e.g. read back from a file.
#'   `screen_review_decisions()` also takes a running app or a run id.
#' @param human_decision `NULL`, or the column of earlier human decisions (a bare name or a
#'   string, values as in [screen_analyzer()]): shown on each record, and the Disagreements queue.
#' @param queue The queue the page opens with: `"check"`, `"disagreements"`, `"audit"`, `"all"`
#'   or `"conflicts"`.
#' @param reviewer The reviewer's name; `NULL` for `getOption("tabscreen.reviewer")` or the
#'   system's user name.
#' @param audit `NULL`, or the size of the audit sample of the model's Excludes (per prompt,
#'   model and `top_p`). `NULL` keeps the run's earlier audit sample, if any.
#' @param seed The seed of the audit sample (a whole number); `NULL` takes the run's seed, or
#'   draws one the first time (it is stated, and kept). The session's random numbers are left
#'   as they were.
#' @param highlight Terms to highlight in titles and abstracts (a word matches any word it
#'   begins); `NULL` takes the longer words of each prompt, `FALSE` highlights nothing.
#' @param title The page's title; `NULL` for the run id.
#' @param store The answer store file; `NULL` for the store of the screening (an `llm` object)
#'   or the one `options(tabscreen.store)` names.
#' @param port The port on 127.0.0.1; `NULL` for the run's port of an earlier review when free,
#'   else any free port.
#' @param open If `TRUE`, open the page in RStudio's viewer or the browser.
#' @param wait If `TRUE`, wait until the reviewer presses Finish on the page (or you press
#'   Esc/Ctrl-C in R) and return the decisions. If `FALSE`, return at once with the running app.
#' @return `screen_review()`: with `wait = TRUE`, the decisions as `screen_review_decisions()`
#'   returns them; with `wait = FALSE`, an object of class `tabscreen_review_app` (a list with
#'   `url`, `run_id`, `store`, `stop()`, `is_alive()`), which `screen_review_decisions()` and
#'   the other functions also take.
#'
#'   `screen_review_decisions()`: a tibble with one row per record, prompt, model and `top_p`
#'   and reviewer: `run_id`, `studyid`, `promptid`, `model`, `top_p`, `reviewer`, `decision`
#'   (`"Include"`, `"Exclude"` or `"Unsure"`), `note`, `decided_at` (UTC), `seconds` (time on
#'   the record), `queue` (where it was decided) and `audit` (the record is in the audit sample).
#'
#'   Errors have class `tabscreen_error_review` and, for arguments, `tabscreen_error_arg`.
#' @seealso [screen_report()] for a printable list of the disagreements.
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' res <- tabscreen_a.tools(
#'   filges2015_dat[c(1:10, 181:190), ],
#'   prompt = "Is this study about functional family therapy for young people who use drugs?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key",
#'   reps = 3, incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.3,
#'   progress = FALSE, messages = FALSE
#' )
#' # The Check records, and an audit of 5 of the model's Excludes.
#' app <- screen_review(res, human_decision = human_code, audit = 5, seed = 1,
#'   open = FALSE, wait = FALSE)
#' app$url
#' if (interactive()) utils::browseURL(app$url)
#' # ... decide on the page; the decisions can be read at any time:
#' screen_review_decisions(app)
#' app$stop()
#'
#' # Back in R: the decisions as a column of human decisions, and the audit.
#' res <- screen_review_merge(res)
#' screen_review_audit(res)
#' fake$stop()
#' options(old)
screen_review <- function(x, human_decision = NULL, queue = c("check", "disagreements", "audit", "all", "conflicts"),
                          reviewer = NULL, audit = NULL, seed = NULL, highlight = NULL, title = NULL, store = NULL,
                          port = NULL, open = interactive(), wait = interactive()) {
  call <- rlang::current_env()
  human <- rlang::enquo(human_decision)
  queue <- review_queue_arg(queue, missing(queue), call)
  reviewer <- review_reviewer(reviewer, call)
  if (!is.null(audit)) check_positive_or_null(audit, "audit", whole = TRUE, call = call)
  check_draw_seed(seed, call = call)
  if (!is.null(seed) && is.null(audit)) {
    abort_arg("{.arg seed} is the seed of the audit sample: give its size in {.arg audit} too.",
      class = c("tabscreen_error_review_audit", "tabscreen_error_review"), arg = "seed", call = call)
  }
  if (!is.null(port) && (!is.numeric(port) || length(port) != 1 || is.na(port) || port != round(port) ||
    port < 1024 || port > 65535)) {
    abort_arg("{.arg port} must be {.code NULL} or a port number between 1024 and 65535.",
      class = "tabscreen_error_review", arg = "port", call = call)
  }
  if (!is.null(title) && (!rlang::is_string(title) || is.na(title))) {
    abort_arg("{.arg title} must be {.code NULL} or a single string.", class = "tabscreen_error_review", arg = "title", call = call)
  }
  check_flag(open, "open", call = call)
  check_flag(wait, "wait", call = call)

  rev <- review_records(x, human, store, call)
  spec <- review_audit_spec(rev, audit, seed, call)
  items <- review_items(rev, spec)
  meta <- review_meta(rev, spec, items, reviewer, queue, highlight, title, call)

  app <- review_start(rev, items, meta, port, call)
  url <- paste0(app$url, "&reviewer=", utils::URLencode(reviewer, reserved = TRUE), "&queue=", queue)
  app$url <- url
  n_queue <- sum(vapply(items$queues, function(q) queue %in% q, logical(1)))
  cli::cli_inform(c(
    "i" = "Reviewing run {.val {rev$run_id}} as {.val {reviewer}}: {n_queue} record{?s} in the {.field {queue}} queue, {nrow(items)} in all.",
    if (!is.null(spec)) c("i" = "Audit sample: {spec$drawn} of the model's {spec$excludes} Exclude{?s}, seed {spec$seed}."),
    " " = "{.url {url}}",
    "v" = "Every decision is saved in {.file {rev$path}} as you make it.",
    if (wait) c(" " = "Press Finish on the page (or Esc here) to return the decisions.")
  ), class = "tabscreen_message")
  if (open) review_open(url)
  if (!wait) {
    return(invisible(app))
  }
  review_wait(app)
  screen_review_decisions(app)
}

#' @rdname screen_review
#' @export
screen_review_decisions <- function(x, reviewer = NULL, store = NULL) {
  call <- rlang::current_env()
  target <- review_target(x, store, call)
  if (!file.exists(target$path)) {
    return(review_empty_decisions())
  }
  out <- go_call(C_review, as.character(to_json(list(op = "decisions", path = target$path, run_id = target$run_id))),
                 call = call)
  d <- tibble::as_tibble(out$table)
  d$group <- NULL
  d$decided_at <- as.POSIXct(d$decided_at, format = "%Y-%m-%dT%H:%M:%OSZ", tz = "UTC")
  if (!is.null(reviewer)) {
    if (!is.character(reviewer) || anyNA(reviewer)) {
      abort_arg("{.arg reviewer} must be {.code NULL} or reviewers' names.", class = "tabscreen_error_review",
        arg = "reviewer", call = call)
    }
    d <- d[d$reviewer %in% reviewer, , drop = FALSE]
  }
  d
}

#' @rdname screen_review
#' @param decisions The decisions to merge; `NULL` reads them from the store
#'   (`screen_review_decisions(x, reviewer, store)`).
#' @param column The name of the column of human decisions to add (replaced when it exists).
#' @return `screen_review_merge()`: `x` with the column `column` in each of its tables
#'   (`answer_data_aggregated`, `answer_data` and `error_data` of a result): 1 where the
#'   reviewers included the record, 0 where they excluded it, `NA` where nobody decided, a
#'   reviewer was unsure, or reviewers disagree (a message counts these conflicts).
#' @export
screen_review_merge <- function(x, decisions = NULL, column = "human_review", reviewer = NULL, store = NULL) {
  call <- rlang::current_env()
  if (!rlang::is_string(column) || is.na(column) || !nzchar(column)) {
    abort_arg("{.arg column} must be a column name (a single string).", class = "tabscreen_error_review",
      arg = "column", call = call)
  }
  if (is.null(decisions)) {
    decisions <- screen_review_decisions(x, reviewer = reviewer, store = store)
  } else if (!is.data.frame(decisions) || !all(c("studyid", "reviewer", "decision") %in% names(decisions))) {
    abort_arg("{.arg decisions} must be a table of {.fn screen_review_decisions}.", class = "tabscreen_error_review",
      arg = "decisions", call = call)
  } else if (!is.null(reviewer)) {
    decisions <- decisions[decisions$reviewer %in% reviewer, , drop = FALSE]
  }
  agreed <- review_consensus(decisions)
  conflicts <- sum(agreed$conflict)
  if (conflicts > 0) {
    cli::cli_inform(c("!" = "{conflicts} record{?s} decided differently by the reviewers {?is/are} {.val {NA}} in {.field {column}}.",
      "i" = "Settle them in the Conflicts queue of {.fn screen_review}, or merge one reviewer's decisions ({.arg reviewer})."),
      class = "tabscreen_message")
  }
  add <- function(t) {
    if (is.null(t) || !is.data.frame(t) || !"studyid" %in% names(t)) return(t)
    key <- review_key(t$studyid, review_group(review_column(t, "promptid"), review_column(t, "model"), review_column(t, "top_p")))
    t[[column]] <- agreed$value[match(key, agreed$key)]
    t
  }
  if (inherits(x, "llm")) {
    for (part in c("answer_data_aggregated", "answer_data", "error_data")) {
      if (!is.null(x[[part]])) x[[part]] <- add(x[[part]])
    }
    return(x)
  }
  if (!is.data.frame(x)) {
    abort_arg("{.arg x} must be a screening result (class {.cls llm}) or one of its tables, not {.obj_type_friendly {x}}.",
      class = c("tabscreen_error_object", "tabscreen_error_review"), arg = "x", call = call)
  }
  add(x)
}

#' @rdname screen_review
#' @param conf_level The confidence level of the bounds (one-sided), between 0 and 1.
#' @param ... Only for the deprecated name of `conf_level`, `confidence`, which is still taken
#'   with a warning of class `tabscreen_warning_deprecated`.
#' @return `screen_review_audit()`: a tibble with one row per prompt, model and `top_p` that has
#'   an audit sample: `promptid`, `model`, `top_p`, `excludes` (the model's Excludes), `seed`,
#'   `sampled` (records drawn), `reviewed` (drawn records with a decision), `found` (of them,
#'   included by a reviewer), `unsure` (decided Unsure and by nobody Include), `share` ((found +
#'   unsure) / reviewed; NA when none is reviewed), then, with k = found + unsure:
#'   * `missed_upper`: the exact (hypergeometric) upper confidence bound for the number of
#'     relevant records among all the Excludes, the audit's finds included: the largest D with
#'     `phyper(k, D, excludes - D, reviewed) > 1 - conf_level` (all the Excludes when none is
#'     reviewed); `share_upper` is `missed_upper / excludes`;
#'   * `missed_upper_binomial` and `share_upper_binomial`: the one-sided Clopper-Pearson bound on
#'     the same sample, `qbeta(conf_level, k + 1, reviewed - k)` (1 when k = reviewed) and that
#'     share of the Excludes rounded up; no tighter than the exact bound in any case the tests
#'     check;
#'   * `included`: the records the screening did not exclude (Include, Check, or no model
#'     decision), and `relevant`: of them, included by a reviewer;
#'   * `recall_lower`: a lower confidence bound for the recall of the screening with its audit,
#'     `(relevant + found) / (relevant + missed_upper)` (NA when both are 0). It counts as
#'     relevant only the records a reviewer included: review the screening's Includes (queue
#'     All) for a bound that says something;
#'   * `conf_level`.
#'
#'   An Unsure counts as a missed include: the bound stays on the safe side. The method, its
#'   references and how many Excludes to audit are in [screen_audit_plan()].
#' @export
screen_review_audit <- function(x, reviewer = NULL, conf_level = 0.95, store = NULL, ...) {
  call <- rlang::current_env()
  conf_level <- conf_level_arg(list(...), conf_level, !missing(conf_level), call)
  rev <- review_records(x, rlang::quo(NULL), store, call)
  spec <- review_audit_spec(rev, NULL, NULL, call)
  if (is.null(spec)) {
    abort_arg(c("Run {.val {rev$run_id}} has no audit sample.",
      "i" = "Draw one with {.code screen_review(x, audit = 50, seed = 1)} and decide its records."),
      class = c("tabscreen_error_review_audit", "tabscreen_error_review"), arg = "x", call = call)
  }
  items <- review_items(rev, spec)
  d <- screen_review_decisions(x, reviewer = reviewer, store = store)
  key_d <- review_key(d$studyid, review_group(review_column(d, "promptid"), review_column(d, "model"), review_column(d, "top_p")))
  included_by <- function(keys) {
    by <- split(d$decision[key_d %in% keys], key_d[key_d %in% keys])
    vapply(by, function(v) "Include" %in% v, logical(1))
  }
  sampled <- items[vapply(items$queues, function(q) "audit" %in% q, logical(1)), , drop = FALSE]
  is_excl <- items$model_num %in% 0L & !items$failed
  excl <- items[is_excl, , drop = FALSE]
  groups <- unique(items$group[items$group %in% excl$group])
  rows <- lapply(groups, function(g) {
    s <- sampled[sampled$group == g, , drop = FALSE]
    key <- review_key(s$studyid, s$group)
    by <- split(d$decision[key_d %in% key], key_d[key_d %in% key])
    found <- sum(vapply(by, function(v) "Include" %in% v, logical(1)))
    unsure <- sum(vapply(by, function(v) !"Include" %in% v && "Unsure" %in% v, logical(1)))
    n <- length(by)
    k <- found + unsure
    excludes <- sum(excl$group == g)
    kept <- items[!is_excl & items$group == g, , drop = FALSE]
    relevant <- sum(included_by(review_key(kept$studyid, kept$group)))
    b <- audit_bounds(excludes, n, k, conf_level)
    first <- items[items$group == g, , drop = FALSE][1, ]
    list(promptid = first$promptid, model = first$model, top_p = first$top_p,
      excludes = excludes, seed = spec$seed, sampled = nrow(s), reviewed = n, found = found,
      unsure = unsure, share = if (n > 0) k / n else NA_real_, share_upper = b$share_upper,
      missed_upper = b$missed_upper, share_upper_binomial = b$share_upper_binomial,
      missed_upper_binomial = b$missed_upper_binomial, included = nrow(kept), relevant = relevant,
      recall_lower = audit_recall_lower(relevant, found, b$missed_upper), conf_level = conf_level)
  })
  out <- tibble::as_tibble(do.call(rbind.data.frame, c(rows, stringsAsFactors = FALSE)))
  if (nrow(out) == 0) {
    out <- tibble::tibble(promptid = integer(), model = character(), top_p = double(), excludes = integer(),
      seed = double(), sampled = integer(), reviewed = integer(), found = integer(), unsure = integer(),
      share = double(), share_upper = double(), missed_upper = double(), share_upper_binomial = double(),
      missed_upper_binomial = double(), included = integer(), relevant = integer(), recall_lower = double(),
      conf_level = double())
  }
  if (all(is.na(out$top_p))) out$top_p <- NULL
  out
}

#' @export
print.tabscreen_review_app <- function(x, ...) {
  alive <- x$is_alive()
  cli::cli_text("{.cls tabscreen_review_app}: run {.val {x$run_id}}, {if (alive) 'running' else 'stopped'}.")
  cli::cli_bullets(c(" " = "{.url {x$url}}", " " = "Decisions in {.file {x$store}}: {.code screen_review_decisions(app)}.",
    if (alive) c(" " = "Stop it with {.code app$stop()}.")))
  invisible(x)
}

# ---- what the page shows ------------------------------------------------------------------------

# The records of `x` as the page shows them, with the run they belong to.
#   rows   report_rows() of the source, plus group, human (1/0/NA), explanations, check
#   run_id, path (the store file), src (report_source()), human_col
review_records <- function(x, human, store, call) {
  if (inherits(x, "tabscreen_review_app")) {
    abort_arg("{.arg x} is a running review app; pass the screening result it reviews.",
      class = c("tabscreen_error_object", "tabscreen_error_review"), arg = "x", call = call)
  }
  src <- report_source(x, call = call)
  rows <- report_rows(src)
  human_col <- if (rlang::quo_is_null(human)) NULL else resolve_human_column(human, src$table, call = call)
  rows$human <- if (is.null(human_col)) rep(NA_integer_, nrow(rows)) else human_values(src$table[[human_col]], human_col, call = call)
  rows$raw <- report_col(src$table, "decision_llm")
  if (!is.null(src$failed_rows)) {
    failed <- src$failed_rows
    failed$human <- if (is.null(human_col)) NA_integer_ else human_values(attr(failed, "source")[[human_col]], human_col, call = call)
    failed$raw <- NA_character_
    rows <- rbind(rows, failed[names(rows)])
  }
  rows$group <- review_group(rows$promptid, rows$model, rows$top_p)
  if (anyDuplicated(review_key(rows$studyid, rows$group))) {
    abort_arg(c("{.arg x} holds a study id more than once for the same prompt, model and top_p.",
      "i" = "Review each screening on its own, or its {.field answer_data_aggregated}."),
      class = c("tabscreen_error_object", "tabscreen_error_review"), arg = "x", call = call)
  }
  rows$explanations <- review_explanations(x, rows)
  run <- attr(x, "store")
  if (inherits(x, "llm") && !is.null(run$run_id)) {
    run_id <- run$run_id
    path <- if (is.null(store)) run$path else store_file(store, call)
  } else {
    path <- store_file(store, call)
    run_id <- review_content_id(rows)
  }
  list(rows = rows, src = src, human_col = human_col, run_id = run_id, path = path)
}

# Where a review's decisions are: list(run_id, path).
review_target <- function(x, store, call) {
  if (inherits(x, "tabscreen_review_app")) {
    return(list(run_id = x$run_id, path = if (is.null(store)) x$store else store_file(store, call)))
  }
  if (rlang::is_string(x)) {
    return(list(run_id = x, path = store_file(store, call)))
  }
  if (inherits(x, "llm") && !is.null(attr(x, "store")$run_id)) {
    run <- attr(x, "store")
    return(list(run_id = run$run_id, path = if (is.null(store)) run$path else store_file(store, call)))
  }
  rev <- review_records(x, rlang::quo(NULL), store, call)
  list(run_id = rev$run_id, path = rev$path)
}

# A table without a run is known by its records: the same table (or its file) continues.
review_content_id <- function(rows) {
  file <- tempfile("tabscreen-review-id-")
  on.exit(unlink(file))
  text <- paste(rows$studyid, rows$title, rows$group, sep = "\x1f", collapse = "\x1e")
  writeBin(charToRaw(enc2utf8(text)), file)
  paste0("review-", substr(unname(tools::md5sum(file)), 1, 16))
}

review_column <- function(t, name) {
  if (name %in% names(t)) as.character(t[[name]]) else rep(NA_character_, nrow(t))
}

# The key of a prompt x model x top_p, as the store keeps it (grp): "1/gpt-6-luna/1".
review_group <- function(promptid, model, top_p) {
  part <- function(v) {
    v <- as.character(v)
    ifelse(is.na(v) | !nzchar(v), "-", v)
  }
  paste(part(promptid), part(model), part(top_p), sep = "/")
}

review_key <- function(studyid, group) paste(as.character(studyid), group, sep = "\x1f")

# Each repetition's explanation, when the screening kept them (an llm object with
# answer_data); else the one explanation of the row.
review_explanations <- function(x, rows) {
  single <- lapply(seq_len(nrow(rows)), function(i) {
    if (is_blank(rows$explanation[i])) list() else list(list(decision = rows$raw[i], text = rows$explanation[i]))
  })
  answers <- if (inherits(x, "llm") && !is.null(x$answer_data_aggregated)) x$answer_data else NULL
  if (is.null(answers) || !"detailed_description" %in% names(answers)) {
    return(single)
  }
  key <- review_key(answers$studyid, review_group(review_column(answers, "promptid"), review_column(answers, "model"),
    review_column(answers, "top_p")))
  ord <- order(key, if ("n" %in% names(answers)) answers$n else seq_len(nrow(answers)))
  by <- split(ord, key[ord])
  row_key <- review_key(rows$studyid, rows$group)
  lapply(seq_along(row_key), function(i) {
    idx <- by[[row_key[i]]]
    if (is.null(idx)) return(single[[i]])
    lapply(idx, function(j) list(decision = as.character(answers$decision_llm[j]), text = answers$detailed_description[j]))
  })
}

# The audit sample's seed and size (stored with the run), and how many Excludes it is drawn from;
# NULL when the run has none and none is asked for.
review_audit_spec <- function(rev, audit, seed, call) {
  request <- if (is.null(audit)) {
    list(op = "stored_audit", path = rev$path, run_id = rev$run_id)
  } else {
    list(op = "audit", path = rev$path, run_id = rev$run_id, seed = if (is.null(seed)) 0 else seed, size = audit)
  }
  spec <- go_call(C_review, as.character(to_json(request)), call = call, on_error = function(err) {
    if (identical(err$class, "tabscreen_error_review_audit")) {
      abort_arg(err$message, class = c("tabscreen_error_review_audit", "tabscreen_error_review"),
        arg = "audit", call = call)
    }
  })$meta
  if (is.null(spec$seed)) {
    return(NULL)
  }
  excl <- rev$rows$model_num %in% 0L & !rev$rows$failed
  per_group <- table(rev$rows$group[excl])
  list(seed = spec$seed, size = spec$size, excludes = sum(excl),
    drawn = sum(pmin(as.integer(per_group), spec$size)))
}

# The page's records: one row per record x group, with its queues and its rank in the audit.
review_items <- function(rev, spec) {
  r <- rev$rows
  n <- nrow(r)
  check <- r$failed | (!is.na(r$verdict) & r$verdict == "Check") | (!is.na(r$raw) & r$raw == "1.1")
  disagree <- !r$failed & !is.na(r$human) & !is.na(r$model_num) & r$model_num != r$human
  rank <- rep(NA_integer_, n)
  if (!is.null(spec)) {
    excl <- which(r$model_num %in% 0L & !r$failed)
    for (g in unique(r$group[excl])) {
      pile <- excl[r$group[excl] == g]
      # The whole pile in a random order, of which the audit is the head: a larger sample with the
      # same seed keeps every record already drawn.
      order <- with_local_seed(spec$seed, sample.int(length(pile)))
      take <- utils::head(order, spec$size)
      rank[pile[take]] <- seq_along(take)
    }
  }
  # I(): a one-queue record still gets a JSON array.
  queues <- lapply(seq_len(n), function(i) {
    I(c(if (check[i]) "check", if (disagree[i]) "disagreements", if (!is.na(rank[i])) "audit", "all"))
  })
  tibble::tibble(
    studyid = as.character(r$studyid), group = r$group,
    promptid = suppressWarnings(as.integer(r$promptid)), model = r$model,
    top_p = suppressWarnings(as.numeric(r$top_p)), submodel = r$submodel,
    title = r$title, abstract = r$abstract, author = r$author,
    verdict = r$verdict, model_num = r$model_num, incl_p = r$incl_p, reps = r$reps, n_mis = r$n_mis,
    failed = r$failed, human = r$human, explanations = r$explanations, queues = queues, audit_rank = rank
  )
}

review_meta <- function(rev, spec, items, reviewer, queue, highlight, title, call) {
  rows <- rev$rows
  prompts <- unique(rows[!is_blank(rows$prompt), c("promptid", "prompt")])
  prompts <- prompts[!duplicated(prompts$promptid), , drop = FALSE]
  prompt_text <- stats::setNames(as.list(prompts$prompt), review_prompt_key(prompts$promptid))
  ids <- unique(review_prompt_key(items$promptid))
  terms <- review_highlight(highlight, prompts, ids, call)
  cut <- rev$src$meta$cutoffs
  list(
    title = title %||% rev$run_id, run_id = rev$run_id, reviewer = reviewer, queue = queue,
    human_column = rev$human_col, kind = rev$src$kind, has_explanation = rev$src$has_explanation,
    cutoffs = if (is.null(cut)) NULL else list(upper = cut$upper, lower = cut$lower),
    audit = if (is.null(spec)) NULL else spec,
    prompts = prompt_text, terms = terms
  )
}

# The terms to highlight, per prompt id: the user's, or the longer words of each prompt.
review_highlight <- function(highlight, prompts, ids, call) {
  if (isFALSE(highlight)) {
    return(stats::setNames(rep(list(I(character())), length(ids)), ids))
  }
  if (!is.null(highlight)) {
    if (!is.character(highlight) || anyNA(highlight)) {
      abort_arg("{.arg highlight} must be {.code NULL}, {.code FALSE} or the terms to highlight (a character vector).",
        class = "tabscreen_error_review", arg = "highlight", call = call)
    }
    return(stats::setNames(rep(list(I(unique(trimws(highlight[nzchar(trimws(highlight))])))), length(ids)), ids))
  }
  out <- lapply(ids, function(id) {
    text <- prompts$prompt[match(id, review_prompt_key(prompts$promptid))]
    I(if (is.na(text)) character() else prompt_terms(text))
  })
  stats::setNames(out, ids)
}

# The page looks prompts and terms up by String(promptid): "null" for a record without one.
review_prompt_key <- function(promptid) {
  key <- as.character(promptid)
  ifelse(is.na(key) | !nzchar(key), "null", key)
}

# The words of a prompt that say what a record is about: not the words of the screening task
# itself. A word is cut to a stem ("therapies" -> "therap") so that the page's prefix match finds
# its other forms.
prompt_terms <- function(prompt) {
  words <- regmatches(prompt, gregexpr("[[:alpha:]][[:alpha:]-]*[[:alpha:]]", prompt))[[1]]
  if (length(words) == 0) return(character())
  acronym <- grepl("^[[:upper:]]{2,}$", words)
  words <- tolower(words)
  keep <- (nchar(words) >= 4 | acronym) & !words %in% review_stopwords
  words <- words[keep]
  stem <- ifelse(grepl("ies$", words), sub("ies$", "", words),
    ifelse(grepl("[^s]s$", words) & nchar(words) > 4, sub("s$", "", words), words))
  stem <- ifelse(nchar(stem) >= 3, stem, words)
  unique(stem)
}

review_stopwords <- c(
  "about", "above", "after", "again", "against", "also", "among", "another", "anything", "article", "articles",
  "because", "been", "before", "being", "below", "between", "both", "cannot", "close", "could", "does", "doing",
  "during", "each", "either", "else", "even", "every", "everything", "evaluate", "evaluates", "evaluated",
  "evaluating", "exclude", "excluded", "excludes", "excluding", "from", "further", "have", "having", "here",
  "include", "included", "includes", "including", "into", "itself", "just", "like", "many", "more", "most",
  "much", "must", "neither", "only", "other", "others", "otherwise", "over", "paper", "papers", "please",
  "record", "records", "relevant", "report", "reports", "research", "review", "reviews", "same", "screen",
  "screening", "should", "since", "some", "studies", "study", "such", "systematic", "than", "that", "their",
  "them", "then", "there", "these", "they", "this", "those", "through", "title", "titles", "abstract",
  "abstracts", "under", "until", "upon", "very", "variant", "variants", "want", "were", "what", "when", "where",
  "whether", "which", "while", "whose", "will", "with", "within", "without", "would", "your", "years"
)

# ---- the app's process ----------------------------------------------------------------------------

review_start <- function(rev, items, meta, port, call) {
  page_file <- tempfile("tabscreen-review-", fileext = ".json")
  doc <- paste0('{"meta":', to_json(meta), ',"items":',
    jsonlite::toJSON(items, dataframe = "rows", na = "null", null = "null", auto_unbox = TRUE, digits = NA), "}")
  writeBin(charToRaw(enc2utf8(doc)), page_file)
  port_file <- tempfile("tabscreen-review-port-")
  err_file <- tempfile("tabscreen-review-stderr-")
  options <- as.character(to_json(list(store = rev$path, run_id = rev$run_id, page = page_file,
    port = if (is.null(port)) 0L else as.integer(port), port_file = port_file)))
  child <- core_child_command("C_review_serve")
  # stdin is a pipe: when this R session ends, however it ends, the app reads EOF and exits.
  proc <- keep_random_state(processx::process$new(child$program, child$args(options), stdin = "|", stdout = NULL,
    stderr = err_file, cleanup = TRUE))
  state <- new.env(parent = emptyenv())
  state$proc <- proc
  state$stopped <- FALSE
  state$files <- c(page_file, port_file, err_file)
  reg.finalizer(state, fake_stop, onexit = TRUE)
  addr <- review_wait_address(proc, port_file, timeout = 20)
  if (is.null(addr)) {
    said <- fake_stderr(err_file)
    fake_stop(state)
    tabscreen_abort(c("The review app did not start.", "x" = "{said}"), class = "tabscreen_error_review", call = call)
  }
  structure(list(
    url = addr$url, port = addr$port, run_id = rev$run_id, store = rev$path, process = proc,
    stop = function() invisible(fake_stop(state)),
    is_alive = function() !state$stopped && proc$is_alive()
  ), class = "tabscreen_review_app")
}

# The app's address from the file it writes once it listens; NULL if it died or took too long.
review_wait_address <- function(proc, port_file, timeout) {
  deadline <- Sys.time() + timeout
  repeat {
    if (file.exists(port_file)) {
      addr <- tryCatch(jsonlite::fromJSON(port_file), error = function(e) NULL)
      if (is.list(addr) && is.numeric(addr$port)) return(addr)
    }
    if (!proc$is_alive() || Sys.time() > deadline) return(NULL)
    Sys.sleep(0.02)
  }
}

# Until the reviewer presses Finish (the app ends) or the user interrupts R.
review_wait <- function(app) {
  tryCatch(
    while (app$is_alive()) Sys.sleep(0.2),
    interrupt = function(cnd) NULL
  )
  app$stop()
  invisible()
}

review_open <- function(url) {
  viewer <- getOption("viewer")
  if (is.function(viewer)) viewer(url) else utils::browseURL(url)
}

review_queue_arg <- function(queue, default, call) {
  queues <- c("check", "disagreements", "audit", "all", "conflicts")
  if (default) return("check")
  if (!rlang::is_string(queue) || !queue %in% queues) {
    abort_arg("{.arg queue} must be one of {.or {.val {queues}}}.", class = "tabscreen_error_review", arg = "queue", call = call)
  }
  queue
}

review_reviewer <- function(reviewer, call) {
  reviewer <- reviewer %||% getOption("tabscreen.reviewer") %||% Sys.info()[["user"]] %||% "reviewer"
  if (!rlang::is_string(reviewer) || is.na(reviewer) || !nzchar(trimws(reviewer)) || nchar(reviewer) > 100 ||
    grepl("[\r\n\t]", reviewer)) {
    abort_arg("{.arg reviewer} must be a name of 1 to 100 characters on one line.", class = "tabscreen_error_review",
      arg = "reviewer", call = call)
  }
  trimws(reviewer)
}

# One value per record x group from the reviewers' decisions: their common decision (1 include,
# 0 exclude, NA unsure), NA where they differ.
review_consensus <- function(d) {
  if (nrow(d) == 0) {
    return(data.frame(key = character(), value = integer(), conflict = logical()))
  }
  key <- review_key(d$studyid, review_group(review_column(d, "promptid"), review_column(d, "model"), review_column(d, "top_p")))
  by <- split(d$decision, key)
  conflict <- vapply(by, function(v) length(unique(v)) > 1, logical(1))
  value <- vapply(by, function(v) {
    if (length(unique(v)) > 1) NA_integer_ else switch(v[1], Include = 1L, Exclude = 0L, NA_integer_)
  }, integer(1))
  data.frame(key = names(by), value = unname(value), conflict = unname(conflict), stringsAsFactors = FALSE)
}

review_empty_decisions <- function() {
  tibble::tibble(run_id = character(), studyid = character(), promptid = integer(), model = character(),
    top_p = double(), reviewer = character(), decision = character(), note = character(),
    decided_at = as.POSIXct(character(), tz = "UTC"), seconds = double(), queue = character(), audit = logical())
}
