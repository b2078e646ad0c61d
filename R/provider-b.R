#' Screen titles and abstracts with provider B (Anthropic Messages with tool use)
#'
#' Sends the title and abstract of every record, preceded by your prompt, to a model of provider B
#' (the Anthropic Messages API, or any server that speaks it) and collects the decision the model
#' returns through a tool call. It works like [tabscreen_a.tools()]: the same records, questions,
#' repetitions, aggregation, prices, retries, interrupts and result, only the protocol differs.
#' Provider B has no `top_p` and no `tool_choice` argument, and takes `max_tokens` and
#' `confidence`.
#'
#' @section The protocol:
#' Provider B speaks the Anthropic Messages protocol: each request is a `POST` to
#' `<api_url>/v1/messages` with the key in the header `x-api-key` and the header
#' `anthropic-version: 2023-06-01`. `api_url` is the base URL of the API
#' (`https://api.anthropic.com`); to use another server that speaks the protocol (a gateway or a
#' proxy), give its base URL, or its full URL ending in `/v1/messages`, which is used as it is.
#' The protocol has no system role (`role` must be `"user"`) and no seed: `seed_par` only seeds
#' the package's own random numbers (the jitter of the back-off); it is not sent.
#'
#' @inheritSection tabscreen_a.tools The question
#'
#' @inheritSection tabscreen_a.tools Text encodings
#'
#' @section The decision:
#' Unless you give `tools`, a built-in tool returns `decision_llm`: `"1"` (include), `"0"`
#' (exclude) or, when `overinclusive = TRUE`, `"1.1"` (uncertain, counted as include in
#' `decision_binary`). With `decision_description = TRUE` it also returns a
#' `detailed_description`, written before the decision. With `confidence = TRUE` it also returns
#' `confidence`, an integer from 0 (not confident at all) to 100 (completely confident), written
#' *after* the decision, as the model's judgement of the decision it has just made;
#' `answer_data` then has a column `confidence` and `answer_data_aggregated` a column
#' `mean_confidence`, the mean over the answered repetitions. Any other answer (no tool call,
#' invalid input, a value outside the tool's enum) is a failed request, not a guess.
#'
#' Custom `tools` must be in provider B's format: `list(name = ..., description = ...,
#' input_schema = list(type = "object", properties = ..., required = ...))`. They are offered with
#' `tool_choice` `auto`; the decision is read from an input named `decision_llm`, or else from the
#' tool's only input with an `enum`, and must be `"1"`, `"0"` or `"1.1"`. `confidence` applies
#' only to the built-in tool and is ignored (with a message) with custom tools. The explanation
#' (`detailed_description`) and the column `tool_arguments` with every input of the call are read
#' as for [tabscreen_a.tools()].
#'
#' @section Models, thinking and effort:
#' `model` must be a model of provider B listed in [model_prizes]; the package knows each listed
#' model's rules (file `model_rules/b.csv` in the package's `extdata` folder, columns
#' `thinking_default_on`, `can_disable_thinking`, `thinking_off_efforts`, `forced_tool_ok`,
#' `sampling_ok`). Forced tool use and thinking do not mix on this protocol, so the package
#' chooses, per model, the request that yields exactly one tool call:
#' * Models that accept a forced tool choice and can turn thinking off (`claude-haiku-5-5`,
#'   `claude-sonnet-5`, `claude-opus-5` at effort `"high"` or below, `claude-haiku-4-5`) are sent
#'   `thinking: {"type": "disabled"}` and forced to call the built-in tool
#'   (`tool_choice: {"type": "tool"}`, one call only).
#' * Models that reject a forced tool choice or cannot turn thinking off (`claude-opus-5-5`,
#'   `claude-sonnet-5-5`, `claude-fable-5-1`, and `claude-opus-5` at `"xhigh"` or `"max"`) keep
#'   their thinking and get `tool_choice: {"type": "auto"}` with an instruction to call the tool;
#'   an answer without the call is a failed attempt and is retried. A message names them.
#' * `reasoning_effort` is sent as `output_config.effort`. `"none"` turns thinking off (models
#'   that cannot, e.g. `claude-opus-5-5`, refuse it) and is sent as the least effort, `"low"`.
#'   An effort a model does not take (`"xhigh"` and `"max"` only on the larger models) is an error
#'   before any request; the default `"medium"` is then left out. `claude-haiku-4-5` takes no
#'   effort: for it only `"none"` may be given.
#' * Claude 5 models reject non-default sampling parameters: setting `temperature`, `top_p` or
#'   `top_k` through `...` for them is an error; `claude-haiku-4-5` takes `temperature` or
#'   `top_p`, not both.
#'
#' The default model, `claude-haiku-5-5`, is provider B's current small model: the cheapest, it
#' can turn thinking off and be forced to call the tool, so the default call asks for one tool
#' call and pays for no thinking.
#'
#' For another model (new, or served by another server) either set `custom_model = TRUE`: the
#' model is sent as named, with `output_config.effort` only when you give `reasoning_effort`
#' (the tool is then not forced, as the model may think), `thinking` disabled when you give
#' `reasoning_effort = "none"`, and its price is `NA`; or add its prices first with
#' `options(tabscreen.model_prizes = data.frame(provider = "b", model = "my-model",
#' input_per_million = 1, output_per_million = 5))`.
#'
#' @section Prices:
#' The price of a run counts fresh input tokens at the input price, cache reads at the cache-read
#' price and cache writes at the 5-minute cache-write price of [model_prizes]; `prompt_tokens`
#' counts all three. Before the run a message estimates the price as for [tabscreen_a.tools()]
#' (no reasoning tokens where thinking is off).
#'
#' The prompt and the record are sent as two text blocks, with a `cache_control` breakpoint after
#' the prompt when the prefix of tool, prompt (and instruction) reaches the model's minimum
#' cacheable length (`min_cache_tokens` of the rules file: 512 tokens for the 5.5 models, 4,096
#' for Haiku 4.5) and at least two requests share it, and after the record when its repetitions
#' share the whole request: a cache write costs 1.25 times the input price, a read a tenth. A single
#' short request carries none. The repetitions of a record are sent once its first answer has
#' arrived, so that they read what it wrote; see "Prompt caching" in [tabscreen_a.tools()] for the
#' cache figures of the result and `options(tabscreen.cache = FALSE)`.
#'
#' @section Repetitions and aggregation:
#' As for [tabscreen_a.tools()], with one row of `answer_data_aggregated` per record, prompt and
#' model (there is no `top_p`), and `mean_confidence` with `confidence = TRUE`.
#'
#' @section Safety limits (`force`):
#' Without `force = TRUE`, more than 10 repetitions of a model, or a screening whose estimated
#' price is above 15 USD, are refused (class `tabscreen_error_force`).
#'
#' @inheritSection tabscreen_a.tools Failures, retries and interrupts
#'
#' @inheritSection tabscreen_a.tools Speed and options
#'
#' @section Provider B's failures:
#' Overloaded (529), rate-limited (429 with `retry-after`) and server errors (500, 502, 503, 504)
#' are retried. A refused key (401, 403) stops the run with an error of class
#' `tabscreen_error_auth`; a billing error (402) or a 429 without `retry-after` (the monthly spend
#' limit, not a rate limit) stops it with an error of class `tabscreen_error_quota`. Other errors
#' (400, 404, 413) fail the request without a retry.
#'
#' @section Every answer kept, and resuming:
#' Each answer is written to the answer store (an SQLite file, `options(tabscreen.store)`) the
#' moment it arrives, with the request as sent and the raw response. If a screening is cut short
#' (a crash, a killed session, a lost network, Ctrl-C), call it again with the same arguments: it
#' sends only the requests that have no stored answer ("Resuming run ..."). See [screen_store()]
#' for the store, its options and its schema; `options(tabscreen.store = FALSE)` turns it off.
#'
#' @section Errors:
#' Bad arguments are errors of the classes listed for [tabscreen_a.tools()], raised before any
#' request, plus `tabscreen_error_max_tokens`, `tabscreen_error_model_sampling` (a sampling
#' parameter the model rejects) and `tabscreen_error_arg_flag` for `confidence`;
#' `tabscreen_error_model_reasoning` also covers `"none"` for a model that cannot turn thinking
#' off. A missing key (`PROVIDER_B_API_KEY`) is an error of class `tabscreen_error_api_key`,
#' raised after all the other checks.
#'
#' @inheritParams tabscreen_a.tools
#' @param api_url The base URL of the Messages API; `/v1/messages` is appended unless the URL ends
#'   in it (see the section on the protocol).
#' @param model One or more model names of provider B (see the section on models).
#' @param role The role of the message that carries the question: `"user"`, the only role the
#'   protocol has for it.
#' @param tools `NULL` for the built-in tool, or custom tools in provider B's format: a list of
#'   tools, or their JSON text.
#' @param api_key The API key. By default read from the environment variable `PROVIDER_B_API_KEY`
#'   with [get_api_key_b()], after every other argument has been checked.
#' @param max_tokens The most output tokens of each answer, thinking included (a whole number, at
#'   least 1; sent as the required `max_tokens`).
#' @param seed_par `NULL` or a whole number. Provider B's protocol has no seed: it seeds only the
#'   engine's own random numbers (the jitter of the back-off) and is not sent.
#' @param reasoning_effort `"none"` (thinking off), `"low"`, `"medium"`, `"high"`, `"xhigh"` or
#'   `"max"`, as far as the model takes it (see the section on models).
#' @param confidence If `TRUE`, the built-in tool also asks for the model's confidence in its
#'   decision, 0 to 100 (columns `confidence` and `mean_confidence`). Ignored with custom `tools`.
#' @param ... Further fields of the request body, e.g. `temperature = 0` (`claude-haiku-4-5`
#'   only), `stop_sequences`, `metadata` or `service_tier = "standard_only"`. Fields the package
#'   sets (`model`, `messages`, `system`, `tools`, `tool_choice`, `max_tokens`, `thinking`,
#'   `output_config`, `stream`) are refused.
#'
#' @return An object of class `llm`, as described for [tabscreen_a.tools()], without `top_p`
#'   columns: `answer_data` has `studyid`, `title`, `abstract`,
#'   `promptid`, `prompt`, `model`, `iterations`, `question`, `decision_llm`,
#'   `detailed_description` (with `decision_description = TRUE`), `decision_binary`, `confidence`
#'   (with `confidence = TRUE`), `prompt_tokens`, `completion_tokens` (with `token_info = TRUE`),
#'   `submodel`, `run_time` (with `time_info = TRUE`), `run_date` and `n`, then your other columns;
#'   `answer_data_aggregated` (when any `reps > 1`) has `studyid`, `title`,
#'   `abstract`, `promptid`, `prompt`, `model`, `question`, `incl_p`, `final_decision_llm`,
#'   `final_decision_llm_num`, `longest_answer` (with `decision_description = TRUE`),
#'   `mean_confidence` (with `confidence = TRUE`), `reps`, `reps_sent` (through
#'   [screen_adaptive()] only), `n_mis_answers` and `submodel`, then your other columns.
#'
#' @seealso [screen_store()], [tabscreen_a.tools()], [tabscreen_c()], [screen_errors()], [llm_is_transient()],
#'   [rate_limits_per_minute()], [model_prizes], [api_keys].
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' prompt <- paste(
#'   "Evaluate whether the study examines Functional Family Therapy (FFT) for young people",
#'   "in treatment for non-opioid drug use. Include reviews and studies of any design."
#' )
#'
#' # The examples talk to the local stand-in, which takes any key. For a real screening, leave
#' # out api_url and api_key: the key is then read from PROVIDER_B_API_KEY (see ?set_api_key).
#' res <- tabscreen_b(
#'   data = filges2015_dat[1:10, ],
#'   prompt = prompt,
#'   studyid = studyid,
#'   title = title,
#'   abstract = abstract,
#'   api_url = fake$url_b, api_key = "not-a-real-key"
#' )
#' res
#' res$answer_data
#'
#' # Five repetitions with the model's confidence, aggregated.
#' res5 <- tabscreen_b(
#'   filges2015_dat[1:10, ], prompt, studyid, title, abstract,
#'   api_url = fake$url_b, api_key = "not-a-real-key", reps = 5, confidence = TRUE,
#'   incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.2, progress = FALSE
#' )
#' res5$answer_data_aggregated[, c("studyid", "incl_p", "final_decision_llm", "mean_confidence")]
#'
#' # A custom tool in provider B's format.
#' tool <- list(
#'   name = "screening_decision",
#'   description = "Record the screening decision.",
#'   input_schema = list(
#'     type = "object",
#'     properties = list(decision_llm = list(type = "string", enum = c("1", "0"))),
#'     required = "decision_llm"
#'   )
#' )
#' res_tool <- tabscreen_b(
#'   filges2015_dat[1:5, ], prompt, studyid, title, abstract,
#'   api_url = fake$url_b, api_key = "not-a-real-key", tools = list(tool),
#'   progress = FALSE, messages = FALSE
#' )
#' res_tool$answer_data$decision_llm
#' fake$stop()
#' options(old)
tabscreen_b <- function(data, prompt, studyid, title, abstract, api_url = "https://api.anthropic.com",
                        model = "claude-haiku-5-5", role = "user", tools = NULL, time_info = TRUE,
                        token_info = TRUE, api_key = get_api_key_b(), max_tries = 16, max_tokens = 1024,
                        max_seconds = NULL, is_transient = llm_is_transient, backoff = NULL, after = NULL,
                        rpm = 10000, reps = 1, seed_par = NULL, progress = TRUE, decision_description = FALSE,
                        messages = TRUE, incl_cutoff_upper = NULL, incl_cutoff_lower = NULL, force = FALSE,
                        custom_model = FALSE, reasoning_effort = "medium", overinclusive = TRUE,
                        confidence = FALSE, ...) {
  # The default model is provider B's current small model, not a mid-size one: claude-sonnet-5 is
  # legacy and 20 times the price, and claude-sonnet-5-5 rejects a forced tool. claude-haiku-5-5 can
  # turn thinking off and be forced to call the tool, so the default call asks for exactly one call.
  call <- rlang::current_env()
  given_effort <- !missing(reasoning_effort)

  check_flags(call, c(common_flags, "confidence"))
  inputs <- screening_inputs(call, rlang::enquo(studyid), rlang::enquo(title), rlang::enquo(abstract))
  rec <- inputs$rec
  grid <- inputs$grid
  check_role(role, roles = "user", call = call)
  check_api_url(api_url, call = call)
  tool_spec <- check_tools_b(tools, call = call)
  check_choice(reasoning_effort, "reasoning_effort", c("none", "low", "medium", "high", "xhigh", "max"), call = call)
  max_tokens <- check_max_tokens(max_tokens, call = call)
  check_run_args(max_tries, max_seconds, seed_par, is_transient, backoff, after, incl_cutoff_upper,
    incl_cutoff_lower, call = call)
  dots <- check_dots("b", rlang::list2(...), call = call)

  models <- lookup_models(model, "b", custom_model, call = call)
  builtin <- list(overinclusive = overinclusive, decision_description = decision_description,
    confidence = confidence && is.null(tools))
  run_options <- function(settings) {
    screening_options("b", api_url, prompt, model_options("b", models, settings, reps, rpm),
      grid, top_p = numeric(), role, tool_spec, builtin, dots, seed_par, max_tries, max_seconds,
      extra = list(max_tokens = max_tokens))
  }
  pre <- screening_preflight(rec, "b", models,
    policy_args(reasoning_effort, given = list(reasoning_effort = given_effort), builtin = is.null(tools)), run_options,
    reps, 1, decision_description, body = names(dots), call = call)
  settings <- pre$settings
  check_force_bc(models, reps, pre$run_estimate, force, call = call)

  api_key <- plan_api_key(api_key, provider_env_var("b"), messages = messages, call = call)

  inform_confidence_ignored(confidence, tools, messages)
  inform_auto_tool(settings, models, builtin = is.null(tools), messages)
  confidence <- builtin$confidence
  options <- pre$options
  arg_list <- screening_arg_list("b", "tabscreen_b", rec, call, options)
  launch_screening(rec, options, arg_list, api_key, pre, call = call)
}

