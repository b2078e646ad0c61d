# End-to-end runs of tabscreen_b() (provider B, the Anthropic Messages protocol) against the fake
# provider, and its argument checks.

answer_cols_b <- c("studyid", "title", "abstract", "promptid", "prompt", "model", "iterations", "question",
  "decision_llm", "decision_binary", "prompt_tokens", "completion_tokens", "submodel", "run_time", "run_date", "n")

test_that("a run with every argument at its default succeeds", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-defaults")
  res <- expect_default_run(fake, "tabscreen_b", fake$url_b)
  expect_null(res$answer_data_aggregated)
  req <- fake$requests()[[1]]
  expect_equal(req$path, "/v1/messages")
  expect_equal(unlist(req$headers[["Anthropic-Version"]]), "2023-06-01")
  expect_match(unlist(req$headers[["X-Api-Key"]]), "redacted")
  expect_null(req$headers[["Authorization"]])
  body <- req$body
  expect_equal(body$model, "claude-haiku-5-5")
  expect_identical(body$max_tokens, 1024L)
  expect_equal(body$thinking$type, "disabled")
  expect_equal(body$tool_choice$type, "tool")
  expect_equal(body$tool_choice$name, body$tools[[1]]$name)
  expect_true(body$tool_choice$disable_parallel_tool_use)
  expect_equal(body$output_config$effort, "medium")
  expect_equal(body$messages[[1]]$role, "user")
  expect_null(body$system)
  for (field in c("top_p", "temperature", "seed", "random_seed")) expect_null(body[[field]])
})

test_that("the components have exactly the spec's columns and classes", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-columns")
  res <- screen_b(fake)
  ad <- expect_components(res, user_cols, answer_cols_b)
  expect_equal(ad$abstract, test_records()$abstract)
  expect_decisions_coded(ad)
  expect_true(all(ad$model == "claude-haiku-5-5"))
  expect_true(all(nzchar(ad$submodel)))
  expect_true(all(grepl(test_prompt, ad$question, fixed = TRUE)))
  expect_true(all(ad$prompt_tokens > 0))

  pd <- res$price_data
  expect_named(pd, c("prompt", "model", "iterations", "input_price_dollar", "output_price_dollar", "total_price_dollar"))
  expect_price_adds_up(pd, ad, 0.5)
  expect_equal(res$price_dollar, sum(pd$total_price_dollar))
  expect_true(pd$input_price_dollar > 0)

  args <- attr(res, "arg_list")
  expect_equal(args$provider, "b")
  expect_equal(args$function_name, "tabscreen_b")
  expect_null(args$top_p)
  expect_null(args$api_key)
  opts <- args$run_options
  expect_equal(opts$provider, "b")
  expect_length(opts$top_p, 0)
  expect_identical(opts$max_tokens, 1024L)
  m <- opts$models[[1]]
  expect_named(m, c("name", "reps", "rpm", "reasoning_effort", "thinking", "forced_tool", "price_in",
    "price_cached_in", "price_cache_write", "price_out"))
  expect_equal(c(m$price_in, m$price_cached_in, m$price_cache_write, m$price_out), c(0.10, 0.01, 0.125, 0.50))
  expect_equal(m$thinking, "disabled")
  expect_true(m$forced_tool)
})

test_that("time_info and token_info drop their columns and the price", {
  expect_time_token_dropped(screen_b, "PROVIDER_B_API_KEY", "sk-ant-test-columns", user_cols, answer_cols_b)
})

test_that("confidence is asked after the decision and aggregated into mean_confidence", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-confidence")
  res <- screen_b(fake, reps = 3, confidence = TRUE, decision_description = TRUE,
    incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.2)
  body <- request_bodies(fake)[[1]]
  expect_equal(tool_properties(body), c("detailed_description", "decision_llm", "confidence"))
  ad <- res$answer_data
  expect_equal(names(ad)[match("decision_binary", names(ad)) + 1], "confidence")
  expect_type(ad$confidence, "double")
  expect_true(all(ad$confidence >= 0 & ad$confidence <= 100))
  expect_equal(ad$confidence, round(ad$confidence))
  agg <- res$answer_data_aggregated
  expect_named(agg, c("studyid", "title", "abstract", "promptid", "prompt", "model", "question",
    "incl_p", "final_decision_llm", "final_decision_llm_num", "longest_answer", "mean_confidence", "reps",
    "n_mis_answers", "submodel", user_cols))
  expect_equal(nrow(agg), nrow(test_records()))
  expect_equal(agg$reps, rep(3L, nrow(agg)))
  expect_group_means(ad, agg, "confidence", "mean_confidence", by = "studyid")
  expect_group_means(ad, agg, "decision_binary", "incl_p", by = "studyid")
  expect_equal(attr(agg, "incl_cutoff_upper"), 0.5)
  expect_true(all(agg$final_decision_llm %in% c("Include", "Check", "Exclude")))

  # without confidence: no column, and the tool does not ask for it
  res <- screen_b(fake, reps = 2)
  expect_false("confidence" %in% names(res$answer_data))
  expect_false("mean_confidence" %in% names(res$answer_data_aggregated))
  expect_equal(tool_properties(request_bodies(fake)[[length(request_bodies(fake))]]), "decision_llm")
})

