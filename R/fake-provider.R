# The fake provider: a local HTTP server (Go package golib/fakeprovider, served from the package's
# own core library in a child R process, so that the package installs no second program) that
# speaks a provider's wire protocol strictly: it validates every request against the provider's
# published specification, answers with a tool call whose arguments it derives from the request's
# own tool schema, and injects the failures a real service shows. Exported as fake_provider() for
# users, examples and the vignette; the tests and the demo use it too. It binds 127.0.0.1 only and
# never contacts a real provider.
#
# Settings (named arguments of fake_provider_start() and $configure(); see
# golib/fakeprovider/config.go for the full list):
#   latency_ms, latency_median_ms, latency_sigma   fixed and lognormal latency
#   rpm                                            floor(rpm / 60) requests in any sliding second
#   tpm                                            tokens per minute (a request's prompt counted when
#                                                  admitted, its completion when answered)
#   tpm_mode                                       how tpm counts: "bucket" (default: tpm tokens refilled
#                                                  continuously), "window" (at most tpm in any sliding
#                                                  minute), "second" (the bucket holding only
#                                                  tpm / 60, one second's tokens)
#   max_concurrency                                requests served at once before 429
#   faults = list("500" = 0.1, hang = 0.01)        probability per request of each fault kind:
#                                                  "429", "quota", "500", "502", "503", "504", "hang",
#                                                  "drop", "malformed", "no_tool", "bad_args", "bad_enum",
#                                                  "529" (B; 503 elsewhere), "finish_error" (C; 500 elsewhere)
#   fail_first_n = list(kind = "500", n = 3)       the next n valid requests get that fault
#   fail_matching = list(substring = "x", kind = "500", n = 0)
#                                                  requests whose user message contains substring
#   decisions = list("1" = 0.3, "0" = 0.6, "1.1" = 0.1)
#                                                  weights of enum values in the tool arguments
#   tendency = TRUE                                each record gets an include probability its answers
#                                                  follow (golib/fakeprovider/tendency.go); or
#                                                  list(components = list(list(weight, a, b), ...),
#                                                  models = list(<part of a model name> = sharpness),
#                                                  uncertain = 0.2)
#   seed, invalid_keys, retry_after_ms, snapshot, reasoning_tokens, cached_fraction,
#   allow_unknown_fields, keep_requests
#   count_bodies = TRUE                            count requests and answers per request body
#                                                  ($stats()$bodies: sent_after_answer, max_sent, ...)
#   prompt_cache = TRUE                            report cached (B: and cache-write) tokens as each
#                                                  provider's prompt cache would (cache.go); off by
#                                                  default, so that every prompt token is priced alike
#   flex_unavailable_n = 1                         the next n A requests with service_tier "flex" get
#                                                  429 "resource unavailable"
#   anthropic_thinking_by_default, anthropic_no_forced_tool, anthropic_no_disable_thinking,
#   anthropic_no_prefill                           provider B model rules (substrings of model names)
#   mistral_no_reasoning_effort, mistral_args_as_object
#                                                  provider C model rule (name prefixes), argument form
#   batches = TRUE                                 serve the three batch APIs (off by default)
#   batch_delay_ms                                 a batch ends this long after its create (default 0)
#   batch_fail, batch_fail_zero, batch_expire, batch_vanish
#                                                  fractions of lines that, on their first submission,
#                                                  fail (500), fail without a response (status_code 0),
#                                                  expire, or are in no result file
#   batch_fail_numeric, batch_garbled              fractions of lines that, on their first submission,
#                                                  fail (500) with a numeric error code, or are
#                                                  answered and written cut in the middle (not JSON)
#   batch_unknown_fields = TRUE                    result lines and batches carry fields no client knows
#   batch_results_gone = TRUE                      every request for a batch's results gets a 404
#   batch_create_fail_once, batch_create_fail_always
#                                                  the next batch create, or every one, gets a 429

