# The run loop. Go runs the screening on its own threads; R starts it, then polls it from the main
# thread at least every `poll_interval` seconds (Go answers a poll early when the run ends or has a
# callback for R): that is where the progress bar moves, where the user's R callbacks
# (is_transient, backoff, after) are evaluated, and where Ctrl-C is caught. Go never calls R.

poll_interval <- 0.05

#' @importFrom rlang %||%
#' @useDynLib tabscreen, .registration = TRUE
NULL

# Starts a screening in Go and waits for it. See ARCHITECTURE.md for the tables and options.
# `records` is the engine's records table: a data frame, or an environment whose `raw` holds it as
# an Arrow IPC stream (engine_records_ipc()), which is removed once Go has its copy.
# On Ctrl-C the run is cancelled and this returns normally with meta$state == "cancelled": every
# answer already received is kept, every other job is failed with its reason.
# `merge`: NULL, or the engine columns of the rows of a result screen_errors() repairs, as an IPC
# stream: the engine merges them into the rows and the aggregation it returns.
run_engine <- function(records, options, api_key, callbacks = list(), progress = TRUE,
                       messages = TRUE, call = rlang::caller_env(), merge = NULL) {
  callbacks <- callbacks[!vapply(callbacks, is.null, logical(1))]
  options$r_callbacks <- list(
    is_transient = is.function(callbacks$is_transient),
    backoff = is.function(callbacks$backoff),
    after = is.function(callbacks$after)
  )
  if (is.environment(records)) {
    ipc <- records$raw
    on.exit(if (exists("raw", envir = records, inherits = FALSE)) rm("raw", envir = records), add = TRUE)
  } else {
    ipc <- df_to_ipc(records[intersect(c("title", "abstract", "studyid"), names(records))])
  }
  json <- as.character(to_json(options))
  started <- go_call(C_run_start, ipc, json, api_key, call = call)$meta
  # Go has what it needs of the records: free R's copy now, not at some later collection (a large
  # screening's text would otherwise be held twice while it runs).
  large <- length(ipc) > 5e7
  rm(ipc)
  if (is.environment(records)) rm("raw", envir = records)
  # R's collector would not run while R waits on the run: collect now, or the copy stays.
  if (large) gc(verbose = FALSE)
  handle <- as.numeric(started$handle)
  inform_store(started$store, messages)

  collected <- FALSE
  on.exit(if (!collected) release_run(handle), add = TRUE)

  bar <- NULL
  state <- NULL
  last <- NULL
  interrupted <- FALSE
  repeat {
    state <- tryCatch(
      {
        st <- go_call(C_run_poll, handle, poll_interval, simplify = FALSE, call = call)$meta
        answer_callbacks(handle, st$callbacks, callbacks)
        if (progress) bar <- show_progress(bar, st)
        last <- st
        # Go waited for the run; this short sleep is where R takes a Ctrl-C pressed meanwhile.
        if (!identical(st$state, "finished")) Sys.sleep(0.001)
        st
      },
      interrupt = function(cnd) {
        interrupted <<- TRUE
        NULL
      }
    )
    if (interrupted || identical(state$state, "finished")) break
  }
  if (interrupted) go_call(C_run_cancel, handle, call = call)

  out <- go_call(C_run_result, handle, merge, call = call)
  collected <- TRUE
  meta <- out$meta
  if (!is.null(bar)) end_progress(bar, meta, last)
  meta$price_data <- tibble::as_tibble(price_rows(meta$price_data))
  list(answers = out$table, aggregated = out$table2, reworded = out$table3, meta = meta)
}

# Says that a run resumes, takes a completed run's answers, or that an identical completed run exists.
inform_store <- function(store, messages) {
  if (is.null(store)) return(invisible())
  fmt <- function(n) format(n, big.mark = ",")
  written <- store$written %||% 0
  if (written > 0) {
    tabscreen_inform(c("v" = paste("Wrote {fmt(written)} {cli::qty(written)}answer{?s} that an earlier call received but could not store into the answer",
      "store; {cli::qty(written)}{?it is/they are} not sent again.")), messages = messages)
  }
  if (isTRUE(store$reused)) {
    # A completed run holds every answer of the same call: none is sent, nothing is paid again.
    tabscreen_inform(c("i" = paste("Run {.val {store$run_id}} of the answer store completed the same requests: its",
      "{fmt(store$stored)} of {fmt(store$total)} answers are returned and nothing is sent."),
      " " = "To draw fresh answers instead, set {.code options(tabscreen.store_reuse = FALSE)} for that call."),
      messages = messages)
  } else if (isTRUE(store$resumed)) {
    tabscreen_inform(c("i" = "Resuming run {.val {store$run_id}}: {fmt(store$stored)} of {fmt(store$total)} answers already stored."),
      messages = messages)
  } else if (!is.null(store$previous) && nzchar(store$previous)) {
    tabscreen_inform(c("i" = paste("Run {.val {store$previous}} of the answer store completed the same requests; this call screens them anew",
      "({.code options(tabscreen.store_reuse = FALSE)}).")), messages = messages)
  }
  invisible()
}

