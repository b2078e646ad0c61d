#' tabscreen: title and abstract screening with large language models
#'
#' Screens the titles and abstracts of a systematic review with chat-completion models through
#' function calling. [tabscreen_a.tools()] screens with provider A (the OpenAI Chat Completions
#' API and compatible servers), [tabscreen_b()] with provider B (the Anthropic Messages API) and
#' [tabscreen_c()] with provider C (the Mistral chat completions API). Every request runs in the
#' package's Go engine (concurrent, paced, retried, cancellable with Ctrl-C); R checks the
#' arguments, holds your data and builds the result, the same way for the three providers.
#'
#' * Screening: [tabscreen_a.tools()], [tabscreen_b()], [tabscreen_c()]; re-sending failed
#'   requests: [screen_errors()].
#' * Keeping every answer and resuming interrupted screenings: [screen_store()].
#' * Reading the disagreements with the human screeners: [screen_report()] (an HTML report).
#' * Keys: [get_api_key()], [set_api_key()], [get_api_key_b()], [get_api_key_c()].
#' * Limits and retries: [rate_limits_per_minute()], [llm_is_transient()].
#' * Evaluation against human decisions: [screen_analyzer()], [screen_thresholds()],
#'   [screen_target_set()], [screen_target_recall()], plots with [plot.llm()].
#' * References: [read_refs()] (RIS and CSV exports in), [write_refs()] (references and decisions
#'   out, as RIS for reference managers or as CSV).
#' * Data: [model_prizes] (prices), [filges2015_dat] (270 screened references).
#'
#' The function `tabscreen_a.original` named in the specification (the old `functions`
#' interface of provider A) is not part of this package.
#'
#' @keywords internal
"_PACKAGE"

# The examples talk to the local fake provider (R/fake-provider.R) with example keys of the three
# providers; these two helpers start and stop it and put back whatever keys the session had.
example_key_vars <- c("PROVIDER_A_API_KEY", "PROVIDER_B_API_KEY", "PROVIDER_C_API_KEY")

example_fake_start <- function(...) {
  fake <- fake_provider_start(...)
  fake$old_keys <- Sys.getenv(example_key_vars, NA)
  # Examples keep their answers in a temporary store, never in the user's data folder.
  fake$old_options <- options(tabscreen.store = tempfile("tabscreen-example-", fileext = ".sqlite"))
  Sys.setenv(
    PROVIDER_A_API_KEY = "sk-example-not-a-key",
    PROVIDER_B_API_KEY = "sk-ant-example-not-a-key",
    PROVIDER_C_API_KEY = "example-not-a-key"
  )
  fake
}

example_fake_stop <- function(fake) {
  fake$stop()
  restore_envvars(fake$old_keys)
  options(fake$old_options)
}

# Set or unset environment variables to earlier values (NA: was not set).
restore_envvars <- function(old) {
  for (name in names(old)) {
    if (is.na(old[[name]])) Sys.unsetenv(name) else do.call(Sys.setenv, stats::setNames(list(old[[name]]), name))
  }
  invisible()
}