# How the fake is started. By default a child R process loads this package's DLL and serves the fake
# from the core library (TsFakeServe) until its stdin, a pipe held by this process, closes.
# Developers can run their own build of the Go program cmd/tabscreen-fake instead (say, one built
# with -race): TABSCREEN_FAKE_BIN, or `.bin`, names it. Returns list(program, args(port_file, config)).
fake_provider_command <- function(bin = NULL) {
  bin <- bin %||% Sys.getenv("TABSCREEN_FAKE_BIN", "")
  if (nzchar(bin)) {
    if (!file.exists(bin) || dir.exists(bin)) {
      rlang::abort(c("The fake provider program was not found.",
                     i = paste0("TABSCREEN_FAKE_BIN (or `.bin`) is '", bin, "', which is not a file. ",
                                "Build it with `go build -o tabscreen-fake ./cmd/tabscreen-fake`, or unset it ",
                                "to serve the fake from the package's core library.")),
                   class = c("tabscreen_error_fake", "tabscreen_error"))
    }
    return(list(program = bin, args = function(port_file, config) {
      c("--host", "127.0.0.1", "--port", "0", "--port-file", port_file, "--watch-stdin=true",
        "--config", config)
    }))
  }
  child <- core_child_command("C_fake_serve")
  list(program = child$program, args = function(port_file, config) {
    options <- paste0('{"host":"127.0.0.1","port":0,"port_file":', to_json_string(port_file),
                      ',"config":', config, "}")
    child$args(options)
  })
}

# A child R process that loads only this package's DLL and calls the serving entry point `symbol`
# (C_fake_serve, C_review_serve) with one JSON string of options; it serves until its stdin closes.
# Returns list(program, args(options)).
core_child_command <- function(symbol) {
  dll <- tabscreen_dll_path()
  rscript <- file.path(R.home("bin"), if (.Platform$OS.type == "windows") "Rscript.exe" else "Rscript")
  # No packages and no profile: the child needs only the DLL, and starts in a fraction of a second.
  serve <- paste(
    "a <- commandArgs(TRUE); d <- dyn.load(a[[1L]]);",
    sprintf("r <- .Call(getNativeSymbolInfo('%s', d), a[[2L]]);", symbol),
    "if (!identical(r$status, 0L)) { cat(r$json, '\\n', file = stderr()); quit(status = 1L) }"
  )
  list(program = rscript, args = function(options) {
    c("--vanilla", "--default-packages=NULL", "-e", serve, dll, options)
  })
}

# The package's own DLL: the one this session loaded, else the installed one.
tabscreen_dll_path <- function() {
  dlls <- getLoadedDLLs()
  if ("tabscreen" %in% names(dlls)) {
    return(dlls[["tabscreen"]][["path"]])
  }
  libs <- system.file("libs", package = "tabscreen")
  path <- file.path(libs, .Platform$r_arch, paste0("tabscreen", .Platform$dynlib.ext))
  if (!nzchar(libs) || !file.exists(path)) {
    rlang::abort("The tabscreen package's DLL was not found: is the package installed?",
                 class = c("tabscreen_error_fake", "tabscreen_error"))
  }
  normalizePath(path)
}

to_json_string <- function(x) as.character(jsonlite::toJSON(x, auto_unbox = TRUE))

# TRUE when the fake provider can be started (for examples and the demo).
fake_provider_available <- function() {
  tryCatch(length(fake_provider_command()) > 0L, tabscreen_error_fake = function(e) FALSE)
}

