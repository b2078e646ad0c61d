#' Rate limits of your account, per model
#'
#' Sends one small request per model ("Reply with OK", at most 16 output tokens, so a fraction of
#' a cent) and reads the rate-limit headers of the answer: the requests and tokens allowed per
#' minute, what remains of them, and when they reset. Use the requests per minute as `rpm` of the
#' screening functions.
#'
#' The headers read, per provider:
#' * Provider A (Chat Completions): `x-ratelimit-limit-requests`, `x-ratelimit-remaining-requests`,
#'   `x-ratelimit-reset-requests`, and the same for `tokens`. The resets are durations such as
#'   `"6ms"` or `"1m30s"`.
#' * Provider B (Anthropic Messages): `anthropic-ratelimit-requests-limit`,
#'   `-requests-remaining`, `-requests-reset`, and the same for `tokens` (or, where the server sends
#'   no combined token limit, `input-tokens`). The resets are RFC 3339 times. The request goes to
#'   `<api_url>/v1/messages` with the headers `x-api-key` and `anthropic-version: 2023-06-01`.
#' * Provider C (Mistral chat completions): `x-ratelimit-limit-req-minute`,
#'   `x-ratelimit-remaining-req-minute`, `x-ratelimit-limit-tokens-minute` and
#'   `x-ratelimit-remaining-tokens-minute` (observed, not documented); it sends no reset times.
#'
#' Servers that send none of these headers give `NA`.
#'
#' @param model One or more model names. When missing, the provider's default model
#'   (`"gpt-6-luna"`, `"claude-haiku-5-5"` or `"mistral-small-latest"`).
#' @param AI_tool The provider: `"a"` (provider A, the Chat Completions API), `"b"` (provider B,
#'   the Anthropic Messages API) or `"c"` (provider C, the Mistral chat completions API).
#' @param api_key The provider's API key. When missing, read with [get_api_key()],
#'   [get_api_key_b()] or [get_api_key_c()].
#' @param api_url The endpoint, as for the provider's screening function: provider A's and C's
#'   chat completions URL, provider B's base URL. When missing, the provider's own.
#' @return A tibble with one row per model: `model`, `requests_per_minute`, `tokens_per_minute`,
#'   `remaining_requests`, `remaining_tokens` (numbers), `reset_requests`, `reset_tokens` (the
#'   resets as the provider sent them, `NA` for provider C).
#' @export
#' @examples
#' \dontshow{fake <- tabscreen:::example_fake_start()}
#' rate_limits_per_minute(c("gpt-6-luna", "gpt-5.6-luna"), api_url = fake$url)
#' rate_limits_per_minute("claude-haiku-5-5", AI_tool = "b", api_url = fake$url_b)
#' rate_limits_per_minute(AI_tool = "c", api_url = fake$url_c)
#' \dontshow{tabscreen:::example_fake_stop(fake)}
rate_limits_per_minute <- function(model = "gpt-6-luna", AI_tool = "a", api_key = get_api_key(),
                                   api_url = "https://api.openai.com/v1/chat/completions") {
  call <- rlang::current_env()
  if (!rlang::is_string(AI_tool) || !tolower(AI_tool) %in% c("a", "b", "c")) {
    abort_arg("{.arg AI_tool} must be {.val a} (provider A), {.val b} (provider B) or {.val c} (provider C).",
      class = "tabscreen_error_ai_tool", arg = "AI_tool", call = call)
  }
  provider <- tolower(AI_tool)
  screener <- switch(provider, a = tabscreen_a.tools, b = tabscreen_b, c = tabscreen_c)
  if (missing(model)) model <- formals(screener)$model
  if (missing(api_url)) api_url <- formals(screener)$api_url
  check_model_names(model, call = call)
  check_api_url(api_url, call = call)
  if (missing(api_key)) {
    api_key <- switch(provider, a = get_api_key(), b = get_api_key_b(), c = get_api_key_c())
  }
  api_key <- check_api_key(api_key, provider_env_var(provider), call = call)
  rows <- lapply(model, function(m) rate_limit_row(m, provider, api_key, api_url, call))
  tibble::as_tibble(do.call(rbind, rows))
}

# The probe request of each protocol.
rate_limit_request <- function(model, provider, api_key, api_url) {
  question <- list(list(role = "user", content = "Reply with OK."))
  if (provider == "b") {
    req <- httr2::request(messages_endpoint(api_url))
    req <- httr2::req_headers(req, `x-api-key` = api_key, `anthropic-version` = "2023-06-01")
    return(httr2::req_body_json(req, list(model = model, max_tokens = 16L, messages = question)))
  }
  body <- list(model = model, messages = question)
  if (provider == "a") {
    body$max_completion_tokens <- 16
    effort <- probe_effort(model)
    if (!is.null(effort)) body$reasoning_effort <- effort
  } else {
    body$max_tokens <- 16L
  }
  req <- httr2::request(api_url)
  req <- httr2::req_auth_bearer_token(req, api_key)
  httr2::req_body_json(req, body)
}

