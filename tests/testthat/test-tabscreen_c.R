# End-to-end runs of tabscreen_c() (provider C, Mistral's chat completions protocol) against the
# fake provider, and its argument checks.

answer_cols_c <- c("studyid", "title", "abstract", "promptid", "prompt", "model", "iterations", "question",
  "top_p", "decision_llm", "decision_binary", "prompt_tokens", "completion_tokens", "submodel", "run_time",
  "run_date", "n")

test_that("a run with every argument at its default succeeds", {
  fake <- local_keyed_fake("PROVIDER_C_API_KEY", "c-test-defaults")
  res <- expect_default_run(fake, "tabscreen_c", fake$url_c)
  req <- fake$requests()[[1]]
  expect_match(req$path, "/chat/completions$")
  expect_match(unlist(req$headers[["Authorization"]]), "redacted")
  body <- req$body
  expect_equal(body$model, "mistral-small-latest")
  expect_equal(body$reasoning_effort, "none")
  expect_equal(body$top_p, 1)
  expect_false(body$parallel_tool_calls)
  expect_equal(body$tool_choice$`function`$name, body$tools[[1]]$`function`$name)
  expect_equal(body$messages[[length(body$messages)]]$role, "user")
  for (field in c("seed", "random_seed", "verbosity", "max_completion_tokens", "n")) expect_null(body[[field]])
})

test_that("the components have exactly the spec's columns and classes", {
  fake <- local_keyed_fake("PROVIDER_C_API_KEY", "c-test-columns")
  res <- screen_c(fake)
  ad <- expect_components(res, user_cols, answer_cols_c)
  expect_true(all(ad$top_p == 1))
  expect_decisions_coded(ad)
  pd <- res$price_data
  expect_price_adds_up(pd, ad, 0.60)
  expect_equal(pd$input_price_dollar, sum(ad$prompt_tokens) * 0.15 / 1e6)
  args <- attr(res, "arg_list")
  expect_equal(args$provider, "c")
  expect_equal(args$function_name, "tabscreen_c")
  expect_null(args$api_key)
  m <- args$run_options$models[[1]]
  expect_named(m, c("name", "reps", "rpm", "reasoning_effort", "send_top_p", "price_in", "price_cached_in", "price_out"))
})

test_that("prompts x models x top_p x reps, confidence and seeds", {
  fake <- local_keyed_fake("PROVIDER_C_API_KEY", "c-test-grid")
  prompts <- c(test_prompt, "Is this a randomised trial?")
  res <- screen_c(fake, prompt = prompts, model = c("mistral-small-latest", "ministral-8b-latest"), reps = c(3, 2),
    top_p = c(1, 0.5), confidence = TRUE, seed_par = 5, incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.3)
  ad <- res$answer_data
  n_rec <- nrow(test_records())
  expect_equal(nrow(ad), 2 * n_rec * 2 * (3 + 2))
  expect_job_order(ad, c("mistral-small-latest", "ministral-8b-latest"))
  expect_true(all(ad$confidence >= 0 & ad$confidence <= 100))
  bodies <- request_bodies(fake)
  for (b in bodies) {
    if (b$model == "ministral-8b-latest") {
      expect_null(b$reasoning_effort)
    } else {
      expect_equal(b$reasoning_effort, "none")
    }
    expect_equal(tool_properties(b), c("decision_llm", "confidence"))
  }
  expect_setequal(sent_values(bodies, "top_p"), c(1, 0.5))
  expect_setequal(sent_values(bodies, "random_seed"), 5:7)
  agg <- res$answer_data_aggregated
  expect_named(agg, c("studyid", "title", "abstract", "promptid", "prompt", "model", "question",
    "top_p", "incl_p", "final_decision_llm", "final_decision_llm_num", "mean_confidence", "reps", "n_mis_answers",
    "submodel", user_cols))
  expect_equal(nrow(agg), 2 * n_rec * 2 * 2)
  expect_group_means(ad, agg, "confidence", "mean_confidence")
  expect_group_means(ad, agg, "decision_binary", "incl_p")
  expect_equal(nrow(res$price_data), 2 * 2)
})

