# Batch screening: a screening function's call run through the provider's batch API.
# The run is the same engine run as a synchronous call, with the run option `batch`: Go submits,
# polls, reconciles and stores; R shows progress, catches Ctrl-C and builds the same llm object.

batch_state <- new.env(parent = emptyenv())

#' Screen through a provider's batch API, at half the price
#'
#' Runs a screening function (`tabscreen_a.tools()`, `tabscreen_b()` or `tabscreen_c()`) through
#' its provider's asynchronous batch API, which charges half the standard price and does not count
#' against the synchronous rate limits. Every argument in `...` means what it means to the
#' screening function, and the result is the same `llm` object, priced at the batch rate.
#'
#' @section How the batches are kept:
#' The requests are split into batches within the provider's limits (lines and bytes per batch;
#' a create the provider refuses for now, such as OpenAI's enqueued-token limit, is tried again
#' with the same uploaded file after a wait, within `max_tries` attempts and `max_seconds`, then
#' the call stops with an error of class `tabscreen_error_batch`). Before each batch is submitted, its lines are recorded in the answer store with
#' a client tag that is also sent in the batch's metadata: if R crashes (or is killed) between the
#' submit call and its record, the next call finds the batch at the provider by that tag, so a
#' paid batch is never orphaned and no request is submitted twice.
#'
#' Once a batch has ended every line is reconciled: answered; failed (OpenAI's error file,
#' including lines with `status_code: 0`); expired; or missing from both result files (counted as
#' expired). Each result line is read on its own: one that cannot be read (not JSON, say) fails
#' with that reason and never keeps the other lines from being collected. Failed lines whose cause
#' may pass and expired lines are submitted again in a new batch, within `max_tries` batches per
#' request; the others end in `error_data` with their reason. A batch that cannot be read or
#' collected at all (its results refused, say) stops the call, once the other batches are
#' collected, with an error of class `tabscreen_error_batch` naming the batch and the cause; its
#' requests stay at the provider and the same call tries again.
#'
#' @section Waiting and resuming:
#' With `wait = TRUE` the call shows a progress bar (lines done, elapsed time, ETA) and polls the
#' batches at a growing interval (from a quarter second to a minute). With `wait = FALSE`, or when
#' you press Ctrl-C while it waits, the call returns once its batches are submitted: they keep
#' running at the provider. The same call later, in this or any R session with the same answer
#' store, submits nothing already submitted and collects what has ended. [screen_batch_cancel()]
#' cancels a run's batches; [screen_store()] lists each run's batches and their states
#' (`screen_store_batches()` in detail).
#'
#' @section Adaptive repetitions:
#' `screen_batch(screen_adaptive, tabscreen_b, ..., rule = "exact")` stops asking a record once its
#' verdict is settled ([screen_adaptive()]), in rounds of batches: every record's first repetition,
#' then, once a round is collected, as many more repetitions as each open record has had (1, 1, 2,
#' 4, ...), so at most `1 + ceiling(log2(reps))` rounds when no request fails for good. Each round
#' waits for its batches, so the call takes up to that many times a batch's turnaround. With
#' `wait = FALSE` the call submits the round due and returns; the same call again collects it and
#' goes on with the next rounds.
#'
#' @param screening The screening function: `tabscreen_a.tools`, `tabscreen_b` or `tabscreen_c`;
#'   or `screen_adaptive` followed (in `...`) by one of them, for adaptive repetitions.
#' @param ... The arguments of `screening`, as you would give them to it.
#' @param wait `TRUE` to wait for the batches and return the result; `FALSE` to return once they
#'   are submitted.
#' @return With every request collected, the screening's `llm` object (see the screening
#'   function). Otherwise, invisibly, an object of class `tabscreen_batch`: a list with `run_id`,
#'   `store`, `submitted` (requests submitted by this call), `pending` (requests waiting at the
#'   provider), `later` (with adaptive repetitions, the requests of later rounds not sent yet: the
#'   most they can be; 0 otherwise) and `batches` (the run's batches, as [screen_store_batches()]
#'   gives them).
#' @export
#' @examples
#' # A local stand-in for the provider, with its batch API: random decisions.
#' fake <- fake_provider(batches = TRUE)
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))
#' res <- screen_batch(tabscreen_a.tools,
#'   filges2015_dat[1:4, ], prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", progress = FALSE
#' )
#' res$price_data
#' screen_store()[c("run_id", "status", "batches")]
#' options(old)
#' fake$stop()
screen_batch <- function(screening, ..., wait = TRUE) {
  call <- rlang::current_env()
  # screen_batch(screen_adaptive, tabscreen_b, ...): the provider is the inner screening's; a
  # cascade checks that each of its stages has a batch API.
  if (!identical(screening, screen_cascade)) {
    batch_provider(if (identical(screening, screen_adaptive)) adaptive_inner(...) else screening, call)
  }
  if (!rlang::is_bool(wait)) {
    abort_arg("{.arg wait} must be TRUE or FALSE, not {.obj_type_friendly {wait}}.",
      class = "tabscreen_error_batch_args", arg = "wait", call = call)
  }
  if (!wait && isFALSE(getOption("tabscreen.store", NULL))) {
    abort_arg(c("{.code wait = FALSE} needs an answer store to find the batches again.",
      "i" = "Set {.code options(tabscreen.store = NULL)} (the default store) or a file path."),
      class = "tabscreen_error_batch_args", arg = "wait", call = call)
  }
  old <- batch_state$request
  batch_state$request <- list(wait = wait)
  on.exit(batch_state$request <- old, add = TRUE)
  # By its name, so that its errors name it.
  if (identical(screening, screen_adaptive)) return(screen_adaptive(...))
  screening(...)
}

