#' Rate limits of your account, per model
#'
#' Sends one small request per model ("Reply with OK", at most 16 output tokens, so a fraction of
#' a cent) and reads the rate-limit headers of the answer: the requests and tokens allowed per
#' minute, what remains of them, and when they reset. Use the requests per minute as `rpm` of the
#' screening functions.
#'
#' Only provider A sends these headers (`x-ratelimit-limit-requests`,
#' `x-ratelimit-remaining-requests`, `x-ratelimit-reset-requests`, and the same for `tokens`).
#' OpenAI-compatible servers that send none give `NA`.
#'
#' @param model One or more model names.
#' @param AI_tool The provider: `"a"` (provider A, the Chat Completions API).
#' @param api_key The API key of provider A.
#' @param api_url The Chat Completions endpoint.
#' @return A tibble with one row per model: `model`, `requests_per_minute`, `tokens_per_minute`,
#'   `remaining_requests`, `remaining_tokens` (numbers), `reset_requests`, `reset_tokens` (the
#'   durations the provider sent, such as `"6ms"` or `"1m30s"`).
#' @export
#' @examples
#' \dontshow{fake <- tabscreen:::example_fake_start()}
#' rate_limits_per_minute(c("gpt-6-luna", "gpt-5.6-luna"), api_url = fake$url)
#' \dontshow{tabscreen:::example_fake_stop(fake)}
rate_limits_per_minute <- function(model = "gpt-6-luna", AI_tool = "a", api_key = get_api_key(),
                                   api_url = "https://api.openai.com/v1/chat/completions") {
  call <- rlang::current_env()
  if (!rlang::is_string(AI_tool) || !tolower(AI_tool) %in% c("a", "b", "c")) {
    abort_arg("{.arg AI_tool} must be {.val a} (provider A).", class = "tabscreen_error_ai_tool", arg = "AI_tool", call = call)
  }
  if (tolower(AI_tool) != "a") {
    abort_arg(
      c("Rate limits can be read only for provider A.",
        "i" = "See the console of provider {toupper(AI_tool)} for its limits."),
      class = "tabscreen_error_ai_tool", arg = "AI_tool", call = call
    )
  }
  check_model_names(model, call = call)
  check_api_url(api_url, call = call)
  api_key <- check_api_key(api_key, "PROVIDER_A_API_KEY", call = call)
  rows <- lapply(model, function(m) rate_limit_row(m, api_key, api_url, call))
  tibble::as_tibble(do.call(rbind, rows))
}

rate_limit_row <- function(model, api_key, api_url, call) {
  body <- list(
    model = model,
    messages = list(list(role = "user", content = "Reply with OK.")),
    max_completion_tokens = 16
  )
  effort <- probe_effort(model)
  if (!is.null(effort)) body$reasoning_effort <- effort
  req <- httr2::request(api_url)
  req <- httr2::req_auth_bearer_token(req, api_key)
  req <- httr2::req_body_json(req, body)
  req <- httr2::req_user_agent(req, "tabscreen (R package)")
  req <- httr2::req_timeout(req, 60)
  req <- httr2::req_error(req, is_error = function(resp) FALSE)
  resp <- tryCatch(httr2::req_perform(req), error = function(e) {
    tabscreen_abort(
      c("Could not reach {.url {api_url}}.", "x" = conditionMessage(e)),
      class = "tabscreen_error_http", call = call
    )
  })
  if (resp$status_code != 200) {
    abort_http(resp, model, call)
  }
  number <- function(name) suppressWarnings(as.numeric(header_value(resp, name) %||% NA))
  text <- function(name) header_value(resp, name) %||% NA_character_
  data.frame(
    model = model,
    requests_per_minute = number("x-ratelimit-limit-requests"),
    tokens_per_minute = number("x-ratelimit-limit-tokens"),
    remaining_requests = number("x-ratelimit-remaining-requests"),
    remaining_tokens = number("x-ratelimit-remaining-tokens"),
    reset_requests = text("x-ratelimit-reset-requests"),
    reset_tokens = text("x-ratelimit-reset-tokens"),
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

abort_http <- function(resp, model, call) {
  status <- resp$status_code
  detail <- response_json(resp)$error
  message <- if (is.list(detail) && rlang::is_string(detail$message)) detail$message else paste("HTTP status", status)
  class <- if (status %in% c(401L, 403L)) {
    "tabscreen_error_auth"
  } else if (status == 429L && is_quota_exhausted(resp)) {
    "tabscreen_error_quota"
  } else {
    "tabscreen_error_http"
  }
  tabscreen_abort(
    c("The request for model {.val {model}} failed with HTTP status {status}.", "x" = "{message}"),
    class = class, status = status, call = call
  )
}
