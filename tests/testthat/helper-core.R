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

# Pre-run price estimate of a records table (screen.Estimate in the Go core), from the lengths of
# its titles and abstracts as the core counts them.
estimate_price <- function(records, prompts, models, settings, reps, n_top_p, decision_description) {
  fields <- tabscreen:::field_table(list(title = records$title, abstract = records$abstract))
  tabscreen:::estimate_from_chars(sum(fields$title_chars, fields$abstract_chars), nrow(records), prompts, models,
    settings, reps, n_top_p, decision_description)
}

# Rough completion tokens per answer, as the estimate counts them: those of one request.
completion_allowance <- function(effort, decision_description) {
  one <- data.frame(model = "m", price_in = NA_real_, price_out = NA_real_)
  tabscreen:::estimate_from_chars(0, 1, "", one, list(list(reasoning_effort = effort)), 1, 1,
    decision_description)$output_tokens
}

# Whether each text is blank as the core decides when it builds the questions, and its length as
# the estimate counts it.
is_blank_field <- function(x) tabscreen:::field_table(list(text = as.character(x)))$text_blank

field_chars <- function(x) as.numeric(tabscreen:::field_table(list(text = as.character(x)))$text_chars)
