# The steps every screening function shares. tabscreen_a.tools(), tabscreen_b() and tabscreen_c()
# are sequences of these steps with their provider's checks in between:
#
#   check_flags()            the TRUE/FALSE arguments
#   screening_records()      data and its columns: ids, titles, abstracts
#   check_grid()             prompts, models, reps and rpm
#   (provider)               top_p, role, api_url, tools, reasoning, ...
#   check_run_args()         retries, seed, callbacks, cut-offs
#   check_dots()             `...`
#   (provider)               models (names, prices, rules)
#   screening_preflight()    the one call into Go before a run: blank records, the models'
#                            settings, the estimate, the store's holding; the run options
#   (provider)               the safety limits (force)
#   check_api_key()          the key, after every other argument
#   (provider)               the provider's own messages
#   screening_arg_list()     the arguments kept in the result, for screen_errors()
#   launch_screening()       the shared messages, the run and the llm object

# The records of a screening. `studyid`, `title` and `abstract` are the quosures of the user's
# arguments (rlang::enquo() in the screening function), so that bare names and strings both work.
screening_records <- function(data, studyid, title, abstract, call) {
  check_data(data, call = call)
  if (rlang::quo_is_missing(title)) abort_missing_column_arg("title", data, call = call)
  if (rlang::quo_is_missing(abstract)) abort_missing_column_arg("abstract", data, call = call)
  title_col <- resolve_column(title, data, "title", call = call)
  abstract_col <- resolve_column(abstract, data, "abstract", call = call)
  studyid_col <- if (rlang::quo_is_missing(studyid)) NULL else resolve_column(studyid, data, "studyid", call = call)
  ids <- if (is.null(studyid_col)) seq_len(nrow(data)) else data[[studyid_col]]
  if (is.character(ids)) ids <- utf8_column(ids, studyid_col, "studyid", NULL, call = call)
  check_studyid(ids, studyid_col %||% "studyid", call = call)
  titles <- text_column(data[[title_col]], title_col, "title", ids, call = call)
  abstracts <- text_column(data[[abstract_col]], abstract_col, "abstract", ids, call = call)
  # The records as the engine reads them, encoded once: for the plan (screening_preflight()) and
  # for the run.
  ipc <- engine_records_ipc(ids, titles, abstracts, call = call)
  list(
    data = data,
    studyid_col = studyid_col,
    title_col = title_col,
    abstract_col = abstract_col,
    ids = ids,
    titles = titles,
    abstracts = abstracts,
    ipc = ipc
  )
}

# The one call into the Go core before a run (TsPlan, plan_core()): the records table, sent once,
# with the call's models and run options. It refuses records that are all blank, decides each
# model's request settings from the provider's policy (or raises the argument error of a model),
# estimates the price (as the run goes, without the prompt caches, at batch prices) and reads what
# the answer store holds of the call. `run_options(settings)` makes the run options (models without
# settings for NULL: the core fills them in to find the call's run in the store). Returns
# list(settings, options, fields, estimate (sync, no_cache, batch), run_estimate (the one the run
# goes by), holding).
screening_preflight <- function(rec, provider, models, policy, run_options, reps, n_top_p, decision_description,
                                body = NULL, call) {
  store <- store_settings(call)
  unsettled <- run_options(NULL)
  holding <- NULL
  if (!isTRUE(store$temporary) && file.exists(store$path)) {
    options <- unsettled
    options$batch <- batch_request()
    holding <- list(store = store$path, options = options)
  }
  models_for_policy <- policy_models(models, reps)
  request <- list(
    settings = list(provider = provider, models = models_for_policy, args = policy),
    estimate = estimate_request(unsettled$prompts, models, reps, n_top_p, decision_description),
    holding = holding,
    body = if (length(body) > 0) body_request(provider, models_for_policy, body)
  )
  out <- plan_core(request, rec$ipc$raw, call = call)
  fields <- out$fields
  if (fields$both_blank == fields$records) abort_blank_records(rec, call)
  if (!is.null(out$settings_error)) abort_go_error(out$settings_error, call)
  estimate <- lapply(out$estimate, estimate_rows, models = models)
  h <- out$holding
  if (!nzchar(h$run_id %||% "") || (identical(h$status, "completed") && !isTRUE(store$reuse))) h <- NULL
  list(
    settings = out$settings, options = run_options(out$settings), fields = fields, estimate = estimate,
    run_estimate = estimate[[if (is.null(batch_request())) "sync" else "batch"]],
    holding = if (!is.null(h)) list(run_id = h$run_id, answered = h$answered %||% list())
  )
}

