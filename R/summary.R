#' Summarise a screening by prompt and model
#'
#' One row per prompt and model of a screening result: how many records and requests, how many
#' were answered and how many failed, the decisions of the answers, the final decisions of the
#' aggregation (with `reps > 1`), the tokens, the price and the time.
#'
#' @param object A screening result of class `llm`.
#' @param x A summary of class `llm_summary`, for `print()`.
#' @param ... Unused.
#' @return A tibble of class `llm_summary` with the columns
#' * `promptid`, `model`: the group;
#' * `records`: records screened; `requests`: requests made (records x repetitions x `top_p`
#'   values); `answers`: those in `answer_data`; `failures`: those in `error_data`;
#' * `include`, `exclude`, `uncertain`: answers whose `decision_llm` is `"1"`, `"0"` and `"1.1"`;
#' * `final_include`, `final_check`, `final_exclude`: rows of `answer_data_aggregated` whose
#'   `final_decision_llm` is `"Include"`, `"Check"` and `"Exclude"` (`NA` when every model was
#'   asked once, so that nothing was aggregated);
#' * `prompt_tokens`, `completion_tokens`: tokens of all requests, failed ones that were billed
#'   included (`NA` with `token_info = FALSE`);
#' * `price_dollar`: the price from `price_data` (`NA` when unknown);
#' * `run_time`: the seconds the requests took, added up (`NA` with `time_info = FALSE`). The
#'   requests run concurrently, so this can be more than the time the screening took, which the
#'   print method shows last;
#' * with [screen_adaptive()] only: `requests_saved`, the repetitions asked that were not sent
#'   because their record's verdict was settled, and `price_saved_dollar`, what they would have
#'   cost at the group's mean price per request sent (`NA` when the price is unknown).
#'
#' The print method shows each row as a short block, readable at any console width; the value is
#' a tibble for further work (`tibble::as_tibble()` drops the class).
#' @seealso [print.llm()], [plot.llm()], [screen_analyzer()] for agreement with human decisions.
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' res <- tabscreen_a.tools(
#'   filges2015_dat[1:10, ], prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", reps = 3, progress = FALSE, messages = FALSE
#' )
#' s <- summary(res)
#' s
#' s$final_include
#'
#' fake$stop()
#' options(old)
summary.llm <- function(object, ...) {
  answers <- object$answer_data
  failed <- object$error_data
  rows <- rbind_rows(answers, failed)
  agg <- object$answer_data_aggregated
  groups <- unique(data.frame(promptid = rows$promptid, model = rows$model, stringsAsFactors = FALSE))
  groups <- groups[order(groups$promptid), , drop = FALSE]
  in_group <- function(table, i) {
    if (is.null(table) || nrow(table) == 0) return(logical())
    table$promptid == groups$promptid[i] & table$model == groups$model[i]
  }
  count <- function(values, value) sum(values == value, na.rm = TRUE)
  total <- function(table, col, i) {
    if (!col %in% names(rows)) return(NA_real_)
    sum(as.numeric(table[[col]][in_group(table, i)]), na.rm = TRUE)
  }
  final <- function(value, i) {
    if (is.null(agg)) return(NA_integer_)
    count(agg$final_decision_llm[in_group(agg, i)], value)
  }
  price <- function(i) {
    p <- object$price_data
    if (is.null(p) || nrow(p) == 0) return(NA_real_)
    sum(p$total_price_dollar[p$prompt == as.character(groups$promptid[i]) & p$model == groups$model[i]])
  }
  adaptive <- !is.null(agg[["reps_sent"]])
  per_group <- lapply(seq_len(nrow(groups)), function(i) {
    decisions <- answers$decision_llm[in_group(answers, i)]
    requests <- sum(in_group(rows, i))
    out <- tibble::tibble(
      records = length(unique(rows$studyid[in_group(rows, i)])),
      requests = requests,
      answers = length(decisions),
      failures = sum(in_group(failed, i)),
      include = count(decisions, "1"),
      exclude = count(decisions, "0"),
      uncertain = count(decisions, "1.1"),
      final_include = final("Include", i),
      final_check = final("Check", i),
      final_exclude = final("Exclude", i),
      prompt_tokens = total(rows, "prompt_tokens", i),
      completion_tokens = total(rows, "completion_tokens", i),
      price_dollar = price(i),
      run_time = total(rows, "run_time", i)
    )
    if (adaptive) {
      out$requests_saved <- as.integer(sum(agg$reps[in_group(agg, i)] - agg$reps_sent[in_group(agg, i)]))
      out$price_saved_dollar <- saved_price(out$price_dollar, requests, out$requests_saved)
    }
    out
  })
  out <- tibble::tibble(promptid = as.integer(groups$promptid), model = as.character(groups$model),
    do.call(rbind, per_group))
  info <- attr(object, "run_info")
  structure(out, class = c("llm_summary", class(out)), elapsed_seconds = info$elapsed_seconds,
    cutoffs = if (!is.null(agg)) c(upper = attr(agg, "incl_cutoff_upper"), lower = attr(agg, "incl_cutoff_lower")))
}

