#' Is an error response worth retrying?
#'
#' The default `is_transient` of the screening functions. It decides from an HTTP response whether
#' the request failed for a passing reason (rate limit, overload, time-out), so that it is retried,
#' or for a lasting one (bad request, bad key, no credit), so that it is not.
#'
#' The rule, in order:
#' 1. A header `x-should-retry: true` or `x-should-retry: false` (sent by some providers) decides.
#' 2. Status 408, 409, 500, 502, 503, 504 and 529 are transient.
#' 3. Status 429 is transient unless it means the money or the allowance has run out: a JSON body
#'    whose `error.code` or `error.type` is `"insufficient_quota"` or `"credit_balance_exhausted"`,
#'    or a header `x-ratelimit-limit-req-minute: 0` (a workspace without any allowance). Such a run
#'    stops at once instead of retrying the same refusal for every record.
#' 4. Anything else is not transient.
#'
#' The rule is the Go engine's own: `llm_is_transient()` asks the engine, which applies it itself
#' when `is_transient = llm_is_transient` (the default), so the default costs no call into R; pass
#' your own function to change the rule.
#'
#' @param resp An HTTP response, as made by [httr2::response()].
#' @return `TRUE` or `FALSE`.
#' @seealso [tabscreen_a.tools()] (arguments `is_transient`, `max_tries`, `backoff`, `after`).
#' @export
#' @examples
#' llm_is_transient(httr2::response(status_code = 503))
#' llm_is_transient(httr2::response(status_code = 400))
#'
#' # A rate limit is retried, an exhausted quota is not.
#' llm_is_transient(httr2::response(
#'   status_code = 429,
#'   headers = list("content-type" = "application/json"),
#'   body = charToRaw('{"error": {"type": "requests", "code": "rate_limit_exceeded"}}')
#' ))
#' llm_is_transient(httr2::response(
#'   status_code = 429,
#'   headers = list("content-type" = "application/json"),
#'   body = charToRaw('{"error": {"type": "insufficient_quota", "code": "insufficient_quota"}}')
#' ))
#'
#' # The provider's own verdict wins.
#' llm_is_transient(httr2::response(status_code = 400, headers = list("x-should-retry" = "true")))
llm_is_transient <- function(resp) {
  if (!inherits(resp, "httr2_response")) {
    abort_arg(
      c("{.arg resp} must be an HTTP response made by {.fn httr2::response}, not {.obj_type_friendly {resp}}."),
      class = "tabscreen_error_response", arg = "resp"
    )
  }
  go_is_transient(resp)
}

# The engine's retry rule (provider.IsTransient) applied to an httr2 response.
go_is_transient <- function(resp) {
  headers <- lapply(resp$headers, function(v) paste(v, collapse = ", "))
  if (length(headers) == 0) headers <- structure(list(), names = character())
  body <- resp$body
  if (!is.raw(body)) body <- raw()
  out <- go_call(C_is_transient, as.integer(resp$status_code), as.character(to_json(headers)), body)
  out$meta$transient
}
