# Evaluation of a screening against human decisions: screen_analyzer() and the pieces that
# screen_thresholds(), screen_target_recall() and the plots share (the per-record table, the
# human decisions, the confusion-table metrics).

# `human_code` is the default of `human_decision`: a column name captured unevaluated, never a
# variable.
utils::globalVariables("human_code")

#' Evaluate a screening against human decisions
#'
#' Compares the model's decisions with the decisions of human screeners, for every prompt, model
#' and `top_p` value of a screening (provider B has no `top_p`), and reports the confusion counts
#' and the usual agreement measures, each proportion with a confidence interval. Use it on a
#' labelled pilot before screening the rest, or to compare prompts and models.
#'
#' @section Which decision is evaluated:
#' * With `reps = 1`, the model's decision is `decision_binary` of `answer_data` (an uncertain
#'   answer `"1.1"` counts as include, as in `decision_binary`; `n_check` counts them).
#' * With `reps > 1`, the decision is the result's verdict `final_decision_llm` (row
#'   `rule = "verdict"`). A verdict `"Check"` (an inclusion probability between the lower and the
#'   upper cut-off) counts as **include**: a human will read the record, so it is not lost, and
#'   this is also `final_decision_llm_num`. `n_check` counts them. In addition, one row per
#'   cut-off of the grid `k / reps` (`k = 1, ..., reps`, row `rule = "cutoff"`) evaluates the
#'   rule "include iff `incl_p >= cutoff`", so you can see what another cut-off would have given.
#'   For a finer sweep at every observed `incl_p`, see [screen_thresholds()].
#'
#' @section Missing decisions:
#' A record without a model decision (all its repetitions failed, its request is in
#' `error_data`, or its decision is `NA`) counts in `n_missing` and in nothing else: it is neither
#' an agreement nor a disagreement. Such records are listed in the attribute `"missing"` of the
#' result (group, `studyid`, `title`, reason) and in the list-column `missing_studyid`; re-send
#' them with [screen_errors()]. A verdict that rests on fewer answers than `reps` (some
#' repetitions failed) is evaluated, and counted in `n_incomplete`. Records whose human decision
#' is `NA` (or an empty string) count in `n_human_missing` and are left out too. `n` is the number
#' of records with both decisions: `n = TP + FP + TN + FN`. Given `answer_data` alone, failed
#' requests are not visible (they are in `error_data`): pass the whole result.
#'
#' @section Measures:
#' With TP = human include and model include, FP = human exclude and model include, TN = both
#' exclude and FN = human include and model exclude (the human includes the model missed):
#' * `recall` (sensitivity) TP / (TP + FN); `specificity` TN / (TN + FP); `precision`
#'   TP / (TP + FP); `npv` (negative predictive value) TN / (TN + FN); `accuracy` (share of
#'   agreement) (TP + TN) / n. Each has a Wilson score interval (`*_lower`, `*_upper`) at
#'   `conf_level`: with p the proportion of x in m and z the normal quantile,
#'   (p + z^2/(2m) -/+ z sqrt(p(1 - p)/m + z^2/(4m^2))) / (1 + z^2/m).
#' * `bacc` (balanced accuracy) (recall + specificity) / 2.
#' * `F1` 2PR / (P + R) and `F2` (F-beta with beta = 2) 5PR / (4P + R), with P precision and R
#'   recall, computed from the counts as 2TP / (2TP + FP + FN) and 5TP / (5TP + 4FN + FP).
#' * `kappa`: Cohen's kappa (po - pe) / (1 - pe), with po = (TP + TN) / n and
#'   pe = ((TP + FP)(TP + FN) + (TN + FN)(TN + FP)) / n^2. `kappa_se` is Cohen's (1960)
#'   large-sample standard error sqrt(po (1 - po) / (n (1 - pe)^2)), and `kappa_lower`,
#'   `kappa_upper` are kappa -/+ z `kappa_se`, kept within \[-1, 1\].
#' * `mcc`: the Matthews correlation coefficient (TP TN - FP FN) / sqrt((TP + FP)(TP + FN)(TN + FP)(TN + FN)),
#'   between -1 and 1 (`NA` when a margin is empty).
#' * `wss95`: work saved over sampling at 95 % recall (Cohen et al. 2006),
#'   (TN + FN) / n - 0.05, for a decision whose recall is at least 0.95; `NA` when the decision
#'   misses more than 5 % of the human includes (it does not reach 95 % recall). With `reps > 1`
#'   the `cutoff` rows rank the records by `incl_p`: the `wss95` of the highest cut-off that still
#'   reaches 95 % recall is the work saved by screening in that order.
#'
#' A measure whose denominator is 0 is `NA`.
#'
#' @param x A screening result of class `llm` ([tabscreen_a.tools()], [tabscreen_b()],
#'   [tabscreen_c()], also after [screen_errors()]), or one of its tables `answer_data`
#'   (`llm_tbl`, for `reps = 1`) or `answer_data_aggregated` (`llm_agg_tbl`).
#' @param human_decision The column of the screened data with the human decisions, carried into
#'   the result: a bare name (`human_code`) or a string (`"human_code"`). Its values must be 1/0,
#'   `TRUE`/`FALSE` or `"include"`/`"exclude"` (any case); `NA` means no human decision.
#' @param key_result `TRUE` for the short table (group columns, `n`, recall and specificity with
#'   their intervals, precision, kappa, `n_missing` and `FN`; `rule` and `cutoff` only when a
#'   group has `reps > 1`), `FALSE` for every column.
#' @param ... Must be empty; the arguments after it must be named.
#' @param conf_level Confidence level of the intervals.
#' @return A tibble of class `tabscreen_analysis`, one row per group (`promptid`, `prompt`,
#'   `model`, `top_p` where present, `reps`) and decision rule (`rule`, `cutoff`), with the
#'   columns described above and the counts `n_records`, `n`, `n_missing`, `n_human_missing`,
#'   `n_incomplete`, `n_check`, `TP`, `FP`, `TN`, `FN`. Attributes: `human_decision` (the column
#'   name), `conf_level`, `missing` (the records without a model decision).
#' @references Cohen, A. M., Hersh, W. R., Peterson, K., & Yen, P.-Y. (2006). Reducing workload
#'   in systematic review preparation using automated citation classification. *Journal of the
#'   American Medical Informatics Association*, 13(2), 206-219.
#'
#'   Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and
#'   Psychological Measurement*, 20(1), 37-46.
#'
#'   Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
#'   *Journal of the American Statistical Association*, 22(158), 209-212.
#' @seealso [screen_thresholds()] to choose a cut-off, [screen_target_set()] for a recall claim
#'   with stated confidence, [plot.llm()].
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' # 20 records of the bundled data (10 included, 10 excluded by the review's screeners), screened
#' # three times each by the local stand-in provider.
#' pilot <- filges2015_dat[c(1:10, 181:190), ]
#' res <- tabscreen_a.tools(
#'   pilot, prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", reps = 3, progress = FALSE, messages = FALSE
#' )
#' screen_analyzer(res, human_decision = human_code)
#'
#' # Every measure, and the human decision given as a string
#' all <- screen_analyzer(res, "human_code", key_result = FALSE)
#' all[, c("rule", "cutoff", "TP", "FP", "TN", "FN", "F2", "mcc", "wss95")]
#' fake$stop()
#' options(old)
screen_analyzer <- function(x, human_decision = human_code, key_result = TRUE, ..., conf_level = 0.95) {
  call <- rlang::current_env()
  rlang::check_dots_empty(call = call)
  check_flag(key_result, "key_result", call = call)
  check_unit_interval(conf_level, "conf_level", call = call)
  rec <- analysis_records(x, rlang::enquo(human_decision), call = call)
  records <- rec$records
  groups <- rec$groups
  gid <- group_index(records, groups)
  z <- stats::qnorm(1 - (1 - conf_level) / 2)

  rows <- list()
  for (g in seq_len(max(gid, 0L))) {
    r <- records[gid == g, , drop = FALSE]
    reps <- r$reps[1]
    rules <- data.frame(rule = "verdict", cutoff = NA_real_, stringsAsFactors = FALSE)
    if (rec$kind == "aggregated" && !is.na(reps) && reps > 1) {
      rules <- rbind(rules, data.frame(rule = "cutoff", cutoff = seq_len(reps) / reps, stringsAsFactors = FALSE))
    }
    for (i in seq_len(nrow(rules))) {
      decision <- if (rules$rule[i] == "verdict") r$decision else include_at(r$incl_p, rules$cutoff[i])
      counts <- confusion_counts(r$human, decision)
      known <- !is.na(r$decision)
      rows[[length(rows) + 1L]] <- c(
        as.list(r[1, groups, drop = FALSE]),
        list(
          rule = rules$rule[i], cutoff = rules$cutoff[i],
          n_records = nrow(r),
          n = sum(known & !is.na(r$human)),
          n_missing = sum(!known),
          n_human_missing = sum(is.na(r$human)),
          n_incomplete = sum(known & r$incomplete),
          n_check = if (rules$rule[i] == "verdict") sum(known & r$check) else NA_integer_
        ),
        counts,
        list(missing_studyid = list(r$studyid[!known]))
      )
    }
  }
  out <- analysis_rows(rows, groups, records)
  metrics <- confusion_metrics(out$TP, out$FP, out$TN, out$FN, z)
  out <- c(out[setdiff(names(out), "missing_studyid")], metrics, out["missing_studyid"])
  out <- tibble::new_tibble(out, nrow = length(rows))

  if (key_result) {
    key_groups <- setdiff(groups, "prompt")
    rule_cols <- if (any(out$rule == "cutoff")) c("rule", "cutoff") else character()
    out <- out[c(key_groups, rule_cols, "n", "recall", "recall_lower", "recall_upper", "specificity",
      "specificity_lower", "specificity_upper", "precision", "kappa", "n_missing", "FN")]
  }
  new_analysis(out, "tabscreen_analysis", rec, conf_level)
}

