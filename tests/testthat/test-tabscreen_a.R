# End-to-end runs of tabscreen_a.tools() against the fake provider.

answer_cols <- c("studyid", "title", "abstract", "promptid", "prompt", "model", "iterations", "question",
  "top_p", "decision_llm", "decision_binary", "prompt_tokens", "completion_tokens", "submodel",
  "run_time", "run_date", "n")

test_that("a run with every argument at its default succeeds", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-defaults")
  out <- collect_messages(expect_default_run(fake, "tabscreen_a.tools", fake$url))
  res <- out$value
  # the default reasoning_effort is the model's own ("none"): nothing to say about it
  expect_false(any(grepl("reasoning_effort", out$messages)))
  expect_equal(res$answer_data$studyid, 1:3) # generated, although data has a column studyid
  expect_null(res$answer_data_aggregated)
  body <- request_bodies(fake)[[1]]
  expect_equal(body$model, "gpt-6-luna")
  expect_equal(body$reasoning_effort, "none")
  expect_equal(body$verbosity, "low")
  expect_equal(body$top_p, 1)
  expect_equal(body$messages[[1]]$role, "user")
})

test_that("the components have exactly the spec's columns and classes", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-columns")
  res <- screen_a(fake)
  ad <- expect_components(res, user_cols, answer_cols)
  expect_equal(ad$title, test_records()$title)
  expect_equal(ad$abstract, test_records()$abstract) # the user's text, NA included
  expect_equal(ad$human_code, test_records()$human_code)
  expect_decisions_coded(ad)
  expect_true(all(ad$n == 1L))
  expect_true(all(ad$iterations == 1))
  expect_true(all(ad$prompt == test_prompt))
  expect_true(all(grepl(test_prompt, ad$question, fixed = TRUE)))
  expect_true(all(ad$prompt_tokens > 0))
  expect_match(ad$run_date[1], "^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$")
  expect_true(all(ad$submodel == "gpt-6-luna-2026-09-22"))

  pd <- res$price_data
  expect_s3_class(pd, "tbl_df")
  expect_named(pd, c("prompt", "model", "iterations", "input_price_dollar", "output_price_dollar", "total_price_dollar"))
  expect_equal(unname(vapply(pd, typeof, character(1))), c("character", "character", "integer", "double", "double", "double"))
  # exact prices, nothing rounded: cached input is priced at its own rate
  expect_price_adds_up(pd, ad, 0.5)
  expect_type(res$price_dollar, "double")
  expect_equal(res$price_dollar, sum(pd$total_price_dollar))
  expect_true(pd$input_price_dollar <= sum(ad$prompt_tokens) * 0.1 / 1e6)
  expect_type(res$run_date, "character")

  args <- attr(res, "arg_list")
  for (name in c("model", "prompt", "top_p", "rpm", "reps", "tools", "tool_choice", "studyid", "title",
    "abstract", "max_tries", "max_seconds", "is_transient", "backoff", "after", "dots", "run_options")) {
    expect_true(name %in% names(args), info = name)
  }
  expect_null(args$api_key)
})

test_that("time_info and token_info drop their columns and the price", {
  expect_time_token_dropped(screen_a, "PROVIDER_A_API_KEY", "sk-test-columns", user_cols, answer_cols)
})

test_that("blank titles and abstracts reach the model as 'No information' with one message", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-blank")
  recs <- test_records()
  recs$abstract[2] <- "   \n "
  recs$title[3] <- NA
  expect_true(is.na(recs$abstract[6])) # missing abstracts of the data itself
  expect_true(is.na(recs$abstract[8]))
  out <- collect_messages(screen_a(fake, data = recs, messages = TRUE))
  res <- out$value
  blank <- grep("No information", out$messages, value = TRUE)
  expect_length(blank, 1)
  expect_match(blank, "4 records")
  ad <- res$answer_data
  expect_equal(ad$abstract, recs$abstract)
  expect_equal(ad$title, recs$title)
  expect_true(is.na(ad$title[3]))
  expect_match(ad$question[2], "<abstract>No information</abstract>", fixed = TRUE)
  expect_match(ad$question[6], "<abstract>No information</abstract>", fixed = TRUE)
  expect_match(ad$question[3], "<title>No information</title>", fixed = TRUE)
  expect_false(grepl("No information", ad$question[1], fixed = TRUE))
})

