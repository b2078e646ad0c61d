# The answer store: an SQLite file, written by the Go engine, in which every finished request of a
# screening is committed the moment it ends (golib/store). R decides where it lives and shows what
# it holds; it never writes to it.

#' The answer store: every paid answer kept, and interrupted screenings resumed
#'
#' @description
#' Every screening ([tabscreen_a.tools()], [tabscreen_b()], [tabscreen_c()]) writes each answer
#' into an SQLite file the moment it arrives, together with the request as sent (never the API
#' key), the raw response, the HTTP status and the attempts. A screening cut short by a crash, a
#' killed R session, a lost network or Ctrl-C loses nothing it was sent: calling the same
#' screening again sends only the requests without a stored answer and says so ("Resuming run
#' ..."). [screen_errors()] records its answers in the run of the result it repairs.
#'
#' * `screen_store()` lists the runs of a store with their status, counts and cost.
#' * `screen_store_answers()` returns the answers of one run (one row per request).
#' * `screen_store_log()` returns the audit log of one run: one row per attempt, with the request
#'   body, the raw response, its HTTP status and the outcome.
#' * `screen_store_delete()` deletes runs and everything stored for them.
#' * `screen_store_recover()` copies what can still be read of a damaged store into a new file.
#'
#' @section Where the store is:
#' `options(tabscreen.store = path)` chooses the file (a folder means the file `answers.sqlite`
#' in it); the default is `answers.sqlite` in `tools::R_user_dir("tabscreen", "data")`.
#' `options(tabscreen.store = FALSE)` turns the store off: nothing is kept (the run's answers pass
#' through a temporary file, removed as soon as the result is built) and nothing can be resumed.
#' Several R sessions can share one store, also at the same time.
#'
#' @section Runs and resuming:
#' A run is identified by a fingerprint of everything that decides its answers: the provider and
#' endpoint, the models and their settings, the prompts, the records' text and study ids, the
#' tools, `tool_choice`, `top_p`, reasoning settings, `reps`, the seed and the fields passed in
#' `...` (not the API key, and not the retry, rate and progress settings). A call whose
#' fingerprint matches an unfinished run (status `running` with its R session gone, `interrupted`,
#' `stopped`, or `incomplete`: ended with failed requests, e.g. after the network was lost)
#' resumes it. A run that completed is reused: the same call again (a script or an R Markdown
#' report run twice) returns its stored answers with a message and sends nothing, so nothing is
#' paid twice. To draw fresh answers instead, set `options(tabscreen.store_reuse = FALSE)`: the
#' call then screens the records anew in a new run (the completed run stays in the store). The same screening started twice
#' at once is refused in the second session (error class `tabscreen_error_store_busy`): it never
#' sends the same requests twice.
#'
#' A store that cannot be used (a folder that cannot be written, a file that is not a store or is
#' damaged) is an error of class `tabscreen_error_store` before any request is sent. If writing
#' fails during a run (a full disk), no further request is sent, the requests already sent are
#' awaited, and the run stops: every answer received is in the partial result of the error, every
#' answer committed before stays in the store, and the answers the store could not take are kept
#' in a journal beside it (`<store>.journal`), or, when the disk takes no journal either, in the R
#' session until it ends (the error says which). The next call on the store (the same screening,
#' [screen_errors()] on the partial result, or `screen_store()`) writes them into the store before
#' anything is sent, so that no answered request is sent again; a screening call refuses to start
#' while they cannot be written (class `tabscreen_error_store_kept`, also `tabscreen_error_store`:
#' free space on the store's disk; pointing the call at another store would leave them behind). A run is `completed` only when the store holds an answer for each
#' of its requests.
#'
#' @section A damaged store:
#' A file damaged inside (a disk error, or another program writing into it) may still open and
#' read normally until a run meets a damaged page, after requests were paid for. So the first
#' time an R session opens a store file, and again whenever the file has changed since this
#' session last closed it, every page of it is checked (SQLite's `PRAGMA quick_check`, read only:
#' about a second for a store of a million answers). A damaged file is an error of class
#' `tabscreen_error_store_damaged` (also `tabscreen_error_store`) that names the file, before any
#' request is sent and before anything is written to it; the file is left exactly as it was.
#'
#' `screen_store_recover(store, to)` copies every row that can still be read (the runs, answers,
#' attempts, batches and review decisions) of the damaged file into the new file `to`, table by
#' table (and, where the pages that lead to a table's rows are damaged, from every page of the
#' file): a damaged page loses the rows it held, not the rest. A completed run that lost answers
#' becomes `incomplete` in the new file. Point `options(tabscreen.store)` at `to` (or move it in
#' the damaged file's place) and call the same screening again: it resumes the run and sends only
#' the jobs whose answers were lost.
#'
#' @section The file:
#' The store is an ordinary SQLite database (write-ahead log, `synchronous = NORMAL`) that you can
#' open with `DBI::dbConnect(RSQLite::SQLite(), path)`. Its tables:
#'
#' * `runs`: `run_id`, `fingerprint`, `provider`, `endpoint`, `models`, `prompts`, `records`,
#'   `jobs` (requests in the run; with [screen_adaptive()], the most it may send), `status` (`running`, `interrupted`, `stopped`, `incomplete`,
#'   `completed`),
#'   `created_at`, `updated_at` (UTC, ISO 8601), `owner_pid`, `owner_host`, `heartbeat_at` (the R
#'   session writing it), `settings` (JSON of the run's options, without the key).
#' * `answers`: one row per request that was sent, keyed by (`run_id`, `job_key`): `record`
#'   (position of the record in the data), `studyid`, `promptid`, `model`, `top_p`, `n` (the
#'   repetition), `answered` (1 for an answer, 0 for a failure), `decision_llm`,
#'   `decision_binary`, `detailed_description`, `confidence`, `tool_arguments` (the arguments of a
#'   custom tool's call, as JSON), `prompt_tokens`, `cached_tokens`,
#'   `cache_write_tokens`, `completion_tokens` (of the answer), `billed_*_tokens` (of every reply
#'   billed for the request, re-asked ones included), `price_dollar`, `submodel`, `http_status`,
#'   `attempts`, `run_time` (seconds from the request's first attempt to its answer, retries and
#'   waits included), `took` (seconds of its last attempt alone), `received_at`, `error`,
#'   `request_body` (the JSON sent,
#'   without the key, which travels in a header), `response_body` (the raw response) and
#'   `request_from`: a request the same as one stored lately for an answered job (a record's
#'   repetitions) is stored once, and the later jobs have `request_body` empty and name that job
#'   here (`screen_store_log()` gives every attempt its body).
#' * `attempts`: the attempts that did not end their request (a retried failure or a re-asked
#'   reply): `run_id`, `job_key`, `attempt`, `http_status`, `error`, `response_body`, `at`, `took`.
#'
#' @param store The store file; `NULL` for the one `options(tabscreen.store)` points at.
#' @param run_id A run id (from `screen_store()`), or a screening result (class `llm`), whose run
#'   and store are used. `screen_store_delete()` takes several.
#' @return `screen_store()`: a tibble with one row per run: `run_id`, `status`, `provider`,
#'   `endpoint`, `models`, `prompts`, `records`, `jobs`, `answered`, `failed`, `price_dollar`,
#'   `created_at`, `updated_at`, `fingerprint`, `batches` (a batch screening's batches and their
#'   states, `NA` for other runs). `screen_store_batches()`: a tibble with one row per batch of
#'   [screen_batch()] (of one run, or of every run when `run_id` is `NULL`): `run_id`, `batch`,
#'   `provider_id`, `tag` (the client tag in the batch's metadata), `state` (`intent` until the
#'   provider's answer is recorded, then the provider's word), `collected`, `lines`, `done`,
#'   `failed`, `created_at`, `updated_at`. `screen_store_answers()`: a tibble with one row
#'   per request sent (the columns of the `answers` table but the bodies). `screen_store_log()`:
#'   a tibble with one row per attempt: the job's columns, `attempt`, `at`, `took`, `outcome`
#'   (`answer`, `failed` or `retried`), `http_status`, `error`, `request_body`, `response_body`.
#'   `screen_store_delete()`: the number of runs deleted, invisibly. `screen_store_recover()`: a
#'   tibble with one row per table of the damaged file: `table`, `copied` (rows copied into `to`),
#'   `lost` (rows that could not be read; `NA` when they cannot be counted) and `exact` (`FALSE`
#'   where `lost` is an upper bound, the table's indexes being damaged too).
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' # Keep this example's answers in a file of its own.
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))
#' res <- tabscreen_a.tools(
#'   filges2015_dat[1:3, ], prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", progress = FALSE
#' )
#' screen_store()
#' screen_store_answers(res)
#' log <- screen_store_log(res)
#' log[c("studyid", "attempt", "outcome", "http_status")]
#' cat(substr(log$request_body[1], 1, 200))
#' screen_store_delete(res)
#'
#' # A store damaged inside is refused before any request; what it still holds is recoverable.
#' res <- tabscreen_a.tools(
#'   filges2015_dat[1:40, ], prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", progress = FALSE
#' )
#' damaged <- getOption("tabscreen.store")
#' pages <- file.size(damaged) %/% 4096
#' con <- file(damaged, "r+b")
#' seek(con, (pages %/% 2) * 4096, rw = "write")
#' writeBin(as.raw(rep(0x5a, 2 * 4096)), con) # two pages overwritten in the middle
#' close(con)
#' err <- tryCatch(screen_store(), tabscreen_error_store_damaged = function(e) e)
#' class(err)[1]
#' recovered <- tempfile(fileext = ".sqlite")
#' screen_store_recover(damaged, recovered)
#' screen_store(recovered)[c("run_id", "jobs", "answered")]
#' options(old)
#' fake$stop()
screen_store <- function(store = NULL) {
  path <- store_file(store)
  if (!file.exists(path)) return(empty_runs())
  store_call(list(op = "runs", path = path))
}