#' @export
print.tabscreen_analysis <- function(x, ...) {
  human <- attr(x, "human_decision") %||% "?"
  level <- attr(x, "conf_level") %||% 0.95
  missing <- attr(x, "missing")
  n_human <- attr(x, "n_human_missing") %||% 0L
  cli::cli_text("{.cls tabscreen_analysis}: the screening against the human decisions in {.field {human}}.")
  has_cutoffs <- "rule" %in% names(x) && any(x$rule == "cutoff", na.rm = TRUE)
  decisions <- if (identical(attr(x, "decision_source"), "answers")) {
    "The model's decision: {.field decision_binary} (an uncertain {.val 1.1} counts as include)."
  } else if (has_cutoffs) {
    "Rule {.val verdict}: the result's {.field final_decision_llm} ({.val Check} counts as include); rule {.val cutoff}: include iff {.code incl_p >= cutoff}."
  } else {
    "The model's decision: the result's {.field final_decision_llm} ({.val Check} counts as include)."
  }
  cli::cli_bullets(c(
    "*" = decisions,
    "*" = "{format(100 * level)}% Wilson score intervals; kappa with Cohen's large-sample standard error.",
    if (!is.null(missing) && nrow(missing) > 0) {
      c("!" = "{nrow(missing)} record{?s} without a model decision, not counted: see {.code attr(x, \"missing\")} and re-send them with {.fn screen_errors}.")
    },
    if (n_human > 0) c("!" = "{n_human} record{?s} without a human decision, not counted.")
  ))
  NextMethod()
  invisible(x)
}