abort_blank_records <- function(rec, call) {
  data <- rec$data
  title_col <- rec$title_col
  abstract_col <- rec$abstract_col
  abort_arg(
    c("Every record of {.arg data} has a blank title and a blank abstract: there is nothing to screen.",
      "i" = "Columns {.field {title_col}} ({.arg title}) and {.field {abstract_col}} ({.arg abstract}) are missing, empty or {.val NA} in all {nrow(data)} record{?s}.",
      "i" = "Check that {.arg title} and {.arg abstract} name the columns with the text; the columns are {.val {names(data)}}."),
    class = c("tabscreen_error_data_blank", "tabscreen_error_data"), arg = "data", call = call
  )
}

# The records table of the engine (ARCHITECTURE.md, "Tables and run options") as an Arrow IPC
# stream, in an environment (`raw`): run_engine() removes it once Go has its copy, which frees it
# for every frame that holds the environment (a large screening's text would otherwise stay in R
# twice).
engine_records_ipc <- function(studyid, title, abstract, call = rlang::caller_env()) {
  holder <- new.env(parent = emptyenv())
  # The three columns as a data frame made directly: data.frame() deparsed a large character
  # column (as.data.frame.character), a sizeable part of a screening's R time. df_to_ipc() reads
  # only the columns, their names and the row count.
  studyid <- as.character(studyid)
  stopifnot(length(title) == length(abstract), length(studyid) == length(title))
  records <- structure(list(title = title, abstract = abstract, studyid = studyid),
    class = "data.frame", row.names = .set_row_names(length(title)))
  holder$raw <- df_to_ipc(records, call = call)
  holder
}

# The logical flags every operation checks first.
common_flags <- c("time_info", "token_info", "progress", "decision_description", "messages", "force",
  "custom_model", "overinclusive")

# The records, then the prompts x models grid: the inputs every operation checks, in that order.
# `call` is the screening function's frame: its `data`, `prompt`, `model`, `reps` and `rpm` are
# read there, and the checked `prompt` (UTF-8), `reps` and `rpm` (one value per model) written
# back, as the arguments kept in the result hold them.
screening_inputs <- function(call, studyid, title, abstract) {
  rec <- screening_records(call$data, studyid, title, abstract, call = call)
  grid <- check_grid(call$prompt, call$model, call$reps, call$rpm, call = call)
  call$prompt <- grid$prompt
  call$reps <- grid$reps
  call$rpm <- grid$rpm
  list(rec = rec, grid = grid)
}

# Prompts, models, reps and rpm. Returns the prompts as UTF-8, reps and rpm with one value per
# model, and whether one rpm limiter serves every model (one value given: the provider counts per
# key).
check_grid <- function(prompt, model, reps, rpm, call) {
  prompt <- check_prompt(prompt, call = call)
  check_model_names(model, call = call)
  reps <- check_per_model(reps, "reps", model, whole = TRUE, call = call)
  rpm_shared <- length(rpm) == 1
  rpm <- check_per_model(rpm, "rpm", model, whole = FALSE, call = call)
  list(prompt = prompt, reps = reps, rpm = rpm, rpm_shared = rpm_shared)
}

# Retries, seed, the user's callbacks and the cut-offs.
check_run_args <- function(max_tries, max_seconds, seed_par, is_transient, backoff, after,
                           incl_cutoff_upper, incl_cutoff_lower, call) {
  check_positive_or_null(max_tries, "max_tries", whole = TRUE, call = call)
  check_positive_or_null(max_seconds, "max_seconds", whole = FALSE, call = call)
  check_seed(seed_par, call = call)
  check_callback(is_transient, "is_transient", call = call)
  check_callback(backoff, "backoff", call = call)
  check_callback(after, "after", call = call)
  check_cutoffs(incl_cutoff_upper, incl_cutoff_lower, call = call)
  invisible()
}

# A key given in `api_key` that cannot be one is a bad argument; the message never shows the value.
# `api_key` is forced here: with `messages = FALSE` the getter's note of the variable it read the
# key from is not shown.
check_api_key <- function(api_key, env_var, messages = TRUE, call = rlang::caller_env()) {
  withCallingHandlers(force(api_key), tabscreen_message_api_key = function(m) {
    if (!isTRUE(messages)) invokeRestart("muffleMessage")
  })
  if (!is_api_key(api_key)) {
    abort_arg(
      c(if (rlang::is_string(api_key)) "{.arg api_key} is empty." else "{.arg api_key} must be a single non-empty string, not {.obj_type_friendly {api_key}}.",
        "i" = "Leave it out to read the key from {.envvar {env_var}}."),
      class = "tabscreen_error_api_key", arg = "api_key", call = call
    )
  }
  api_key
}

