#' Target-set sampling for a recall claim
#'
#' `screen_target_set()` draws a target set: `k` records that the human screeners included,
#' chosen at random from `data`. Screen them like any other records; if the model finds every
#' one of them, the claim "the model's recall is at least `recall`" holds with confidence
#' `conf_level`. `screen_target_recall()` evaluates the screening of a target set: how many
#' target records were found, and a one-sided lower confidence bound for the recall.
#'
#' @section The size of the target set:
#' If the true recall were below `recall`, the chance that the model finds all of `k` randomly
#' drawn relevant records would be below `recall^k`. Finding all of them therefore rejects
#' "recall < `recall`" at level `1 - conf_level` as soon as `recall^k <= 1 - conf_level`, i.e.
#' for `k = ceiling(log(1 - conf_level) / log(recall))`. For `recall = 0.95` and
#' `conf_level = 0.95` this is `k = 59` (0.95^59 = 0.048); for 0.9 and 0.95 it is 29.
#'
#' @section The lower bound for recall:
#' With `found` of `k` target records found, `screen_target_recall()` reports the one-sided
#' Clopper-Pearson lower bound `qbeta(1 - conf_level, found, k - found + 1)` (0 when nothing
#' was found): the smallest recall that is still compatible with finding `found` or more at
#' level `1 - conf_level`. When every record is found the bound is `(1 - conf_level)^(1/k)`, at
#' least `recall` for the `k` above (0.9505 for 59 of 59). A target record without a model
#' decision (its requests failed) counts as not found and in `n_missing`: re-send it with
#' [screen_errors()] first. A verdict `"Check"` counts as found.
#'
#' @param data A data frame of records with human decisions.
#' @param human_decision The column of human decisions (bare name or string), with values as in
#'   [screen_analyzer()]. For `screen_target_recall()`, `NULL` (the default) takes every record
#'   of the screening as a target record; a column keeps only the records the humans included.
#' @param k The size of the target set; `NULL` computes it from `recall` and `conf_level`.
#'   For `screen_target_recall()`, `NULL` takes the number of target records in the screening;
#'   a larger `k` counts the ones not in the screening as not found.
#' @param recall The recall the claim is about, between 0 and 1.
#' @param conf_level The confidence level of the claim (one-sided), between 0 and 1.
#' @param ... Only for the deprecated name of `conf_level`, `confidence`, which is still taken
#'   with a warning of class `tabscreen_warning_deprecated`.
#' @param seed `NULL`, or a whole number that makes the draw reproducible; the random number
#'   stream of the session is left as it was.
#' @return `screen_target_set()`: the `k` drawn rows of `data` (a tibble, in their order in
#'   `data`) with attributes `k`, `recall` and `conf_level`.
#' @seealso [screen_analyzer()].
#' @export
#' @examples
#' # filges2015_dat holds 90 human includes: enough for recall 0.95 at 95 % confidence.
#' target <- screen_target_set(filges2015_dat, human_code, seed = 1)
#' nrow(target)
#'
#' # Finding all 59 supports recall >= 0.95; finding 57 of them does not.
#' screen_target_recall(59, k = 59)
#' screen_target_recall(57, k = 59, conf_level = 0.9)
#'
#' # A screening of the target set (here of 10 target records, by the local stand-in provider)
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' res <- tabscreen_a.tools(
#'   target[1:10, ], prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", progress = FALSE, messages = FALSE
#' )
#' screen_target_recall(res)
#' fake$stop()
#' options(old)
screen_target_set <- function(data, human_decision = human_code, k = NULL, recall = 0.95, conf_level = 0.95,
                              seed = NULL, ...) {
  call <- rlang::current_env()
  conf_level <- conf_level_arg(list(...), conf_level, !missing(conf_level), call)
  check_data(data, call = call)
  check_unit_interval(recall, "recall", call = call)
  check_positive_or_null(k, "k", whole = TRUE, call = call)
  check_draw_seed(seed, call = call)
  column <- resolve_human_column(rlang::enquo(human_decision), data, where = "data", call = call)
  human <- human_values(data[[column]], column, call = call)
  k <- k %||% target_set_size(recall, conf_level)
  includes <- which(!is.na(human) & human == 1L)
  if (length(includes) < k) {
    m <- length(includes)
    abort_arg(c("{.arg data} holds {m} human include{?s} (column {.field {column}}), fewer than the {k} the target set needs.",
      "i" = if (m > 0) "Finding all {m} would support recall >= {recall} with confidence {format(1 - recall^m, digits = 3)} only." else NULL,
      "i" = "Label more records, or lower {.arg recall} or {.arg conf_level}."),
      class = "tabscreen_error_target_set_size", arg = "k", call = call)
  }
  chosen <- with_local_seed(seed, includes[sample.int(length(includes), k)])
  out <- tibble::as_tibble(data[sort(chosen), , drop = FALSE])
  attr(out, "k") <- k
  attr(out, "recall") <- recall
  attr(out, "conf_level") <- conf_level
  out
}