test_that("reasoning_effort goes only to the models that take it", {
  fake <- local_keyed_fake("PROVIDER_C_API_KEY", "c-test-reasoning")
  res <- screen_c(fake, reasoning_effort = "high", data = test_records()[1:2, ])
  expect_equal(request_bodies(fake)[[1]]$reasoning_effort, "high")
  expect_null(res$error_data)
  res <- screen_c(fake, model = "mistral-large-latest", reasoning_effort = "none", data = test_records()[1:2, ])
  expect_null(request_bodies(fake)[[length(request_bodies(fake))]]$reasoning_effort)
  expect_null(res$error_data)
  # custom models: only what was given
  res <- screen_c(fake, model = "my-mistral", custom_model = TRUE, data = test_records()[1:2, ])
  b <- request_bodies(fake)[[length(request_bodies(fake))]]
  expect_null(b$reasoning_effort)
  expect_null(b$top_p)
  expect_true(is.na(res$price_dollar))
})

test_that("custom tools with every tool_choice; confidence is ignored with a message", {
  fake <- local_keyed_fake("PROVIDER_C_API_KEY", "c-test-tools")
  tool <- decision_tool()
  out <- collect_messages(screen_c(fake, tools = list(tool), confidence = TRUE, messages = TRUE,
    data = test_records()[1:2, ]))
  expect_length(grep("confidence = TRUE", out$messages, fixed = TRUE), 1)
  expect_false("confidence" %in% names(out$value$answer_data))
  expect_equal(request_bodies(fake)[[1]]$tool_choice, "auto")
  for (choice in list("any", "required", list(type = "function", `function` = list(name = "screening_decision")))) {
    res <- screen_c(fake, tools = list(tool), tool_choice = choice, data = test_records()[1:2, ])
    expect_true(all(res$answer_data$decision_llm %in% c("1", "0")))
    b <- request_bodies(fake)[[length(request_bodies(fake))]]
    expect_equal(b$tool_choice, choice)
    expect_equal(b$tools[[1]]$`function`$parameters$required, list("decision_llm"))
  }
  expect_arg_error(screen_c(fake, tools = list(tool), tool_choice = "screening_decision"), "tabscreen_error_tool_choice",
    fun = "tabscreen_c")
  expect_arg_error(screen_c(fake, tools = list(tool), tool_choice = "some"), "tabscreen_error_tool_choice", fun = "tabscreen_c")
  expect_arg_error(screen_c(fake, tools = list(tool), tool_choice = list(type = "function", `function` = list(name = "other"))),
    "tabscreen_error_tool_choice", fun = "tabscreen_c")
  expect_arg_error(screen_c(fake, tools = list(tool), tool_choice = list(type = "tool", name = "screening_decision")),
    "tabscreen_error_tool_choice", fun = "tabscreen_c")
  expect_arg_error(screen_c(fake, tools = list(tool), tool_choice = 1), "tabscreen_error_tool_choice", fun = "tabscreen_c")
  expect_arg_error(screen_c(fake, tool_choice = "auto"), "tabscreen_error_tool_choice", fun = "tabscreen_c")
})

test_that("faults are retried", {
  fake <- local_keyed_fake("PROVIDER_C_API_KEY", "c-test-retry", retry_after_ms = 10)
  three <- test_records()[1:3, ]
  screen_through_faults(fake, screen_c, "503", 2, data = three, backoff = function(attempts) 0.01)
  expect_equal(fake$stats()$by_status[["503"]], 2)
  screen_through_faults(fake, screen_c, "429", 2, data = three)
  res <- screen_through_faults(fake, screen_c, "finish_error", 2, data = three, backoff = function(attempts) 0.01)
  expect_equal(nrow(res$answer_data), 3)
})