# Cancels a run that R left early (an error in a callback or in this loop) and waits for Go to
# finish it, so no goroutine or connection outlives the call.
release_run <- function(handle) {
  go_call(C_run_cancel, handle)
  try(go_call(C_run_result, handle, NULL), silent = TRUE)
  invisible()
}

answer_callbacks <- function(handle, pending, callbacks) {
  if (length(pending) == 0) return(invisible())
  replies <- lapply(pending, function(cb) {
    reply <- list(id = cb$id, value = NULL, error = "")
    value <- tryCatch(
      {
        fun <- callbacks[[cb$kind]]
        if (identical(cb$kind, "backoff")) fun(cb$attempts) else fun(callback_response(cb))
      },
      error = function(e) {
        reply$error <<- conditionMessage(e)
        NULL
      }
    )
    if (!nzchar(reply$error)) reply$value <- callback_value(cb$kind, value)
    reply
  })
  go_call(C_run_reply, handle, as.character(to_json(replies)))
  invisible()
}

# The response a user's callback sees: an httr2 response, so predicates written for httr2's
# req_retry() work unchanged.
callback_response <- function(cb) {
  headers <- lapply(cb$headers %||% list(), function(v) paste(unlist(v), collapse = ", "))
  httr2::response(
    status_code = cb$status,
    headers = headers,
    body = charToRaw(enc2utf8(cb$body %||% ""))
  )
}

callback_value <- function(kind, value) {
  if (kind == "is_transient") {
    if (!rlang::is_bool(value)) {
      rlang::abort("`is_transient` must return TRUE or FALSE.", class = c("tabscreen_error_callback", "tabscreen_error"))
    }
    return(as.numeric(value))
  }
  if (is.null(value)) return(NULL)
  if (!is.numeric(value) || length(value) != 1 || is.na(value) || value < 0) {
    rlang::abort(sprintf("`%s` must return a single non-negative number of seconds%s.", kind,
                         if (kind == "after") " or NULL" else ""),
                 class = c("tabscreen_error_callback", "tabscreen_error"))
  }
  as.numeric(value)
}

# The progress line counts the answered jobs, and the failed ones with the commonest cause of the
# failed attempts. Jobs a Ctrl-C or a stop called off (and a batch's jobs left waiting at the
# provider) are said apart at the end: an interrupted run's bar stays where it was.
show_progress <- function(bar, st) {
  if (!is.null(st$batch)) return(show_batch_progress(bar, st, parent.frame()))
  if (is.null(bar)) {
    bar <- cli::cli_progress_bar(
      name = "Screening",
      total = st$total,
      format = paste("{cli::pb_name} {cli::pb_bar} {cli::pb_current}/{cli::pb_total} | ETA: {cli::pb_eta}",
                     "| failed: {cli::pb_extra$failed}{cli::pb_extra$problem}"),
      format_failed = paste("{cli::pb_name}: {cli::pb_current}/{cli::pb_total} answered",
                            "| failed: {cli::pb_extra$failed}{cli::pb_extra$problem} | {cli::pb_extra$unsent_label}: {cli::pb_extra$unsent}"),
      extra = progress_extra(st),
      clear = FALSE,
      # The loop may poll again after the last job: the bar is ended by run_engine(), not by cli
      # when it reaches its total.
      auto_terminate = FALSE,
      .envir = parent.frame()
    )
  }
  cli::cli_progress_update(id = bar, set = st$answered %||% st$done, extra = progress_extra(st))
  bar
}

progress_extra <- function(st, state = NULL) {
  unsent <- st$unsent %||% 0
  list(
    failed = (st$failed %||% 0) - unsent - (st$batch$pending %||% 0) - (st$batch$later %||% 0),
    problem = if (nzchar(st$problem %||% "")) paste0(" (mostly ", st$problem, ")") else "",
    unsent = unsent,
    unsent_label = if (identical(state, "cancelled")) "cancelled" else "stopped",
    batches = st$batch$batches %||% 0,
    pending = st$batch$pending %||% 0
  )
}

# Ends the bar with the run's final counts. A run whose every job ended on its own ends as it
# ran; one cut short shows answered, failed and called off (or waiting) as they are.
end_progress <- function(bar, meta, last) {
  final <- list(answered = meta$answered, failed = meta$failed, unsent = meta$unsent %||% 0,
    problem = last$problem, batch = meta$batch)
  cli::cli_progress_update(id = bar, set = final$answered, extra = progress_extra(final, meta$state))
  cut_short <- final$unsent > 0 || (meta$batch$pending %||% 0) > 0
  # "failed" keeps cli from filling the bar to its total, as it does for "done".
  cli::cli_progress_done(id = bar, result = if (cut_short) "failed" else "done")
  invisible()
}

