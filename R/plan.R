# The plan and price of a screening before it is sent, and the spending cap.
# screen_plan() calls the screening function as screen_batch() does; launch_screening() then
# returns the plan instead of running. The same plan, of what remains to be sent, is the estimate a
# screening prints and the price the cap is checked against.

plan_state <- new.env(parent = emptyenv())

#' The plan and price of a screening, without sending anything
#'
#' Checks a screening call as the screening function does and returns what it would send, without
#' sending anything and without an API key: the records, the requests, the estimated tokens, the
#' estimated price (synchronous with and without the providers' prompt caches, and through
#' [screen_batch()] at the batch prices), and how long the run takes at the rate limits in force.
#' When the answer store already holds answers of the same call (an interrupted or incomplete run,
#' or a completed one, which the same call returns without sending), the plan counts only what
#' remains.
#'
#' The token counts and prices are estimates: about one token per four characters of prompt and
#' record, plus about 150 tokens of tool definition per request, and an allowance of output tokens
#' per answer that grows with `decision_description` and the reasoning effort. The time is the
#' requests at `rpm` and, when `options(tabscreen.tpm)` is set, the tokens at that limit
#' (whichever takes longer); a provider that reports a lower limit ([rate_limits_per_minute()])
#' is followed during the run.
#'
#' @section Spending cap:
#' `options(tabscreen.max_price = X)` (USD) stops a screening whose estimated price of what remains
#' to be sent is above `X` before any request: in an interactive session it asks whether to go on,
#' otherwise it is an error of class `tabscreen_error_price_cap`. `force = TRUE` in the call passes
#' the cap. Models without a known price count as 0.
#'
#' @section The estimate a screening prints:
#' A screening prints the estimate of what it will send (on a resume, only what remains) before
#' the first request. It follows `messages` unless `options(tabscreen.estimate)` says otherwise:
#' `TRUE` prints it even with `messages = FALSE` (so the other messages can be silenced and the
#' price kept), `FALSE` never prints it.
#'
#' @param screening The screening function: `tabscreen_a.tools`, `tabscreen_b` or `tabscreen_c`.
#' @param ... The arguments of `screening`, as you would give them to it. `api_key` is not needed.
#' @return An object of class `tabscreen_plan`: a list with `records`, `requests` (all of the
#'   call's requests), `stored` (answers the store already holds), `remaining` (requests to send),
#'   `input_tokens`, `output_tokens`, `price` (synchronous, with the prompt caches as
#'   `options(tabscreen.cache)` sets them), `price_no_cache`, `price_batch`, `minutes` (of what
#'   remains), `adaptive` (`TRUE` through [screen_adaptive()], whose requests and price are then
#'   the most the call can send and cost), `run_id` (the stored run the call continues, or `NA`),
#'   and `models`, a data frame
#'   with these per model (`rpm` and `minutes` included). Prices are `NA` when no model has a known
#'   price.
#' @export
#' @examples
#' plan <- screen_plan(tabscreen_a.tools,
#'   filges2015_dat, prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract, reps = 10
#' )
#' plan
#' plan$price_batch
screen_plan <- function(screening, ...) {
  call <- rlang::current_env()
  screening_letter(screening, "tabscreen_error_plan_args", call)
  old <- plan_state$request
  plan_state$request <- TRUE
  on.exit(plan_state$request <- old, add = TRUE)
  screening(...)
}

# TRUE while screen_plan() calls a screening function.
plan_requested <- function() isTRUE(plan_state$request)

# The key of a screening call: for a plan none is needed, so a missing one is no error.
plan_api_key <- function(api_key, env_var, messages = TRUE, call) {
  if (plan_requested()) {
    return(tryCatch(suppressMessages(api_key), error = function(e) NULL))
  }
  check_api_key(api_key, env_var, messages = messages, call = call)
}

# The plan of a call: the estimate of each model (`estimate`: cached as the run would be, without
# cache, at batch prices), less what the store holds (`holding`: the answers per model and the
# run's id, or NULL), and the time at the rate limits; both from screening_preflight().
screening_plan <- function(rec, options, arg_list, estimate, holding) {
  batch <- !is.null(batch_request())
  sync <- estimate$sync
  no_cache <- estimate$no_cache
  in_batch <- estimate$batch
  stored <- vapply(sync$model, function(m) as.numeric(holding$answered[[m]] %||% 0), numeric(1))
  left <- ifelse(sync$requests > 0, pmax(sync$requests - stored, 0) / sync$requests, 0)
  rpm <- as.numeric(arg_list$rpm)
  models <- data.frame(
    model = sync$model, requests = sync$requests, stored = stored, remaining = sync$requests * left,
    input_tokens = sync$input_tokens * left, output_tokens = sync$output_tokens * left,
    cached_tokens = sync$cached_tokens * left, cache_write_tokens = sync$cache_write_tokens * left,
    price = sync$price * left, price_no_cache = no_cache$price * left, price_batch = in_batch$price * left,
    rpm = rpm, stringsAsFactors = FALSE
  )
  tpm <- engine_tpm()
  # One pacer for every model when rpm was one value: their requests share it.
  shared <- !is.null(options$rpm)
  minutes_of <- function(requests, tokens, rpm) max(requests / rpm, if (!is.null(tpm)) tokens / tpm else 0)
  models$minutes <- mapply(minutes_of, models$remaining, models$input_tokens + models$output_tokens, rpm)
  minutes <- if (shared) {
    minutes_of(sum(models$remaining), sum(models$input_tokens + models$output_tokens), rpm[1])
  } else {
    max(models$minutes)
  }
  total <- function(x) if (all(is.na(x))) NA_real_ else sum(x, na.rm = TRUE)
  structure(list(
    records = nrow(rec$data), requests = sum(models$requests), stored = sum(models$stored),
    remaining = sum(models$remaining), input_tokens = sum(models$input_tokens), output_tokens = sum(models$output_tokens),
    price = total(if (batch) models$price_batch else models$price), price_no_cache = total(models$price_no_cache),
    price_batch = total(models$price_batch), minutes = minutes, batch = batch, adaptive = !is.null(options$adaptive),
    run_id = holding$run_id %||% NA_character_, tpm = tpm %||% NA_real_, models = tibble::as_tibble(models)
  ), class = "tabscreen_plan")
}