# The result class: the table plus what a reader needs to interpret it.
new_analysis <- function(out, class, rec, conf_level) {
  out <- tibble::new_tibble(out, nrow = nrow(out), class = class)
  attr(out, "human_decision") <- rec$human
  attr(out, "conf_level") <- conf_level
  attr(out, "missing") <- rec$missing
  attr(out, "decision_source") <- rec$kind
  attr(out, "n_human_missing") <- sum(is.na(rec$records$human))
  out
}

# Rows (lists of scalars, one list-column) into columns.
analysis_rows <- function(rows, groups, records) {
  if (length(rows) == 0) {
    empty <- lapply(records[groups], function(col) col[0])
    return(c(empty, list(rule = character(), cutoff = double(), n_records = integer(), n = integer(),
      n_missing = integer(), n_human_missing = integer(), n_incomplete = integer(), n_check = integer(),
      TP = integer(), FP = integer(), TN = integer(), FN = integer(), missing_studyid = list())))
  }
  cols <- names(rows[[1]])
  out <- lapply(cols, function(col) {
    values <- lapply(rows, `[[`, col)
    if (col == "missing_studyid") lapply(values, `[[`, 1) else do.call(c, values)
  })
  stats::setNames(out, cols)
}

# Include iff incl_p >= cutoff. The tolerance absorbs the rounding of k/reps (3/10 against 0.3);
# the aggregation applies its cut-offs the same way.
include_at <- function(incl_p, cutoff) {
  ifelse(is.na(incl_p), NA_integer_, as.integer(incl_p >= cutoff - 1e-9))
}

