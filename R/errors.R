# Conditions signalled by tabscreen.
#
# Every error of the package inherits from "tabscreen_error". Argument errors add "tabscreen_error_arg"
# and a specific class per case (e.g. "tabscreen_error_model_unknown"), so callers and tests can tell
# them apart without matching message text:
#
#   tabscreen_error
#     tabscreen_error_arg            a bad argument, raised before any request is sent
#       tabscreen_error_data         `data` or its column mappings
#       tabscreen_error_prompt       `prompt`
#       tabscreen_error_model_*      `model` (unknown, duplicated, rules of the model)
#       tabscreen_error_force        a guard of spec section 8 (`force = TRUE` overrides)
#         tabscreen_error_price_cap  the estimate is above options(tabscreen.max_price)
#       tabscreen_error_encoding     text that is not valid UTF-8 (also in read_refs(), there
#                                    with tabscreen_error_refs_parse instead)
#       tabscreen_error_api_key      `api_key` that cannot be a key
#       ...
#     tabscreen_error_api_key        no API key in the environment variable
#     tabscreen_error_store          the answer store cannot be used or written (R/store.R)
#       tabscreen_error_store_damaged  the store's file is damaged (screen_store_recover() copies what can be read)
#       tabscreen_error_store_kept     answers an earlier call kept (a failed write) cannot be written in yet
#     tabscreen_error_store_busy     the same run is being screened by another live R session
#     tabscreen_error_store_run      no such run in the store
#     tabscreen_error_auth / _quota  the provider refused the key or the account has no credit
#     tabscreen_error_endpoint       before any answer, api_url could not be used (nothing listens,
#                                    unknown host, TLS, or a server without that path)
#     tabscreen_error_http           the provider answered with an HTTP error status (field `status`)
#       tabscreen_error_http_<NNN>   that status, e.g. tabscreen_error_http_429; added to the
#                                    errors above (auth, quota, endpoint, batch) when a response
#                                    caused them, as httr2 classes httr2_http_429 < httr2_http
#     tabscreen_error_option         a value of options(tabscreen.*) that cannot be used
#     tabscreen_error_internal       the Go core was handed what R should have refused: a bug
#     tabscreen_interrupted          the user interrupted a run (the partial result is attached)
#
# Warnings inherit from "tabscreen_warning"; deprecations add "tabscreen_warning_deprecated".
# Messages that `messages = FALSE` silences have the class "tabscreen_message".
# The user-facing list is the topic ?tabscreen_errors below.

