#' Screen titles and abstracts with provider A (Chat Completions with function calling)
#'
#' Sends the title and abstract of every record, preceded by your prompt, to a chat-completion
#' model of provider A (the OpenAI Chat Completions API, or any server that speaks it) and
#' collects the decision the model returns through a function call. Every combination of record,
#' prompt, model, `top_p` value and repetition is one request; the requests run concurrently in
#' the package's Go engine, paced to `rpm`, retried when they fail for a passing reason, and every
#' one of them ends as a row of `answer_data` or of `error_data`.
#'
#' The sibling function `tabscreen_a.original` of the specification (the old `functions` interface)
#' is not part of this package.
#'
#' @section The question:
#' Each request is one message: the prompt, then the record, with the title and the abstract
#' labelled and fenced (`<title>...</title>`, `<abstract>...</abstract>`) so that text inside an
#' abstract cannot pass for your instructions. Runs of white space (line breaks included) become one
#' space. A missing or blank title or abstract (`NA`, only white space, or the text `"NA"`) is
#' sent as "No information", and a message counts such records and suggests removing them; a
#' record whose title and abstract are both blank is still screened (the model sees
#' "No information" twice, and the request is paid for), and `answer_data` keeps your original
#' text. A data set in which every record is blank is refused before any request, with an error of
#' class `tabscreen_error_data_blank`: it usually means that `title` and `abstract` name the wrong
#' columns.
#'
#' @section Text encodings:
#' Titles, abstracts, character study ids and prompts are sent as UTF-8. Text marked as Latin-1
#' (e.g. read with `encoding = "latin1"`) is converted; text marked `"bytes"` is read as UTF-8.
#' Text whose bytes are not valid UTF-8 (what `read.csv()` gives for a Windows-1252 export read
#' without `fileEncoding`) is an error of class `tabscreen_error_encoding`, before any request. Its
#' message names the column, the number of records affected and the first of their study ids,
#' and the fix: read the file with its encoding (`read.csv(file, fileEncoding = "windows-1252")`,
#' `read_refs(file, encoding = "windows-1252")`), or convert the column, e.g.
#' `iconv(x, "windows-1252", "UTF-8")`, or `iconv(x, "", "UTF-8", sub = "byte")` when the
#' encoding is unknown (each bad byte then reads as `<e9>`). The package does not repair such
#' text itself: it cannot know the file's encoding, and a wrong guess would send mangled text.
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
#' With custom tools, `detailed_description` (with `decision_description = TRUE`) is read from the
#' argument named `detailed_description`, else from the function's only free-text argument (a
#' string without an `enum`) whose name speaks of a reason (it contains `description`, `reason`,
#' `explanation`, `rationale` or `justification`), else from its only free-text argument; it is
#' `NA` when none of these settles it. Every argument of the call, whatever its name, is kept in
#' the column `tool_arguments` of `answer_data` (after the specification's columns), as the JSON
#' text the model wrote: `jsonlite::fromJSON(res$answer_data$tool_arguments[1])` reads one.
#'
#' @section Models, reasoning and prices:
#' `model` must be a model of provider A listed in [model_prizes], whose prices give the price of
#' the run; the package knows each listed model's rules (file `model_rules/a.csv` in the package's
#' `extdata` folder):
#' * Recent reasoning models (GPT-5.2 and later) call function tools on this endpoint only with
#'   `reasoning_effort = "none"`. For them a `reasoning_effort` you leave out is the model's own,
#'   `"none"`, and is sent without a message; another value you give is an error before any
#'   request. Some models
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
#' price, tokens of malformed answers included, nothing rounded). [screen_plan()] gives the same
#' estimate (with and without caching, and at batch prices) and the time it takes without sending
#' anything; `options(tabscreen.max_price = X)` refuses a run estimated above `X` USD unless
#' `force = TRUE`. On a resume the estimate counts only what remains to be sent.
#'
#' Until the endpoint has answered once, a request that shows `api_url` cannot be used (the
#' connection is refused, the host does not resolve, TLS fails, or the server answers 404, 405,
#' 501 or a web page) is tried three times in quick succession, and the run then stops with an
#' error of class `tabscreen_error_endpoint` naming the URL, the cause and the form of URL
#' expected. After the first answer the retry rules above apply.
#'
#' @section Prompt caching and flex processing:
#' Every request starts with what it shares with others (the tool, then the prompt, then the
#' record), and the repetitions of a record are sent once its first answer has arrived, while other
#' records' first requests keep the rate at `rpm`: the provider can then read the repeated prefix
#' from its prompt cache at a tenth of the input price. Requests that share a prompt carry a
#' `prompt_cache_key` naming it. The estimate before the run counts the expected cache reads;
#' `attr(price_data, "cache")` holds, per prompt and model, the input tokens read from
#' (`cached_input_tokens`) and written to (`cache_write_tokens`) the cache and what it saved
#' (`cache_saving_dollar`), and printing the result shows them. `options(tabscreen.cache = FALSE)`
#' sends every request as soon as it can, without cache keys.
#'
#' `service_tier = "flex"` in `...` asks for flex processing: slower, at the flex prices of
#' [model_prizes] (half the standard prices; a model without one is refused before any request).
#' When flex has no capacity the provider answers 429 "resource unavailable"; such requests are
#' retried with back-off within `max_tries`, and the run goes on.
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
#' `gpt-6-luna` and the older small models) are refused. A model without known rules (a
#' `custom_model`, or one priced with `options(tabscreen.model_prizes)`) is refused above 10
#' repetitions, as with [tabscreen_b()] and [tabscreen_c()].
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
#' @section Every answer kept, and resuming:
#' Each answer is written to the answer store (an SQLite file, `options(tabscreen.store)`) the
#' moment it arrives, with the request as sent and the raw response. If a screening is cut short
#' (a crash, a killed session, a lost network, Ctrl-C), call it again with the same arguments: it
#' sends only the requests that have no stored answer ("Resuming run ..."). See [screen_store()]
#' for the store, its options and its schema; `options(tabscreen.store = FALSE)` turns it off.
#'
#' @section Errors:
#' Every argument is checked before anything is sent. A bad argument is an error of class
#' `tabscreen_error_arg` (and `tabscreen_error`) with a class for the case:
#' `tabscreen_error_data` (`data`), `tabscreen_error_data_column` (`title`, `abstract`, `studyid`
#' naming no usable column), `tabscreen_error_data_blank` (every record blank),
#' `tabscreen_error_encoding` (text that is not UTF-8, with `tabscreen_error_data` or
#' `tabscreen_error_prompt`), `tabscreen_error_studyid` (missing or repeated ids),
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
#' `tabscreen_error_force` (a safety limit). Each such error names the argument in its message
#' and in its field `arg`. A missing key is an error of class `tabscreen_error_api_key`, raised
#' after all the other checks; an `api_key` that cannot be a key (not a single non-empty string)
#' is of classes `tabscreen_error_api_key` and `tabscreen_error_arg`. The key itself is never
#' shown.
#'
#' @section Speed and options:
#' The requests run concurrently in the Go engine, paced by one limiter for `rpm` (one per model
#' when `rpm` gives a value per model) so that no one-second window gets more than `rpm / 60`
#' requests, and held back as a whole when the provider answers 429 with a wait. They are paced by
#' tokens too: each request's tokens are estimated before it is sent (its text at about four
#' characters a token, the price estimate's rule, scaled by the prompt tokens the answers so far
#' reported, plus their mean completion tokens) and corrected by the usage its answer reports, so
#' that a minute's requests stay within the tokens-per-minute limit, the usual limit of an account.
#' That limit is `options(tabscreen.tpm)` when set, else the one the provider reports in its
#' rate-limit headers, learned from the first answers and followed as it changes (with both, the
#' lower). Likewise, a requests limit the provider reports below `rpm` is followed instead of `rpm`.
#' The token limit, like `rpm`, is one budget for all models when `rpm` is one value, one per model
#' when `rpm` gives one per model. Options that tune the engine:
#' * `options(tabscreen.tpm = n)`: the tokens per minute to keep to (a positive number; default
#'   `NULL`, the limit the provider reports). Another value is an error of class
#'   `tabscreen_error_option`.
#' * `options(tabscreen.max_active = n)`: the most requests in flight at once (default: about two
#'   seconds of requests at the full `rpm`, between 4 and 256).
#' * `options(tabscreen.timeout = s)`: the seconds one request may take before it is given up and,
#'   if tries are left, retried (default 120).
#' * `options(tabscreen.max_price = x)`: the most USD a call may be estimated at before it is sent
#'   (default `NULL`, no cap; `force = TRUE` passes it); `options(tabscreen.estimate)`: whether the
#'   estimate is printed (default `NULL`, as `messages` says). See [screen_plan()].
#' * `options(tabscreen.store_reuse = FALSE)`: the same call as a completed run screens anew
#'   instead of returning that run's answers (see [screen_store()]).
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
#' @param time_info If `TRUE`, `answer_data` has the seconds each answer took (`run_time`): from the
#'   request's first attempt to its answer, retries and the waits between them included.
#' @param token_info If `TRUE`, `answer_data` has the token counts and the result has the price
#'   (`price_data`, `price_dollar`).
#' @param api_key The API key. By default read from the environment variable `PROVIDER_A_API_KEY`
#'   with [get_api_key()], after every other argument has been checked.
#' @param max_tries The most attempts per request; 1 sends each request once. A reply without a
#'   usable decision is asked again at once, which is an attempt too (and at most twice). `NULL`
#'   leaves the limit to `max_seconds`; with both `NULL` nothing is retried or asked again.
#' @param max_seconds The most seconds to keep retrying a request, from its first attempt, or
#'   `NULL`.
#' @param is_transient A function of an [httr2::response()] that returns `TRUE` when the failure
#'   is worth retrying. The default [llm_is_transient()] is applied by the engine itself.
#' @param backoff `NULL` (exponential back-off with jitter) or a function of the number of failed
#'   attempts that returns the seconds to wait.
#' @param after `NULL` (the `Retry-After` header) or a function of an [httr2::response()] that
#'   returns the seconds to wait, or `NULL` to fall back on `backoff`.
#' @param rpm Requests per minute allowed for each model (one value, or one per model); see
#'   [rate_limits_per_minute()]. Tokens per minute are set with `options(tabscreen.tpm)` (see the
#'   section on speed and options).
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
#'   `options(tabscreen.estimate = TRUE)` prints the price estimate even with `messages = FALSE`,
#'   `FALSE` never prints it (see [screen_plan()]).
#' @param incl_cutoff_upper,incl_cutoff_lower Cut-offs of the inclusion probability, used when
#'   `reps > 1` (see the section on aggregation).
#' @param force If `TRUE`, override the safety limits, including the spending cap
#'   `options(tabscreen.max_price)` (see [screen_plan()]).
#' @param custom_model If `TRUE`, `model` is sent as named, without the model rules, and its price
#'   is unknown.
#' @param fine_tuned Deprecated: use `custom_model`.
#' @param reasoning_effort The reasoning effort of reasoning models: `"none"`, `"minimal"`,
#'   `"low"`, `"medium"`, `"high"`, `"xhigh"` or `"max"`, as far as the model takes it (see the
#'   section on models). The signature's `"medium"` applies when you leave the argument out and
#'   the model takes it; for a model that calls tools only without reasoning (the default
#'   `gpt-6-luna`) leaving it out means `"none"`, silently.
#' @param verbosity `"low"`, `"medium"` or `"high"`, for the models that take it.
#' @param overinclusive If `TRUE`, the built-in function also allows the uncertain decision
#'   `"1.1"`; if `FALSE`, only `"1"` and `"0"`. Ignored with custom `tools`.
#' @param ... Further fields of the request body, e.g. `temperature = 0`,
#'   `service_tier = "flex"` or `max_completion_tokens = 200`. Length-one arrays must be given as
#'   lists or with [I()]. (`seed = 1` here would match `seed_par` by R's partial matching: use
#'   `seed_par`, which is sent as the seed.)
#'
#' @return An object of class `llm`: a list with
#' * `answer_data` (class `llm_tbl`): one row per answer, with the columns `studyid`, `title`, `abstract`, `promptid`, `prompt`, `model`, `iterations`, `question`,
#'   `top_p`, `decision_llm`, `detailed_description` (with `decision_description = TRUE`),
#'   `decision_binary`, `prompt_tokens`, `completion_tokens` (with `token_info = TRUE`: every token
#'   billed for the request, replies asked again and earlier calls of a resumed or repaired run
#'   included, so that at the prices of [model_prizes] they add up to `price_data`),
#'   `submodel`, `run_time` (with `time_info = TRUE`), `run_date` (UTC) and `n` (the repetition),
#'   in that order, then your other columns of `data`;
#' * `price_dollar` and `price_data` (`prompt`, `model`, `iterations`, `input_price_dollar`,
#'   `output_price_dollar`, `total_price_dollar`), with `token_info = TRUE`;
#' * `run_date`, the time the run ended (UTC);
#' * `answer_data_aggregated` (class `llm_agg_tbl`), when any `reps > 1`:
#'   `studyid`, `title`, `abstract`, `promptid`, `prompt`, `model`, `question`, `top_p`, `incl_p`,
#'   `final_decision_llm`, `final_decision_llm_num`, `longest_answer` (with
#'   `decision_description = TRUE`: the description with the most words across the answered
#'   repetitions, whatever their decision), `reps`, `reps_sent` (through [screen_adaptive()]
#'   only: the repetitions sent), `n_mis_answers`, `submodel`, then your other columns; attributes
#'   `incl_cutoff_upper` and `incl_cutoff_lower` hold the cut-offs applied;
#' * `error_data`, when any request failed: the columns of `answer_data` for the failed requests,
#'   with the reason in `decision_llm`.
#'
#' The attribute `arg_list` holds the arguments of the call (never the API key), which
#' [screen_errors()] uses. The attribute `run_info` describes the call: `state`, `total`,
#' `answered`, `failed`, `elapsed_seconds`, `stored_answers` (answers taken from the answer store
#' instead of being sent: a resumed run, or a completed one reused) and `call_price_dollar` (what
#' this call spent; `price_dollar` and `price_data` are the whole run's, earlier calls of a resumed
#' or repaired run included). The print method shows both when they matter.
#'
#' @seealso [screen_store()], [screen_errors()], [llm_is_transient()], [rate_limits_per_minute()], [model_prizes],
#'   [api_keys], [print.llm()].
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
#' # out api_url and api_key: the key is then read from PROVIDER_A_API_KEY (see ?set_api_key).
#' res <- tabscreen_a.tools(
#'   data = filges2015_dat[1:10, ],
#'   prompt = prompt,
#'   studyid = studyid,
#'   title = title,
#'   abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key"
#' )
#' res
#' res$answer_data
#' res$price_dollar
#'
#' # Ten repetitions, aggregated, with reasons.
#' res10 <- tabscreen_a.tools(
#'   filges2015_dat[1:10, ], prompt, studyid, title, abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", reps = 10, decision_description = TRUE,
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
#'   api_url = fake$url, api_key = "not-a-real-key", tools = list(tool),
#'   tool_choice = "screening_decision", progress = FALSE, messages = FALSE
#' )
#' res_tool$answer_data$decision_llm
#' fake$stop()
#' options(old)
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

  check_flags(call, common_flags)
  if (!missing(fine_tuned)) {
    check_flag(fine_tuned, "fine_tuned", call = call)
    tabscreen_warn(
      c("{.arg fine_tuned} is deprecated; use {.arg custom_model} instead.",
        "i" = "{.code fine_tuned = {fine_tuned}} is taken as {.code custom_model = {fine_tuned || custom_model}}."),
      class = "tabscreen_warning_deprecated"
    )
    custom_model <- custom_model || fine_tuned
  }
  inputs <- screening_inputs(call, rlang::enquo(studyid), rlang::enquo(title), rlang::enquo(abstract))
  rec <- inputs$rec
  grid <- inputs$grid

  # How the questions are asked
  top_p <- check_top_p(top_p, call = call)
  check_role(role, call = call)
  check_api_url(api_url, call = call)
  tool_spec <- check_tools(tools, tool_choice, call = call)
  check_choice(reasoning_effort, "reasoning_effort", c("none", "minimal", "low", "medium", "high", "xhigh", "max"), call = call)
  check_choice(verbosity, "verbosity", c("low", "medium", "high"), call = call)
  check_run_args(max_tries, max_seconds, seed_par, is_transient, backoff, after, incl_cutoff_upper,
    incl_cutoff_lower, call = call)
  dots <- check_dots("a", rlang::list2(...), call = call)

  # The models: known names, their rules, the safety limits
  models <- flex_prices(lookup_models(model, "a", custom_model, call = call), dots, call = call)
  run_options <- function(settings) {
    screening_options("a", api_url, prompt, model_options("a", models, settings, reps, rpm), grid, top_p, role,
      tool_spec, builtin = list(overinclusive = overinclusive, decision_description = decision_description, confidence = FALSE),
      dots, seed_par, max_tries, max_seconds)
  }
  pre <- screening_preflight(rec, "a", models, policy_args(reasoning_effort, verbosity, top_p, given, force = force),
    run_options, reps, length(top_p), decision_description, call = call)

  # Only now the key, so that a bad argument is reported before a missing key.
  api_key <- plan_api_key(api_key, provider_env_var("a"), messages = messages, call = call)

  options <- pre$options
  arg_list <- screening_arg_list("a", "tabscreen_a.tools", rec, call, options)
  launch_screening(rec, options, arg_list, api_key, pre, call = call)
}

