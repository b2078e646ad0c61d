#' tabscreen: title and abstract screening with large language models
#'
#' Screens the titles and abstracts of a systematic review with chat-completion models through
#' function calling. [tabscreen_a.tools()] screens with provider A (the OpenAI Chat Completions
#' API and compatible servers). Every request runs in the package's Go engine (concurrent, paced,
#' retried, cancellable with Ctrl-C); R checks the arguments, holds your data and builds the
#' result.
#'
#' * Screening: [tabscreen_a.tools()]; re-sending failed requests: [screen_errors()].
#' * Keys: [get_api_key()], [set_api_key()], [get_api_key_b()], [get_api_key_c()].
#' * Limits and retries: [rate_limits_per_minute()], [llm_is_transient()].
#' * Data: [model_prizes] (prices), [filges2015_dat] (270 screened references).
#'
#' The function `tabscreen_a.original` named in the specification (the old `functions`
#' interface of provider A) is not part of this package.
#'
#' @keywords internal
"_PACKAGE"

# The examples talk to the local fake provider (R/fake-provider.R) with an example key; these two
# helpers start and stop it and put back whatever key the session had.
example_fake_start <- function() {
  fake <- fake_provider_start()
  fake$old_key <- Sys.getenv("PROVIDER_A_API_KEY", NA)
  Sys.setenv(PROVIDER_A_API_KEY = "sk-example-not-a-key")
  fake
}

example_fake_stop <- function(fake) {
  fake$stop()
  restore_envvars(c(PROVIDER_A_API_KEY = fake$old_key))
}

# Set or unset environment variables to earlier values (NA: was not set).
restore_envvars <- function(old) {
  for (name in names(old)) {
    if (is.na(old[[name]])) Sys.unsetenv(name) else do.call(Sys.setenv, stats::setNames(list(old[[name]]), name))
  }
  invisible()
}