#' @rdname screen_store
#' @export
screen_store_answers <- function(run_id, store = NULL) {
  run <- store_run(run_id, store)
  store_call(list(op = "answers", path = run$path, run_id = list(run$run_id)))
}

#' @rdname screen_store
#' @export
screen_store_log <- function(run_id, store = NULL) {
  run <- store_run(run_id, store)
  store_call(list(op = "log", path = run$path, run_id = list(run$run_id)))
}

#' @rdname screen_store
#' @export
screen_store_delete <- function(run_id, store = NULL) {
  call <- rlang::current_env()
  if (inherits(run_id, "llm")) {
    run <- store_run(run_id, store, call = call)
    ids <- run$run_id
    path <- run$path
  } else {
    if (!is.character(run_id) || length(run_id) == 0 || anyNA(run_id)) {
      abort_arg("{.arg run_id} must be run ids (see {.fn screen_store}) or a screening result.",
        class = "tabscreen_error_store_run", arg = "run_id", call = call)
    }
    ids <- unique(run_id)
    path <- store_file(store, call = call)
  }
  if (!file.exists(path)) {
    abort_arg("The answer store {.file {path}} does not exist.", class = "tabscreen_error_store_run",
      arg = "store", call = call)
  }
  out <- go_call(C_store, as.character(to_json(list(op = "delete", path = path, run_id = as.list(ids)))), call = call)$meta
  cli::cli_inform(c("v" = "Deleted {out$deleted} run{?s} from {.file {path}}."), class = "tabscreen_message")
  invisible(out$deleted)
}