# Provider B's endpoint from its base URL, as the Go adapter builds it.
messages_endpoint <- function(api_url) {
  base <- sub("/+$", "", api_url)
  if (endsWith(base, "/v1/messages")) base else paste0(base, "/v1/messages")
}

# The rate-limit headers of each protocol: limit, remaining and reset of requests and tokens.
rate_limit_headers <- list(
  a = c(
    requests_per_minute = "x-ratelimit-limit-requests", tokens_per_minute = "x-ratelimit-limit-tokens",
    remaining_requests = "x-ratelimit-remaining-requests", remaining_tokens = "x-ratelimit-remaining-tokens",
    reset_requests = "x-ratelimit-reset-requests", reset_tokens = "x-ratelimit-reset-tokens"
  ),
  b = c(
    requests_per_minute = "anthropic-ratelimit-requests-limit", tokens_per_minute = "anthropic-ratelimit-tokens-limit",
    remaining_requests = "anthropic-ratelimit-requests-remaining", remaining_tokens = "anthropic-ratelimit-tokens-remaining",
    reset_requests = "anthropic-ratelimit-requests-reset", reset_tokens = "anthropic-ratelimit-tokens-reset"
  ),
  c = c(
    requests_per_minute = "x-ratelimit-limit-req-minute", tokens_per_minute = "x-ratelimit-limit-tokens-minute",
    remaining_requests = "x-ratelimit-remaining-req-minute", remaining_tokens = "x-ratelimit-remaining-tokens-minute",
    reset_requests = NA, reset_tokens = NA
  )
)

rate_limit_row <- function(model, provider, api_key, api_url, call) {
  req <- rate_limit_request(model, provider, api_key, api_url)
  req <- httr2::req_user_agent(req, "tabscreen (R package)")
  req <- httr2::req_timeout(req, 60)
  req <- httr2::req_error(req, is_error = function(resp) FALSE)
  # One small request: no waiting on Retry-After (httr2 0.2.2 would do it of its own accord).
  req <- httr2::req_retry(req, max_tries = 1, is_transient = function(resp) FALSE)
  resp <- tryCatch(httr2::req_perform(req), error = function(e) {
    tabscreen_abort(
      c("Could not reach {.url {req$url}}.", "x" = conditionMessage(e)),
      class = "tabscreen_error_http", call = call
    )
  })
  if (resp$status_code != 200) {
    abort_http(resp, model, call, provider = provider)
  }
  headers <- rate_limit_headers[[provider]]
  value <- function(column) {
    name <- headers[[column]]
    out <- if (is.na(name)) NULL else header_value(resp, name)
    if (is.null(out) && provider == "b" && grepl("tokens", column)) {
      out <- header_value(resp, sub("-tokens-", "-input-tokens-", name, fixed = TRUE))
    }
    out
  }
  number <- function(column) suppressWarnings(as.numeric(value(column) %||% NA))
  text <- function(column) value(column) %||% NA_character_
  data.frame(
    model = model,
    requests_per_minute = number("requests_per_minute"),
    tokens_per_minute = number("tokens_per_minute"),
    remaining_requests = number("remaining_requests"),
    remaining_tokens = number("remaining_tokens"),
    reset_requests = text("reset_requests"),
    reset_tokens = text("reset_tokens"),
    stringsAsFactors = FALSE
  )
}

# The cheapest reasoning setting a known model takes: "none", else "minimal", else no field.
probe_effort <- function(model) {
  rules <- model_rules()
  row <- rules[rules$provider == "a" & rules$model == model, , drop = FALSE]
  if (nrow(row) == 0 || !row$accepts_reasoning_field) {
    return(NULL)
  }
  values <- strsplit(row$reasoning_values, "|", fixed = TRUE)[[1]]
  intersect(c("none", "minimal", "low"), values)[1]
}

# An error response as a classed error: a refused key (tabscreen_error_auth), no money or
# allowance (tabscreen_error_quota: provider A's and C's quota 429s; provider B's billing error 402
# and its 429 without retry-after, the spend limit), else tabscreen_error_http.
abort_http <- function(resp, model, call, provider = "a") {
  status <- resp$status_code
  body <- response_json(resp)
  detail <- body$error
  message <- if (is.list(detail) && rlang::is_string(detail$message)) {
    detail$message
  } else if (rlang::is_string(body$message)) {
    body$message
  } else {
    paste("HTTP status", status)
  }
  spend_limit <- provider == "b" && (status == 402L ||
    (status == 429L && is.null(header_value(resp, "retry-after")) && is.null(header_value(resp, "retry-after-ms"))))
  class <- if (status %in% c(401L, 403L)) {
    "tabscreen_error_auth"
  } else if ((status == 429L && is_quota_exhausted(resp)) || spend_limit) {
    "tabscreen_error_quota"
  } else {
    "tabscreen_error_http"
  }
  tabscreen_abort(
    c("The request for model {.val {model}} failed with HTTP status {status}.", "x" = "{message}"),
    class = class, status = status, call = call
  )
}
