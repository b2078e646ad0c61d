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
#' The Go engine applies the same rule itself when `is_transient = llm_is_transient` (the default),
#' so the default costs no call into R; pass your own function to change the rule.
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
  should_retry <- header_value(resp, "x-should-retry")
  if (identical(should_retry, "true")) {
    return(TRUE)
  }
  if (identical(should_retry, "false")) {
    return(FALSE)
  }
  status <- resp$status_code
  if (status %in% c(408L, 409L, 500L, 502L, 503L, 504L, 529L)) {
    return(TRUE)
  }
  if (status == 429L) {
    return(!is_quota_exhausted(resp))
  }
  FALSE
}

# A 429 that means money or allowance, not pace (the same rule as provider.IsQuotaExhausted in Go).
is_quota_exhausted <- function(resp) {
  if (identical(header_value(resp, "x-ratelimit-limit-req-minute"), "0")) {
    return(TRUE)
  }
  err <- response_json(resp)$error
  if (!is.list(err)) {
    return(FALSE)
  }
  quota <- c("insufficient_quota", "credit_balance_exhausted")
  code <- err$code
  type <- err$type
  (is.character(code) && length(code) == 1 && code %in% quota) ||
    (is.character(type) && length(type) == 1 && type %in% quota)
}

# One header's value (header names are case-insensitive), or NULL.
header_value <- function(resp, name) {
  headers <- resp$headers
  if (length(headers) == 0) {
    return(NULL)
  }
  hit <- which(tolower(names(headers)) == tolower(name))
  if (length(hit) == 0) {
    return(NULL)
  }
  value <- headers[[hit[1]]]
  if (length(value) != 1 || is.na(value)) {
    return(NULL)
  }
  trimws(as.character(value))
}

# The body parsed as JSON, or NULL when it is empty or not JSON. Never an error: the predicate runs
# on whatever a provider or a proxy sends back.
response_json <- function(resp) {
  body <- resp$body
  if (!is.raw(body) || length(body) == 0) {
    return(NULL)
  }
  text <- rawToChar(body)
  Encoding(text) <- "UTF-8"
  tryCatch(jsonlite::fromJSON(text, simplifyVector = FALSE), error = function(e) NULL)
}