test_that("studyid keeps the user's values and type, and columns may be named by strings", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-ids")
  recs <- test_records()
  names(recs)[names(recs) == "title"] <- "TI"
  res <- tabscreen_a.tools(recs, test_prompt, studyid = eppi_id, title = "TI", abstract = abstract,
    api_url = fake$url, progress = FALSE, messages = FALSE)
  ad <- res$answer_data
  expect_type(ad$studyid, "character")
  expect_equal(ad$studyid, recs$eppi_id)
  expect_equal(ad$title, recs$TI)
  expect_false(any(c("TI", "eppi_id") %in% names(ad)))
  expect_true("author" %in% names(ad))
  col <- "TI"
  res2 <- tabscreen_a.tools(recs, test_prompt, title = col, abstract = "abstract",
    api_url = fake$url, progress = FALSE, messages = FALSE)
  expect_equal(res2$answer_data$title, recs$TI)
})

test_that("prompts x models x top_p x reps give one row per job, in order", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-grid")
  prompts <- c(test_prompt, "Is this a randomised trial?")
  res <- screen_a(fake, prompt = prompts, model = c("gpt-6-luna", "gpt-4o-mini"), reps = c(3, 2),
    top_p = c(1, 0.5), incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.3)
  ad <- res$answer_data
  n_rec <- nrow(test_records())
  expect_equal(nrow(ad), 2 * n_rec * 2 * (3 + 2))
  expect_equal(unique(ad$promptid), 1:2)
  expect_equal(unique(ad$model), c("gpt-6-luna", "gpt-4o-mini"))
  expect_equal(ad$iterations[ad$model == "gpt-4o-mini"][1], 2)
  expect_equal(sort(unique(ad$n[ad$model == "gpt-6-luna"])), 1:3)
  expect_equal(ad$prompt, prompts[ad$promptid])
  expect_job_order(ad, c("gpt-6-luna", "gpt-4o-mini"))
  # gpt-4o-mini: no reasoning field; gpt-6-luna: "none"
  bodies <- request_bodies(fake)
  for (b in bodies) {
    if (b$model == "gpt-4o-mini") {
      expect_null(b$reasoning_effort)
      expect_null(b$verbosity)
    } else {
      expect_equal(b$reasoning_effort, "none")
    }
  }
  expect_setequal(sent_values(bodies, "top_p"), c(1, 0.5))

  agg <- res$answer_data_aggregated
  expect_identical(class(agg), c("llm_agg_tbl", "tbl_df", "tbl", "data.frame"))
  expect_named(agg, c("studyid", "title", "abstract", "promptid", "prompt", "model", "question",
    "top_p", "incl_p", "final_decision_llm", "final_decision_llm_num", "reps", "n_mis_answers", "submodel", user_cols))
  expect_equal(nrow(agg), 2 * n_rec * 2 * 2)
  expect_equal(nrow(unique(agg[c("studyid", "promptid", "model", "top_p")])), nrow(agg))
  expect_equal(attr(agg, "incl_cutoff_upper"), 0.5)
  expect_equal(attr(agg, "incl_cutoff_lower"), 0.3)
  expect_type(agg$incl_p, "double")
  expect_type(agg$final_decision_llm_num, "integer")
  expect_type(agg$reps, "integer")
  expect_type(agg$n_mis_answers, "integer")
  expect_equal(agg$reps, ifelse(agg$model == "gpt-6-luna", 3L, 2L))
  expect_true(all(agg$final_decision_llm %in% c("Include", "Check", "Exclude")))
  expect_equal(agg$final_decision_llm_num, as.integer(agg$final_decision_llm != "Exclude"))
  # incl_p recomputed from the answers
  expect_group_means(ad, agg, "decision_binary", "incl_p")
  expect_equal(nrow(res$price_data), 2 * 2)
})

