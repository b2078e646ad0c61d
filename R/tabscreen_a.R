#' Screen titles and abstracts with provider A (Chat Completions with function calling)
#'
#' Sends the title and abstract of every record, preceded by your prompt, to a chat-completion
#' model of provider A (the OpenAI Chat Completions API, or any server that speaks it) and
#' collects the decision the model returns through a function call. Every combination of record,
#' prompt, model, `top_p` value and repetition is one request; the requests run concurrently in
#' the package's Go engine, paced to `rpm`, retried when they fail for a passing reason, and every
#' one of them ends as a row of `answer_data` or of `error_data`.
#'
#' @section The question:
#' Each request is one message: the prompt, then the record, with the title and the abstract
#' labelled and fenced (`<title>...</title>`, `<abstract>...</abstract>`) so that text inside an
#' abstract cannot pass for your instructions. Runs of white space (line breaks included) become one
#' space. A missing or blank title or abstract (`NA`, only white space, or the text `"NA"`) is
#' sent as "No information", and a message suggests removing such records; `answer_data` keeps
#' your original text.
#'
#' @section The decision:
#' Unless you give `tools`, a built-in function is forced. It returns `decision_llm`: `"1"`
#' (include), `"0"` (exclude) or, when `overinclusive = TRUE`, `"1.1"` (uncertain, counted as
#' include in `decision_binary`). With `decision_description = TRUE` it also returns a
#' `detailed_description`, written before the decision. Any other answer (no function call,
#' invalid arguments, a value outside the function's enum) is a failed request, not a guess.
#'
#' Custom `tools` must be in provider A's format (see the examples). The decision is read from an
#' argument named `decision_llm`, or else from the function's only argument with an `enum`; its
#' value must be `"1"`, `"0"` or `"1.1"`.
#'
#' @section Models, reasoning and prices:
#' `model` must be a model of provider A listed in [model_prizes], whose prices give the price of
#' the run; the package knows each listed model's rules (file `model_rules.csv` in the package's
#' `extdata` folder):
#' * Recent reasoning models (GPT-5.2 and later) call function tools on this endpoint only with
#'   `reasoning_effort = "none"`. For them the default `reasoning_effort` (`"medium"`) is sent as
#'   `"none"` with a message; another explicit value is an error before any request. Some models
#'   (`gpt-6-astra`, `gpt-6.1-sol`, `gpt-6.2-sol`) do not take `"none"` and cannot be used here.
#' * Models that are not reasoning models (`gpt-4o*`, `gpt-4.1*`) get no `reasoning_effort` and no
#'   `verbosity` field; giving either explicitly for them is an error.
#' * A `top_p` other than 1 is sent only to models that take it (not to reasoning models unless
#'   their reasoning effort is `"none"`); otherwise it is an error.
#'
#' For another model (fine-tuned, new, or served by another OpenAI-compatible server) either set
#' `custom_model = TRUE`: the model is sent as named, with only the `reasoning_effort`,
#' `verbosity` and `top_p` you give explicitly, and its price is `NA`; or add its prices first
#' with `options(tabscreen.model_prizes = data.frame(model = "my-model", input_per_million = 0.1,
#' output_per_million = 0.5))` (optional columns `cached_input_per_million` and `provider`). Rows
#' of that option also replace the bundled price of a model.
#'
#' Before the run a message estimates the price: about one token per four characters of prompt
#' and record, plus about 150 tokens of tool definition per request, and about 10 output tokens per
#' answer (more with `decision_description = TRUE` and with reasoning). After the run
#' `price_data` holds the exact price of the tokens the provider reported (cached input at its
#' price, tokens of malformed answers included, nothing rounded).
#'
#' @section Repetitions and aggregation:
#' With `reps > 1` for any model, `answer_data_aggregated` has one row per record, prompt, model
#' and `top_p`: `incl_p` is the share of the answered repetitions that include (`"1"` or `"1.1"`),
#' `n_mis_answers` counts failed repetitions. `final_decision_llm` is `"Include"` when
#' `incl_p >= incl_cutoff_upper`, `"Check"` when `incl_cutoff_lower <= incl_p < incl_cutoff_upper`
#' and `"Exclude"` below; `final_decision_llm_num` is 1 for Include and Check. `">="` is used
#' because the specification's own example, 1 of 10 repetitions at the default cut-off 0.1, must
#' include. `incl_cutoff_upper` defaults to 0.1 and `incl_cutoff_lower` to `incl_cutoff_upper` (so
#' nothing is flagged Check unless you set a lower cut-off), and the lower cut-off is ignored while
#' the upper one is 0.1 or below. A record whose repetitions all failed keeps its row, with
#' `incl_p` `NA` and the decision `"Check"`.
#'
#' @section Safety limits (`force`):
#' Without `force = TRUE`, more than 10 repetitions of an older small model (e.g. `gpt-5.6-luna`,
#' `gpt-4o-mini`) and more than one repetition of a larger model (anything but the small default
#' `gpt-6-luna` and the older small models) are refused.
#'
#' @section Failures, retries and interrupts:
#' Requests that fail for a passing reason (see [llm_is_transient()]) are retried up to `max_tries`
#' times in all, within `max_seconds`, waiting as the provider asks (`Retry-After`) or with
#' exponential back-off. A request that still fails is kept, with the reason in `decision_llm`, in
#' `error_data`; [screen_errors()] re-sends exactly those. When the provider refuses the key or
#' the account has no credit, the run stops at once with an error of class
#' `tabscreen_error_auth` or `tabscreen_error_quota`. On an interrupt (Ctrl-C or Esc) the run is
#' cancelled and an error of class `tabscreen_interrupted` is signalled. Both errors carry the
#' partial result in their field `result` (e.g. `rlang::last_error()$result`): answers already paid
#' for are never lost, and `screen_errors(result)` finishes the run.
#'
#' @section Errors:
#' Every argument is checked before anything is sent. A bad argument is an error of class
#' `tabscreen_error_arg` (and `tabscreen_error`) with a class for the case:
#' `tabscreen_error_data` (`data`), `tabscreen_error_data_column` (`title`, `abstract`, `studyid`
#' naming no usable column), `tabscreen_error_studyid` (missing or repeated ids),
#' `tabscreen_error_prompt`, `tabscreen_error_model_unknown`, `tabscreen_error_model_duplicated`,
#' `tabscreen_error_model_tools` (a model that cannot call tools here),
#' `tabscreen_error_model_reasoning`, `tabscreen_error_model_verbosity`,
#' `tabscreen_error_model_top_p` (a value the model does not take), `tabscreen_error_reps`,
#' `tabscreen_error_rpm`, `tabscreen_error_top_p`, `tabscreen_error_cutoff`,
#' `tabscreen_error_tools`, `tabscreen_error_tool_choice`, `tabscreen_error_reasoning_effort`,
#' `tabscreen_error_verbosity`, `tabscreen_error_role`, `tabscreen_error_api_url`,
#' `tabscreen_error_max_tries`, `tabscreen_error_max_seconds`, `tabscreen_error_seed_par`,
#' `tabscreen_error_callback`, `tabscreen_error_arg_flag` (a `TRUE`/`FALSE` argument),
#' `tabscreen_error_dots` (`...`), `tabscreen_error_model_prizes` (the price option) and
#' `tabscreen_error_force` (a safety limit). A missing key is an error of class
#' `tabscreen_error_api_key`, raised after all the other checks.
#'
#' @section Speed and options:
#' The requests run concurrently in the Go engine, paced by one limiter for `rpm` (one per model
#' when `rpm` gives a value per model) so that no one-second window gets more than `rpm / 60`
#' requests, and held back as a whole when the provider answers 429 with a wait. Two options tune
#' the engine:
#' * `options(tabscreen.max_active = n)`: the most requests in flight at once (default: about two
#'   seconds of requests at the full `rpm`, between 4 and 256).
#' * `options(tabscreen.timeout = s)`: the seconds one request may take before it is given up and,
#'   if tries are left, retried (default 120).
#'
#' The sibling function `tabscreen_a.original` of the specification (the old `functions` interface)
#' is not part of this package.
#'
#' @param data A data frame with one row per record.
#' @param prompt One or more prompts (character). Each record is screened with each prompt.
#' @param studyid The column of `data` with a unique id per record, as a bare name or a string.
#'   When missing, the records are numbered 1 to `nrow(data)`.
#' @param title,abstract The columns of `data` with the titles and the abstracts, as bare names
#'   or strings.
#' @param api_url The Chat Completions endpoint.
#' @param model One or more model names (see the section on models).
#' @param role The role of the message that carries the question: `"user"`, `"system"` or
#'   `"developer"`.
#' @param tools `NULL` for the built-in function, or custom function tools in provider A's format:
#'   a list of tools, or their JSON text.
#' @param tool_choice With custom `tools` only: `"auto"` (the default), `"none"`, `"required"`,
#'   the name of one of the tools, or a list in provider A's `tool_choice` format.
#' @param top_p One or more nucleus-sampling values between 0 and 1; each record is screened with
#'   each value. Altering this or `temperature` (through `...`), not both, is advised.
#' @param time_info If `TRUE`, `answer_data` has the seconds each answer took (`run_time`).
#' @param token_info If `TRUE`, `answer_data` has the token counts and the result has the price
#'   (`price_data`, `price_dollar`).
#' @param api_key The API key. By default read from the environment variable `PROVIDER_A_API_KEY`
#'   with [get_api_key()], after every other argument has been checked.
#' @param max_tries The most attempts per request; 1 sends each request once. `NULL` leaves the
#'   limit to `max_seconds`; with both `NULL` nothing is retried.
#' @param max_seconds The most seconds to keep retrying a request, from its first attempt, or
#'   `NULL`.
#' @param is_transient A function of an [httr2::response()] that returns `TRUE` when the failure
#'   is worth retrying. The default [llm_is_transient()] is applied by the engine itself.
#' @param backoff `NULL` (exponential back-off with jitter) or a function of the number of failed
#'   attempts that returns the seconds to wait.
#' @param after `NULL` (the `Retry-After` header) or a function of an [httr2::response()] that
#'   returns the seconds to wait, or `NULL` to fall back on `backoff`.
#' @param rpm Requests per minute allowed for each model (one value, or one per model); see
#'   [rate_limits_per_minute()].
#' @param reps How many times each question is asked (one value, or one per model). 10 is
#'   recommended for the cheap small models.
#' @param seed_par `NULL` or a whole number. It is sent as the request's `seed` (repetition `n`
#'   gets `seed_par + n - 1`, so that repetitions are not copies of each other) and seeds the
#'   engine's own random numbers (the jitter of the back-off).
#' @param progress If `TRUE`, show a progress bar.
#' @param decision_description If `TRUE`, the model also explains each decision
#'   (`detailed_description`, and `longest_answer` when aggregated). This raises the cost
#'   considerably; it helps to investigate disagreements with human decisions.
#' @param messages If `TRUE`, print messages (price estimate, blank records, summary of failures).
#' @param incl_cutoff_upper,incl_cutoff_lower Cut-offs of the inclusion probability, used when
#'   `reps > 1` (see the section on aggregation).
#' @param force If `TRUE`, override the safety limits.
#' @param custom_model If `TRUE`, `model` is sent as named, without the model rules, and its price
#'   is unknown.
#' @param fine_tuned Deprecated: use `custom_model`.
#' @param reasoning_effort The reasoning effort of reasoning models: `"none"`, `"minimal"`,
#'   `"low"`, `"medium"`, `"high"`, `"xhigh"` or `"max"`, as far as the model takes it (see the
#'   section on models).
#' @param verbosity `"low"`, `"medium"` or `"high"`, for the models that take it.
#' @param overinclusive If `TRUE`, the built-in function also allows the uncertain decision
#'   `"1.1"`; if `FALSE`, only `"1"` and `"0"`. Ignored with custom `tools`.
#' @param ... Further fields of the request body, e.g. `temperature = 0`, `seed = 1`,
#'   `service_tier = "flex"` or `max_completion_tokens = 200`. Length-one arrays must be given as
#'   lists or with [I()].
#'
#' @return An object of class `llm`: a list with
#' * `answer_data` (class `llm_tbl`): one row per answer, with your other columns first, then
#'   `studyid`, `title`, `abstract`, `promptid`, `prompt`, `model`, `iterations`, `question`,
#'   `top_p`, `decision_llm`, `detailed_description` (with `decision_description = TRUE`),
#'   `decision_binary`, `prompt_tokens`, `completion_tokens` (with `token_info = TRUE`),
#'   `submodel`, `run_time` (with `time_info = TRUE`), `run_date` (UTC) and `n` (the repetition);
#' * `price_dollar` and `price_data` (`prompt`, `model`, `iterations`, `input_price_dollar`,
#'   `output_price_dollar`, `total_price_dollar`), with `token_info = TRUE`;
#' * `run_date`, the time the run ended (UTC);
#' * `answer_data_aggregated` (class `llm_agg_tbl`), when any `reps > 1`: your other columns,
#'   `studyid`, `title`, `abstract`, `promptid`, `prompt`, `model`, `question`, `top_p`, `incl_p`,
#'   `final_decision_llm`, `final_decision_llm_num`, `longest_answer` (with
#'   `decision_description = TRUE`), `reps`, `n_mis_answers`, `submodel`; attributes
#'   `incl_cutoff_upper` and `incl_cutoff_lower` hold the cut-offs applied;
#' * `error_data`, when any request failed: the columns of `answer_data` for the failed requests,
#'   with the reason in `decision_llm`.
#'
#' The attribute `arg_list` holds the arguments of the call (never the API key), which
#' [screen_errors()] uses.
#'
#' @seealso [screen_errors()], [llm_is_transient()], [rate_limits_per_minute()], [model_prizes],
#'   [api_keys], [print.llm()].
#' @export
#' @examples
#' \dontshow{fake <- tabscreen:::example_fake_start()}
#' prompt <- paste(
#'   "Evaluate whether the study examines Functional Family Therapy (FFT) for young people",
#'   "in treatment for non-opioid drug use. Include reviews and studies of any design."
#' )
#'
#' # The key is read from PROVIDER_A_API_KEY (see ?set_api_key). The examples talk to a local
#' # stand-in for the provider, at fake$url; leave api_url out to use the real one.
#' res <- tabscreen_a.tools(
#'   data = filges2015_dat[1:10, ],
#'   prompt = prompt,
#'   studyid = studyid,
#'   title = title,
#'   abstract = abstract,
#'   api_url = fake$url
#' )
#' res
#' res$answer_data
#' res$price_dollar
#'
#' # Ten repetitions, aggregated, with reasons.
#' res10 <- tabscreen_a.tools(
#'   filges2015_dat[1:10, ], prompt, studyid, title, abstract,
#'   api_url = fake$url, reps = 10, decision_description = TRUE,
#'   incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.2, progress = FALSE
#' )
#' res10$answer_data_aggregated
#'
#' # A custom tool.
#' tool <- list(
#'   type = "function",
#'   `function` = list(
#'     name = "screening_decision",
#'     description = "Record the screening decision.",
#'     parameters = list(
#'       type = "object",
#'       properties = list(decision_llm = list(type = "string", enum = c("1", "0"))),
#'       required = "decision_llm",
#'       additionalProperties = FALSE
#'     )
#'   )
#' )
#' res_tool <- tabscreen_a.tools(
#'   filges2015_dat[1:5, ], prompt, studyid, title, abstract,
#'   api_url = fake$url, tools = list(tool), tool_choice = "screening_decision",
#'   progress = FALSE, messages = FALSE
#' )
#' res_tool$answer_data$decision_llm
#' \dontshow{tabscreen:::example_fake_stop(fake)}
tabscreen_a.tools <- function(data, prompt, studyid, title, abstract,
                              api_url = "https://api.openai.com/v1/chat/completions",
                              model = "gpt-6-luna", role = "user", tools = NULL, tool_choice = NULL,
                              top_p = 1, time_info = TRUE, token_info = TRUE, api_key = get_api_key(),
                              max_tries = 16, max_seconds = NULL, is_transient = llm_is_transient,
                              backoff = NULL, after = NULL, rpm = 10000, reps = 1, seed_par = NULL,
                              progress = TRUE, decision_description = FALSE, messages = TRUE,
                              incl_cutoff_upper = NULL, incl_cutoff_lower = NULL, force = FALSE,
                              custom_model = FALSE, fine_tuned = FALSE, reasoning_effort = "medium",
                              verbosity = "low", overinclusive = TRUE, ...) {
  call <- rlang::current_env()
  # which of these the user gave (before any of them is reassigned below)
  given <- list(reasoning_effort = !missing(reasoning_effort), verbosity = !missing(verbosity), top_p = !missing(top_p))

  for (arg in c("time_info", "token_info", "progress", "decision_description", "messages", "force",
    "custom_model", "overinclusive")) {
    check_flag(get(arg), arg, call = call)
  }
  if (!missing(fine_tuned)) {
    check_flag(fine_tuned, "fine_tuned", call = call)
    tabscreen_warn(
      c("{.arg fine_tuned} is deprecated; use {.arg custom_model} instead.",
        "i" = "{.code fine_tuned = {fine_tuned}} is taken as {.code custom_model = {fine_tuned || custom_model}}."),
      class = "tabscreen_warning_deprecated"
    )
    custom_model <- custom_model || fine_tuned
  }

  # The records
  check_data(data, call = call)
  if (missing(title)) abort_missing_column_arg("title", data, call = call)
  if (missing(abstract)) abort_missing_column_arg("abstract", data, call = call)
  title_col <- resolve_column(rlang::enquo(title), data, "title", call = call)
  abstract_col <- resolve_column(rlang::enquo(abstract), data, "abstract", call = call)
  studyid_col <- if (missing(studyid)) NULL else resolve_column(rlang::enquo(studyid), data, "studyid", call = call)
  ids <- if (is.null(studyid_col)) seq_len(nrow(data)) else data[[studyid_col]]
  check_studyid(ids, studyid_col %||% "studyid", call = call)
  titles <- text_column(data[[title_col]], title_col, "title", call = call)
  abstracts <- text_column(data[[abstract_col]], abstract_col, "abstract", call = call)

  # The questions and how they are asked
  check_prompt(prompt, call = call)
  check_model_names(model, call = call)
  reps <- check_per_model(reps, "reps", model, whole = TRUE, call = call)
  rpm_shared <- length(rpm) == 1 # one limiter for every model, as the provider counts per key
  rpm <- check_per_model(rpm, "rpm", model, whole = FALSE, call = call)
  top_p <- check_top_p(top_p, call = call)
  check_role(role, call = call)
  check_api_url(api_url, call = call)
  tool_spec <- check_tools(tools, tool_choice, call = call)
  check_choice(reasoning_effort, "reasoning_effort", c("none", "minimal", "low", "medium", "high", "xhigh", "max"), call = call)
  check_choice(verbosity, "verbosity", c("low", "medium", "high"), call = call)
  check_positive_or_null(max_tries, "max_tries", whole = TRUE, call = call)
  check_positive_or_null(max_seconds, "max_seconds", whole = FALSE, call = call)
  check_seed(seed_par, call = call)
  check_callback(is_transient, "is_transient", call = call)
  check_callback(backoff, "backoff", call = call)
  check_callback(after, "after", call = call)
  check_cutoffs(incl_cutoff_upper, incl_cutoff_lower, call = call)
  dots <- check_extra_body(rlang::list2(...), reserved_body_a, call = call)

  # The models: known names, their rules, the safety limits
  models <- lookup_models(model, "a", custom_model, call = call)
  settings <- model_settings(models, reasoning_effort, verbosity, top_p, given, call = call)
  check_force_a(models, reps, force, call = call)

  # Only now the key, so that a bad argument is reported before a missing key.
  api_key <- check_api_key(api_key, "PROVIDER_A_API_KEY", call = call)

  inform_defaulted_none(settings, models, messages)
  user <- user_columns(data, c(studyid_col, title_col, abstract_col), studyid_generated = is.null(studyid_col), messages = messages)
  inform_blank_fields(titles, abstracts, messages)
  if (all(reps == 1) && (!is.null(incl_cutoff_upper) || !is.null(incl_cutoff_lower))) {
    tabscreen_inform(c("i" = "The inclusion cut-offs apply only when {.arg reps} is above 1; they are ignored."), messages = messages)
  }
  records <- data.frame(title = titles, abstract = abstracts, stringsAsFactors = FALSE)
  inform_estimate(
    estimate_price(records, prompt, models, settings, reps, length(top_p), decision_description),
    nrow(data), messages
  )

  options <- list(
    provider = "a",
    api_url = api_url,
    prompts = I(prompt),
    models = model_options(models, settings, reps, rpm),
    rpm = if (rpm_shared) rpm[[1]] else NULL,
    top_p = I(top_p),
    role = role,
    tools = tool_spec$tools,
    tool_choice = tool_spec$tool_choice,
    builtin = list(overinclusive = overinclusive, decision_description = decision_description, confidence = FALSE),
    extra_body = dots,
    seed = seed_par,
    max_tries = max_tries,
    max_seconds = max_seconds,
    max_active = engine_max_active(),
    timeout_seconds = engine_timeout(),
    jobs = NULL
  )
  arg_list <- list(
    provider = "a", function_name = "tabscreen_a.tools",
    studyid = studyid_col, title = title_col, abstract = abstract_col,
    prompt = prompt, model = model, reps = reps, rpm = rpm, top_p = top_p,
    api_url = api_url, role = role, tools = tools, tool_choice = tool_choice,
    time_info = time_info, token_info = token_info,
    max_tries = max_tries, max_seconds = max_seconds,
    is_transient = is_transient, backoff = backoff, after = after,
    seed_par = seed_par, progress = progress, decision_description = decision_description,
    messages = messages, incl_cutoff_upper = incl_cutoff_upper, incl_cutoff_lower = incl_cutoff_lower,
    force = force, custom_model = custom_model, reasoning_effort = reasoning_effort,
    verbosity = verbosity, overinclusive = overinclusive, dots = dots,
    run_options = options
  )
  run_screening(
    records = list(index = seq_len(nrow(data)), studyid = ids, title = titles, abstract = abstracts, user = user),
    options = options, api_key = api_key, arg_list = arg_list, record_ids = ids, call = call
  )
}