test_that("mean_confidence is the mean over the answered repetitions", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-confidence")
  recs <- test_records()
  fake$configure(fail_matching = list(list(substring = recs$title[1], kind = "500", n = 2)))
  res <- screen_b(fake, reps = 4, confidence = TRUE, max_tries = 1)
  agg <- res$answer_data_aggregated
  first <- agg[agg$studyid == recs$studyid[1], ]
  expect_equal(first$n_mis_answers, 2L)
  answered <- res$answer_data[res$answer_data$studyid == recs$studyid[1], ]
  expect_equal(nrow(answered), 2)
  expect_equal(first$mean_confidence, mean(answered$confidence))
})

test_that("custom tools in provider B's format are offered, and confidence is ignored with a message", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-tools")
  tool <- list(name = "screening_decision", description = "Record the decision.",
    input_schema = list(type = "object", properties = list(decision_llm = list(type = "string", enum = c("1", "0"))),
      required = "decision_llm"))
  out <- collect_messages(screen_b(fake, tools = list(tool), confidence = TRUE, messages = TRUE))
  expect_length(grep("confidence = TRUE", out$messages, fixed = TRUE), 1)
  res <- out$value
  expect_true(all(res$answer_data$decision_llm %in% c("1", "0")))
  expect_false("confidence" %in% names(res$answer_data))
  expect_false(attr(res, "arg_list")$confidence)
  body <- request_bodies(fake)[[1]]
  expect_equal(body$tools[[1]]$name, "screening_decision")
  expect_equal(body$tools[[1]]$input_schema$required, list("decision_llm"))
  expect_null(body$tool_choice)
  expect_null(body$thinking) # no forced tool, so the model keeps its thinking

  json <- '[{"name":"pick","input_schema":{"type":"object","properties":{"choice":{"type":"string","enum":["1","0"]}},"required":["choice"]}}]'
  res <- screen_b(fake, tools = json)
  expect_true(all(res$answer_data$decision_llm %in% c("1", "0")))
})

test_that("each model gets the request that yields one tool call", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-models")
  models <- c("claude-haiku-5-5", "claude-opus-5-5", "claude-haiku-4-5", "claude-sonnet-5")
  out <- collect_messages(screen_b(fake, model = models, messages = TRUE))
  expect_length(grep("claude-opus-5-5", out$messages, fixed = TRUE), 1)
  res <- out$value
  expect_null(res$error_data)
  expect_equal(unique(res$answer_data$model), models)
  bodies <- request_bodies(fake)
  by_model <- split(bodies, vapply(bodies, function(b) b$model, ""))
  first <- function(m) by_model[[m]][[1]]
  # forced tool, thinking off
  for (m in c("claude-haiku-5-5", "claude-haiku-4-5", "claude-sonnet-5")) {
    expect_equal(first(m)$tool_choice$type, "tool", info = m)
    expect_equal(first(m)$thinking$type, "disabled", info = m)
    expect_null(first(m)$system, info = m)
  }
  expect_equal(first("claude-haiku-5-5")$output_config$effort, "medium")
  expect_null(first("claude-haiku-4-5")$output_config) # takes no effort
  # no forced tool: thinking stays, tool_choice auto with an instruction
  opus <- first("claude-opus-5-5")
  expect_equal(opus$tool_choice$type, "auto")
  expect_null(opus$thinking)
  expect_match(opus$system, opus$tools[[1]]$name, fixed = TRUE)
  expect_equal(opus$output_config$effort, "medium")

  # "none": thinking off, least effort
  res <- screen_b(fake, reasoning_effort = "none", model = c("claude-haiku-5-5", "claude-haiku-4-5"))
  bodies <- request_bodies(fake)
  b <- bodies[[length(bodies)]]
  expect_equal(b$thinking$type, "disabled")
  haiku <- Filter(function(x) x$model == "claude-haiku-5-5", bodies)
  expect_equal(haiku[[length(haiku)]]$output_config$effort, "low")

  # an effort above "high" keeps claude-opus-5's thinking on: no forced tool
  res <- screen_b(fake, model = "claude-opus-5", reasoning_effort = "max", data = test_records()[1:2, ])
  b <- request_bodies(fake)[[length(request_bodies(fake))]]
  expect_equal(b$output_config$effort, "max")
  expect_null(b$thinking)
  expect_equal(b$tool_choice$type, "auto")
  expect_null(res$error_data)
})