#' @rdname summary.llm
#' @export
print.llm_summary <- function(x, ...) {
  cut <- attr(x, "cutoffs")
  count <- function(v) if (is.na(v)) "?" else format_tokens(v)
  cli::cli_text("{.strong Screening summary} ({.cls llm_summary}, one row per prompt and model)")
  for (i in seq_len(nrow(x))) {
    g <- x[i, , drop = FALSE]
    cli::cli_h3("Prompt {g$promptid}, model {.val {g$model}}")
    cli::cli_bullets(c(
      "*" = "{g$records} record{?s}, {g$requests} request{?s}: {g$answers} answered, {g$failures} failed.",
      "*" = "Answers: {g$include} include, {g$exclude} exclude, {g$uncertain} uncertain.",
      if (!is.na(g$final_include)) {
        c("*" = "Final decisions: {g$final_include} Include, {g$final_check} Check, {g$final_exclude} Exclude{if (length(cut) == 2) paste0(' (cut-offs: upper ', cut[['upper']], ', lower ', cut[['lower']], ')') else ''}.")
      },
      if (!is.na(g$prompt_tokens)) c("*" = "Tokens: {count(g$prompt_tokens)} prompt, {count(g$completion_tokens)} completion."),
      if (!is.na(g$price_dollar)) c("*" = "Price: {format_dollars(g$price_dollar)}."),
      if ("requests_saved" %in% names(g)) c("*" = adaptive_summary(g$requests_saved, g$price_saved_dollar)),
      if (!is.na(g$run_time)) c("*" = "Request time: {format(round(g$run_time, 1), nsmall = 1)} s, added up over the requests.")
    ))
  }
  elapsed <- attr(x, "elapsed_seconds")
  if (!is.null(elapsed) || nrow(x) > 1) cli::cli_text("")
  if (nrow(x) > 1 && !all(is.na(x$price_dollar))) cli::cli_text("Total price: {format_dollars(sum(x$price_dollar, na.rm = TRUE))}.")
  if (!is.null(elapsed)) cli::cli_text("The screening took {format(round(elapsed, 1), nsmall = 1)} s.")
  invisible(x)
}

# What a request not sent would have cost, at the mean price of the requests sent.
saved_price <- function(price, requests, saved) {
  if (is.null(price) || is.na(price) || requests == 0) return(NA_real_)
  price / requests * saved
}

# The line of print() and summary() on adaptive repetitions.
adaptive_summary <- function(saved, price) {
  cost <- if (!is.na(price)) paste0(", about ", format_dollars(price), " at this run's price per request") else ""
  cli::format_inline("Adaptive repetitions: {saved} request{?s} not sent{cost}, {cli::qty(saved)}{?its/their} record's verdict being settled.")
}