# The fields of `...` checked against the models' rules by the provider's policy in the Go core
# (provider B: the sampling parameters its models take); a provider without such a check takes
# any field its request schema allows. body_request() is the part of a plan request that asks it.
body_request <- function(provider, policy_models, fields) {
  list(provider = provider, models = policy_models, fields = I(fields))
}

check_body_fields <- function(provider, model, rules, dots, call = rlang::caller_env()) {
  if (length(dots) == 0) {
    return(invisible())
  }
  models <- policy_models(list(model = model, rules = rules))
  out <- plan_core(list(body = body_request(provider, models, names(dots))), call = call)
  if (!is.null(out$settings_error)) abort_go_error(out$settings_error, call)
  invisible()
}

# The "models" entries of the run options: name, reps and rpm, then the fields the registry names
# for the provider (model_fields): the request settings its policy decided (screening_preflight()) and
# the prices (without settings for `settings` NULL). Each model's minimum cacheable prefix (rules column min_cache_tokens) rides along as
# the attribute "cache_min_tokens", which screening_options() sends as the run option of that name.
model_options <- function(provider, models, settings, reps, rpm) {
  fields <- unlist(provider_info(provider)$model_fields)
  out <- lapply(seq_len(nrow(models)), function(i) {
    prices <- list(price_in = models$price_in[i], price_cached_in = models$price_cached_in[i],
      price_cache_write = models$price_cache_write[i], price_out = models$price_out[i])
    values <- c(if (!is.null(settings)) settings[[i]], prices)
    batch <- if (!is.null(batch_request())) {
      # A batch screening's lines have prices of their own (model_prizes' batch columns).
      list(price_batch_in = models$price_batch_in[i], price_batch_cached_in = models$price_batch_cached_in[i],
        price_batch_out = models$price_batch_out[i])
    }
    c(list(name = models$model[i], reps = as.integer(reps[i]), rpm = rpm[i]), values[intersect(fields, names(values))], batch)
  })
  attr(out, "cache_min_tokens") <- models$min_cache_tokens %||% rep(NA_integer_, nrow(models))
  out
}

# The run options of ARCHITECTURE.md. `top_p` is numeric() for a provider without top_p (B);
# `extra` holds options of one provider (B: max_tokens).
screening_options <- function(provider, api_url, prompt, models, grid, top_p, role, tool_spec, builtin,
                              dots, seed_par, max_tries, max_seconds, extra = list()) {
  c(
    list(
      provider = provider,
      api_url = api_url,
      prompts = I(prompt),
      models = `attr<-`(models, "cache_min_tokens", NULL),
      rpm = if (grid$rpm_shared) grid$rpm[[1]] else NULL,
      tpm = engine_tpm(),
      top_p = I(top_p),
      role = role,
      tools = tool_spec$tools,
      tool_choice = tool_spec$tool_choice,
      builtin = builtin,
      extra_body = dots,
      seed = seed_par,
      max_tries = max_tries,
      max_seconds = max_seconds,
      max_active = engine_max_active(),
      timeout_seconds = engine_timeout(),
      cache = engine_cache(),
      cache_min_tokens = I(attr(models, "cache_min_tokens")),
      # screen_adaptive(): kept in arg_list$run_options, so screen_errors() keeps the rule.
      adaptive = adaptive_request(models)
    ),
    extra,
    list(jobs = NULL)
  )
}

# The arguments kept in the result's attribute arg_list (never the key): the provider, the
# function, the column names, then the variables `names` of the screening function's frame `env`
# (with the values the checks normalised), and the run options.
# Every argument of the operation is kept (its values after the checks), except the data, which the
# result holds, and the key, which is never kept; `...` is kept as `dots`.
screening_arg_list <- function(provider, function_name, rec, env, run_options) {
  fn <- get(function_name, envir = asNamespace("tabscreen"), mode = "function")
  names <- c(setdiff(names(formals(fn)), c("data", "studyid", "title", "abstract", "api_key", "fine_tuned", "...")),
    "dots")
  c(
    list(provider = provider, function_name = function_name,
      studyid = rec$studyid_col, title = rec$title_col, abstract = rec$abstract_col),
    mget(names, envir = env, inherits = FALSE),
    list(run_options = run_options),
    if (!is.null(cascade_stage())) list(cascade_stage = cascade_stage())
  )
}