test_that("model_settings_b() follows each model's rules", {
  settings_b <- function(model, effort = "medium", given = FALSE, builtin = TRUE, custom = FALSE) {
    m <- tabscreen:::lookup_models(model, "b", custom_model = custom)
    model_settings(m, "b", effort, given = list(reasoning_effort = given), builtin = builtin)[[1]]
  }
  s <- settings_b("claude-haiku-5-5")
  expect_equal(s[c("reasoning_effort", "thinking", "forced_tool")], list(reasoning_effort = "medium", thinking = "disabled", forced_tool = TRUE))
  s <- settings_b("claude-haiku-5-5", builtin = FALSE)
  expect_null(s$thinking)
  expect_false(s$forced_tool)
  s <- settings_b("claude-haiku-5-5", "none", given = TRUE, builtin = FALSE)
  expect_equal(s$thinking, "disabled")
  expect_equal(s$reasoning_effort, "low")
  expect_error(settings_b("claude-haiku-5-5", "xhigh", given = TRUE), class = "tabscreen_error_model_reasoning")
  for (m in c("claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1")) {
    s <- settings_b(m)
    expect_null(s$thinking)
    expect_false(s$forced_tool)
    expect_error(settings_b(m, "none", given = TRUE), class = "tabscreen_error_model_reasoning")
  }
  expect_error(settings_b("claude-fable-5-1", "max", given = TRUE), class = "tabscreen_error_model_reasoning")
  expect_equal(settings_b("claude-opus-5-5", "max", given = TRUE)$reasoning_effort, "max")
  s <- settings_b("claude-opus-5", "xhigh", given = TRUE)
  expect_null(s$thinking)
  expect_false(s$forced_tool)
  s <- settings_b("claude-opus-5", "high", given = TRUE)
  expect_equal(s$thinking, "disabled")
  expect_true(s$forced_tool)
  s <- settings_b("claude-sonnet-5", "max", given = TRUE)
  expect_equal(s$thinking, "disabled")
  expect_true(s$forced_tool)
  # Haiku 4.5: no effort field
  s <- settings_b("claude-haiku-4-5")
  expect_null(s$reasoning_effort)
  expect_true(s$forced_tool)
  expect_error(settings_b("claude-haiku-4-5", "high", given = TRUE), class = "tabscreen_error_model_reasoning")
  expect_null(settings_b("claude-haiku-4-5", "none", given = TRUE)$reasoning_effort)
  # custom models: only what was given
  s <- settings_b("my-claude", custom = TRUE)
  expect_null(s$reasoning_effort)
  expect_null(s$thinking)
  expect_true(s$forced_tool)
  s <- settings_b("my-claude", "high", given = TRUE, custom = TRUE)
  expect_equal(s$reasoning_effort, "high")
  expect_false(s$forced_tool)
  expect_equal(settings_b("my-claude", "none", given = TRUE, custom = TRUE)$thinking, "disabled")
  # every model of the rules gets a valid setting with the defaults
  rules <- tabscreen:::model_rules()
  for (m in rules$model[rules$provider == "b"]) {
    s <- settings_b(m)
    expect_true(is.null(s$thinking) || s$thinking == "disabled", info = m)
    expect_false(isTRUE(s$forced_tool) && is.null(s$thinking) &&
      rules$rules[[which(rules$provider == "b" & rules$model == m)]]$thinking_default_on == "TRUE", info = m)
  }
})