# A batch screening's bar: lines done of the total, the batches open, elapsed time and ETA.
show_batch_progress <- function(bar, st, envir) {
  if (is.null(bar)) {
    bar <- cli::cli_progress_bar(
      name = "Batch",
      total = st$total,
      format = paste("{cli::pb_name} {cli::pb_bar} {cli::pb_current}/{cli::pb_total} lines",
                     "| batches: {cli::pb_extra$batches} | failed: {cli::pb_extra$failed}",
                     "| {cli::pb_elapsed} | ETA: {cli::pb_eta}"),
      format_failed = paste("{cli::pb_name}: {cli::pb_current}/{cli::pb_total} lines answered | failed: {cli::pb_extra$failed}",
                            "| waiting at the provider: {cli::pb_extra$pending} | {cli::pb_extra$unsent_label}: {cli::pb_extra$unsent}"),
      extra = progress_extra(st),
      clear = FALSE,
      auto_terminate = FALSE,
      .envir = envir
    )
  }
  cli::cli_progress_update(id = bar, set = st$answered %||% st$done, extra = progress_extra(st))
  bar
}

# The run's price rows: the whole run's price, and the part of it this call spent.
price_rows <- function(rows) {
  prices <- c("input_price_dollar", "output_price_dollar", "spent_input_price_dollar", "spent_output_price_dollar",
    "cached_input_tokens", "cache_write_tokens", "cache_saving_dollar")
  if (length(rows) == 0 || (is.data.frame(rows) && nrow(rows) == 0)) {
    empty <- data.frame(promptid = integer(), model = character(), iterations = integer())
    empty[prices] <- list(double())
    return(empty)
  }
  rows <- as.data.frame(rows)
  for (col in prices) {
    if (is.null(rows[[col]])) rows[[col]] <- NA_real_
    rows[[col]] <- as.numeric(rows[[col]])
  }
  rows$promptid <- as.integer(rows$promptid)
  rows$iterations <- as.integer(rows$iterations)
  rows[c("promptid", "model", "iterations", prices)]
}

# The concurrency cap: option tabscreen.max_active, else a default the engine derives from rpm
# (about two seconds of requests in flight, between 4 and 256).
engine_max_active <- function() {
  n <- getOption("tabscreen.max_active", 0L)
  if (!is.numeric(n) || length(n) != 1 || is.na(n) || n < 0) {
    rlang::abort("Option `tabscreen.max_active` must be a single non-negative number (0 for the default).",
                 class = c("tabscreen_error_option", "tabscreen_error"))
  }
  as.integer(n)
}

# Whether the run uses the providers' prompt caches (option tabscreen.cache, default TRUE): requests
# laid out for the cache (provider B's breakpoints, A's and C's prompt_cache_key) and a record's
# repetitions sent once its first answer has arrived. FALSE sends every request in table order with no cache field.
engine_cache <- function() {
  x <- getOption("tabscreen.cache", TRUE)
  if (!rlang::is_bool(x)) {
    rlang::abort("Option `tabscreen.cache` must be TRUE or FALSE.",
                 class = c("tabscreen_error_option", "tabscreen_error"))
  }
  x
}

# The tokens per minute the engine paces to: option tabscreen.tpm, else NULL (the engine follows the
# limit the provider reports in its rate-limit headers).
engine_tpm <- function() {
  n <- getOption("tabscreen.tpm")
  if (is.null(n)) {
    return(NULL)
  }
  if (!is.numeric(n) || length(n) != 1 || is.na(n) || !is.finite(n) || n <= 0) {
    rlang::abort(c("Option `tabscreen.tpm` must be a single positive number of tokens per minute.",
                   i = "Set it to your account's tokens-per-minute limit, e.g. `options(tabscreen.tpm = 200000)`, or to NULL to follow the limit the provider reports."),
                 class = c("tabscreen_error_option", "tabscreen_error"))
  }
  as.numeric(n)
}

# The timeout of one request, in seconds: option tabscreen.timeout, default 120. A screening answer
# takes seconds; a request that hangs is given up and retried rather than holding a slot for long.
engine_timeout <- function() {
  s <- getOption("tabscreen.timeout", 120)
  if (!is.numeric(s) || length(s) != 1 || is.na(s) || s <= 0) {
    rlang::abort("Option `tabscreen.timeout` must be a single positive number of seconds.",
                 class = c("tabscreen_error_option", "tabscreen_error"))
  }
  as.numeric(s)
}