#' Errors and warnings of tabscreen
#'
#' Every error the package signals has the class `tabscreen_error`, and a more specific class
#' for what went wrong, so that it can be caught with [tryCatch()] or [rlang::try_fetch()] by
#' class instead of by its message (whose wording may change).
#'
#' @section Bad arguments:
#' A bad argument is found before anything is sent: an error of class `tabscreen_error_arg`
#' with a class for the case (listed in [tabscreen_a.tools()], section Errors) and the
#' argument's name in its field `arg`. A value of `options(tabscreen.*)` that cannot be used is an
#' error of class `tabscreen_error_option`.
#'
#' @section Provider errors, by HTTP status:
#' A screening does not fail on one refused request: failed requests are kept in `error_data`
#' and re-sent with [screen_errors()]. An error is signalled when no request of the run can
#' succeed, and it carries the partial result in its field `result`:
#' * `tabscreen_error_auth`: the provider refused the API key or access (HTTP 401 or 403);
#' * `tabscreen_error_quota`: the account has no credit or quota left (a 429 that says so, a 402);
#' * `tabscreen_error_endpoint`: before any answer, `api_url` could not be used (nothing listens
#'   there, an unknown host, or a server without that path: 404, 405, 501);
#' * `tabscreen_error_batch`: a batch API refused the batch ([screen_batch()]).
#'
#' When the error comes from a response of the provider, it also has the classes of its HTTP
#' status: `tabscreen_error_http_<status>` (e.g. `tabscreen_error_http_401`,
#' `tabscreen_error_http_429`) and their parent `tabscreen_error_http`, and the status is in its
#' field `status`, as httr2 classes its errors (`httr2_http_429`, `httr2_http`). So
#' `tabscreen_error_http_429` < `tabscreen_error_http` < `tabscreen_error`. Errors without a response
#' (nothing listens at `api_url`) have neither. [rate_limits_per_minute()] signals
#' `tabscreen_error_auth` or `tabscreen_error_quota` (with the status classes) when the provider
#' refuses, `tabscreen_error_http` with the status classes for any other error status, and
#' `tabscreen_error_endpoint` when nothing answers at `api_url`.
#'
#' @section Other errors:
#' * `tabscreen_interrupted`: the user interrupted a screening (Ctrl-C or Esc); the partial
#'   result is in its field `result`.
#' * `tabscreen_error_store` (and `tabscreen_error_store_damaged`, `tabscreen_error_store_kept`,
#'   `tabscreen_error_store_busy`, `tabscreen_error_store_run`): the answer store; see
#'   [screen_store()].
#' * `tabscreen_error_review`: the review of [screen_review()] and its functions.
#' * `tabscreen_error_audit_args`: an argument of [screen_audit_plan()] or [screen_audit_bound()]
#'   (with `tabscreen_error_arg`).
#' * `tabscreen_error_refs_parse`, `tabscreen_error_refs_unknown`, `tabscreen_error_encoding`: a
#'   reference file that cannot be read ([read_refs()]).
#' * `tabscreen_error_internal`: the package's own fault; please report it.
#'
#' @section Warnings and messages:
#' Warnings have the class `tabscreen_warning`; an argument that is deprecated, and still taken,
#' gives a warning of class `tabscreen_warning_deprecated` that names its replacement. Messages
#' that `messages = FALSE` silences have the class `tabscreen_message`.
#'
#' @name tabscreen_errors
#' @examples
#' fake <- fake_provider(invalid_keys = "sk-revoked")   # a local stand-in that refuses this key
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))
#' status <- tryCatch(
#'   rate_limits_per_minute(api_key = "sk-revoked", api_url = fake$url),
#'   tabscreen_error_http = function(e) e$status
#' )
#' status
#' fake$stop()
#' options(old)
NULL

# Signal a tabscreen error; `class` is the most specific class (or several, most specific first).
# `message` is cli markup, interpolated in the caller's frame.
tabscreen_abort <- function(message, class = NULL, ..., call = rlang::caller_env(), .envir = parent.frame()) {
  cli::cli_abort(message, class = unique(c(class, "tabscreen_error")), ..., call = call, .envir = .envir)
}

# An argument error: adds "tabscreen_error_arg" and records the argument's name in the condition.
abort_arg <- function(message, class = NULL, arg = NULL, ..., call = rlang::caller_env(), .envir = parent.frame()) {
  tabscreen_abort(message, class = c(class, "tabscreen_error_arg"), arg = arg, ..., call = call, .envir = .envir)
}

tabscreen_warn <- function(message, class = NULL, ..., .envir = parent.frame()) {
  cli::cli_warn(message, class = unique(c(class, "tabscreen_warning")), ..., .envir = .envir)
}

# A message that `messages = FALSE` silences.
tabscreen_inform <- function(message, messages = TRUE, ..., .envir = parent.frame()) {
  if (isTRUE(messages)) {
    cli::cli_inform(message, class = "tabscreen_message", ..., .envir = .envir)
  }
  invisible()
}

# The classes of an error caused by a provider's answer with HTTP status `status` (none when there
# was no answer, or it was not an error status).
http_status_class <- function(status) {
  status <- suppressWarnings(as.integer(status %||% 0L))
  if (length(status) != 1 || is.na(status) || status < 400L) return(character())
  c(paste0("tabscreen_error_http_", status), "tabscreen_error_http")
}