#' @param to The new file to copy a damaged store's readable rows into; it must not exist.
#' @rdname screen_store
#' @export
screen_store_recover <- function(store = NULL, to) {
  call <- rlang::current_env()
  path <- store_file(store, call = call)
  if (!file.exists(path)) {
    abort_arg("The answer store {.file {path}} does not exist.", class = "tabscreen_error_store",
      arg = "store", call = call)
  }
  if (missing(to) || !rlang::is_string(to) || !nzchar(to)) {
    abort_arg("{.arg to} must be the path of a new file to copy the store's readable rows into.",
      class = "tabscreen_error_store", arg = "to", call = call)
  }
  to <- path.expand(to)
  if (file.exists(to)) {
    abort_arg(c("{.arg to} ({.file {to}}) exists already.", "i" = "Name a new file: nothing is copied over a file."),
      class = "tabscreen_error_store", arg = "to", call = call)
  }
  out <- go_call(C_store, as.character(to_json(list(op = "recover", path = path, to = to))),
    simplify = FALSE, call = call)$meta
  tables <- out$tables
  summary <- tibble::tibble(
    table = vapply(tables, function(t) t$table, character(1)),
    copied = vapply(tables, function(t) as.integer(t$copied), integer(1)),
    lost = vapply(tables, function(t) if (is.null(t$lost)) NA_integer_ else as.integer(t$lost), integer(1)),
    exact = vapply(tables, function(t) isTRUE(t$exact), logical(1))
  )
  answers <- summary[summary$table == "answers", ]
  if (nrow(answers) == 1) {
    copied <- answers$copied
    lost <- answers$lost
    cli::cli_inform(c("v" = "Copied {copied} answer{?s} of {.file {path}} into {.file {to}}.",
      "i" = if (is.na(lost)) "The answers that could not be read cannot be counted." else "{lost} answer{?s} could not be read{if (answers$exact) '' else ' (at most)'}."),
      class = "tabscreen_message")
  }
  summary
}