#' A local stand-in for the providers, to try tabscreen without a key
#'
#' Starts a small server on your own computer (on 127.0.0.1, a port chosen by the system) that
#' speaks the protocols of the three providers: point a screening function's `api_url` at it and
#' everything runs as it would with a real provider (requests, pacing, retries, the answer store,
#' prices, batches), with any non-empty string as the key. It is what the examples, the vignette
#' and the package's tests talk to.
#'
#' **Its decisions are random**, drawn with the weights of `decisions` (by default every answer the
#' tool allows equally often); they say nothing about how well any model screens, so use it to learn the
#' package and to test your scripts, not to screen. **Nothing leaves your computer**: the server
#' listens on 127.0.0.1 only and never contacts a provider, and nothing is paid (the prices in the
#' results are what the same tokens would cost).
#'
#' The server runs in a child process of your R session and ends with it, when the object is
#' garbage-collected, or with `$stop()`.
#'
#' @param ... Settings, by name. The ones a user may want:
#'   * `seed`: a number, for the same random decisions every time.
#'   * `decisions`: the weights of the answers, e.g. `list("1" = 0.3, "0" = 0.7)` (include,
#'     exclude; `"1.1"` is "uncertain", for tools that allow it).
#'   * `tendency`: answer like a model that is sure about most records and hesitates over a few.
#'     With `tendency = TRUE` each record gets its own probability of being included, drawn once
#'     (from `seed` and the record's title and abstract, so the same in every call, run and
#'     provider) from a mixture: 70 % of records Beta(0.3, 12) ("clear excludes", mean 0.02),
#'     10 % Beta(12, 0.3) ("clear includes"), 20 % Beta(1.5, 1.5) ("doubtful"). Every answer
#'     about the record then includes with that probability, instead of following `decisions`.
#'     A list sets the parts: `components`, the mixture, as a list of `list(weight, a, b)`
#'     (optionally with a `label`); `models`, a sharpness per model, e.g.
#'     `list("large" = 3, "3b" = 0.5)` (the longest name part that the model's name contains
#'     applies): the log-odds of a record's probability are multiplied by it, so above 1 the
#'     model is more consistent, below 1 less, and every model keeps each record on the same
#'     side; `uncertain` (default 0.2), for tools that allow `"1.1"`: of a record's includes, the
#'     share `uncertain * 4p(1 - p)` are `"1.1"` (none for a clear record, a tenth of all answers
#'     for p = 0.5). Parts left out take these defaults. `FALSE` (the default) turns it off.
#'   * `latency_ms`: milliseconds before each answer (default 0).
#'   * `rpm`: a rate limit, enforced with 429 answers as a provider does.
#'   * `faults`: the share of requests that fail, by kind, e.g. `list("500" = 0.1, "429" = 0.05)`.
#'   * `fail_matching`: fail every request whose text contains a string, e.g.
#'     `list(list(substring = "Selective Mutism", kind = "503"))` (an outage for some records).
#'   * `batches = TRUE`: serve the three batch APIs, for [screen_batch()];
#'     `batch_delay_ms`: how long a batch takes.
#'
#'   The object's `$configure()` changes them while the server runs. Every setting is described
#'   in the source package (`golib/fakeprovider/config.go`).
#' @return An object of class `tabscreen_fake_provider`, a list with
#'   * `url`: the URL for provider A's [tabscreen_a.tools()], and `url_` with the letter of each
#'     other provider for its function: `url_b` for [tabscreen_b()], `url_c` for [tabscreen_c()]
#'     (pass it as `api_url`);
#'   * `stop()`: stops the server;
#'   * `configure(...)`: changes settings (`.replace = TRUE` puts the others back to their
#'     defaults);
#'   * `stats()`: counts of the requests received, by protocol and status;
#'   * `requests(n)`: the last `n` requests as received (keys replaced by their length);
#'   * `reset()`: zeroes the counts.
#' @seealso `vignette("tabscreen")`, which screens the bundled references against it.
#' @export
#' @examples
#' library(tabscreen)
#' fake <- fake_provider(seed = 1)
#' fake
#'
#' # Keep the example's answers out of your own answer store.
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))
#'
#' res <- tabscreen_a.tools(
#'   filges2015_dat[1:10, ],
#'   prompt = "Is this study about functional family therapy for young people who use drugs?",
#'   title = title, abstract = abstract,
#'   api_url = fake$url,          # the local stand-in instead of the provider
#'   api_key = "not-a-real-key"   # any string: the stand-in takes every key
#' )
#' res$answer_data_aggregated[, c("studyid", "incl_p", "final_decision_llm")]
#' fake$stats()$answered
#'
#' fake$stop()
#' options(old)
fake_provider <- function(...) {
  fake_provider_start(...)
}

