#' Screen titles and abstracts with provider C (Mistral chat completions with function calling)
#'
#' Sends the title and abstract of every record, preceded by your prompt, to a model of provider C
#' (the Mistral chat completions API, or any server that speaks it) and collects the decision the
#' model returns through a function call. It works like [tabscreen_a.tools()]: the same records,
#' questions, repetitions, `top_p` values, aggregation, prices, retries, interrupts and result,
#' only the protocol differs. Provider C takes `confidence` and has no `verbosity`.
#'
#' @section The protocol:
#' Provider C speaks Mistral's chat completions protocol: each request is a `POST` to `api_url`,
#' the full chat completions URL (`https://api.mistral.ai/v1/chat/completions`), with the key as
#' `Authorization: Bearer <key>`. To use another server that speaks the protocol, give its chat
#' completions URL. The protocol's request schema is closed: a field it does not define is
#' answered with HTTP 422, so the fields passed through `...` are checked against it before any
#' request. `seed_par` is sent as `random_seed` and the built-in function is called with
#' `parallel_tool_calls: false`.
#'
#' @inheritSection tabscreen_a.tools The question
#'
#' @inheritSection tabscreen_a.tools Text encodings
#'
#' @section The decision:
#' Unless you give `tools`, a built-in function is forced. It returns `decision_llm`: `"1"`
#' (include), `"0"` (exclude) or, when `overinclusive = TRUE`, `"1.1"` (uncertain, counted as
#' include in `decision_binary`). With `decision_description = TRUE` it also returns a
#' `detailed_description`, written before the decision. With `confidence = TRUE` it also returns
#' `confidence`, an integer from 0 (not confident at all) to 100 (completely confident), written
#' *after* the decision, as the model's judgement of the decision it has just made;
#' `answer_data` then has a column `confidence` and `answer_data_aggregated` a column
#' `mean_confidence`, the mean over the answered repetitions. Any other answer (no function call,
#' invalid arguments, a value outside the function's enum) is a failed request, not a guess.
#'
#' Custom `tools` are in the same format as provider A's (see the examples). `tool_choice` is then
#' `"auto"` (the default), `"none"`, `"any"` or `"required"` (both force a call), or
#' `list(type = "function", "function" = list(name = ...))` to force one of the tools. The
#' decision is read from an argument named `decision_llm`, or else from the function's only
#' argument with an `enum`, and must be `"1"`, `"0"` or `"1.1"`. `confidence` applies only to the
#' built-in function and is ignored (with a message) with custom tools. The explanation
#' (`detailed_description`) and the column `tool_arguments` with every argument of the call are
#' read as for [tabscreen_a.tools()].
#'
#' @section Models and reasoning:
#' `model` must be a model of provider C listed in [model_prizes] (the `-latest` names are
#' aliases that move to new versions); the package knows each listed model's rules (file
#' `model_rules/c.csv` in the package's `extdata` folder). `reasoning_effort` is sent only to the
#' models that reason (`mistral-small-*`, `mistral-medium-*`): `"none"` (the default: a direct
#' answer) or `"high"` (the model thinks first, and pays for it in output tokens). Other models
#' (`mistral-large-*`, `ministral-*`) may answer a `reasoning_effort` field with 422, so they get
#' none, and asking them for `"high"` is an error. `top_p` is sent to every listed model.
#'
#' For another model (fine-tuned, new, or served by another server) either set
#' `custom_model = TRUE`: the model is sent as named, with only the `reasoning_effort` and `top_p`
#' you give explicitly, and its price is `NA`; or add its prices first with
#' `options(tabscreen.model_prizes = data.frame(provider = "c", model = "my-model",
#' input_per_million = 0.1, output_per_million = 0.3))`.
#'
#' Before the run a message estimates the price as for [tabscreen_a.tools()]; after the run
#' `price_data` holds the price of the tokens the provider reported. Requests that share a prompt
#' carry a `prompt_cache_key` naming it, and the repetitions of a record are sent once its first
#' answer has arrived; cached input tokens (`prompt_tokens_details.cached_tokens`) are priced at the
#' cached-input price of [model_prizes] (see "Prompt caching" in [tabscreen_a.tools()]).
#'
#' @inheritSection tabscreen_a.tools Repetitions and aggregation
#'
#' @section Safety limits (`force`):
#' Without `force = TRUE`, more than 10 repetitions of a model, or a screening whose estimated
#' price is above 15 USD, are refused (class `tabscreen_error_force`).
#'
#' @inheritSection tabscreen_a.tools Failures, retries and interrupts
#'
#' @inheritSection tabscreen_a.tools Speed and options
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
#' request, plus `tabscreen_error_arg_flag` for `confidence`; `tabscreen_error_dots` also covers a
#' field of `...` that the protocol does not define. A missing key (`PROVIDER_C_API_KEY`) is an
#' error of class `tabscreen_error_api_key`, raised after all the other checks.
#'
#' @inheritParams tabscreen_a.tools
#' @param api_url The chat completions URL.
#' @param model One or more model names of provider C (see the section on models).
#' @param role The role of the message that carries the question: `"user"`. The protocol wants
#'   the last message of a request to come from the user, so no other role can carry it.
#' @param tools `NULL` for the built-in function, or custom function tools (provider A's format):
#'   a list of tools, or their JSON text.
#' @param tool_choice With custom `tools` only: `"auto"` (the default), `"none"`, `"any"`,
#'   `"required"`, or `list(type = "function", "function" = list(name = ...))` naming one of the
#'   tools.
#' @param top_p One or more nucleus-sampling values above 0 and at most 1; each record is screened
#'   with each value. Altering this or `temperature` (through `...`), not both, is advised.
#' @param api_key The API key. By default read from the environment variable `PROVIDER_C_API_KEY`
#'   with [get_api_key_c()], after every other argument has been checked.
#' @param seed_par `NULL` or a whole number of at least 0. It is sent as the request's
#'   `random_seed` (repetition `n` gets `seed_par + n - 1`, so that repetitions are not copies of
#'   each other) and seeds the engine's own random numbers (the jitter of the back-off).
#' @param reasoning_effort `"none"` (the default) or `"high"`, for the models that reason (see the
#'   section on models).
#' @param confidence If `TRUE`, the built-in function also asks for the model's confidence in its
#'   decision, 0 to 100 (columns `confidence` and `mean_confidence`). Ignored with custom `tools`.
#' @param ... Further fields of the request body, of those provider C's request defines:
#'   `temperature`, `max_tokens`, `stop`, `metadata`, `response_format`, `presence_penalty`,
#'   `frequency_penalty`, `prediction`, `parallel_tool_calls`, `prompt_mode`, `guardrails`,
#'   `prompt_cache_key`, `service_tier` and `safe_prompt` (e.g. `temperature = 0`,
#'   `max_tokens = 200`). Any other field is an error.
#'
#' @return An object of class `llm`, as described for [tabscreen_a.tools()]: `answer_data` has
#'   `studyid`, `title`, `abstract`, `promptid`, `prompt`, `model`,
#'   `iterations`, `question`, `top_p`, `decision_llm`, `detailed_description` (with
#'   `decision_description = TRUE`), `decision_binary`, `confidence` (with `confidence = TRUE`),
#'   `prompt_tokens`, `completion_tokens` (with `token_info = TRUE`), `submodel`, `run_time` (with
#'   `time_info = TRUE`), `run_date` and `n`, then your other columns; `answer_data_aggregated`
#'   (when any `reps > 1`) has `studyid`, `title`, `abstract`, `promptid`, `prompt`, `model`,
#'   `question`, `top_p`, `incl_p`, `final_decision_llm`, `final_decision_llm_num`,
#'   `longest_answer` (with `decision_description = TRUE`), `mean_confidence` (with
#'   `confidence = TRUE`), `reps`, `reps_sent` (through [screen_adaptive()] only),
#'   `n_mis_answers` and `submodel`, then your other columns.
#'
#' @seealso [screen_store()], [tabscreen_a.tools()], [tabscreen_b()], [screen_errors()], [llm_is_transient()],
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
#' # out api_url and api_key: the key is then read from PROVIDER_C_API_KEY (see ?set_api_key).
#' res <- tabscreen_c(
#'   data = filges2015_dat[1:10, ],
#'   prompt = prompt,
#'   studyid = studyid,
#'   title = title,
#'   abstract = abstract,
#'   api_url = fake$url_c, api_key = "not-a-real-key"
#' )
#' res
#' res$answer_data
#'
#' # Five repetitions with the model's confidence, aggregated.
#' res5 <- tabscreen_c(
#'   filges2015_dat[1:10, ], prompt, studyid, title, abstract,
#'   api_url = fake$url_c, api_key = "not-a-real-key",
#'   reps = 5, confidence = TRUE, seed_par = 42,
#'   incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.2, progress = FALSE
#' )
#' res5$answer_data_aggregated[, c("studyid", "incl_p", "final_decision_llm", "mean_confidence")]
#'
#' # A custom tool, forced by name.
#' tool <- list(
#'   type = "function",
#'   `function` = list(
#'     name = "screening_decision",
#'     description = "Record the screening decision.",
#'     parameters = list(
#'       type = "object",
#'       properties = list(decision_llm = list(type = "string", enum = c("1", "0"))),
#'       required = "decision_llm"
#'     )
#'   )
#' )
#' res_tool <- tabscreen_c(
#'   filges2015_dat[1:5, ], prompt, studyid, title, abstract,
#'   api_url = fake$url_c, api_key = "not-a-real-key", tools = list(tool),
#'   tool_choice = list(type = "function", `function` = list(name = "screening_decision")),
#'   progress = FALSE, messages = FALSE
#' )
#' res_tool$answer_data$decision_llm
#' fake$stop()
#' options(old)
tabscreen_c <- function(data, prompt, studyid, title, abstract,
                        api_url = "https://api.mistral.ai/v1/chat/completions", model = "mistral-small-latest",
                        role = "user", tools = NULL, tool_choice = NULL, top_p = 1, time_info = TRUE,
                        token_info = TRUE, api_key = get_api_key_c(), max_tries = 16, max_seconds = NULL,
                        is_transient = llm_is_transient, backoff = NULL, after = NULL, rpm = 10000, reps = 1,
                        seed_par = NULL, progress = TRUE, decision_description = FALSE, messages = TRUE,
                        incl_cutoff_upper = NULL, incl_cutoff_lower = NULL, force = FALSE, custom_model = FALSE,
                        reasoning_effort = "none", overinclusive = TRUE, confidence = FALSE, ...) {
  call <- rlang::current_env()
  given <- list(reasoning_effort = !missing(reasoning_effort), top_p = !missing(top_p))

  check_flags(call, c(common_flags, "confidence"))
  inputs <- screening_inputs(call, rlang::enquo(studyid), rlang::enquo(title), rlang::enquo(abstract))
  rec <- inputs$rec
  grid <- inputs$grid
  top_p <- check_top_p(top_p, exclude_zero = TRUE, call = call)
  check_role(role, roles = "user", call = call)
  check_api_url(api_url, call = call)
  tool_spec <- check_tools_c(tools, tool_choice, call = call)
  check_choice(reasoning_effort, "reasoning_effort", c("none", "high"), call = call)
  check_run_args(max_tries, max_seconds, seed_par, is_transient, backoff, after, incl_cutoff_upper,
    incl_cutoff_lower, call = call)
  check_seed_c(seed_par, call = call)
  dots <- check_dots("c", rlang::list2(...), call = call)

  models <- lookup_models(model, "c", custom_model, call = call)
  builtin <- list(overinclusive = overinclusive, decision_description = decision_description,
    confidence = confidence && is.null(tools))
  run_options <- function(settings) {
    screening_options("c", api_url, prompt, model_options("c", models, settings, reps, rpm),
      grid, top_p, role, tool_spec, builtin, dots, seed_par, max_tries, max_seconds)
  }
  pre <- screening_preflight(rec, "c", models, policy_args(reasoning_effort, top_p = top_p, given = given), run_options,
    reps, length(top_p), decision_description, call = call)
  check_force_bc(models, reps, pre$run_estimate, force, call = call)

  api_key <- plan_api_key(api_key, provider_env_var("c"), messages = messages, call = call)

  inform_confidence_ignored(confidence, tools, messages)
  confidence <- builtin$confidence
  options <- pre$options
  arg_list <- screening_arg_list("c", "tabscreen_c", rec, call, options)
  launch_screening(rec, options, arg_list, api_key, pre, call = call)
}