confusion_counts <- function(human, decision) {
  ok <- !is.na(human) & !is.na(decision)
  list(
    TP = sum(ok & human == 1L & decision == 1L),
    FP = sum(ok & human == 0L & decision == 1L),
    TN = sum(ok & human == 0L & decision == 0L),
    FN = sum(ok & human == 1L & decision == 0L)
  )
}

# The measures of a confusion table (vectorised over tables). `z` is the normal quantile of the
# intervals. Counts are made double so that the products cannot overflow.
confusion_metrics <- function(TP, FP, TN, FN, z) {
  TP <- as.numeric(TP)
  FP <- as.numeric(FP)
  TN <- as.numeric(TN)
  FN <- as.numeric(FN)
  n <- TP + FP + TN + FN
  out <- list()
  add_proportion <- function(name, x, m) {
    ci <- wilson_interval(x, m, z)
    out[[name]] <<- ifelse(m > 0, x / m, NA_real_)
    out[[paste0(name, "_lower")]] <<- ci$lower
    out[[paste0(name, "_upper")]] <<- ci$upper
  }
  add_proportion("recall", TP, TP + FN)
  add_proportion("specificity", TN, TN + FP)
  add_proportion("precision", TP, TP + FP)
  add_proportion("npv", TN, TN + FN)
  add_proportion("accuracy", TP + TN, n)
  out$bacc <- (out$recall + out$specificity) / 2
  out$F1 <- ratio(2 * TP, 2 * TP + FP + FN)
  out$F2 <- ratio(5 * TP, 5 * TP + 4 * FN + FP)

  po <- ratio(TP + TN, n)
  pe <- ratio((TP + FP) * (TP + FN) + (TN + FN) * (TN + FP), n^2)
  # pe = 1 when both raters put every record in the same single class: kappa is undefined.
  defined <- !is.na(pe) & pe < 1
  kappa <- ifelse(defined, (po - pe) / (1 - pe), NA_real_)
  se <- ifelse(defined, sqrt(po * (1 - po) / (n * (1 - pe)^2)), NA_real_)
  out$kappa <- kappa
  out$kappa_se <- se
  out$kappa_lower <- pmax(-1, kappa - z * se)
  out$kappa_upper <- pmin(1, kappa + z * se)

  margins <- (TP + FP) * (TP + FN) * (TN + FP) * (TN + FN)
  out$mcc <- ifelse(margins > 0, (TP * TN - FP * FN) / sqrt(margins), NA_real_)
  reaches <- !is.na(out$recall) & out$recall >= 0.95 - 1e-12
  out$wss95 <- ifelse(reaches, (TN + FN) / n - 0.05, NA_real_)
  # ifelse() of no tables is logical(0); the columns stay double either way.
  lapply(out, as.numeric)
}