# Provider B's R parts (see R/providers.R).
provider_b <- function() {
  list(name = "tabscreen_b", screen = tabscreen_b, reserved_body = reserved_body_b)
}

# The models that keep their thinking and are asked, not forced, to call the built-in tool.
inform_auto_tool <- function(settings, models, builtin, messages) {
  auto <- models$model[!vapply(settings, function(s) isTRUE(s$forced_tool), logical(1))]
  if (builtin && length(auto) > 0) {
    tabscreen_inform(
      c("i" = "{.val {auto}} cannot be forced to call the tool with {cli::qty(auto)}{?its/their} thinking on: {cli::qty(auto)}{?it is/they are} asked to call it ({.code tool_choice = auto}), and an answer without the call is retried."),
      messages = messages
    )
  }
  invisible()
}

# Provider B's tools (the Messages shape: name, description, input_schema). The protocol's
# tool_choice is the package's: the built-in tool is forced where the model allows it, custom
# tools are offered with tool_choice auto, so no user value can name a missing tool; their names
# are checked by parse_tools().
check_tools_b <- function(tools, call = rlang::caller_env()) {
  if (is.null(tools)) {
    return(list(tools = NULL, tool_choice = NULL))
  }
  list(tools = provider_tools(tools, "b", call = call)$value, tool_choice = NULL)
}