# The provider letter of a screening function of this package (`class`: the error's class).
screening_letter <- function(screening, class, call) {
  fns <- lapply(providers(), function(p) provider_r(p$letter)$screen)
  letter <- vapply(providers(), function(p) p$letter, character(1))[vapply(fns, identical, logical(1), screening)]
  if (length(letter) != 1) {
    abort_arg(c("{.arg screening} must be a screening function of this package.",
      "i" = "Use {.fn tabscreen_a.tools}, {.fn tabscreen_b} or {.fn tabscreen_c}, without calling it."),
      class = class, arg = "screening", call = call)
  }
  letter
}

# The screening function screen_adaptive() is given in `...` (matched as screen_adaptive() matches
# it, so that only that argument is evaluated).
adaptive_inner <- function(screening = NULL, ...) screening

# The provider letter of a screening function that has a batch API.
batch_provider <- function(screening, call) {
  letter <- screening_letter(screening, "tabscreen_error_batch_args", call)
  if (!isTRUE(provider_info(letter)$batch)) {
    abort_arg("{provider_info(letter)$label} has no batch API in this version of tabscreen.",
      class = "tabscreen_error_batch_args", arg = "screening", call = call)
  }
  letter
}

# The run option `batch` of the call being screened (NULL: a synchronous call).
batch_request <- function() batch_state$request

# A batch screening that left requests at the provider: what R returns instead of the result. A
# run that stopped (a batch that cannot be collected, a create refused until max_tries) is an error
# that says why, with that object in its field `batch`.
batch_pending <- function(meta, options, messages, call) {
  store <- meta$store
  batches <- if (!is.null(store$run_id)) screen_store_batches(store$run_id, store = store$path)
  out <- structure(list(run_id = store$run_id, store = store$path,
    submitted = as.integer(meta$batch$submitted %||% 0L), pending = as.integer(meta$batch$pending %||% 0L),
    later = as.integer(meta$batch$later %||% 0L), batches = batches), class = "tabscreen_batch")
  if (identical(meta$state, "stopped")) {
    why <- meta$stop$message %||% "the provider refused the batch requests"
    tabscreen_abort(c(
      "The batch screening stopped: {why}",
      "i" = "{out$pending} request{?s} {?waits/wait} in batches at the provider: the same {.fn screen_batch} call collects {cli::qty(out$pending)}{?it/them} once the cause is gone.",
      "i" = "The run's batches are in the field {.field batch} of this error: {.code rlang::last_error()$batch}."),
      class = meta$stop$class %||% "tabscreen_error_batch", batch = out, call = call)
  }
  tabscreen_inform(c(
    "i" = "{out$pending} request{?s} {?is/are} waiting in {meta$batch$batches %||% 0} batch{?es} at the provider ({out$submitted} submitted by this call).",
    " " = "The same {.fn screen_batch} call collects them when they have ended; {.fn screen_batch_cancel} cancels them.",
    " " = if (out$later > 0) "Adaptive repetitions: that call then sends the later rounds, at most {out$later} more request{?s}."),
    messages = messages)
  invisible(out)
}