test_that("sampling parameters pass only for models that take them", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-sampling")
  res <- screen_b(fake, model = "claude-haiku-4-5", temperature = 0, data = test_records()[1:2, ])
  expect_equal(request_bodies(fake)[[1]]$temperature, 0)
  expect_arg_error(screen_b(fake, temperature = 0), "tabscreen_error_model_sampling", fun = "tabscreen_b")
  expect_arg_error(screen_b(fake, top_p = 0.5), "tabscreen_error_model_sampling", fun = "tabscreen_b")
  expect_arg_error(screen_b(fake, model = "claude-haiku-4-5", temperature = 0, top_p = 0.9),
    "tabscreen_error_model_sampling", fun = "tabscreen_b")
  expect_equal(fake$stats()$requests_total, 2)
})

test_that("overloaded (529), rate limits and server errors are retried", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-retry", retry_after_ms = 10)
  three <- test_records()[1:3, ]
  res <- screen_through_faults(fake, screen_b, "529", 2, data = three, backoff = function(attempts) 0.01)
  expect_equal(nrow(res$answer_data), 3)
  expect_equal(fake$stats()$by_status[["529"]], 2)
  screen_through_faults(fake, screen_b, "500", 2, data = three, backoff = function(attempts) 0.01)
  expect_equal(fake$stats()$by_status[["500"]], 2)
  screen_through_faults(fake, screen_b, "429", 1, data = three)
  # a model that is not forced and answers without the call is asked again
  res <- screen_through_faults(fake, screen_b, "no_tool", 1, data = test_records()[1:2, ], model = "claude-opus-5-5")
  expect_equal(nrow(res$answer_data), 2)
})

test_that("the transient rule agrees with the engine on provider B's responses", {
  # Provider B's error body, of error type `type`, with a retry-after header unless it is NA.
  b_error <- function(status, type, retry_after) {
    headers <- if (is.na(retry_after)) list() else list("retry-after" = retry_after)
    json_response(status, sprintf('{"type":"error","error":{"type":"%s","message":"m"},"request_id":"req_1"}', type),
      headers)
  }
  # the spend cap (the last row: a 429 without retry-after) stops the run in provider B's adapter,
  # not in the shared rule
  cases <- tibble::tribble(
    ~status, ~type,                   ~retry_after, ~transient,
    529,     "overloaded_error",      "1",          TRUE,
    529,     "overloaded_error",      NA,           TRUE,
    429,     "rate_limit_error",      "3",          TRUE,
    500,     "api_error",             NA,           TRUE,
    504,     "timeout_error",         NA,           TRUE,
    400,     "invalid_request_error", NA,           FALSE,
    401,     "authentication_error",  NA,           FALSE,
    402,     "billing_error",         NA,           FALSE,
    403,     "permission_error",      NA,           FALSE,
    404,     "not_found_error",       NA,           FALSE,
    413,     "request_too_large",     NA,           FALSE,
    429,     "rate_limit_error",      NA,           TRUE
  )
  for (i in seq_len(nrow(cases))) {
    expect_transient(b_error(cases$status[i], cases$type[i], cases$retry_after[i]), cases$transient[i], engine = TRUE)
  }
})

test_that("a spend limit or a refused key stops the run with the partial result", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-quota")
  cnd <- expect_quota_stop(fake, screen_b)
  expect_equal(nrow(cnd$result$answer_data) + nrow(cnd$result$error_data), nrow(test_records()))
  kept <- nrow(cnd$result$answer_data)

  # The same call resumes the stopped run: stored answers stay, the rest fail on the refused key.
  cnd <- expect_resume_refused(fake, screen_b, "sk-ant-revoked", kept, api_key = "sk-ant-revoked")
  done <- finish_with_key(cnd, "sk-ant-good")
  expect_equal(nrow(done$answer_data), nrow(test_records()))
})