test_that("a workspace without allowance or a refused key stops the run with the partial result", {
  fake <- local_keyed_fake("PROVIDER_C_API_KEY", "c-test-quota")
  cnd <- expect_quota_stop(fake, screen_c)
  kept <- nrow(cnd$result$answer_data)
  # The same call resumes the stopped run: stored answers stay, the rest fail on the refused key.
  cnd <- expect_resume_refused(fake, screen_c, "c-revoked", kept, api_key = "c-revoked")
  finish_with_key(cnd, "c-good")
})

test_that("failures land in error_data and screen_errors() re-sends them to provider C", {
  fake <- local_keyed_fake("PROVIDER_C_API_KEY", "c-test-errors")
  recs <- test_records()
  fail_record(fake, 2)
  res <- screen_c(fake, reps = 2, top_p = c(1, 0.5), max_tries = 1, seed_par = 100, temperature = 0.2)
  ed <- res$error_data
  expect_named(ed, names(res$answer_data))
  expect_equal(nrow(ed), 4)
  fixed <- resend_failed(fake, res, max_tokens = 300)
  expect_equal(nrow(fixed$answer_data), nrow(recs) * 2 * 2)
  expect_true(all(fixed$answer_data_aggregated$n_mis_answers == 0L))
  reqs <- fake$requests()
  expect_length(reqs, 4)
  for (r in reqs) {
    expect_match(r$path, "/chat/completions$")
    expect_equal(r$body$temperature, 0.2)
    expect_equal(r$body$max_tokens, 300)
    expect_true(r$body$random_seed %in% c(100, 101))
  }
  expect_setequal(vapply(reqs, function(r) r$body$top_p, 0), c(1, 1, 0.5, 0.5))
  # fields outside provider C's request are refused here too
  expect_error(screen_errors(res, max_completion_tokens = 5), class = "tabscreen_error_dots")
  expect_error(screen_errors(res, seed = 5), class = "tabscreen_error_dots")
})

test_that("bad inputs are classed errors and no request reaches the provider", {
  fake <- local_keyed_fake("PROVIDER_C_API_KEY", "c-test-check-args")
  e <- function(object, class) expect_arg_error(object, class, fun = "tabscreen_c")

  e(screen_c(fake, data = "not a data frame"), "tabscreen_error_data")
  e(screen_c(fake, abstract = "abstracts"), "tabscreen_error_data_column")
  e(screen_c(fake, prompt = c("a", "a")), "tabscreen_error_prompt")
  e(screen_c(fake, model = "claude-haiku-5-5"), "tabscreen_error_model_unknown")
  e(screen_c(fake, model = c("mistral-small-latest", "mistral-small-latest")), "tabscreen_error_model_duplicated")
  e(screen_c(fake, reps = 1.5), "tabscreen_error_reps")
  e(screen_c(fake, top_p = 0), "tabscreen_error_top_p")
  e(screen_c(fake, top_p = 1.5), "tabscreen_error_top_p")
  e(screen_c(fake, top_p = c(0.5, 0.5)), "tabscreen_error_top_p")
  e(screen_c(fake, role = "developer"), "tabscreen_error_role")
  # the protocol wants the last message from the user: a question as a system message is refused
  e(screen_c(fake, role = "system"), "tabscreen_error_role")
  e(screen_c(fake, api_url = 3), "tabscreen_error_api_url")
  e(screen_c(fake, tools = "not json ["), "tabscreen_error_tools")
  e(screen_c(fake, tools = list(list(name = "x", input_schema = list(type = "object")))), "tabscreen_error_tools")
  e(screen_c(fake, reasoning_effort = "low"), "tabscreen_error_reasoning_effort")
  e(screen_c(fake, reasoning_effort = "medium"), "tabscreen_error_reasoning_effort")
  e(screen_c(fake, model = "ministral-8b-latest", reasoning_effort = "high"), "tabscreen_error_model_reasoning")
  e(screen_c(fake, max_seconds = 0), "tabscreen_error_max_seconds")
  e(screen_c(fake, seed_par = -1), "tabscreen_error_seed_par")
  e(screen_c(fake, seed_par = 0.5), "tabscreen_error_seed_par")
  e(screen_c(fake, after = "x"), "tabscreen_error_callback")
  e(screen_c(fake, reps = 2, incl_cutoff_lower = 0.2), "tabscreen_error_cutoff")
  expect_flags_checked(fake, screen_c, "tabscreen_c", NA)
  # `...`: only fields of provider C's request, and none the package sets
  for (dots in list(list(max_completion_tokens = 50), list(verbosity = "low"), list(foo = 1),
    list(random_seed = 1), list(n = 2), list(stream = TRUE), list(tool_choice_x = 1))) {
    e(do.call(screen_c, c(list(fake), dots)), "tabscreen_error_dots")
  }
  e(tabscreen_c(test_records(), test_prompt, studyid, title, abstract, api_url = fake$url_c, temperature = 0,
    temperature = 1), "tabscreen_error_dots")
  cnd <- e(screen_c(fake, max_completion_tokens = 50), "tabscreen_error_dots")
  expect_match(conditionMessage(cnd), "max_tokens", fixed = TRUE)
  expect_error(tabscreen:::check_dots("c", list(seed = 1)), class = "tabscreen_error_dots")
  expect_error(tabscreen:::check_dots("c", list(3)), class = "tabscreen_error_dots")
  ok <- list(temperature = 0, max_tokens = 10, stop = "x", response_format = list(type = "text"),
    presence_penalty = 0, frequency_penalty = 0, safe_prompt = FALSE, prompt_mode = "reasoning",
    parallel_tool_calls = FALSE, metadata = list(a = "b"), service_tier = "auto")
  expect_equal(tabscreen:::check_dots("c", ok), ok)
  # safety limits
  e(screen_c(fake, reps = 11), "tabscreen_error_force")
  e(screen_c(fake, data = filges2015_dat, model = "mistral-medium-latest", prompt = paste("p", 1:10),
    reps = 10, reasoning_effort = "high"), "tabscreen_error_force")
  expect_equal(fake$stats()$requests_total, 0)

  expect_key_checked_last(fake, screen_c, "tabscreen_c", "PROVIDER_C_API_KEY", list(top_p = 0), "tabscreen_error_top_p")
})