# Provider C's R parts (see R/providers.R).
provider_c <- function() {
  list(name = "tabscreen_c", screen = tabscreen_c, reserved_body = reserved_body_c, dots_hints = dots_hints_c)
}

# random_seed is an integer of at least 0 in provider C's schema.
check_seed_c <- function(seed_par, call) {
  if (!is.null(seed_par) && seed_par < 0) {
    abort_arg(c("{.arg seed_par} must be {.code NULL} or a whole number of at least 0.",
      "i" = "Provider C's {.field random_seed} is not negative."),
      class = "tabscreen_error_seed_par", arg = "seed_par", call = call)
  }
  invisible()
}

# Provider C's tools (the Chat Completions shape) and tool_choice: "auto", "none", "any",
# "required" or list(type = "function", `function` = list(name = <one of the tools>)).
check_tools_c <- function(tools, tool_choice, call = rlang::caller_env()) {
  parsed <- parse_chat_tools(tools, tool_choice, "c", call = call)
  if (is.null(parsed)) return(list(tools = NULL, tool_choice = NULL))
  names <- parsed$names
  modes <- parsed$modes
  fix <- c(
    "i" = "Give one of {.val {modes}}, or {.code list(type = \"function\", `function` = list(name = \"{names[1]}\"))} to force one of the {.arg tools} ({.val {names}}).",
    "i" = "Leave it {.code NULL} for {.val auto}."
  )
  if (is.null(tool_choice)) {
    tool_choice <- "auto"
  } else if (is.character(tool_choice)) {
    if (length(tool_choice) != 1 || is.na(tool_choice) || !tool_choice %in% modes) {
      abort_arg(c("{.arg tool_choice} must be one of {.val {modes}} or a named function.", fix),
        class = "tabscreen_error_tool_choice", arg = "tool_choice", call = call)
    }
  } else {
    fun <- if (is.list(tool_choice)) tool_choice[["function"]] else NULL
    ok <- is.list(tool_choice) && identical(tool_choice$type, "function") && is.list(fun) &&
      rlang::is_string(fun$name) && setequal(names(tool_choice), c("type", "function")) &&
      identical(names(fun), "name")
    if (!ok) {
      abort_arg(c("{.arg tool_choice} must be one of {.val {modes}} or a named function of {.arg tools}.", fix),
        class = "tabscreen_error_tool_choice", arg = "tool_choice", call = call)
    }
    check_tool_choice_names(fun$name, names, modes, call)
  }
  list(tools = parsed$value, tool_choice = tool_choice)
}

reserved_body_c <- c(
  reserved_body_common,
  tool_choice = "Use the {.arg tool_choice} argument.",
  top_p = "Use the {.arg top_p} argument.",
  reasoning_effort = "Use the {.arg reasoning_effort} argument.",
  random_seed = "Use {.arg seed_par}: it is sent as {.field random_seed} (plus {.code n - 1} for repetition {.code n}).",
  n = "Use {.arg reps} to ask the same question several times."
)

# Fields of other protocols that users carry over to provider C.
dots_hints_c <- c(
  seed = "Use {.arg seed_par} (sent as {.field random_seed}).",
  max_completion_tokens = "Provider C calls it {.field max_tokens}.",
  verbosity = "Provider C has no {.field verbosity}.",
  user = "Provider C has no {.field user}; use {.field metadata}."
)