test_that("decision_description adds the description and the longest answer", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-dd")
  res <- screen_a(fake, reps = 3, decision_description = TRUE)
  expect_equal(names(res$answer_data)[match("decision_llm", names(res$answer_data)) + 1], "detailed_description")
  expect_type(res$answer_data$detailed_description, "character")
  expect_true("longest_answer" %in% names(res$answer_data_aggregated))
  expect_equal(names(res$answer_data_aggregated)[match("final_decision_llm_num", names(res$answer_data_aggregated)) + 1],
    "longest_answer")
  props <- request_bodies(fake)[[1]]$tools[[1]]$`function`$parameters$properties
  expect_true("detailed_description" %in% names(props))
})

test_that("overinclusive = FALSE allows only 1 and 0", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-binary")
  res <- screen_a(fake, overinclusive = FALSE, reps = 2)
  expect_true(all(res$answer_data$decision_llm %in% c("1", "0")))
  enum <- request_bodies(fake)[[1]]$tools[[1]]$`function`$parameters$properties$decision_llm$enum
  expect_setequal(unlist(enum), c("1", "0"))
})

test_that("custom tools, tool_choice and extra body fields are sent", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-tools")
  tool <- decision_tool()
  res <- screen_a(fake, tools = list(tool), tool_choice = "screening_decision", temperature = 0)
  expect_true(all(res$answer_data$decision_llm %in% c("1", "0")))
  body <- request_bodies(fake)[[1]]
  expect_equal(body$tools[[1]]$`function`$name, "screening_decision")
  expect_equal(body$tools[[1]]$`function`$parameters$required, list("decision_llm"))
  expect_equal(body$tool_choice$`function`$name, "screening_decision")
  expect_equal(body$temperature, 0)

  json <- '[{"type":"function","function":{"name":"pick","parameters":{"type":"object","properties":{"choice":{"type":"string","enum":["1","0"]}},"required":["choice"],"additionalProperties":false}}}]'
  res <- screen_a(fake, tools = json)
  expect_true(all(res$answer_data$decision_llm %in% c("1", "0")))
  body <- request_bodies(fake)[[length(request_bodies(fake))]]
  expect_equal(body$tool_choice, "auto")
})

test_that("custom and user-priced models are sent as given", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-custom")
  res <- screen_a(fake, model = "ft:gpt-4o-mini:acme::abc123", custom_model = TRUE)
  expect_true(is.na(res$price_dollar))
  expect_true(is.na(res$price_data$total_price_dollar))
  body <- request_bodies(fake)[[1]]
  expect_equal(body$model, "ft:gpt-4o-mini:acme::abc123")
  expect_null(body$reasoning_effort)
  expect_null(body$verbosity)
  expect_null(body$top_p)

  expect_warning(res <- screen_a(fake, model = "my-local-model", fine_tuned = TRUE, reasoning_effort = "high"),
    class = "tabscreen_warning_deprecated")
  expect_equal(request_bodies(fake)[[length(request_bodies(fake))]]$reasoning_effort, "high")

  withr::local_options(tabscreen.model_prizes = data.frame(model = "my-local-model", input_per_million = 1,
    output_per_million = 2))
  res <- screen_a(fake, model = "my-local-model")
  expect_equal(res$price_dollar, (sum(res$answer_data$prompt_tokens) * 1 + sum(res$answer_data$completion_tokens) * 2) / 1e6)
})

test_that("transient faults are retried", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-retry", retry_after_ms = 10)
  res <- screen_through_faults(fake, screen_a, "500", 3, backoff = function(attempts) 0.01)
  expect_equal(nrow(res$answer_data), nrow(test_records()))
  expect_equal(fake$stats()$by_status[["500"]], 3)
  screen_through_faults(fake, screen_a, "429", 2)
  expect_equal(fake$stats()$by_status[["429"]], 2)
})