#' @rdname screen_target_set
#' @section Changed arguments:
#' `human_decision` is the second argument of `screen_target_recall()`, as of every function that
#' takes it; it used to be the fourth, after `k` and `confidence`. A call that gives `k` as the
#' second argument by position, `screen_target_recall(57, 59)` or `screen_target_recall(res, 59,
#' 0.9)`, is still read the old way, with a warning of class `tabscreen_warning_deprecated`.
#' @param x For `screen_target_recall()`: the number of target records found (with `k`), or a
#'   screening result of the target set (an `llm` object or one of its tables), evaluated per
#'   prompt, model, `top_p` and `reps`.
#' @return `screen_target_recall()`: a tibble with (for a screening) the group columns, then `k`,
#'   `found`, `n_missing`, `recall` (found / k), `recall_lower` (the lower confidence bound) and
#'   `conf_level`.
#' @export
screen_target_recall <- function(x, human_decision = NULL, k = NULL, conf_level = 0.95, ...) {
  call <- rlang::current_env()
  human <- rlang::enquo(human_decision)
  old_k <- positional_k(human, x)
  if (!is.null(old_k)) {
    # The old order was (x, k, confidence, human_decision): shift what was given by position.
    taken <- paste0("k = ", format(old_k), if (!is.null(k)) paste0(", conf_level = ", format(k)))
    tabscreen_warn(c("The second argument of {.fn screen_target_recall} is {.arg human_decision}: give {.arg k} by name.",
      "i" = "The arguments given by position in their old order are taken as {.code {taken}}."),
      class = "tabscreen_warning_deprecated")
    if (!is.null(k)) {
      conf_level <- k
    }
    k <- old_k
    human <- rlang::quo(NULL)
  }
  conf_level <- conf_level_arg(list(...), conf_level, !missing(conf_level), call)
  if (is.numeric(x)) {
    if (is.null(k)) {
      abort_arg("{.arg k} is missing: give the size of the target set along with the number found in {.arg x}.",
        class = "tabscreen_error_k", arg = "k", call = call)
    }
    check_counts(x, "x", call = call)
    check_counts(k, "k", call = call)
    if (length(x) != length(k) && length(x) != 1 && length(k) != 1) {
      abort_arg("{.arg x} and {.arg k} must have the same length, or one of them length 1.",
        class = "tabscreen_error_k", arg = "k", call = call)
    }
    if (any(x > k)) {
      abort_arg("{.arg x} (records found) cannot exceed {.arg k} (the size of the target set).",
        class = "tabscreen_error_k", arg = "x", call = call)
    }
    return(target_recall_table(list(), as.numeric(x), as.numeric(k), 0, conf_level))
  }
  rec <- analysis_records(x, if (rlang::quo_is_null(human)) NULL else human, call = call)
  groups <- setdiff(rec$groups, "prompt")
  records <- rec$records[!is.na(rec$records$human) & rec$records$human == 1L, , drop = FALSE]
  gid <- group_index(records, groups)
  first <- match(seq_len(max(gid, 0L)), gid)
  size <- as.numeric(tabulate(gid, length(first)))
  found <- as.numeric(vapply(seq_along(first), function(g) sum(records$decision[gid == g] == 1L, na.rm = TRUE), integer(1)))
  missing <- as.numeric(vapply(seq_along(first), function(g) sum(is.na(records$decision[gid == g])), integer(1)))
  if (!is.null(k)) {
    check_counts(k, "k", call = call)
    if (length(k) != 1 || any(k < size)) {
      abort_arg("{.arg k} must be one number, at least the number of target records in the screening ({max(size)}).",
        class = "tabscreen_error_k", arg = "k", call = call)
    }
    size <- rep(as.numeric(k), length(size))
  }
  group_cols <- lapply(records[first, groups, drop = FALSE], identity)
  target_recall_table(group_cols, found, size, missing, conf_level)
}