# max_tokens (provider B): a whole number of at least 1, sent as an integer.
check_max_tokens <- function(max_tokens, call = rlang::caller_env()) {
  ok <- is.numeric(max_tokens) && length(max_tokens) == 1 && !is.na(max_tokens) && is.finite(max_tokens) &&
    max_tokens >= 1 && max_tokens == round(max_tokens) && max_tokens <= .Machine$integer.max
  if (!ok) {
    abort_arg(c("{.arg max_tokens} must be a whole number of at least 1.",
      "i" = "It caps the output of each answer, thinking included; the default 1024 leaves room for a decision with a description."),
      class = "tabscreen_error_max_tokens", arg = "max_tokens", call = call)
  }
  as.integer(max_tokens)
}

reserved_body_b <- c(
  reserved_body_common,
  system = "The package sets it for models that cannot be forced to call the tool.",
  tool_choice = "The built-in tool is forced where the model allows it; custom {.arg tools} are offered with {.val auto}.",
  max_tokens = "Use the {.arg max_tokens} argument.",
  thinking = "Use the {.arg reasoning_effort} argument ({.val none} turns thinking off).",
  output_config = "Use the {.arg reasoning_effort} argument (sent as {.field output_config.effort}).",
  seed = "Provider B has no seed; {.arg seed_par} seeds only the package's own random numbers."
)