test_that("failures land in error_data and screen_errors() recovers them", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-errors")
  recs <- test_records()
  fake$configure(fail_matching = list(list(substring = recs$title[2], kind = "500"),
    list(substring = recs$title[6], kind = "bad_enum")))
  res <- screen_a(fake, reps = 3, max_tries = 1, incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.2)
  ed <- res$error_data
  expect_s3_class(ed, "tbl_df")
  expect_named(ed, names(res$answer_data))
  expect_equal(sum(ed$studyid == recs$studyid[2]), 3)
  expect_equal(sum(ed$studyid == recs$studyid[6]), 3)
  expect_true(all(is.na(ed$decision_binary)))
  expect_equal(nrow(res$answer_data) + nrow(ed), nrow(recs) * 3)
  agg <- res$answer_data_aggregated
  expect_equal(nrow(agg), nrow(recs))
  all_failed <- agg[agg$studyid == recs$studyid[2], ]
  expect_true(is.na(all_failed$incl_p))
  expect_equal(all_failed$final_decision_llm, "Check")
  expect_equal(all_failed$n_mis_answers, 3L)
  expect_equal(agg$n_mis_answers[agg$studyid == recs$studyid[6]], 3L)
  # the malformed answers were billed: their tokens count in the price
  expect_true(all(ed$prompt_tokens[ed$studyid == recs$studyid[6]] > 0))
  billed <- sum(c(res$answer_data$prompt_tokens, ed$prompt_tokens), na.rm = TRUE)
  expect_equal(res$price_data$input_price_dollar, billed * 0.1 / 1e6)
  first_price <- res$price_dollar
  tokens_answered <- sum(res$answer_data$prompt_tokens)

  expect_message(print(res), "screen_errors")
  fake$configure(fail_matching = list())
  sent_before <- fake$stats()$valid
  fixed <- screen_errors(res, messages = FALSE)
  expect_s3_class(fixed, "llm")
  expect_null(fixed$error_data)
  ad <- fixed$answer_data
  expect_identical(class(ad), c("llm_tbl", "tbl_df", "tbl", "data.frame"))
  expect_equal(nrow(ad), nrow(recs) * 3)
  expect_named(ad, names(res$answer_data))
  expect_equal(sort(ad$n[ad$studyid == recs$studyid[2]]), 1:3)
  expect_equal(ad$human_code[ad$studyid == recs$studyid[2]], rep(recs$human_code[2], 3))
  expected_order <- order(match(ad$studyid, recs$studyid), ad$n)
  expect_equal(expected_order, seq_len(nrow(ad)))
  expect_equal(nrow(ad[c("studyid", "n")]), nrow(unique(ad[c("studyid", "n")])))
  agg2 <- fixed$answer_data_aggregated
  expect_equal(nrow(agg2), nrow(recs))
  expect_true(all(agg2$n_mis_answers == 0L))
  expect_false(anyNA(agg2$incl_p))
  expect_equal(attr(agg2, "incl_cutoff_upper"), 0.5)
  expect_equal(attr(agg2, "incl_cutoff_lower"), 0.2)
  expect_true(fixed$price_dollar > first_price)
  expect_equal(nrow(fixed$price_data), 1)
  # only the 6 failed jobs were sent again
  expect_equal(fake$stats()$valid - sent_before, 6)
  # nothing left to do
  expect_message(again <- screen_errors(fixed, messages = TRUE), "no failed requests")
  expect_identical(again, fixed)
})

test_that("requests that fail again stay in error_data", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-errors")
  recs <- test_records()
  fail_record(fake, 1)
  res <- screen_a(fake, max_tries = 1)
  res2 <- screen_errors(res, max_tries = 1, messages = FALSE)
  expect_equal(nrow(res2$error_data), 1)
  expect_equal(res2$error_data$studyid, recs$studyid[1])
  expect_equal(nrow(res2$answer_data), nrow(recs) - 1)
  expect_equal(attr(res2, "arg_list")$max_tries, 1)
})

test_that("the key never appears in the result or its print", {
  # an explicit key is not stored either
  expect_key_never_shown(screen_a, "PROVIDER_A_API_KEY", "sk-test-SECRET-a1b2c3d4e5f6",
    explicit_key = "sk-explicit-KEY-zz99")
})