# The messages every provider shows (the user's columns, blank fields, ignored cut-offs, the price
# estimate), then the run. `pre` is screening_preflight()'s.
launch_screening <- function(rec, options, arg_list, api_key, pre, call) {
  messages <- arg_list$messages
  user <- user_columns(rec$data, c(rec$studyid_col, rec$title_col, rec$abstract_col),
    studyid_generated = is.null(rec$studyid_col), messages = messages)
  inform_blank_fields(pre$fields, messages)
  if (all(arg_list$reps == 1) && (!is.null(arg_list$incl_cutoff_upper) || !is.null(arg_list$incl_cutoff_lower))) {
    tabscreen_inform(c("i" = "The inclusion cut-offs apply only when {.arg reps} is above 1; they are ignored."), messages = messages)
  }
  # The plan of what remains to be sent (the store may hold answers of this call): what
  # screen_plan() returns, what the estimate says and what the spending cap is checked against.
  plan <- screening_plan(rec, options, arg_list, pre$estimate, pre$holding)
  if (plan_requested()) {
    return(plan)
  }
  inform_estimate(plan, messages)
  check_price_cap(plan, arg_list$force, call)
  run_screening(
    records = list(index = seq_len(nrow(rec$data)), studyid = rec$ids, title = rec$titles, abstract = rec$abstracts, user = user,
      ipc = rec$ipc),
    options = options, api_key = api_key, arg_list = arg_list, record_ids = rec$ids, call = call
  )
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

# `fields`: the counts of blank titles and abstracts (screening_preflight()).
inform_blank_fields <- function(fields, messages) {
  blank_title <- fields$title_blank
  blank_abstract <- fields$abstract_blank
  if (blank_title + blank_abstract == 0) {
    return(invisible())
  }
  records <- fields$either_blank
  tabscreen_inform(
    c("i" = "{records} record{?s} {?has/have} a missing or blank title or abstract ({blank_title} title{?s}, {blank_abstract} abstract{?s}); the model is told \"No information\" for {cli::qty(records)}{?it/them}.",
      " " = "Consider removing such records before screening, e.g. {.code data[!is.na(data$abstract), ]}."),
    messages = messages
  )
}

# Providers B and C: `confidence` shapes only the built-in tool.
inform_confidence_ignored <- function(confidence, tools, messages) {
  if (confidence && !is.null(tools)) {
    tabscreen_inform(
      c("i" = "{.code confidence = TRUE} applies only to the built-in tool; with custom {.arg tools} it is ignored."),
      messages = messages
    )
  }
  invisible()
}

# Runs the engine and turns its tables into an llm object; signals interrupts and stops with the
# partial object attached. Shared by the screening functions and screen_errors().
run_screening <- function(records, options, api_key, arg_list, record_ids, call, merge_into = NULL) {
  callbacks <- list(
    is_transient = if (identical(arg_list$is_transient, llm_is_transient)) NULL else arg_list$is_transient,
    backoff = arg_list$backoff,
    after = arg_list$after
  )
  ipc <- records$ipc %||% engine_records_ipc(records$studyid, records$title, records$abstract, call = call)
  options$store <- run_store(arg_list, records, merge_into, call)
  # screen_batch(): the same run through the provider's batch API (not for screen_errors()).
  if (is.null(merge_into)) options$batch <- batch_request()
  layout <- result_layout(arg_list)
  # What the engine builds of the result: the aggregation, and, for a call that repairs a result,
  # the whole merge (its prices, time and date here, its answered rows as a table).
  options$result <- list(aggregate = layout$aggregate, incl_cutoff_upper = arg_list$incl_cutoff_upper,
    incl_cutoff_lower = arg_list$incl_cutoff_lower,
    repairs = if (!is.null(merge_into)) list(price = merge_price_rows(merge_into$price),
      elapsed_seconds = merge_into$run_info$elapsed_seconds %||% 0, run_date = merge_into$run_date %||% "",
      saved_requests = merge_into$run_info$saved_requests %||% 0L))
  merge <- if (!is.null(merge_into) && nrow(merge_into$rows) > 0) df_to_ipc(engine_answers(merge_into$rows))
  res <- run_engine(ipc, options, api_key,
    callbacks = callbacks, progress = arg_list$progress, messages = arg_list$messages, call = call, merge = merge)
  meta <- res$meta
  if (!is.null(meta$batch) && (meta$batch$pending %||% 0) > 0) {
    return(batch_pending(meta, options, arg_list$messages, call))
  }
  rows <- result_rows(res$answers, run_questions(records, meta$question, res$reworded), records, layout, merge_into$rows)
  price <- price_data_rows(meta$price_data)
  spent <- price_data_rows(meta$price_data, spent = TRUE)
  # price_data is the whole run's; what this call sent and spent is said apart, as a resumed run's
  # price holds its earlier calls' spend.
  run_info <- list(
    state = meta$state, total = meta$total, elapsed_seconds = meta$elapsed_seconds,
    blank_fields = meta$blank_fields, run_date = meta$run_date,
    stored_answers = as.integer(meta$store$stored %||% 0L),
    stop = meta$stop,
    call_price_dollar = if (isTRUE(arg_list$token_info)) sum(spent$total_price_dollar)
  )
  # Adaptive repetitions: the requests never sent, the repaired result's included.
  if (!is.null(meta$saved_requests)) run_info$saved_requests <- as.integer(meta$saved_requests)
  obj <- assemble_llm(rows, price, meta$run_date, layout, arg_list, run_info, record_ids, res$aggregated, meta$cutoffs)
  if (!is.null(meta$store)) attr(obj, "store") <- meta$store[c("path", "run_id", "fingerprint")]
  finish_run(obj, meta, call)
}

# The price_data of a result being repaired, as the engine adds to it (promptid for prompt).
merge_price_rows <- function(price) {
  if (is.null(price) || nrow(price) == 0) return(list())
  cache <- attr(price, "cache") %||% list()
  lapply(seq_len(nrow(price)), function(i) {
    list(promptid = as.integer(price$prompt[i]), model = price$model[i], iterations = as.integer(price$iterations[i]),
      input_price_dollar = price$input_price_dollar[i], output_price_dollar = price$output_price_dollar[i],
      cached_input_tokens = cache$cached_input_tokens[i] %||% 0, cache_write_tokens = cache$cache_write_tokens[i] %||% 0,
      cache_saving_dollar = cache$cache_saving_dollar[i] %||% 0)
  })
}

# The store settings of a run: a new call's, or, for screen_errors(), the run of the result it
# repairs (its records are a subset, so the fingerprint is carried over and the record positions
# are mapped back).
run_store <- function(arg_list, records, merge_into, call) {
  settings <- store_settings(call)
  if (is.null(merge_into)) return(settings)
  previous <- merge_into$store
  if (!is.null(previous$run_id)) {
    settings$path <- previous$path
    settings$run_id <- previous$run_id
    settings$fingerprint <- previous$fingerprint
    settings$temporary <- FALSE
  }
  settings$record_index <- I(as.integer(records$index))
  settings
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
    status_class <- http_status_class(meta$stop$status)
    kept <- meta$store$kept %||% 0
    journal <- paste0(meta$store$path %||% "", ".journal")
    hint <- meta$stop$hint %||% ""
    then <- if (identical(stop_class, "tabscreen_error_endpoint")) {
      # The result's arguments hold the URL that failed: screen_errors() would send there again.
      "Then run the screening call again, with the corrected {.arg api_url} if it was wrong: nothing was paid for."
    } else {
      "Fix the cause, then finish the run with {.code screen_errors(rlang::last_error()$result)}."
    }
    tabscreen_abort(
      c("The screening stopped: {meta$stop$message %||% 'the provider refused the requests'}",
        if (nzchar(hint)) c("i" = "{hint}"),
        "i" = "The partial result holds {answered} answer{?s}; {failed} request{?s} failed or {?was/were} not sent.",
        if (kept > 0) kept_answers_hint(meta$store) else c("i" = then)),
      class = c(stop_class, status_class), result = obj,
      status = if (length(status_class) > 0) as.integer(meta$stop$status), call = call
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

# What a stop message says of the answers the answer store could not take (`kept`, in `journal` or
# in this session's memory), and how to bring them in: templates for cli, in the caller's environment.
kept_answers_hint <- function(store) {
  c("!" = if (identical(store$kept_in, "journal")) {
      "{kept} answer{?s} received could not be written to the answer store; {?it is/they are} kept in {.file {journal}}."
    } else {
      "{kept} answer{?s} received could not be written to the answer store, nor to a journal beside it; {?it is/they are} kept in this R session only: keep R open until {?it is/they are} stored."
    },
    "i" = paste("Free space on the store's disk, then call {.code screen_errors(rlang::last_error()$result)} (or the same call",
      "again): {cli::qty(kept)}{?it is/they are} written into the store first and not sent again."))
}