ratio <- function(a, b) ifelse(b > 0, a / b, NA_real_)

# Wilson score interval of x successes in m trials (NA where m = 0).
wilson_interval <- function(x, m, z) {
  p <- x / m
  denom <- 1 + z^2 / m
  centre <- (p + z^2 / (2 * m)) / denom
  half <- z * sqrt(p * (1 - p) / m + z^2 / (4 * m^2)) / denom
  list(
    lower = ifelse(m > 0, pmax(0, centre - half), NA_real_),
    upper = ifelse(m > 0, pmin(1, centre + half), NA_real_)
  )
}

# Position of each record's group (prompt x model x top_p x reps) in order of first appearance.
group_index <- function(records, groups) {
  if (nrow(records) == 0) {
    return(integer())
  }
  key <- do.call(paste, c(unname(as.list(records[groups])), sep = "\r"))
  match(key, unique(key))
}

# ---------------------------------------------------------------------------------------------
# The per-record table

# One row per record x group of a screening, with the model's and the human's decisions:
#   records  data frame: the group columns, studyid, title, human (1/0/NA), decision (1/0/NA),
#            incl_p (NA for reps = 1 tables), check (a Check verdict or an uncertain answer),
#            incomplete (some repetitions failed), reason (why the decision is missing)
#   groups   the group columns present: promptid, prompt, model, top_p, reps
#   kind     "aggregated" (answer_data_aggregated) or "answers" (answer_data, reps = 1)
#   human    the human decision's column name (NULL when `human` is NULL: every record counts as a
#            human include, as in a target set)
#   missing  the records without a model decision
#   cutoffs  the result's cut-offs (aggregated tables)
analysis_records <- function(x, human, arg = "human_decision", call = rlang::caller_env()) {
  src <- analysis_source(x, call = call)
  table <- src$table
  human_col <- if (is.null(human)) NULL else resolve_human_column(human, table, arg = arg, call = call)
  col_of <- function(name, default = NA) {
    if (name %in% names(table)) table[[name]] else rep(default, nrow(table))
  }
  n <- nrow(table)
  records <- data.frame(studyid = col_of("studyid"), stringsAsFactors = FALSE)
  records$promptid <- col_of("promptid")
  if ("prompt" %in% names(table)) records$prompt <- as.character(table$prompt)
  records$model <- as.character(col_of("model"))
  if ("top_p" %in% names(table)) records$top_p <- as.numeric(table$top_p)
  if (src$kind == "aggregated") {
    records$reps <- as.integer(col_of("reps", NA_integer_))
    incl_p <- as.numeric(col_of("incl_p", NA_real_))
    verdict <- as.character(col_of("final_decision_llm", NA_character_))
    num <- as.integer(col_of("final_decision_llm_num", NA_integer_))
    # Check counts as include; a missing incl_p (every repetition failed) is no decision at all,
    # whatever label the row carries.
    num[!is.na(verdict) & verdict == "Check"] <- 1L
    records$decision <- ifelse(is.na(incl_p), NA_integer_, num)
    records$incl_p <- incl_p
    records$check <- !is.na(verdict) & verdict == "Check"
    records$incomplete <- !is.na(incl_p) & as.integer(col_of("n_mis_answers", 0L)) > 0
    reason <- ifelse(is.na(incl_p), "all repetitions failed", "no decision")
  } else {
    reps <- as.numeric(col_of("iterations", 1))
    if (any(!is.na(reps) & reps > 1)) {
      abort_arg(c("{.arg x} holds repeated answers (reps = {max(reps, na.rm = TRUE)}) without their aggregated decisions.",
        "i" = "Pass the whole screening result, or its {.field answer_data_aggregated}."),
        class = c("tabscreen_error_analyzer_reps", "tabscreen_error_analyzer_object"), arg = "x", call = call)
    }
    records$reps <- rep(1L, n)
    records$decision <- as.integer(col_of("decision_binary", NA_integer_))
    records$incl_p <- rep(NA_real_, n)
    records$check <- !is.na(col_of("decision_llm", NA_character_)) & col_of("decision_llm", NA_character_) == "1.1"
    records$incomplete <- rep(FALSE, n)
    reason <- ifelse(src$failed, "request failed", "no decision")
  }
  records$human <- if (is.null(human_col)) rep(1L, n) else human_values(table[[human_col]], human_col, arg = arg, call = call)
  records$title <- as.character(col_of("title", NA_character_))
  records$reason <- ifelse(is.na(records$decision), reason, NA_character_)

  groups <- intersect(c("promptid", "prompt", "model", "top_p", "reps"), names(records))
  check_unique_records(records, groups, call = call)
  miss <- is.na(records$decision)
  missing <- tibble::as_tibble(records[miss, c(setdiff(groups, "prompt"), "studyid", "title", "reason"), drop = FALSE])
  list(records = records, groups = groups, kind = src$kind, human = human_col, missing = missing,
    cutoffs = src$cutoffs)
}

