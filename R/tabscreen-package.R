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
#' * Trying it without a key: [fake_provider()], a local stand-in for the providers that answers
#'   with random decisions (the examples and the vignette use it).
#'
#' The function `tabscreen_a.original` named in the specification (the old `functions`
#' interface of provider A) is not part of this package.
#'
#' @keywords internal
"_PACKAGE"
