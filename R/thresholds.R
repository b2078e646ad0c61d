#' Recall and specificity at every inclusion cut-off
#'
#' A threshold sweep for choosing the inclusion cut-off on a labelled pilot: for every prompt,
#' model and `top_p` group of a screening with `reps > 1`, and every distinct inclusion
#' probability `incl_p` observed in it, the records are included iff `incl_p >= cutoff` and
#' compared with the human decisions. The lowest cut-off includes every record (recall 1); each
#' higher one excludes more records, trading recall for specificity. Pass the chosen value as
#' `incl_cutoff_upper` (and a lower one as `incl_cutoff_lower` to flag records for checking) when
#' you screen the rest.
#'
#' Records without an inclusion probability (every repetition failed) or without a human decision
#' are left out and counted in `n_missing` and `n_human_missing`; groups screened only once (a
#' model with `reps = 1` beside others with more) have no inclusion probability to sweep and are
#' left out. The measures and the Wilson score intervals are those of [screen_analyzer()].
#'
#' @inheritParams screen_analyzer
#' @param x A screening result of class `llm` with `reps > 1`, or its `answer_data_aggregated`.
#' @return A tibble of class `tabscreen_thresholds`: the group columns (`promptid`, `model`,
#'   `top_p` where present, `reps`), `cutoff`, `n` (records with both decisions), `n_missing`,
#'   `n_human_missing`, `n_included` (records at or above the cut-off), `TP`, `FP`, `TN`, `FN`,
#'   `recall`, `specificity` and `precision` with their intervals (`*_lower`, `*_upper`), and
#'   `wss95` (work saved over sampling at 95 % recall, `NA` below 95 % recall). Plot it with
#'   `plot()` or `ggplot2::autoplot()`.
#' @seealso [screen_analyzer()], [plot.llm()].
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' pilot <- filges2015_dat[c(1:10, 181:190), ]
#' res <- tabscreen_a.tools(
#'   pilot, prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", reps = 4, progress = FALSE, messages = FALSE
#' )
#' th <- screen_thresholds(res, human_code)
#' th
#' # The highest cut-off that keeps every human include
#' max(th$cutoff[th$recall == 1])
#' fake$stop()
#' options(old)
screen_thresholds <- function(x, human_decision = human_code, ..., conf_level = 0.95) {
  call <- rlang::current_env()
  rlang::check_dots_empty(call = call)
  check_unit_interval(conf_level, "conf_level", call = call)
  if ((inherits(x, "llm") && is.null(x$answer_data_aggregated)) || inherits(x, "llm_tbl")) {
    abort_thresholds_reps(call)
  }
  rec <- analysis_records(x, rlang::enquo(human_decision), call = call)
  groups <- setdiff(rec$groups, "prompt")
  records <- rec$records[!is.na(rec$records$reps) & rec$records$reps > 1, , drop = FALSE]
  if (rec$kind != "aggregated" || nrow(records) == 0) {
    abort_thresholds_reps(call)
  }
  rec$records <- records
  rec$missing <- rec$missing[rec$missing$reps > 1, , drop = FALSE]
  z <- stats::qnorm(1 - (1 - conf_level) / 2)
  gid <- group_index(records, groups)
  rows <- list()
  for (g in seq_len(max(gid))) {
    r <- records[gid == g, , drop = FALSE]
    evaluated <- !is.na(r$incl_p) & !is.na(r$human)
    for (cutoff in sort(unique(r$incl_p[evaluated]))) {
      # Exact comparison: every cut-off is one of the observed values themselves.
      decision <- ifelse(is.na(r$incl_p), NA_integer_, as.integer(r$incl_p >= cutoff))
      rows[[length(rows) + 1L]] <- c(
        as.list(r[1, groups, drop = FALSE]),
        list(cutoff = cutoff, n = sum(evaluated), n_missing = sum(is.na(r$incl_p)),
          n_human_missing = sum(is.na(r$human)), n_included = sum(evaluated & decision == 1L)),
        confusion_counts(r$human, decision)
      )
    }
  }
  cols <- c(groups, "cutoff", "n", "n_missing", "n_human_missing", "n_included", "TP", "FP", "TN", "FN")
  out <- if (length(rows) == 0) {
    stats::setNames(lapply(cols, function(col) if (col %in% groups) records[[col]][0] else if (col == "cutoff") double() else integer()), cols)
  } else {
    stats::setNames(lapply(cols, function(col) do.call(c, lapply(rows, `[[`, col))), cols)
  }
  metrics <- confusion_metrics(out$TP, out$FP, out$TN, out$FN, z)
  keep <- c("recall", "recall_lower", "recall_upper", "specificity", "specificity_lower", "specificity_upper",
    "precision", "precision_lower", "precision_upper", "wss95")
  out <- tibble::new_tibble(c(out, metrics[keep]), nrow = length(rows))
  new_analysis(out, "tabscreen_thresholds", rec, conf_level)
}

abort_thresholds_reps <- function(call) {
  abort_arg(c("{.arg x} has no inclusion probabilities to sweep: it was screened with {.code reps = 1}.",
    "i" = "Screen a labelled pilot with {.code reps > 1} (e.g. {.code reps = 10}), then choose the cut-off from its {.field incl_p}."),
    class = "tabscreen_error_thresholds_reps", arg = "x", call = call)
}

#' @export
print.tabscreen_thresholds <- function(x, ...) {
  human <- attr(x, "human_decision") %||% "?"
  level <- attr(x, "conf_level") %||% 0.95
  missing <- attr(x, "missing")
  cli::cli_text("{.cls tabscreen_thresholds}: include iff incl_p >= cutoff, against the human decisions in {.field {human}}; {format(100 * level)}% Wilson score intervals.")
  if (!is.null(missing) && nrow(missing) > 0) {
    cli::cli_bullets(c("!" = "{nrow(missing)} record{?s} without an inclusion probability, not counted: see {.code attr(x, \"missing\")}."))
  }
  NextMethod()
  invisible(x)
}
