# The test-only parts of the Go core, and wrappers of the package's internals that only the tests
# call. The core's test-only entry points (TsRoundTrip, TsAggregate) and its panicking test provider
# answer only while TABSCREEN_TESTING=1 (golib/cabi/testonly.go says why each exists).

# Switches the core's test-only parts on until the calling frame ends.
local_test_only <- function(.env = parent.frame()) {
  withr::local_envvar(TABSCREEN_TESTING = "1", .local_envir = .env)
}

# Sends df_to_ipc(df) through Go (arrowio decode + encode) and reads the result back: a round trip
# through both codecs.
ipc_roundtrip_go <- function(df, call = rlang::caller_env()) {
  local_test_only()
  tabscreen:::go_call(tabscreen:::C_ipc_roundtrip_go, tabscreen:::df_to_ipc(df, call = call), call = call)$table
}

# Spec section 3 aggregation, computed by Go on an answers table (a screening aggregates its own
# rows in Go; this is the rule applied to a hand-made table).
aggregate_engine <- function(answers, incl_cutoff_upper = NULL, incl_cutoff_lower = NULL) {
  local_test_only()
  cols <- c("record", "promptid", "model", "top_p", "n", "decision_binary",
            "detailed_description", "confidence", "submodel")
  answers <- as.data.frame(answers)[intersect(cols, names(answers))]
  template <- list(record = integer(), promptid = integer(), model = character(), top_p = double(),
                   n = integer(), decision_binary = integer(), detailed_description = character(),
                   confidence = double(), submodel = character())
  for (col in setdiff(cols, names(answers))) {
    answers[[col]] <- rep(template[[col]][NA_integer_], nrow(answers))
  }
  for (col in cols) storage.mode(answers[[col]]) <- storage.mode(template[[col]])
  opts <- tabscreen:::to_json(list(incl_cutoff_upper = incl_cutoff_upper, incl_cutoff_lower = incl_cutoff_lower))
  out <- tabscreen:::go_call(tabscreen:::C_aggregate, tabscreen:::df_to_ipc(answers[cols]), as.character(opts))
  agg <- out$table
  attr(agg, "incl_cutoff_upper") <- out$meta$incl_cutoff_upper
  attr(agg, "incl_cutoff_lower") <- out$meta$incl_cutoff_lower
  agg
}

# Each model's request settings (one list per model) as the provider's policy in the Go core
# decides them before a screening (TsPlan), or the argument error of a model.
model_settings <- function(models, provider, reasoning_effort, verbosity = NULL, top_p = numeric(), given = list(),
                           builtin = TRUE, reps = rep(1L, nrow(models)), force = FALSE,
                           call = rlang::caller_env()) {
  request <- list(settings = list(provider = provider, models = tabscreen:::policy_models(models, reps),
    args = tabscreen:::policy_args(reasoning_effort, verbosity, top_p, given, builtin, force)))
  out <- tabscreen:::plan_core(request, call = call)
  if (!is.null(out$settings_error)) tabscreen:::abort_go_error(out$settings_error, call)
  out$settings
}

# Pre-run price estimate of a records table (screen.Estimate in the Go core), from the lengths of
# its titles and abstracts as the core counts them.
estimate_price <- function(records, prompts, models, settings, reps, n_top_p, decision_description) {
  ipc <- plan_records(records$title, records$abstract)
  request <- list(estimate = tabscreen:::estimate_request(prompts, models, reps, n_top_p, decision_description, settings))
  tabscreen:::estimate_rows(tabscreen:::plan_core(request, ipc)$estimate$sync, models)
}

# Rough completion tokens per answer, as the estimate counts them: those of one request.
completion_allowance <- function(effort, decision_description) {
  one <- data.frame(model = "m", price_in = NA_real_, price_out = NA_real_)
  request <- tabscreen:::estimate_request("", one, 1, 1, decision_description, list(list(reasoning_effort = effort)))
  request$records <- 1
  request$record_chars <- 0
  tabscreen:::estimate_rows(tabscreen:::plan_core(list(estimate = request))$estimate$sync, one)$output_tokens
}

# A records table of the engine with these titles and abstracts.
plan_records <- function(title, abstract) {
  tabscreen:::df_to_ipc(data.frame(title = as.character(title), abstract = as.character(abstract), stringsAsFactors = FALSE))
}

# Whether each text is blank as the core decides when it builds the questions, and its length as
# the estimate counts it: each as the title of a record of its own, with a one-character abstract.
plan_fields <- function(x) lapply(as.character(x), function(v) tabscreen:::plan_core(setNames(list(), character()), plan_records(v, "x"))$fields)

is_blank_field <- function(x) vapply(plan_fields(x), function(f) f$title_blank == 1, logical(1))

field_chars <- function(x) vapply(plan_fields(x), function(f) f$chars - 1, numeric(1))