# `k` given by position as the second argument, where it was before human_decision came second:
# a number there (a column is named by a bare name or a string). A bare name is read as a value only
# when `x` is a count, since for a screening it names a column.
positional_k <- function(human, x) {
  expr <- rlang::quo_get_expr(human)
  if (is.null(expr) || (rlang::is_symbol(expr) && !is.numeric(x))) return(NULL)
  value <- if (is.numeric(expr)) expr else tryCatch(rlang::eval_tidy(human), error = function(e) NULL)
  if (is.numeric(value)) value else NULL
}

# conf_level, or the value of its old name `confidence` (deprecated), checked.
conf_level_arg <- function(dots, conf_level, given, call) {
  arg <- if ("confidence" %in% names(dots)) "confidence" else "conf_level"
  conf_level <- renamed_arg(dots, "confidence", "conf_level", conf_level, given, call = call)
  check_unit_interval(conf_level, arg, call = call)
}

target_recall_table <- function(group_cols, found, k, missing, conf_level) {
  n <- max(length(found), length(k))
  found <- rep_len(found, n)
  k <- rep_len(k, n)
  alpha <- 1 - conf_level
  lower <- ifelse(found > 0, stats::qbeta(alpha, pmax(found, 1), k - found + 1), 0)
  tibble::new_tibble(c(group_cols, list(
    k = k, found = found, n_missing = rep_len(missing, n), recall = ifelse(k > 0, found / k, NA_real_),
    recall_lower = ifelse(k > 0, lower, NA_real_), conf_level = rep(conf_level, n)
  )), nrow = n)
}

# The smallest k with recall^k <= 1 - conf_level. The tolerance keeps an exact power (0.5^2 for
# 75 %) from being pushed one record up by rounding.
target_set_size <- function(recall, conf_level) {
  as.integer(ceiling(log(1 - conf_level) / log(recall) - 1e-9))
}

check_unit_interval <- function(x, arg, call = rlang::caller_env()) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || x <= 0 || x >= 1) {
    abort_arg("{.arg {arg}} must be a single number between 0 and 1 (exclusive), e.g. {.code 0.95}.",
      class = paste0("tabscreen_error_", arg), arg = arg, call = call)
  }
  invisible(x)
}

check_draw_seed <- function(seed, call = rlang::caller_env()) {
  if (!is.null(seed) && (!is.numeric(seed) || length(seed) != 1 || is.na(seed) || seed != round(seed) ||
    abs(seed) > .Machine$integer.max)) {
    abort_arg("{.arg seed} must be {.code NULL} or a single whole number.",
      class = "tabscreen_error_seed", arg = "seed", call = call)
  }
  invisible(seed)
}

check_counts <- function(x, arg, call = rlang::caller_env()) {
  if (!is.numeric(x) || length(x) == 0 || anyNA(x) || any(x < 0 | x != round(x))) {
    abort_arg("{.arg {arg}} must hold whole numbers of at least 0.",
      class = paste0("tabscreen_error_", arg), arg = arg, call = call)
  }
  invisible(x)
}

# Evaluate `expr` after set.seed(seed) and put the session's random number state back, so that a
# reproducible draw does not change the user's later random numbers.
with_local_seed <- function(seed, expr) {
  if (is.null(seed)) {
    return(expr)
  }
  keep_random_state({
    set.seed(seed)
    expr
  })
}

# Evaluate `expr` and put the session's random number state back (processx, for one, draws from
# it when it starts a process).
keep_random_state <- function(expr) {
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = env, inherits = FALSE)
  on.exit(if (had) assign(".Random.seed", old, envir = env) else if (exists(".Random.seed", envir = env, inherits = FALSE)) rm(".Random.seed", envir = env))
  expr
}