#' @export
print.tabscreen_plan <- function(x, ...) {
  fmt <- function(n) format_tokens(n)
  dollars <- function(p) if (is.na(p)) "unknown" else format_dollars(p)
  cli::cli_text("{.strong Screening plan}: {fmt(x$records)} {cli::qty(x$records)}record{?s}, {fmt(x$requests)} {cli::qty(x$requests)}request{?s}.")
  if (!is.na(x$run_id)) {
    cli::cli_text("The answer store holds {fmt(x$stored)} {cli::qty(x$stored)}answer{?s} of this call (run {.val {x$run_id}}): {fmt(x$remaining)} {cli::qty(x$remaining)}request{?s} remain{?s/}.")
  }
  cli::cli_text("To send: about {fmt(x$input_tokens)} input and {fmt(x$output_tokens)} output tokens.")
  cli::cli_text("Estimated price: {dollars(x$price)}{if (x$batch) ' (batch)' else ''}; without prompt caching {dollars(x$price_no_cache)}; through {.fn screen_batch} {dollars(x$price_batch)}.")
  if (isTRUE(x$adaptive)) cli::cli_text(adaptive_estimate_note())
  cli::cli_text("Time at the rate limits in force: about {format_minutes(x$minutes)}{if (is.na(x$tpm)) ' (requests per minute; the token limit the provider reports is followed during the run)' else ''}.")
  print(as.data.frame(x$models[c("model", "requests", "remaining", "input_tokens", "output_tokens", "price", "price_batch", "minutes")]),
    digits = 3, row.names = FALSE)
  invisible(x)
}

format_minutes <- function(m) {
  if (!is.finite(m)) return("an unknown time")
  if (m < 1) return(paste(max(1, round(m * 60)), "seconds"))
  if (m < 120) return(paste(format(round(m, 1), nsmall = 0), "minutes"))
  paste(format(round(m / 60, 1)), "hours")
}

# options(tabscreen.max_price): NULL (no cap) or a non-negative number of USD.
price_cap <- function() {
  cap <- getOption("tabscreen.max_price")
  if (is.null(cap)) return(NULL)
  if (!is.numeric(cap) || length(cap) != 1 || is.na(cap) || cap < 0) {
    rlang::abort(c("Option `tabscreen.max_price` must be a single non-negative number of US dollars, or NULL for no cap.",
      i = "For example `options(tabscreen.max_price = 5)`."),
      class = c("tabscreen_error_option", "tabscreen_error"))
  }
  as.numeric(cap)
}

# Stops a call whose estimate of what remains is above the cap, unless force = TRUE; in an
# interactive session it asks first.
check_price_cap <- function(plan, force, call) {
  cap <- price_cap()
  price <- if (is.na(plan$price)) 0 else plan$price
  if (is.null(cap) || isTRUE(force) || price <= cap) return(invisible())
  what <- "{format_tokens(plan$remaining)} {cli::qty(plan$remaining)}request{?s}, estimated at {format_dollars(price)}"
  if (interactive()) {
    question <- sprintf("This screening sends %s requests, estimated at %s, above options(tabscreen.max_price = %s). Send them?",
      format_tokens(plan$remaining), format_dollars(price), format(cap))
    if (isTRUE(utils::askYesNo(question, default = FALSE))) return(invisible())
  }
  abort_arg(
    c(paste0("The screening is not sent: ", what, ", is above the cap {.code options(tabscreen.max_price = {cap})}."),
      "i" = "See the plan with {.fn screen_plan}; screen fewer records, prompts, models or repetitions, or use {.fn screen_batch} at half the price.",
      "i" = "Set {.code force = TRUE} in the call, or raise the cap, if you mean it."),
    class = c("tabscreen_error_price_cap", "tabscreen_error_force"), arg = "force", call = call
  )
}

# Whether the estimate is printed: options(tabscreen.estimate), else `messages`.
show_estimate <- function(messages) {
  opt <- getOption("tabscreen.estimate")
  if (is.null(opt)) return(isTRUE(messages))
  if (!rlang::is_bool(opt)) {
    rlang::abort("Option `tabscreen.estimate` must be TRUE, FALSE or NULL (follow `messages`).",
      class = c("tabscreen_error_option", "tabscreen_error"))
  }
  opt
}

# Through screen_adaptive() the estimate counts every repetition asked.
adaptive_estimate_note <- function() {
  "With adaptive repetitions these are the most it can send and cost: no repetition is sent once its record's verdict is settled."
}