# Fields of the request body that the package sets, with where to set them instead.
reserved_body_a <- c(
  model = "Use the {.arg model} argument.",
  messages = "The question is built from {.arg prompt}, {.arg title} and {.arg abstract}.",
  tools = "Use the {.arg tools} argument.",
  tool_choice = "Use the {.arg tool_choice} argument.",
  top_p = "Use the {.arg top_p} argument.",
  reasoning_effort = "Use the {.arg reasoning_effort} argument.",
  verbosity = "Use the {.arg verbosity} argument.",
  stream = "Streaming is not supported.",
  n = "Use {.arg reps} to ask the same question several times."
)

# The "models" entries of the run options.
model_options <- function(models, settings, reps, rpm) {
  lapply(seq_len(nrow(models)), function(i) {
    list(
      name = models$model[i],
      reps = as.integer(reps[i]),
      rpm = rpm[i],
      reasoning_effort = settings[[i]]$reasoning_effort,
      verbosity = settings[[i]]$verbosity,
      send_top_p = settings[[i]]$send_top_p,
      price_in = models$price_in[i],
      price_cached_in = models$price_cached_in[i],
      price_out = models$price_out[i]
    )
  })
}

check_api_key <- function(api_key, env_var, call = rlang::caller_env()) {
  if (!is_api_key(api_key)) {
    tabscreen_abort(
      c("{.arg api_key} must be a single non-empty string.",
        "i" = "Leave it out to read the key from {.envvar {env_var}}."),
      class = "tabscreen_error_api_key", call = call
    )
  }
  api_key
}