test_that("extra body fields are sent", {
  fake <- local_keyed_fake("PROVIDER_C_API_KEY", "c-test-body")
  res <- screen_c(fake, temperature = 0, max_tokens = 200, data = test_records()[1:2, ])
  b <- request_bodies(fake)[[1]]
  expect_equal(b$messages[[length(b$messages)]]$role, "user")
  expect_equal(b$temperature, 0)
  expect_equal(b$max_tokens, 200)
  expect_null(res$error_data)
})

test_that("the key never appears in the result or its print", {
  expect_key_never_shown(screen_c, "PROVIDER_C_API_KEY", "c-SECRET-c1c2c3c4c5", confidence = TRUE)
})

test_that("rate_limits_per_minute() reads provider C's headers", {
  fake <- local_keyed_fake("PROVIDER_C_API_KEY", "c-test-limits", rpm = 600, tpm = 200000)
  lim <- rate_limits_per_minute(c("mistral-small-latest", "ministral-8b-latest"), AI_tool = "c", api_url = fake$url_c)
  expect_rate_limits_read(lim)
  expect_true(all(is.na(lim$reset_requests)))
  req <- fake$requests()[[1]]
  expect_match(unlist(req$headers[["Authorization"]]), "redacted")
  expect_identical(req$body$max_tokens, 16L)
  expect_null(req$body$max_completion_tokens)
  expect_equal(rate_limits_per_minute(AI_tool = "c", api_url = fake$url_c)$model, "mistral-small-latest")
  fake$configure(fail_first_n = list(kind = "quota", n = 1))
  expect_error(rate_limits_per_minute(AI_tool = "c", api_url = fake$url_c), class = "tabscreen_error_quota")
  expect_rate_limits_need_key("PROVIDER_C_API_KEY", AI_tool = "c", api_url = fake$url_c)
})