test_that("failures land in error_data and screen_errors() re-sends them to provider B", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-errors")
  recs <- test_records()
  fail_record(fake, 2)
  res <- screen_b(fake, reps = 2, max_tries = 1, confidence = TRUE, max_tokens = 512, reasoning_effort = "low")
  ed <- res$error_data
  expect_named(ed, names(res$answer_data))
  expect_false("top_p" %in% names(ed))
  expect_equal(nrow(ed), 2)
  expect_true(all(ed$studyid == recs$studyid[2]))
  fixed <- resend_failed(fake, res)
  expect_equal(nrow(fixed$answer_data), nrow(recs) * 2)
  expect_named(fixed$answer_data, names(res$answer_data))
  expect_false(anyNA(fixed$answer_data$confidence))
  expect_equal(sort(fixed$answer_data$n[fixed$answer_data$studyid == recs$studyid[2]]), 1:2)
  expect_true(all(fixed$answer_data_aggregated$n_mis_answers == 0L))
  expect_false(anyNA(fixed$answer_data_aggregated$mean_confidence))
  expect_true(fixed$price_dollar > res$price_dollar)
  # the two failed jobs went again to provider B's endpoint with the original arguments
  reqs <- fake$requests()
  expect_length(reqs, 2)
  for (r in reqs) {
    expect_equal(r$path, "/v1/messages")
    expect_identical(r$body$max_tokens, 512L)
    expect_equal(r$body$output_config$effort, "low")
    expect_equal(tool_properties(r$body), c("decision_llm", "confidence"))
  }
  # a sampling field the model rejects is refused here too
  expect_error(screen_errors(res, temperature = 0), class = "tabscreen_error_model_sampling")
  expect_error(screen_errors(res, thinking = list(type = "enabled")), class = "tabscreen_error_dots")
})

test_that("bad inputs are classed errors and no request reaches the provider", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-check-args")
  tool_a <- list(type = "function", `function` = list(name = "decide", parameters = list(type = "object")))
  e <- function(object, class) expect_arg_error(object, class, fun = "tabscreen_b")

  e(screen_b(fake, data = "not a data frame"), "tabscreen_error_data")
  e(screen_b(fake, title = "titel"), "tabscreen_error_data_column")
  e(screen_b(fake, prompt = ""), "tabscreen_error_prompt")
  e(screen_b(fake, model = "gpt-6-luna"), "tabscreen_error_model_unknown")
  e(screen_b(fake, model = "claude-haiku-55"), "tabscreen_error_model_unknown")
  e(screen_b(fake, reps = 0), "tabscreen_error_reps")
  e(screen_b(fake, rpm = -1), "tabscreen_error_rpm")
  e(screen_b(fake, role = "system"), "tabscreen_error_role")
  e(screen_b(fake, role = "developer"), "tabscreen_error_role")
  e(screen_b(fake, api_url = "ftp://example.org"), "tabscreen_error_api_url")
  e(screen_b(fake, tools = list(tool_a)), "tabscreen_error_tools")
  e(screen_b(fake, tools = list(list(name = "x"))), "tabscreen_error_tools")
  e(screen_b(fake, reasoning_effort = "minimal"), "tabscreen_error_reasoning_effort")
  e(screen_b(fake, reasoning_effort = "xhigh"), "tabscreen_error_model_reasoning")
  e(screen_b(fake, model = "claude-opus-5-5", reasoning_effort = "none"), "tabscreen_error_model_reasoning")
  e(screen_b(fake, model = "claude-haiku-4-5", reasoning_effort = "low"), "tabscreen_error_model_reasoning")
  for (bad in list(0, -1, 1.5, "1024", NA_real_, c(10, 20), Inf)) {
    e(screen_b(fake, max_tokens = bad), "tabscreen_error_max_tokens")
  }
  e(screen_b(fake, max_tries = 0), "tabscreen_error_max_tries")
  e(screen_b(fake, seed_par = 1.5), "tabscreen_error_seed_par")
  e(screen_b(fake, backoff = 2), "tabscreen_error_callback")
  e(screen_b(fake, reps = 2, incl_cutoff_upper = 2), "tabscreen_error_cutoff")
  expect_flags_checked(fake, screen_b, "tabscreen_b", "yes")
  # no top_p and no tool_choice argument: in `...` they are refused
  e(screen_b(fake, tool_choice = "auto"), "tabscreen_error_dots")
  e(screen_b(fake, thinking = list(type = "adaptive")), "tabscreen_error_dots")
  e(screen_b(fake, output_config = list(effort = "low")), "tabscreen_error_dots")
  e(screen_b(fake, max_tokens = 10, system = "x"), "tabscreen_error_dots")
  # (an unnamed argument reaches `...` only after every other one; `seed` would match seed_par)
  expect_error(tabscreen:::check_dots("b", list(3)), class = "tabscreen_error_dots")
  expect_error(tabscreen:::check_dots("b", list(seed = 1)), class = "tabscreen_error_dots")
  expect_error(tabscreen:::check_dots("b", list(model = "x")), class = "tabscreen_error_dots")
  expect_equal(tabscreen:::check_dots("b", list(stop_sequences = list("x"))), list(stop_sequences = list("x")))
  # safety limits
  e(screen_b(fake, reps = 11), "tabscreen_error_force")
  e(screen_b(fake, data = filges2015_dat, model = "claude-fable-5-1", reps = 10), "tabscreen_error_force")
  expect_equal(fake$stats()$requests_total, 0)

  # a missing key is reported after every other argument
  expect_key_checked_last(fake, screen_b, "tabscreen_b", "PROVIDER_B_API_KEY", list(reps = 11), "tabscreen_error_force")
})