# The table to evaluate: the aggregated decisions when there are any, else the single answers and
# the failed requests.
analysis_source <- function(x, call = rlang::caller_env()) {
  if (inherits(x, "llm")) {
    agg <- x$answer_data_aggregated
    if (!is.null(agg)) {
      return(aggregated_source(agg, call))
    }
    answers <- x$answer_data
    errors <- x$error_data
    if (is.null(errors) || nrow(errors) == 0) {
      return(answers_source(answers, rep(FALSE, nrow(answers)), call))
    }
    both <- rbind_rows(answers[intersect(names(answers), names(errors))], errors[intersect(names(answers), names(errors))])
    return(answers_source(both, rep(c(FALSE, TRUE), c(nrow(answers), nrow(errors))), call))
  }
  if (is.data.frame(x)) {
    if (inherits(x, "llm_agg_tbl") || all(c("incl_p", "final_decision_llm_num") %in% names(x))) {
      return(aggregated_source(x, call))
    }
    if (inherits(x, "llm_tbl") || "decision_binary" %in% names(x)) {
      return(answers_source(x, rep(FALSE, nrow(x)), call))
    }
  }
  abort_arg(c("{.arg x} must be a screening result of class {.cls llm} or one of its tables, not {.obj_type_friendly {x}}.",
    "i" = "Pass what {.fn tabscreen_a.tools}, {.fn tabscreen_b} or {.fn tabscreen_c} returned, or its {.field answer_data_aggregated}."),
    class = "tabscreen_error_analyzer_object", arg = "x", call = call)
}

aggregated_source <- function(table, call) {
  check_table_columns(table, c("studyid", "promptid", "model", "incl_p", "final_decision_llm_num", "reps"), call)
  cascade <- attr(table, "cascade")
  if (!is.null(cascade)) {
    # A cascade's final verdicts are evaluated as one decision rule, whichever stage gave them.
    table$model <- rep(paste(cascade$first, ">", cascade$second), nrow(table))
    table$reps <- rep(NA_integer_, nrow(table))
    table$top_p <- NULL
  }
  list(kind = "aggregated", table = table, failed = rep(FALSE, nrow(table)),
    cutoffs = list(upper = attr(table, "incl_cutoff_upper"), lower = attr(table, "incl_cutoff_lower")))
}

answers_source <- function(table, failed, call) {
  check_table_columns(table, c("studyid", "promptid", "model", "decision_binary"), call)
  list(kind = "answers", table = table, failed = failed, cutoffs = NULL)
}