#' @export
print.tabscreen_fake_provider <- function(x, ...) {
  state <- if (x$is_alive()) "running" else "stopped"
  cli::cat_line("Local fake provider at http://127.0.0.1:", x$port, " (", state, ")")
  all <- providers()
  for (i in seq_along(all)) {
    p <- all[[i]]
    url <- if (i == 1) x$url else x[[paste0("url_", p$letter)]]
    cli::cat_line(format(paste0("  ", p$label, ", ", provider_r(p$letter)$name, "():"), width = 35), "api_url = ", url)
  }
  cli::cat_line("Its decisions are random; nothing leaves this computer. Any key is accepted.")
  invisible(x)
}

# Start a fake provider on a free port of 127.0.0.1. `...` are settings (see above). The tests call
# this name, which also takes `.bin` (a program to serve it, see fake_provider_command()) and
# `.timeout` (seconds to wait for the port).
# One server serves the three protocols (the path picks one). Returns a list:
#   $url        the first provider's (A's) URL, http://127.0.0.1:PORT/v1/chat/completions
#   $base_url   http://127.0.0.1:PORT/v1
#   $url_<letter>  each other provider's URL, from the registry (fake_urls()): provider B's base
#               URL http://127.0.0.1:PORT (the client appends /v1/messages), provider C's
#               http://127.0.0.1:PORT/mistral/v1/chat/completions
#   $port, $process (the processx process)
#   $stats()    the counters, as a list (all protocols; $by_protocol$openai, $anthropic, $mistral
#               hold each one's requests_total, valid, invalid, unauthorized, answered, by_status)
#   $configure(..., .replace = FALSE)  change settings at run time (.replace: others to defaults)
#   $requests(n = NULL)  the last requests received (credentials replaced by their length)
#   $reset()    zero the counters
#   $stop()     stop the server (also done when the object is garbage-collected)
fake_provider_start <- function(..., .bin = NULL, .timeout = 10) {
  config <- fake_config_json(list(...))
  command <- fake_provider_command(.bin)
  port_file <- tempfile("tabscreen-fake-port-")
  err_file <- tempfile("tabscreen-fake-stderr-")
  # stdin is a pipe: when this R process ends, however it ends, the server reads EOF and exits.
  proc <- processx::process$new(
    command$program, command$args(port_file, config),
    # cleanup = TRUE kills the server by its pid when the object is collected. Not cleanup_tree:
    # processx marks a tree with an id drawn from R's RNG and the current second, so after the same
    # set.seed() (R CMD check seeds every example) two fakes started within a second share a marker,
    # and collecting the first killed the second. The server starts no children of its own.
    stdin = "|", stdout = NULL, stderr = err_file, cleanup = TRUE
  )
  state <- new.env(parent = emptyenv())
  state$proc <- proc
  state$stopped <- FALSE
  state$files <- c(port_file, err_file)
  reg.finalizer(state, fake_stop, onexit = TRUE)

  port <- fake_wait_port(proc, port_file, err_file, .timeout)
  if (is.null(port)) {
    # Read what it said before fake_stop() removes the file.
    said <- fake_stderr(err_file)
    fake_stop(state)
    rlang::abort(c("The fake provider did not start.", x = said),
                 class = c("tabscreen_error_fake", "tabscreen_error"))
  }
  root <- paste0("http://127.0.0.1:", port)
  state$root <- root
  urls <- fake_urls(state)

  structure(c(
    list(url = urls[[1]], base_url = paste0(root, "/v1")),
    stats::setNames(as.list(urls[-1]), paste0("url_", names(urls)[-1])),
    list(
      port = port,
      process = proc,
      stats = function() fake_http(state, "GET", "/_fake/stats"),
      configure = function(..., .replace = FALSE) {
        query <- if (isTRUE(.replace)) "?replace=true" else ""
        invisible(fake_http(state, "POST", paste0("/_fake/config", query), fake_config_json(list(...))))
      },
      config = function() fake_http(state, "GET", "/_fake/config"),
      requests = function(n = NULL) {
        query <- if (is.null(n)) "" else paste0("?n=", as.integer(n))
        fake_http(state, "GET", paste0("/_fake/requests", query))
      },
      reset = function() invisible(fake_http(state, "POST", "/_fake/reset", "{}")),
      stop = function() invisible(fake_stop(state)),
      is_alive = function() !state$stopped && proc$is_alive()
    )
  ), class = "tabscreen_fake_provider")
}

