#' Rate limits of your account, per model
#'
#' Sends one small request per model ("Reply with OK", at most 16 output tokens, so a fraction of
#' a cent), through the same adapter and HTTP client as a screening, and reads the rate-limit
#' headers of the answer: the requests and tokens allowed per
#' minute, what remains of them, and when they reset. Use the requests per minute as `rpm` of the
#' screening functions; a screening also reads these headers from every answer and keeps to the
#' lower limits it finds, and to `options(tabscreen.tpm)` when set (see "Speed and options" in
#' [tabscreen_a.tools()]).
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
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' key <- "not-a-real-key"   # the stand-in takes any key; leave api_key out for a real one
#' rate_limits_per_minute(c("gpt-6-luna", "gpt-5.6-luna"), api_url = fake$url, api_key = key)
#' rate_limits_per_minute("claude-haiku-5-5", AI_tool = "b", api_url = fake$url_b, api_key = key)
#' rate_limits_per_minute(AI_tool = "c", api_url = fake$url_c, api_key = key)
#' fake$stop()
rate_limits_per_minute <- function(model = "gpt-6-luna", AI_tool = "a", api_key = get_api_key(),
                                   api_url = "https://api.openai.com/v1/chat/completions") {
  call <- rlang::current_env()
  letters <- names(providers())
  if (!rlang::is_string(AI_tool) || !tolower(AI_tool) %in% letters) {
    labels <- vapply(providers(), function(p) sprintf("\"%s\" (%s)", p$letter, p$label), character(1))
    abort_arg("{.arg AI_tool} must be {.or {labels}}.", class = "tabscreen_error_ai_tool", arg = "AI_tool", call = call)
  }
  provider <- tolower(AI_tool)
  info <- provider_info(provider)
  if (missing(model)) model <- info$default_model
  if (missing(api_url)) api_url <- info$default_url
  check_model_names(model, call = call)
  check_api_url(api_url, call = call)
  if (missing(api_key)) api_key <- provider_key(provider, call = call)
  api_key <- check_api_key(api_key, provider_env_var(provider), call = call)
  rows <- lapply(model, function(m) rate_limit_row(m, provider, api_key, api_url, call))
  tibble::as_tibble(do.call(rbind, rows))
}

# One model's row: the Go core sends the provider's smallest request through its adapter and the
# engine's HTTP client, classes a refusal as a run would (tabscreen_error_auth, _quota, else
# tabscreen_error_http; with the classes of the status) and an endpoint it cannot reach
# (tabscreen_error_endpoint), and reads the headers the registry names for the provider.
rate_limit_row <- function(model, provider, api_key, api_url, call) {
  request <- list(provider = provider, api_url = api_url, model = model,
    rules = rules_of(model, provider, custom_model = FALSE)[[1]])
  info <- go_call(C_probe, as.character(to_json(request)), api_key, call = call)$meta
  number <- function(x) if (nzchar(x)) suppressWarnings(as.numeric(x)) else NA_real_
  text <- function(x) if (nzchar(x)) x else NA_character_
  data.frame(
    model = model,
    requests_per_minute = number(info$requests_per_minute),
    tokens_per_minute = number(info$tokens_per_minute),
    remaining_requests = number(info$remaining_requests),
    remaining_tokens = number(info$remaining_tokens),
    reset_requests = text(info$reset_requests),
    reset_tokens = text(info$reset_tokens),
    stringsAsFactors = FALSE
  )
}