check_table_columns <- function(table, needed, call) {
  absent <- setdiff(needed, names(table))
  if (length(absent) > 0) {
    abort_arg(c("{.arg x} lacks the column{?s} {.field {absent}} of a screening result.",
      "i" = "Pass the result of a screening function or one of its tables, not a modified copy."),
      class = "tabscreen_error_analyzer_object", arg = "x", call = call)
  }
}

# One row per record and group: a record twice would be counted twice.
check_unique_records <- function(records, groups, call) {
  key <- do.call(paste, c(unname(as.list(records[c(groups, "studyid")])), sep = "\r"))
  dup <- duplicated(key)
  if (any(dup)) {
    ids <- unique(records$studyid[dup])
    same <- if ("top_p" %in% groups) "prompt, model, top_p and reps" else "prompt, model and reps"
    abort_arg(c(paste0("{.arg x} holds {cli::qty(length(ids))}record{?s} {.val {head(ids, 5)}} more than once for the same ", same, "."),
      "i" = "Evaluate each screening separately, or give the records of a combined table distinct prompts or models."),
      class = c("tabscreen_error_analyzer_duplicated", "tabscreen_error_analyzer_object"), arg = "x", call = call)
  }
}

# The column named by `human_decision`: a bare name or a string (or a variable holding one).
# `where` names the table in the message: the screening, or the user's `data`.
resolve_human_column <- function(quo, table, arg = "human_decision", where = "screening", call = rlang::caller_env()) {
  found <- lookup_column(quo, table)
  if (!is.null(found$column)) return(found$column)
  label <- found$label
  suggest <- found$suggest
  in_data <- identical(where, "data")
  abort_arg(c(
    if (in_data) "{.arg {arg}} must name the column of human decisions in {.arg data}; {.val {label}} is not one of its columns."
    else "{.arg {arg}} must name the column of human decisions in the screening; {.val {label}} is not one of its columns.",
    if (length(suggest) > 0) c("i" = "Did you mean {.or {.val {suggest}}}?"),
    if (!in_data) c("i" = "The screening keeps the columns of your {.arg data}: add the human decisions to {.arg data} before screening."),
    "i" = "The columns are {.val {names(table)}}."),
    class = c("tabscreen_error_human_decision", "tabscreen_error_data_column"), arg = arg, call = call)
}

# Human decisions as 1/0/NA: 1/0, TRUE/FALSE or "include"/"exclude" (any case; also "1"/"0").
# An empty string is no decision, as a spreadsheet leaves it.
human_values <- function(x, column, arg = "human_decision", call = rlang::caller_env()) {
  if (is.factor(x)) {
    x <- as.character(x)
  }
  if (is.logical(x)) {
    return(as.integer(x))
  }
  if (is.numeric(x)) {
    bad <- !is.na(x) & !(x %in% c(0, 1))
    out <- as.integer(x)
  } else if (is.character(x)) {
    v <- tolower(trimws(x))
    v[!is.na(v) & v == ""] <- NA_character_
    out <- rep(NA_integer_, length(v))
    out[!is.na(v) & v %in% c("1", "include")] <- 1L
    out[!is.na(v) & v %in% c("0", "exclude")] <- 0L
    bad <- !is.na(v) & is.na(out)
  } else {
    abort_arg("Column {.field {column}} ({.arg {arg}}) must hold 1/0, {.code TRUE}/{.code FALSE} or {.val include}/{.val exclude}, not {.obj_type_friendly {x}}.",
      class = "tabscreen_error_human_decision", arg = arg, call = call)
  }
  if (any(bad)) {
    values <- unique(x[bad])
    abort_arg(c("Column {.field {column}} ({.arg {arg}}) must hold the human decisions as 1 and 0, {.code TRUE} and {.code FALSE} or {.val include} and {.val exclude}, not {.val {head(values, 5)}}.",
      "i" = "Recode it to 1 and 0, with {.code NA} where there is no human decision."),
      class = "tabscreen_error_human_decision", arg = arg, call = call)
  }
  out
}