#' @export
print.tabscreen_batch <- function(x, ...) {
  cat(sprintf("Batch screening run %s: %d request%s waiting at the provider.\n", x$run_id, x$pending,
    if (x$pending == 1) "" else "s"))
  if (isTRUE(x$later > 0)) cat(sprintf("Later rounds of adaptive repetitions: at most %d more.\n", x$later))
  if (!is.null(x$batches)) print(x$batches[c("provider_id", "state", "collected", "lines", "done", "failed")])
  invisible(x)
}

#' Cancel the batches of a batch screening
#'
#' Asks the provider to cancel every batch of a run of [screen_batch()] that has not been
#' collected. What the provider finished before the cancel is collected by the next
#' `screen_batch()` call, like any ended batch; the rest is submitted again by it.
#'
#' @param run_id A run id (from [screen_store()]), a screening result, or what `screen_batch()`
#'   returned with `wait = FALSE`.
#' @param store The store file; `NULL` for the one `options(tabscreen.store)` points at.
#' @param api_key The key; `NULL` reads it from the provider's environment variable.
#' @return The number of batches cancelled, invisibly.
#' @export
#' @examples
#' # A local stand-in for the provider (random decisions) whose batches take a minute.
#' fake <- fake_provider(batches = TRUE, batch_delay_ms = 60000)
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))
#' sent <- screen_batch(tabscreen_a.tools,
#'   filges2015_dat[1:4, ], prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", progress = FALSE, wait = FALSE
#' )
#' screen_batch_cancel(sent, api_key = "not-a-real-key")
#' screen_store_batches(sent$run_id)
#' options(old)
#' fake$stop()
screen_batch_cancel <- function(run_id, store = NULL, api_key = NULL) {
  call <- rlang::current_env()
  if (inherits(run_id, "tabscreen_batch")) {
    store <- store %||% run_id$store
    run_id <- run_id$run_id
  }
  run <- store_run(run_id, store, call = call)
  runs <- screen_store(run$path)
  letter <- runs$provider[runs$run_id == run$run_id]
  if (length(letter) != 1) {
    abort_arg("Run {.val {run$run_id}} is not in the answer store {.file {run$path}}.",
      class = "tabscreen_error_store_run", arg = "run_id", call = call)
  }
  api_key <- api_key %||% provider_key(letter, call = call)
  check_api_key(api_key, provider_env_var(letter), call = call)
  out <- go_call(C_batch, as.character(to_json(list(op = "cancel", path = run$path, run_id = run$run_id))),
    api_key, call = call)$meta
  cli::cli_inform(c("v" = "Cancelled {out$cancelled} batch{?es} of run {.val {run$run_id}}."), class = "tabscreen_message")
  invisible(out$cancelled)
}

#' @rdname screen_store
#' @export
screen_store_batches <- function(run_id = NULL, store = NULL) {
  if (is.null(run_id)) {
    path <- store_file(store)
    return(store_call(list(op = "batches", path = path, run_id = list())))
  }
  run <- store_run(run_id, store)
  store_call(list(op = "batches", path = run$path, run_id = list(run$run_id)))
}
