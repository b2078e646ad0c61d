# Helpers for the tests of the screening functions (tabscreen_a.tools(), tabscreen_b(), tabscreen_c()),
# screen_errors() and the result object.

# Eight real records: four excluded and four included by the review's screeners.
test_records <- function() {
  filges2015_dat[c(1, 2, 4, 5, 181, 182, 183, 184), ]
}

# The columns of the test records that the screening keeps in answer_data, after its own.
user_cols <- c("author", "eppi_id", "human_code")

test_prompt <- "Is this study about Functional Family Therapy for young people who use drugs?"

# tabscreen_a.tools() on the test records against a fake provider, quiet; `...` replaces or adds
# arguments (NULL values are kept, so tools = NULL can be passed; unnamed ones are appended).
screen_a <- function(fake, ...) {
  args <- list(
    data = test_records(), prompt = test_prompt, studyid = "studyid", title = "title",
    abstract = "abstract", api_url = fake$url, progress = FALSE, messages = FALSE
  )
  extra <- list(...)
  if (length(extra) > 0) {
    named <- names(extra) %||% rep("", length(extra))
    args[named[named != ""]] <- extra[named != ""]
    args <- c(args, unname(extra[named == ""]))
  }
  do.call("tabscreen_a.tools", args)
}

# The request bodies the fake received, oldest first.
request_bodies <- function(fake) {
  lapply(fake$requests(), function(r) r$body)
}

# An error of `class` (and of class tabscreen_error_arg unless `arg = FALSE`), raised at the
# call of the screening function.
expect_arg_error <- function(object, class, arg = TRUE, fun = "tabscreen_a.tools") {
  cnd <- expect_error(object, class = class)
  expect_s3_class(cnd, "tabscreen_error")
  if (arg) expect_s3_class(cnd, "tabscreen_error_arg")
  expect_equal(rlang::call_name(cnd$call), fun)
  invisible(cnd)
}

# A screening function (by name) on the test records against the fake provider at `url`, quiet;
# `...` as for screen_a().
screen_with <- function(fun, url, ...) {
  args <- list(
    data = test_records(), prompt = test_prompt, studyid = "studyid", title = "title",
    abstract = "abstract", api_url = url, progress = FALSE, messages = FALSE
  )
  extra <- list(...)
  if (length(extra) > 0) {
    named <- names(extra) %||% rep("", length(extra))
    args[named[named != ""]] <- extra[named != ""]
    args <- c(args, unname(extra[named == ""]))
  }
  do.call(fun, args)
}

# tabscreen_b() at the fake's provider B base URL, tabscreen_c() at its provider C URL.
screen_b <- function(fake, ...) screen_with("tabscreen_b", fake$url_b, ...)
screen_c <- function(fake, ...) screen_with("tabscreen_c", fake$url_c, ...)