test_that("an exhausted quota or a refused key stops the run with the partial result", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-quota")
  cnd <- expect_quota_stop(fake, screen_a)
  expect_s3_class(cnd, "tabscreen_error")
  expect_false(is.null(cnd$result$error_data))
  expect_equal(nrow(cnd$result$answer_data) + nrow(cnd$result$error_data), nrow(test_records()))
  kept <- nrow(cnd$result$answer_data)

  # The same call resumes the stopped run from the answer store: the answers paid for stay, and
  # the refused key (now in the variable) fails every request still to send.
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-revoked")
  cnd <- expect_resume_refused(fake, screen_a, "sk-test-revoked", kept)
  expect_s3_class(cnd$result, "llm")
  expect_no_error(capture.output(capture.output(print(cnd$result)), type = "message"))
  # with a good key the run is finished
  done <- finish_with_key(cnd, "sk-test-good")
  expect_equal(nrow(done$answer_data), nrow(test_records()))
})

test_that("an interrupted run signals tabscreen_interrupted with the partial result", {
  obj <- structure(list(answer_data = tibble::tibble()), class = c("llm", "list"),
    run_info = list(answered = 3, failed = 5), arg_list = list(messages = FALSE))
  cnd <- expect_error(tabscreen:::finish_run(obj, list(state = "cancelled"), call = NULL),
    class = "tabscreen_interrupted")
  expect_s3_class(cnd, "tabscreen_error")
  expect_identical(cnd$result, obj)
  expect_match(conditionMessage(cnd), "3 answers", fixed = TRUE)
  expect_match(conditionMessage(cnd), "screen_errors", fixed = TRUE)
  cnd <- expect_error(tabscreen:::finish_run(obj, list(state = "stopped",
    stop = list(class = "tabscreen_error_quota", message = "no credit")), call = NULL),
    class = "tabscreen_error_quota")
  expect_identical(cnd$result, obj)
  expect_identical(tabscreen:::finish_run(obj, list(state = "done"), call = NULL), obj)
})

test_that("print methods summarise and return the object invisibly", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-print")
  res <- screen_a(fake, reps = 2)
  printed <- function(x) {
    out <- NULL
    msg <- capture.output(out <- capture.output(vis <- withVisible(print(x))), type = "message")
    list(text = c(msg, out), visible = vis$visible, value = vis$value)
  }
  p <- printed(res)
  expect_false(p$visible)
  expect_identical(p$value, res)
  expect_true(any(grepl("8 records", p$text)))
  expect_true(any(grepl("16 requests", p$text)))
  expect_true(any(grepl("Price", p$text)))
  p <- printed(res$answer_data)
  expect_false(p$visible)
  expect_identical(p$value, res$answer_data)
  expect_true(any(grepl("llm_tbl", p$text)))
  expect_true(any(grepl("A tibble: 16", p$text)))
  p <- printed(res$answer_data_aggregated)
  expect_false(p$visible)
  expect_true(any(grepl("Aggregated decisions", p$text)))
  # a subset still prints
  p <- printed(res$answer_data[1:2, c("studyid", "decision_llm")])
  expect_true(any(grepl("studyid", p$text)))
  # and a subset without the decision columns prints without a warning
  expect_no_warning(p <- printed(res$answer_data_aggregated[c("studyid", "incl_p")]))
  expect_true(any(grepl("llm_agg_tbl.*8 rows", p$text)))
  expect_false(any(grepl("decisions", p$text)))
  expect_no_warning(p <- printed(res$answer_data[c("studyid", "n")]))
  expect_true(any(grepl("llm_tbl.*16 answers", p$text)))
})

test_that("rate_limits_per_minute() reads the rate-limit headers", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-limits", rpm = 600, tpm = 200000)
  lim <- rate_limits_per_minute(c("gpt-6-luna", "gpt-4o-mini"), api_url = fake$url)
  expect_s3_class(lim, "tbl_df")
  expect_rate_limits_read(lim)
  expect_equal(lim$model, c("gpt-6-luna", "gpt-4o-mini"))
  bodies <- request_bodies(fake)
  expect_equal(bodies[[1]]$reasoning_effort, "none")
  expect_null(bodies[[2]]$reasoning_effort)
  expect_error(rate_limits_per_minute(AI_tool = "d", api_url = fake$url), class = "tabscreen_error_ai_tool")
  fake$configure(invalid_keys = "sk-bad")
  expect_error(rate_limits_per_minute(api_key = "sk-bad", api_url = fake$url), class = "tabscreen_error_auth")
  expect_rate_limits_need_key("PROVIDER_A_API_KEY", api_url = fake$url)
})