test_that("the price guard lets a screening under 15 USD through and force overrides the limits", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-force")
  res <- screen_b(fake, data = test_records()[1:2, ], reps = 11, force = TRUE)
  expect_equal(nrow(res$answer_data), 22)
  models <- tabscreen:::lookup_models("claude-fable-5-1", "b", FALSE)
  estimate <- data.frame(model = "claude-fable-5-1", requests = 1, input_tokens = 1, output_tokens = 1, price = 15)
  expect_silent(tabscreen:::check_force_bc(models, 10, estimate, FALSE))
  estimate$price <- 15.01
  expect_error(tabscreen:::check_force_bc(models, 10, estimate, FALSE), class = "tabscreen_error_force")
  expect_silent(tabscreen:::check_force_bc(models, 10, estimate, TRUE))
})

test_that("api_url may be the base URL or the full Messages URL; seed_par is not sent", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-url")
  res <- screen_b(fake, api_url = paste0(fake$url_b, "/v1/messages"), seed_par = 11, data = test_records()[1:2, ])
  expect_null(res$error_data)
  expect_equal(unique(vapply(fake$requests(), function(r) r$path, "")), "/v1/messages")
  expect_null(request_bodies(fake)[[1]]$seed)
  expect_equal(attr(res, "arg_list")$run_options$seed, 11)
  res <- screen_b(fake, api_url = paste0(fake$url_b, "/"), data = test_records()[1:2, ])
  expect_null(res$error_data)
})

test_that("the key never appears in the result or its print", {
  expect_key_never_shown(screen_b, "PROVIDER_B_API_KEY", "sk-ant-SECRET-b1b2b3b4b5",
    explicit_key = "sk-ant-explicit-KEY-zz99", confidence = TRUE)
})

test_that("print shows provider B", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-print")
  res <- screen_b(fake, reps = 2, confidence = TRUE)
  text <- c(capture.output(out <- capture.output(print(res)), type = "message"), out)
  expect_true(any(grepl("provider B", text)))
  expect_true(any(grepl("16 requests", text)))
})

test_that("rate_limits_per_minute() reads provider B's headers", {
  fake <- local_keyed_fake("PROVIDER_B_API_KEY", "sk-ant-test-limits", rpm = 600, tpm = 200000)
  lim <- rate_limits_per_minute(c("claude-haiku-5-5", "claude-opus-5-5"), AI_tool = "b", api_url = fake$url_b)
  expect_s3_class(lim, "tbl_df")
  expect_rate_limits_read(lim)
  expect_true(all(lim$remaining_requests <= 600))
  expect_false(anyNA(as.POSIXct(lim$reset_requests, format = "%Y-%m-%dT%H:%M:%S", tz = "UTC")))
  req <- fake$requests()[[1]]
  expect_equal(req$path, "/v1/messages")
  expect_equal(unlist(req$headers[["Anthropic-Version"]]), "2023-06-01")
  expect_match(unlist(req$headers[["X-Api-Key"]]), "redacted")
  expect_identical(req$body$max_tokens, 16L)
  # the default model
  expect_equal(rate_limits_per_minute(AI_tool = "B", api_url = fake$url_b)$model, "claude-haiku-5-5")
  fake$configure(invalid_keys = "sk-ant-bad")
  expect_error(rate_limits_per_minute(AI_tool = "b", api_key = "sk-ant-bad", api_url = fake$url_b),
    class = "tabscreen_error_auth")
  fake$configure(invalid_keys = list(), fail_first_n = list(kind = "quota", n = 1))
  expect_error(rate_limits_per_minute(AI_tool = "b", api_url = fake$url_b), class = "tabscreen_error_quota")
  expect_rate_limits_need_key("PROVIDER_B_API_KEY", AI_tool = "b", api_url = fake$url_b)
})