# Wait for the program to write its port; NULL if it died or the timeout passed.
fake_wait_port <- function(proc, port_file, err_file, timeout) {
  deadline <- Sys.time() + timeout
  repeat {
    if (file.exists(port_file)) {
      txt <- suppressWarnings(readLines(port_file, n = 1L, warn = FALSE))
      port <- suppressWarnings(as.integer(txt))
      if (length(port) == 1L && !is.na(port) && port > 0L) {
        return(port)
      }
    }
    if (!proc$is_alive() || Sys.time() > deadline) {
      return(NULL)
    }
    Sys.sleep(0.01)
  }
}

fake_stderr <- function(err_file) {
  txt <- if (file.exists(err_file)) readLines(err_file, warn = FALSE) else character()
  txt <- trimws(paste(txt, collapse = "\n"))
  if (!nzchar(txt)) {
    return("(no output)")
  }
  # The core's error document, when the child served from it.
  doc <- tryCatch(jsonlite::fromJSON(txt), error = function(e) NULL)
  if (is.list(doc) && is.character(doc$error$message)) doc$error$message else txt
}

# Stop the program: close its stdin (it exits cleanly), wait, then kill. Safe to call twice.
fake_stop <- function(state) {
  if (isTRUE(state$stopped)) {
    return(FALSE)
  }
  state$stopped <- TRUE
  proc <- state$proc
  if (proc$is_alive()) {
    try(close(proc$get_input_connection()), silent = TRUE)
    proc$wait(3000)
    if (proc$is_alive()) {
      proc$kill()
    }
  }
  unlink(state$files)
  TRUE
}

# Settings as a JSON object. Named atomic vectors (c("1" = 0.3)) become objects.
fake_config_json <- function(config) {
  if (length(config) == 0L) {
    return("{}")
  }
  if (!rlang::is_named(config)) {
    rlang::abort("Every setting of the fake provider must be named.",
                 class = c("tabscreen_error_fake", "tabscreen_error"))
  }
  as_json_value <- function(x) {
    if (is.atomic(x) && !is.null(names(x))) {
      return(as.list(x))
    }
    if (is.list(x)) {
      return(lapply(x, as_json_value))
    }
    x
  }
  as.character(jsonlite::toJSON(lapply(config, as_json_value), auto_unbox = TRUE, null = "null",
                                digits = NA))
}

# The request's callbacks are defined here, not in fake_http(): httr2 keeps the last request, and
# a closure over fake_http()'s frame would keep the server's state, so it would never be collected.
fake_never <- function(resp) FALSE

# Each provider's URL at the fake, by letter: the fake's chat path for the provider's protocol, or,
# for a provider whose client appends the registry's path to a base URL, that base.
fake_urls <- function(state) {
  paths <- fake_http(state, "GET", "/_fake/protocols")
  vapply(providers(), function(p) {
    path <- paths[[p$protocol]]
    paste0(state$root, substr(path, 1, nchar(path) - nchar(p$path)))
  }, character(1))
}

# One request to the fake's control endpoints; errors are classed.
fake_http <- function(state, method, path, body = NULL) {
  if (isTRUE(state$stopped)) {
    rlang::abort("The fake provider has been stopped.", class = c("tabscreen_error_fake", "tabscreen_error"))
  }
  req <- httr2::request(paste0(state$root, path))
  req <- httr2::req_options(req, noproxy = "*")
  req <- httr2::req_timeout(req, 30)
  req <- httr2::req_error(req, is_error = fake_never)
  # httr2 0.2.2 would sleep on a Retry-After of its own accord; a control call never waits.
  req <- httr2::req_retry(req, max_tries = 1, is_transient = fake_never)
  if (!is.null(body)) {
    req <- httr2::req_body_raw(req, body, type = "application/json")
  }
  req <- httr2::req_method(req, method)
  resp <- httr2::req_perform(req)
  out <- httr2::resp_body_json(resp, simplifyVector = FALSE)
  if (httr2::resp_status(resp) >= 400L) {
    rlang::abort(paste0("The fake provider refused: ", out$error %||% httr2::resp_status_desc(resp)),
                 class = c("tabscreen_error_fake", "tabscreen_error"))
  }
  out
}
