#' Re-send the failed requests of a screening
#'
#' Sends again exactly the requests of a result's `error_data` (the same record, prompt, model,
#' `top_p` and repetition), to the same provider ([tabscreen_a.tools()], [tabscreen_b()] or
#' [tabscreen_c()]) with the arguments of the original call stored in the result's attribute
#' `arg_list`. The new answers join `answer_data` (with your columns and the original
#' repetition number `n`), requests that fail again stay in `error_data`, and the aggregated
#' decisions and the price are recomputed over the whole screening: the price of the new requests
#' is added to the price of the first run.
#'
#' Use it after a run with failures, or to finish a run that was interrupted or stopped: those
#' errors (classes `tabscreen_interrupted`, `tabscreen_error_auth`, `tabscreen_error_quota`)
#' carry the partial result in their field `result`, e.g. `rlang::last_error()$result`.
#'
#' A run stopped because its endpoint could not be used (class `tabscreen_error_endpoint`: nothing
#' listens at `api_url`, its host does not resolve, or the server has no such path) is not re-sent:
#' the requests would go to the same URL. `screen_errors()` raises the same class, with the cause;
#' run the screening call again once the server runs or with the corrected `api_url`.
#'
#' The new answers are recorded in the answer store, in the run of `object` (see
#' [screen_store()]).
#'
#' On a result of [screen_cascade()] each stage's failed requests are re-sent by that stage's call,
#' and the records that the first stage's new answers make doubtful are sent to the second stage;
#' `api_key` is then one key or two, `c(first, second)`.
#'
#' @param object A result of class `llm`.
#' @param api_key The API key; by default read from the provider's environment variable
#'   ([get_api_key()] for provider A, [get_api_key_b()] for provider B, [get_api_key_c()] for
#'   provider C).
#' @param max_tries,max_seconds,is_transient,backoff,after Retry settings for this re-run; `NULL`
#'   keeps those of the original call (see [tabscreen_a.tools()]).
#' @param progress,messages `NULL` to keep those of the original call, or `TRUE`/`FALSE`.
#' @param ... Fields of the request body to set or replace for this re-run (e.g.
#'   `max_completion_tokens = 300` for provider A), checked as in the screening function of the
#'   result's provider.
#' @return The updated `llm` object. With no failed requests, `object` unchanged (with a message),
#'   once the arguments have been checked.
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' # The local stand-in provider fails every request for one title.
#' fake$configure(fail_matching = list(list(substring = "Selective Mutism", kind = "500")))
#' res <- tabscreen_a.tools(
#'   filges2015_dat[1:5, ], prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", max_tries = 2, progress = FALSE
#' )
#' res$error_data
#'
#' # Once the cause is gone, send the failed requests again.
#' fake$configure(fail_matching = list())
#' res <- screen_errors(res, api_key = "not-a-real-key")
#' res
#' fake$stop()
#' options(old)
screen_errors <- function(object, api_key = NULL, max_tries = NULL, max_seconds = NULL, is_transient = NULL,
                          backoff = NULL, after = NULL, progress = NULL, messages = NULL, ...) {
  call <- rlang::current_env()
  if (!inherits(object, "llm")) {
    abort_arg(c("{.arg object} must be a screening result of class {.cls llm}, not {.obj_type_friendly {object}}."),
      class = "tabscreen_error_object", arg = "object", call = call)
  }
  if (inherits(object, "llm_cascade")) {
    repair <- list(max_tries = max_tries, max_seconds = max_seconds, is_transient = is_transient, backoff = backoff,
      after = after, progress = progress, messages = messages)
    return(cascade_errors(object, api_key, c(repair[!vapply(repair, is.null, logical(1))], rlang::list2(...)), call))
  }
  args <- attr(object, "arg_list")
  if (is.null(args$run_options)) {
    if (inherits(object, "llm_ensemble")) {
      abort_arg(c("{.arg object} is an ensemble of screenings; {.fn screen_errors} re-sends the requests of one screening.",
        "i" = "Call {.fn screen_errors} on each screening that has failures, then {.fn screen_ensemble} on the repaired screenings."),
        class = "tabscreen_error_object", arg = "object", call = call)
    }
    abort_arg(c("{.arg object} has no record of the arguments of its screening (attribute {.field arg_list}).",
      "i" = "Re-screening needs a result made by this package's screening functions."),
      class = "tabscreen_error_object", arg = "object", call = call)
  }
  # Every argument is checked, even when there is nothing to re-send: a bad one is a mistake that
  # would surface on the next result that has failures.
  for (arg in c("progress", "messages")) {
    value <- get(arg)
    if (!is.null(value)) {
      check_flag(value, arg, call = call)
      args[[arg]] <- value
    }
  }
  check_positive_or_null(max_tries, "max_tries", whole = TRUE, call = call)
  check_positive_or_null(max_seconds, "max_seconds", whole = FALSE, call = call)
  for (arg in c("is_transient", "backoff", "after")) check_callback(get(arg), arg, call = call)
  dots <- check_dots(args$provider, rlang::list2(...), call = call)
  check_body_fields(args$provider, args$model, rules_of(args$model, args$provider, isTRUE(args$custom_model)),
    utils::modifyList(args$dots %||% list(), dots), call = call)
  if (!is.null(api_key)) check_api_key(api_key, provider_env_var(args$provider), call = call)
  errors <- object$error_data
  abort_endpoint_result(object, errors, call)
  if (is.null(errors) || nrow(errors) == 0) {
    tabscreen_inform(c("i" = "{.arg object} has no failed requests to re-send."), messages = args$messages)
    return(object)
  }

  options <- args$run_options
  # The tokens per minute of this session (options(tabscreen.tpm)), not of the first call's.
  options["tpm"] <- list(engine_tpm())
  for (arg in c("max_tries", "max_seconds", "is_transient", "backoff", "after")) {
    value <- get(arg)
    if (!is.null(value)) {
      args[arg] <- list(value)
      if (arg %in% names(options)) options[arg] <- list(value)
    }
  }
  if (length(dots) > 0) {
    options$extra_body[names(dots)] <- dots
    args$dots[names(dots)] <- dots
  }
  api_key <- check_api_key(api_key %||% provider_key(args$provider), provider_env_var(args$provider),
    messages = args$messages, call = call)

  record_ids <- attr(object, "record_ids") %||% unique(c(object$answer_data$studyid, errors$studyid))
  ids <- unique(errors$studyid)
  first <- match(ids, errors$studyid)
  user <- tibble::as_tibble(as.list(errors[first, , drop = FALSE])[setdiff(names(errors), result_column_names())], .rows = length(ids))
  records <- list(
    index = match(ids, record_ids), studyid = ids,
    title = errors$title[first], abstract = errors$abstract[first], user = user
  )
  jobs <- data.frame(
    record = match(errors$studyid, ids),
    promptid = errors$promptid,
    model = errors$model,
    stringsAsFactors = FALSE
  )
  if ("top_p" %in% names(errors)) jobs$top_p <- errors$top_p
  jobs$n <- errors$n
  # What the first call was billed for these jobs stays in their token columns.
  if ("prompt_tokens" %in% names(errors)) {
    jobs$prompt_tokens <- errors$prompt_tokens
    jobs$completion_tokens <- errors$completion_tokens
  }
  options$jobs <- jobs
  args$run_options$max_tries <- options$max_tries
  args$run_options$max_seconds <- options$max_seconds
  args$run_options$extra_body <- options$extra_body

  old <- object$answer_data
  old$.record <- match(old$studyid, record_ids)
  old$.failed <- rep(FALSE, nrow(old))
  merge_into <- list(
    rows = old, price = object$price_data, run_info = attr(object, "run_info"), run_date = object$run_date,
    store = attr(object, "store")
  )
  tabscreen_inform(c("i" = "Re-sending {nrow(errors)} failed request{?s}."), messages = args$messages)
  run_screening(records, options, api_key, args, record_ids, call = call, merge_into = merge_into)
}

# Append re-run rows to the rows kept from the first run (same columns).
rbind_job_rows <- function(old, new) {
  old <- as.data.frame(old, stringsAsFactors = FALSE)[names(new)]
  out <- rbind(old, as.data.frame(new, stringsAsFactors = FALSE))
  tibble::new_tibble(as.list(out), nrow = nrow(out))
}

# A result whose run stopped because its endpoint could not be used holds failures that re-sending
# to the same URL would repeat: say so instead of sending.
abort_endpoint_result <- function(object, errors, call) {
  stop <- attr(object, "run_info")$stop
  if (!identical(stop$class, "tabscreen_error_endpoint") || is.null(errors) || nrow(errors) == 0) {
    return(invisible())
  }
  hint <- stop$hint %||% ""
  tabscreen_abort(
    c("The {nrow(errors)} failed request{?s} of {.arg object} did not fail at the provider: {stop$message}",
      if (nzchar(hint)) c("i" = "{hint}"),
      "i" = "Re-sending them to the same URL would fail again. Run the screening call again instead, with the corrected {.arg api_url} if it was wrong."),
    class = "tabscreen_error_endpoint", call = call
  )
}