# Provider A's R parts (see R/providers.R).
provider_a <- function() {
  list(name = "tabscreen_a.tools", screen = tabscreen_a.tools, reserved_body = reserved_body_a)
}

# Fields of the request body that the package sets, with where to set them instead.
reserved_body_a <- c(
  reserved_body_common,
  tool_choice = "Use the {.arg tool_choice} argument.",
  top_p = "Use the {.arg top_p} argument.",
  reasoning_effort = "Use the {.arg reasoning_effort} argument.",
  verbosity = "Use the {.arg verbosity} argument.",
  n = "Use {.arg reps} to ask the same question several times."
)

# Provider A's tools and tool_choice (the Chat Completions shapes): "auto", "none", "required",
# the name of one of the tools, list(type = "function", `function` = list(name = ...)) or
# list(type = "allowed_tools", allowed_tools = list(mode = ..., tools = list(<function choices>))).
# Every function the choice names must be one of the tools: the provider answers 400 to every
# request otherwise.
check_tools <- function(tools, tool_choice, call = rlang::caller_env()) {
  parsed <- parse_chat_tools(tools, tool_choice, "a", call = call)
  if (is.null(parsed)) return(list(tools = NULL, tool_choice = NULL))
  names <- parsed$names
  modes <- parsed$modes
  fix <- c("i" = "Give one of {.val {modes}}, the name of one of the {.arg tools} ({.val {names}}), or a list in provider A's {.field tool_choice} format, e.g. {.code list(type = \"function\", `function` = list(name = \"{names[1]}\"))}.")
  if (is.null(tool_choice)) {
    tool_choice <- "auto"
  } else if (is.character(tool_choice)) {
    if (length(tool_choice) != 1 || is.na(tool_choice)) {
      abort_arg(c("{.arg tool_choice} must be a single string, not {.obj_type_friendly {tool_choice}}.", fix),
        class = "tabscreen_error_tool_choice", arg = "tool_choice", call = call)
    }
    if (!tool_choice %in% modes) {
      check_tool_choice_names(tool_choice, names, modes, call)
      tool_choice <- list(type = "function", `function` = list(name = tool_choice))
    }
  } else if (is.list(tool_choice)) {
    chosen <- tool_choice_functions_a(tool_choice)
    if (is.null(chosen)) {
      abort_arg(c("{.arg tool_choice} is a list that is not of provider A's {.field tool_choice} format.", fix),
        class = "tabscreen_error_tool_choice", arg = "tool_choice", call = call)
    }
    check_tool_choice_names(chosen, names, modes, call)
  } else {
    abort_arg(c("{.arg tool_choice} must be {.code NULL}, a string or a list, not {.obj_type_friendly {tool_choice}}.", fix),
      class = "tabscreen_error_tool_choice", arg = "tool_choice", call = call)
  }
  list(tools = parsed$value, tool_choice = tool_choice)
}

# The function names a list tool_choice of provider A names (type "function", or "allowed_tools"
# with function entries), or NULL when it is not of either shape.
tool_choice_functions_a <- function(tool_choice) {
  function_name <- function(x) {
    fun <- if (is.list(x) && identical(x$type, "function")) x[["function"]] else NULL
    if (is.list(fun) && rlang::is_string(fun$name)) fun$name else NA_character_
  }
  type <- tool_choice$type
  if (identical(type, "function")) {
    chosen <- function_name(tool_choice)
  } else if (identical(type, "allowed_tools") && is.list(tool_choice$allowed_tools) &&
    is.list(tool_choice$allowed_tools$tools) && length(tool_choice$allowed_tools$tools) > 0) {
    chosen <- vapply(tool_choice$allowed_tools$tools, function_name, character(1))
  } else {
    return(NULL)
  }
  if (anyNA(chosen)) NULL else chosen
}