inform_defaulted_none <- function(settings, models, messages) {
  defaulted <- models$model[vapply(settings, function(s) isTRUE(s$defaulted_none), logical(1))]
  if (length(defaulted) > 0) {
    tabscreen_inform(
      c("i" = "{.val {defaulted}} call{?s/} function tools on this endpoint only with {.code reasoning_effort = \"none\"}, so {.val none} is sent instead of the default {.val medium}."),
      messages = messages
    )
  }
}

# The user's other columns, kept in the result. Columns named like a result column are left out.
user_columns <- function(data, mapped, studyid_generated, messages) {
  other <- setdiff(names(data), mapped)
  clash <- intersect(other, c(result_column_names(), ".record", ".failed"))
  if (length(clash) > 0) {
    tabscreen_inform(
      c("i" = "Column{?s} {.field {clash}} of {.arg data} {?has/have} the name of a result column and {?is/are} left out of the result.",
        if (studyid_generated && "studyid" %in% clash) c(" " = "Pass {.code studyid = studyid} to use it as the study id.")),
      messages = messages
    )
  }
  tibble::as_tibble(as.list(data)[setdiff(other, clash)], .rows = nrow(data))
}

inform_blank_fields <- function(titles, abstracts, messages) {
  blank_title <- sum(is_blank_field(titles))
  blank_abstract <- sum(is_blank_field(abstracts))
  if (blank_title + blank_abstract == 0) {
    return(invisible())
  }
  records <- sum(is_blank_field(titles) | is_blank_field(abstracts))
  tabscreen_inform(
    c("i" = "{records} record{?s} {?has/have} a missing or blank title or abstract ({blank_title} title{?s}, {blank_abstract} abstract{?s}); the model is told \"No information\" for {cli::qty(records)}{?it/them}.",
      " " = "Consider removing such records before screening, e.g. {.code data[!is.na(data$abstract), ]}."),
    messages = messages
  )
}