# The store a screening writes into: list(path, reuse, temporary). With the store off the run
# still goes through one, the same path as ever, in a temporary file that the Go core removes
# once the result is built: nothing is kept and nothing can be resumed.
store_settings <- function(call = rlang::caller_env()) {
  path <- configured_store(call)
  if (is.null(path)) {
    return(list(path = tempfile("tabscreen-run-", fileext = ".sqlite"), reuse = FALSE, temporary = TRUE))
  }
  # TRUE (the default): a completed run of the same call is returned, not paid for again.
  reuse <- getOption("tabscreen.store_reuse", TRUE)
  if (!rlang::is_bool(reuse)) {
    tabscreen_abort("{.code options(tabscreen.store_reuse)} must be {.code TRUE} or {.code FALSE}.",
      class = "tabscreen_error_store", call = call)
  }
  list(path = path, reuse = reuse, temporary = FALSE)
}

# The path options(tabscreen.store) names, or NULL when the store is off.
configured_store <- function(call = rlang::caller_env()) {
  opt <- getOption("tabscreen.store")
  if (is.null(opt)) {
    return(file.path(tools::R_user_dir("tabscreen", "data"), "answers.sqlite"))
  }
  if (isFALSE(opt)) return(NULL)
  if (!rlang::is_string(opt) || !nzchar(opt)) {
    tabscreen_abort(c("{.code options(tabscreen.store)} must be the path of a file, or {.code FALSE} to keep no answer store.",
      "x" = "It is {.obj_type_friendly {opt}}."), class = "tabscreen_error_store", call = call)
  }
  store_path(opt)
}

store_file <- function(store, call = rlang::caller_env()) {
  if (is.null(store)) {
    path <- configured_store(call)
    if (is.null(path)) {
      abort_arg(c("The answer store is off ({.code options(tabscreen.store = FALSE)}).",
        "i" = "Pass the file in {.arg store}."), class = "tabscreen_error_store", arg = "store", call = call)
    }
    return(path)
  }
  if (!rlang::is_string(store) || !nzchar(store)) {
    abort_arg("{.arg store} must be the path of an answer store file, not {.obj_type_friendly {store}}.",
      class = "tabscreen_error_store", arg = "store", call = call)
  }
  store_path(store)
}

# A store given as a file, or as a folder (the file answers.sqlite in it).
store_path <- function(path) {
  path <- path.expand(path)
  if (dir.exists(path)) file.path(path, "answers.sqlite") else path
}

# A run named by its id (in `store`) or by a result (in the store it was written to).
store_run <- function(run_id, store, call = rlang::caller_env()) {
  if (inherits(run_id, "llm_cascade")) {
    runs <- attr(run_id, "run_info")$cascade$runs
    abort_arg(c("{.arg run_id} is the result of a cascade, whose stages are runs of their own: {.val {runs}}.",
      "i" = "Give one of these run ids (the first stage's first), from {.code attr(x, \"run_info\")$cascade$runs}."),
      class = "tabscreen_error_store_run", arg = "run_id", call = call)
  }
  if (inherits(run_id, "llm")) {
    info <- attr(run_id, "store")
    if (is.null(info$run_id)) {
      abort_arg(c("{.arg run_id} is a screening result that was not kept in an answer store.",
        "i" = "It was made with {.code options(tabscreen.store = FALSE)} or by an older version."),
        class = "tabscreen_error_store_run", arg = "run_id", call = call)
    }
    return(list(run_id = info$run_id, path = if (is.null(store)) info$path else store_file(store, call)))
  }
  if (!rlang::is_string(run_id) || !nzchar(run_id)) {
    abort_arg("{.arg run_id} must be one run id (see {.fn screen_store}) or a screening result, not {.obj_type_friendly {run_id}}.",
      class = "tabscreen_error_store_run", arg = "run_id", call = call)
  }
  path <- store_file(store, call)
  if (!file.exists(path)) {
    abort_arg("The answer store {.file {path}} does not exist.", class = "tabscreen_error_store_run",
      arg = "store", call = call)
  }
  list(run_id = run_id, path = path)
}

store_call <- function(request, call = rlang::caller_env()) {
  tibble::as_tibble(go_call(C_store, as.character(to_json(request)), call = call)$table)
}

empty_runs <- function() {
  tibble::tibble(run_id = character(), status = character(), provider = character(), endpoint = character(),
    models = character(), prompts = integer(), records = integer(), jobs = integer(), answered = integer(),
    failed = integer(), price_dollar = double(), created_at = character(), updated_at = character(),
    fingerprint = character(), batches = character())
}

# Hints for the store's errors, which the Go side words without knowing R's options.
store_error_hint <- function(class) {
  switch(class,
    tabscreen_error_store = c("i" = "Point `options(tabscreen.store = ...)` at a file you can write, or set it to FALSE to screen without keeping answers (see ?screen_store)."),
    NULL
  )
}