# The messages a call shows, and its value.
collect_messages <- function(expr) {
  msgs <- character()
  value <- withCallingHandlers(expr, message = function(m) {
    msgs <<- c(msgs, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  list(value = value, messages = msgs)
}

# The properties of the first tool's schema, in order, in a request body of provider B or C.
tool_properties <- function(body) {
  tool <- body$tools[[1]]
  schema <- tool$input_schema %||% tool[["function"]]$parameters
  names(schema$properties)
}

# The key appears nowhere: not in the serialized result, not in anything printing the result or
# its parts shows, not in what screen_errors() makes of it.
expect_key_nowhere <- function(res, key) {
  expect_false(length(grepRaw(key, serialize(res, NULL), fixed = TRUE)) > 0)
  capture_all <- function(expr) {
    out <- NULL
    msg <- capture.output(out <- capture.output(expr), type = "message")
    c(msg, out)
  }
  printed <- c(capture_all(print(res)), capture_all(print(res$answer_data)),
    capture_all(print(res$answer_data_aggregated)), capture_all(print(res$error_data)),
    capture_all(str(unclass(res))), capture_all(print(attr(res, "arg_list"))))
  expect_false(any(grepl(key, printed, fixed = TRUE)))
  res2 <- screen_errors(res, max_tries = 1, messages = FALSE)
  expect_false(length(grepRaw(key, serialize(res2, NULL), fixed = TRUE)) > 0)
}

# The type of each column the screening adds to answer_data, by the spec (for every provider).
answer_col_types <- c(studyid = "integer", title = "character", abstract = "character", promptid = "integer",
  prompt = "character", model = "character", iterations = "double", question = "character", top_p = "double",
  decision_llm = "character", decision_binary = "integer", prompt_tokens = "integer",
  completion_tokens = "integer", submodel = "character", run_time = "double", run_date = "character",
  n = "integer")

# A result of screening the test records, of the spec's shape: its components, and answer_data's
# class, columns (`answer_cols`, then the user's), their types (answer_col_types) and studyid.
# Returns answer_data.
expect_components <- function(res, user_cols, answer_cols) {
  expect_identical(class(res), c("llm", "list"))
  expect_named(res, c("answer_data", "price_dollar", "price_data", "run_date"))
  ad <- res$answer_data
  expect_identical(class(ad), c("llm_tbl", "tbl_df", "tbl", "data.frame"))
  expect_named(ad, c(answer_cols, user_cols))
  expect_equal(unname(vapply(ad[answer_cols], typeof, character(1))), unname(answer_col_types[answer_cols]))
  expect_equal(ad$studyid, test_records()$studyid)
  invisible(ad)
}

# The shapes the provider files (test-tabscreen_a/_b/_c.R) share. `screen` is screen_a, screen_b or
# screen_c; `fun` the name of the screening function it calls, for expect_arg_error().

# The fake provider of local_fake_provider(...) for the calling test, with the key `key` in the
# environment variable `key_var` (set first).
local_keyed_fake <- function(key_var, key, ..., .env = parent.frame()) {
  withr::local_envvar(stats::setNames(key, key_var), .local_envir = .env)
  local_fake_provider(..., .env = .env)
}

# A screening function (by name) with every argument at its default, on three records, at `url` of
# `fake`: a complete run, one request a record. Returns the result.
expect_default_run <- function(fake, fun, url) {
  recs <- filges2015_dat[c(1, 2, 181), ]
  res <- match.fun(fun)(recs, prompt = test_prompt, title = title, abstract = abstract, api_url = url)
  expect_s3_class(res, "llm")
  expect_equal(nrow(res$answer_data), 3)
  expect_null(res$error_data)
  expect_equal(fake$stats()$requests_total, 3)
  invisible(res)
}

# A custom tool in the function format of providers A and C: the decision, 1 or 0.
decision_tool <- function() {
  list(type = "function", `function` = list(
    name = "screening_decision", description = "Record the decision.",
    parameters = list(type = "object", properties = list(decision_llm = list(type = "string", enum = c("1", "0"))),
      required = "decision_llm", additionalProperties = FALSE)
  ))
}

# The fake fails every request for the test record `i` (by its title) with `kind`.
fail_record <- function(fake, i, kind = "500") {
  fake$configure(fail_matching = list(list(substring = test_records()$title[i], kind = kind)))
}

# decision_llm holds the codes of an overinclusive answer and decision_binary follows from it.
expect_decisions_coded <- function(ad) {
  expect_true(all(ad$decision_llm %in% c("1", "0", "1.1")))
  expect_equal(ad$decision_binary, as.integer(ad$decision_llm %in% c("1", "1.1")))
}

# price_data adds up, and the output is priced at `out_per_million` dollars per million tokens.
expect_price_adds_up <- function(pd, ad, out_per_million) {
  expect_equal(pd$total_price_dollar, pd$input_price_dollar + pd$output_price_dollar)
  expect_equal(pd$output_price_dollar, sum(ad$completion_tokens) * out_per_million / 1e6)
}

# time_info = FALSE and token_info = FALSE (with the key `key` in `key_var`): no price and none of
# their columns.
expect_time_token_dropped <- function(screen, key_var, key, user_cols, answer_cols) {
  withr::local_envvar(stats::setNames(key, key_var))
  fake <- local_fake_provider()
  res <- screen(fake, time_info = FALSE, token_info = FALSE)
  expect_named(res, c("answer_data", "run_date"))
  expect_named(res$answer_data, c(setdiff(answer_cols, c("run_time", "prompt_tokens", "completion_tokens")), user_cols))
}

# A run after the fake's first `n` responses fail with `kind`: every fault is retried, so nothing
# lands in error_data. Returns the result.
screen_through_faults <- function(fake, screen, kind, n, ...) {
  fake$configure(fail_first_n = list(kind = kind, n = n))
  # The same call under each fault: it screens anew instead of returning the completed run.
  withr::local_options(tabscreen.store_reuse = FALSE)
  res <- screen(fake, ...)
  expect_null(res$error_data)
  invisible(res)
}

# A run stopped by an exhausted quota (on the third record): the condition carries the partial
# result. Returns the condition.
expect_quota_stop <- function(fake, screen) {
  fail_record(fake, 3, "quota")
  cnd <- expect_error(screen(fake), class = "tabscreen_error_quota")
  expect_s3_class(cnd$result, "llm")
  invisible(cnd)
}

# The stopped run resumed by the same call after the fake came to refuse the key `revoked` (`...`
# goes to the screening: api_key = revoked, or nothing where the variable holds it): it stops on the
# key, keeping the `kept` answers already stored and failing the rest. Returns the condition.
expect_resume_refused <- function(fake, screen, revoked, kept, ...) {
  fake$configure(fail_matching = list(), invalid_keys = revoked)
  cnd <- expect_error(screen(fake, ...), class = "tabscreen_error_auth")
  expect_equal(nrow(cnd$result$answer_data), kept)
  expect_equal(nrow(cnd$result$error_data), nrow(test_records()) - kept)
  invisible(cnd)
}

# screen_errors() with a good key finishes the stopped run (condition `cnd`). Returns the result.
finish_with_key <- function(cnd, key) {
  done <- screen_errors(cnd$result, api_key = key, messages = FALSE)
  expect_null(done$error_data)
  invisible(done)
}

# answer_data runs over the jobs in order: prompt, model (in the order `models`), top_p (1, then 0.5),
# record, repetition.
expect_job_order <- function(ad, models) {
  expected_order <- order(ad$promptid, match(ad$model, models),
    match(ad$top_p, c(1, 0.5)), match(ad$studyid, test_records()$studyid), ad$n)
  expect_equal(expected_order, seq_len(nrow(ad)))
}

# In the aggregate `agg`, the column `agg_col` is the mean of answer_data's (`ad`) column `col` over
# the answers of each group (the columns `by`).
expect_group_means <- function(ad, agg, col, agg_col, by = c("studyid", "promptid", "model", "top_p")) {
  key <- function(d) do.call(paste, unname(as.list(d[by])))
  means <- tapply(ad[[col]], key(ad), mean)
  expect_equal(as.vector(means[key(agg)]), agg[[agg_col]])
}

# The distinct numeric values of the field `field` in the request bodies.
sent_values <- function(bodies, field) {
  unique(vapply(bodies, function(b) b[[field]], numeric(1)))
}

# The fake answers again; screen_errors(res, ...) re-sends the failed requests and none fails.
# Returns the fixed result; fake$requests() holds only the re-sent requests.
resend_failed <- function(fake, res, ...) {
  fake$configure(fail_matching = list())
  fake$reset()
  fixed <- screen_errors(res, messages = FALSE, ...)
  expect_null(fixed$error_data)
  invisible(fixed)
}

# The key in `key_var` (and an explicit `api_key`, unless NULL) appears nowhere in a result with
# failed requests; `...` goes to the screening.
expect_key_never_shown <- function(screen, key_var, key, explicit_key = NULL, ...) {
  withr::local_envvar(stats::setNames(key, key_var))
  fake <- local_fake_provider()
  fail_record(fake, 1)
  res <- screen(fake, reps = 2, max_tries = 1, ...)
  expect_false(is.null(res$error_data))
  expect_key_nowhere(res, key)
  if (!is.null(explicit_key)) {
    res3 <- screen(fake, api_key = explicit_key, max_tries = 1)
    expect_false(length(grepRaw(explicit_key, serialize(res3, NULL), fixed = TRUE)) > 0)
  }
}

# Every logical flag refuses the value `bad`.
expect_flags_checked <- function(fake, screen, fun, bad) {
  for (flag in c("time_info", "token_info", "progress", "decision_description", "messages", "force",
    "custom_model", "overinclusive", "confidence")) {
    expect_arg_error(do.call(screen, c(list(fake), stats::setNames(list(bad), flag))), "tabscreen_error_arg_flag",
      fun = fun)
  }
}

# With `key_var` unset, a call that is otherwise right fails on the missing key (named in the
# message), while a call with the bad arguments `bad_args` still fails on them (`class`): the key is
# checked after every other argument. No request reaches the fake.
expect_key_checked_last <- function(fake, screen, fun, key_var, bad_args, class) {
  withr::local_envvar(stats::setNames(NA, key_var))
  cnd <- expect_arg_error(screen(fake), "tabscreen_error_api_key", arg = FALSE, fun = fun)
  expect_match(conditionMessage(cnd), key_var, fixed = TRUE)
  expect_arg_error(do.call(screen, c(list(fake), bad_args)), class, fun = fun)
  expect_equal(fake$stats()$requests_total, 0)
}

# rate_limits_per_minute()'s columns, with the limits the fake was started with (rpm = 600,
# tpm = 200000) for two models.
expect_rate_limits_read <- function(lim) {
  expect_named(lim, c("model", "requests_per_minute", "tokens_per_minute", "remaining_requests",
    "remaining_tokens", "reset_requests", "reset_tokens"))
  expect_equal(lim$requests_per_minute, c(600, 600))
  expect_equal(lim$tokens_per_minute, c(200000, 200000))
}

# rate_limits_per_minute() with `key_var` unset asks for the key.
expect_rate_limits_need_key <- function(key_var, ...) {
  withr::local_envvar(stats::setNames(NA, key_var))
  expect_error(rate_limits_per_minute(...), class = "tabscreen_error_api_key")
}

# An httr2 response with a JSON body (a string).
json_response <- function(status, body, headers = list()) {
  httr2::response(
    status_code = status,
    headers = c(list("content-type" = "application/json"), headers),
    body = charToRaw(body)
  )
}

# llm_is_transient() (and, with `engine = TRUE`, the Go engine's rule) calls `resp` transient or not.
expect_transient <- function(resp, transient, engine = FALSE) {
  info <- paste(resp$status_code, rawToChar(resp$body))
  expect_identical(llm_is_transient(resp), transient, info = info)
  if (engine) expect_identical(tabscreen:::go_is_transient(resp), transient, info = info)
}

# The condition `cnd` of an answer with HTTP status `status`: its classes and field.
expect_http_status <- function(cnd, status) {
  expect_s3_class(cnd, paste0("tabscreen_error_http_", status))
  expect_s3_class(cnd, "tabscreen_error_http")
  expect_s3_class(cnd, "tabscreen_error")
  expect_identical(cnd$status, as.integer(status))
  # the status class before its parent, as httr2 orders httr2_http_429 and httr2_http
  expect_lt(match(paste0("tabscreen_error_http_", status), class(cnd)), match("tabscreen_error_http", class(cnd)))
}

# What varies between runs in a message, for expect_snapshot(transform =): the temporary
# directory, local ports, run ids (the time they were made, then random hex), dates and durations.
scrub_snapshot <- function(lines) {
  for (dir in unique(c(normalizePath(tempdir(), winslash = "/"), tempdir()))) {
    lines <- gsub(dir, "<tempdir>", lines, fixed = TRUE)
  }
  lines <- gsub("<tempdir>/[^ '\"`]*", "<tempdir>/<file>", lines)
  lines <- gsub("127\\.0\\.0\\.1:[0-9]+", "127.0.0.1:<port>", lines)
  lines <- gsub("\\b[0-9]{8}-[0-9]{6}-[0-9a-f]+\\b", "<run_id>", lines)
  lines <- gsub("\\b[0-9a-f]{8,}\\b", "<id>", lines)
  lines <- gsub("[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9:.]+", "<time>", lines)
  gsub("[0-9]+(\\.[0-9]+)? ?(ms|s|sec|seconds?|min|minutes?)\\b", "<duration>", lines)
}

# The screening functions of the tests of screen_adaptive(): the function's name, the fake's URL
# field for it and the key's environment variable.
adaptive_providers <- list(
  a = list(fun = "tabscreen_a.tools", url = "url", key = "PROVIDER_A_API_KEY"),
  b = list(fun = "tabscreen_b", url = "url_b", key = "PROVIDER_B_API_KEY"),
  c = list(fun = "tabscreen_c", url = "url_c", key = "PROVIDER_C_API_KEY")
)

# What print() says (cli writes to the message stream).
printed_message <- function(x) paste(utils::capture.output(print(x), type = "message"), collapse = "\n")

# final_decision_llm of a result, named by study id.
final_by_record <- function(res) {
  agg <- res$answer_data_aggregated
  stats::setNames(agg$final_decision_llm, agg$studyid)
}