# Runs the engine and turns its tables into an llm object; signals interrupts and stops with the
# partial object attached. Shared by the screening functions and screen_errors().
run_screening <- function(records, options, api_key, arg_list, record_ids, call, merge_into = NULL) {
  callbacks <- list(
    is_transient = if (identical(arg_list$is_transient, llm_is_transient)) NULL else arg_list$is_transient,
    backoff = arg_list$backoff,
    after = arg_list$after
  )
  engine_records <- data.frame(title = records$title, abstract = records$abstract, stringsAsFactors = FALSE)
  res <- run_engine(engine_records, options, api_key,
    callbacks = callbacks, progress = arg_list$progress, messages = arg_list$messages, call = call)
  layout <- result_layout(arg_list)
  meta <- res$meta
  rows <- job_rows(res$answers, res$questions, records, layout)
  price <- price_data_rows(meta$price_data)
  run_info <- list(
    state = meta$state, total = meta$total, elapsed_seconds = meta$elapsed_seconds,
    blank_fields = meta$blank_fields, run_date = meta$run_date
  )
  run_date <- meta$run_date
  if (!is.null(merge_into)) {
    rows <- rbind_job_rows(merge_into$rows, rows)
    price <- add_prices(merge_into$price, price)
    run_info$elapsed_seconds <- (merge_into$run_info$elapsed_seconds %||% 0) + (meta$elapsed_seconds %||% 0)
    run_info$total <- nrow(rows)
    run_date <- merge_into$run_date %||% run_date
  }
  obj <- assemble_llm(rows, price, run_date, layout, arg_list, run_info, record_ids)
  finish_run(obj, meta, call)
}

finish_run <- function(obj, meta, call) {
  info <- attr(obj, "run_info")
  answered <- info$answered
  failed <- info$failed
  if (identical(meta$state, "cancelled")) {
    tabscreen_abort(
      c("The screening was interrupted.",
        "i" = "The partial result holds {answered} answer{?s}; {failed} request{?s} failed or {?was/were} not sent.",
        "i" = "It is in the field {.field result} of this error: {.code res <- rlang::last_error()$result}, then {.code screen_errors(res)} sends the rest."),
      class = "tabscreen_interrupted", result = obj, call = call
    )
  }
  if (identical(meta$state, "stopped")) {
    stop_class <- meta$stop$class %||% "tabscreen_error_stopped"
    tabscreen_abort(
      c("The screening stopped: {meta$stop$message %||% 'the provider refused the requests'}",
        "i" = "The partial result holds {answered} answer{?s}; {failed} request{?s} failed or {?was/were} not sent.",
        "i" = "Fix the cause, then finish the run with {.code screen_errors(rlang::last_error()$result)}."),
      class = stop_class, result = obj, call = call
    )
  }
  if (failed > 0) {
    tabscreen_inform(
      c("!" = "{failed} of {answered + failed} request{?s} failed; {cli::qty(failed)}{?it is/they are} in {.field error_data}.",
        "i" = "Re-send them with {.code screen_errors()}."),
      messages = attr(obj, "arg_list")$messages
    )
  }
  obj
}
