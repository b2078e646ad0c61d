# Every bad input is a classed error raised before any request reaches the provider.

test_that("bad data and column mappings are classed errors", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-check-args")
  fake <- local_fake_provider()
  recs <- test_records()

  expect_arg_error(screen_a(fake, data = "not a data frame"), "tabscreen_error_data")
  expect_arg_error(screen_a(fake, data = recs[0, ]), "tabscreen_error_data")
  expect_arg_error(screen_a(fake, title = "titel"), "tabscreen_error_data_column")
  expect_arg_error(screen_a(fake, abstract = "abstracts"), "tabscreen_error_data_column")
  expect_arg_error(screen_a(fake, studyid = "no_such_id"), "tabscreen_error_data_column")
  expect_arg_error(
    tabscreen_a.tools(recs, test_prompt, abstract = abstract, api_url = fake$url),
    "tabscreen_error_data_column"
  )
  expect_arg_error(
    tabscreen_a.tools(recs, test_prompt, title = title, api_url = fake$url),
    "tabscreen_error_data_column"
  )
  expect_arg_error(tabscreen_a.tools(recs, test_prompt, title = ttl, abstract = abstract, api_url = fake$url),
    "tabscreen_error_data_column")
  numeric_title <- recs
  numeric_title$title <- seq_len(nrow(recs))
  expect_arg_error(screen_a(fake, data = numeric_title), "tabscreen_error_data_column")

  dup <- recs
  dup$studyid[2] <- dup$studyid[1]
  cnd <- expect_arg_error(screen_a(fake, data = dup), "tabscreen_error_studyid")
  expect_equal(cnd$arg, "studyid")
  na_id <- recs
  na_id$studyid[3] <- NA
  expect_arg_error(screen_a(fake, data = na_id), "tabscreen_error_studyid")

  expect_equal(fake$stats()$requests_total, 0)
})

test_that("a suggestion is made for a misspelt column", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-check-args")
  fake <- local_fake_provider()
  cnd <- expect_arg_error(screen_a(fake, title = "titel"), "tabscreen_error_data_column")
  expect_match(conditionMessage(cnd), "title", fixed = TRUE)
  expect_match(conditionMessage(cnd), "Did you mean", fixed = TRUE)
})

test_that("bad prompts, reps, rpm and cut-offs are classed errors", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-check-args")
  fake <- local_fake_provider()

  expect_arg_error(screen_a(fake, prompt = c("same", "same")), "tabscreen_error_prompt")
  expect_arg_error(screen_a(fake, prompt = ""), "tabscreen_error_prompt")
  expect_arg_error(screen_a(fake, prompt = "   "), "tabscreen_error_prompt")
  expect_arg_error(screen_a(fake, prompt = NA_character_), "tabscreen_error_prompt")
  expect_arg_error(screen_a(fake, prompt = character()), "tabscreen_error_prompt")
  expect_arg_error(screen_a(fake, prompt = 1), "tabscreen_error_prompt")

  expect_arg_error(screen_a(fake, reps = 0), "tabscreen_error_reps")
  expect_arg_error(screen_a(fake, reps = 1.5), "tabscreen_error_reps")
  expect_arg_error(screen_a(fake, reps = NA), "tabscreen_error_reps")
  expect_arg_error(screen_a(fake, reps = c(1, 2)), "tabscreen_error_reps")
  expect_arg_error(screen_a(fake, model = c("gpt-6-luna", "gpt-5.6-luna"), reps = c(1, 2, 3)), "tabscreen_error_reps")
  expect_arg_error(screen_a(fake, rpm = 0), "tabscreen_error_rpm")
  expect_arg_error(screen_a(fake, rpm = -10), "tabscreen_error_rpm")
  expect_arg_error(screen_a(fake, rpm = c(10, 20)), "tabscreen_error_rpm")
  expect_arg_error(screen_a(fake, rpm = "fast"), "tabscreen_error_rpm")

  expect_arg_error(screen_a(fake, reps = 2, incl_cutoff_upper = 1.5), "tabscreen_error_cutoff")
  expect_arg_error(screen_a(fake, reps = 2, incl_cutoff_upper = -0.1), "tabscreen_error_cutoff")
  expect_arg_error(screen_a(fake, reps = 2, incl_cutoff_upper = 0.5, incl_cutoff_lower = 1.2), "tabscreen_error_cutoff")
  expect_arg_error(screen_a(fake, reps = 2, incl_cutoff_lower = 0.2), "tabscreen_error_cutoff")
  expect_arg_error(screen_a(fake, reps = 2, incl_cutoff_upper = 0.3, incl_cutoff_lower = 0.4), "tabscreen_error_cutoff")
  # also when reps = 1, where the cut-offs have no effect
  expect_arg_error(screen_a(fake, incl_cutoff_upper = 2), "tabscreen_error_cutoff")

  expect_equal(fake$stats()$requests_total, 0)
})

test_that("bad models are classed errors with a way forward", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-check-args")
  fake <- local_fake_provider()

  cnd <- expect_arg_error(screen_a(fake, model = "gpt-6-lunar"), "tabscreen_error_model_unknown")
  msg <- conditionMessage(cnd)
  expect_match(msg, "gpt-6-luna", fixed = TRUE)
  expect_match(msg, "custom_model = TRUE", fixed = TRUE)
  expect_match(msg, "tabscreen.model_prizes", fixed = TRUE)
  expect_equal(cnd$arg, "model")
  # a provider B model is not a provider A model
  expect_arg_error(screen_a(fake, model = "claude-haiku-5-5"), "tabscreen_error_model_unknown")
  expect_arg_error(screen_a(fake, model = c("gpt-6-luna", "gpt-6-luna")), "tabscreen_error_model_duplicated")
  expect_arg_error(screen_a(fake, model = NA_character_), "tabscreen_error_model")
  expect_arg_error(screen_a(fake, model = character()), "tabscreen_error_model")

  # rules of the models
  expect_arg_error(screen_a(fake, model = "gpt-6-astra"), "tabscreen_error_model_tools")
  expect_arg_error(screen_a(fake, model = "gpt-6.1-sol", force = TRUE), "tabscreen_error_model_tools")
  expect_arg_error(screen_a(fake, reasoning_effort = "low"), "tabscreen_error_model_reasoning")
  expect_arg_error(screen_a(fake, model = "gpt-4o-mini", reasoning_effort = "low"), "tabscreen_error_model_reasoning")
  expect_arg_error(screen_a(fake, model = "gpt-5-mini", reasoning_effort = "none"), "tabscreen_error_model_reasoning")
  expect_arg_error(screen_a(fake, model = "gpt-4o-mini", verbosity = "high"), "tabscreen_error_model_verbosity")
  expect_arg_error(screen_a(fake, model = "gpt-5-mini", top_p = 0.5), "tabscreen_error_model_top_p")
  expect_arg_error(screen_a(fake, model = "gpt-5.1", reasoning_effort = "low", top_p = 0.5, force = TRUE),
    "tabscreen_error_model_top_p")

  expect_equal(fake$stats()$requests_total, 0)
})

test_that("bad request settings are classed errors", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-check-args")
  fake <- local_fake_provider()
  tool <- list(type = "function", `function` = list(name = "decide", parameters = list(type = "object")))

  expect_arg_error(screen_a(fake, tools = 1), "tabscreen_error_tools")
  expect_arg_error(screen_a(fake, tools = "not json ["), "tabscreen_error_tools")
  expect_arg_error(screen_a(fake, tools = tool), "tabscreen_error_tools")
  expect_arg_error(screen_a(fake, tools = list(list(type = "function"))), "tabscreen_error_tools")
  expect_arg_error(screen_a(fake, tool_choice = "auto"), "tabscreen_error_tool_choice")
  expect_arg_error(screen_a(fake, tools = list(tool), tool_choice = "other_tool"), "tabscreen_error_tool_choice")
  expect_arg_error(screen_a(fake, tools = list(tool), tool_choice = 3), "tabscreen_error_tool_choice")

  expect_arg_error(screen_a(fake, top_p = 1.5), "tabscreen_error_top_p")
  expect_arg_error(screen_a(fake, top_p = -0.1), "tabscreen_error_top_p")
  expect_arg_error(screen_a(fake, top_p = NA_real_), "tabscreen_error_top_p")
  expect_arg_error(screen_a(fake, top_p = c(1, 1)), "tabscreen_error_top_p")

  expect_arg_error(screen_a(fake, reasoning_effort = "hgh"), "tabscreen_error_reasoning_effort")
  expect_arg_error(screen_a(fake, reasoning_effort = c("low", "high")), "tabscreen_error_reasoning_effort")
  expect_arg_error(screen_a(fake, verbosity = "loud"), "tabscreen_error_verbosity")
  expect_arg_error(screen_a(fake, role = c("user", "system")), "tabscreen_error_role")
  expect_arg_error(screen_a(fake, role = 1), "tabscreen_error_role")
  expect_arg_error(screen_a(fake, role = "use"), "tabscreen_error_role")
  expect_arg_error(screen_a(fake, api_url = "ftp://example.org"), "tabscreen_error_api_url")
  expect_arg_error(screen_a(fake, api_url = c(fake$url, fake$url)), "tabscreen_error_api_url")

  expect_arg_error(screen_a(fake, max_tries = 0), "tabscreen_error_max_tries")
  expect_arg_error(screen_a(fake, max_tries = -1), "tabscreen_error_max_tries")
  expect_arg_error(screen_a(fake, max_tries = 2.5), "tabscreen_error_max_tries")
  expect_arg_error(screen_a(fake, max_tries = "16"), "tabscreen_error_max_tries")
  expect_arg_error(screen_a(fake, max_seconds = 0), "tabscreen_error_max_seconds")
  expect_arg_error(screen_a(fake, max_seconds = c(1, 2)), "tabscreen_error_max_seconds")
  expect_arg_error(screen_a(fake, seed_par = 1.5), "tabscreen_error_seed_par")

  expect_arg_error(screen_a(fake, is_transient = TRUE), "tabscreen_error_callback")
  expect_arg_error(screen_a(fake, is_transient = llm_is_transient(httr2::response(503))), "tabscreen_error_callback")
  expect_arg_error(screen_a(fake, backoff = 2), "tabscreen_error_callback")
  expect_arg_error(screen_a(fake, after = "Retry-After"), "tabscreen_error_callback")
  expect_arg_error(screen_a(fake, backoff = function() 1), "tabscreen_error_callback")

  for (flag in c("time_info", "token_info", "progress", "decision_description", "messages", "force",
    "custom_model", "overinclusive")) {
    expect_arg_error(do.call(screen_a, c(list(fake), stats::setNames(list("yes"), flag))), "tabscreen_error_arg_flag")
    expect_arg_error(do.call(screen_a, c(list(fake), stats::setNames(list(NA), flag))), "tabscreen_error_arg_flag")
  }

  recs <- test_records()
  # an unnamed argument reaches `...` only after every other one
  expect_error(tabscreen:::check_extra_body(list(5), tabscreen:::reserved_body_a), class = "tabscreen_error_dots")
  expect_error(tabscreen:::check_extra_body(list(model = "x"), tabscreen:::reserved_body_a), class = "tabscreen_error_dots")
  expect_arg_error(screen_a(fake, n = 3), "tabscreen_error_dots")
  expect_arg_error(screen_a(fake, stream = TRUE), "tabscreen_error_dots")
  expect_arg_error(
    tabscreen_a.tools(recs, test_prompt, studyid, title, abstract, api_url = fake$url, temperature = 0, temperature = 1),
    "tabscreen_error_dots"
  )

  expect_equal(fake$stats()$requests_total, 0)
})

test_that("the safety limits refuse without force", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-check-args")
  fake <- local_fake_provider()
  expect_arg_error(screen_a(fake, model = "gpt-4o-mini", reps = 11), "tabscreen_error_force")
  expect_arg_error(screen_a(fake, model = "gpt-5.6-luna", reps = 11), "tabscreen_error_force")
  expect_arg_error(screen_a(fake, model = "gpt-6.1-terra", reps = 2), "tabscreen_error_force")
  expect_arg_error(screen_a(fake, model = "gpt-4o", reps = 2), "tabscreen_error_force")
  expect_arg_error(
    screen_a(fake, model = c("gpt-6-luna", "gpt-4.1"), reps = c(10, 2)),
    "tabscreen_error_force"
  )
  expect_equal(fake$stats()$requests_total, 0)
})

test_that("a missing key is reported after every other argument", {
  withr::local_envvar(PROVIDER_A_API_KEY = NA)
  fake <- local_fake_provider()
  cnd <- expect_arg_error(screen_a(fake), "tabscreen_error_api_key", arg = FALSE)
  expect_match(conditionMessage(cnd), "PROVIDER_A_API_KEY", fixed = TRUE)
  # a bad argument wins over the missing key
  expect_arg_error(screen_a(fake, model = "no-such-model"), "tabscreen_error_model_unknown")
  expect_arg_error(screen_a(fake, reps = 0), "tabscreen_error_reps")
  expect_arg_error(screen_a(fake, model = "gpt-4o", reps = 3), "tabscreen_error_force")
  # an explicit empty key
  expect_arg_error(screen_a(fake, api_key = ""), "tabscreen_error_api_key", arg = FALSE)
  expect_arg_error(screen_a(fake, api_key = NULL), "tabscreen_error_api_key", arg = FALSE)
  expect_arg_error(screen_a(fake, api_key = c("a", "b")), "tabscreen_error_api_key", arg = FALSE)
  expect_equal(fake$stats()$requests_total, 0)
})

test_that("fine_tuned is deprecated and stands for custom_model", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-check-args")
  fake <- local_fake_provider()
  expect_warning(
    expect_arg_error(screen_a(fake, data = "x", fine_tuned = TRUE), "tabscreen_error_data"),
    class = "tabscreen_warning_deprecated"
  )
  expect_warning(
    expect_arg_error(screen_a(fake, fine_tuned = "yes"), "tabscreen_error_arg_flag")
  , NA)
  expect_equal(fake$stats()$requests_total, 0)
})

# A custom tool in the Chat Completions shape (providers A and C).
decide_tool <- list(type = "function", `function` = list(name = "decide", description = "Record the decision.",
  parameters = list(type = "object", properties = list(decision_llm = list(type = "string", enum = c("1", "0"))),
    required = "decision_llm")))

test_that("tool_choice must name one of the tools (providers A and C)", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-check-args", PROVIDER_C_API_KEY = "sk-test-check-args")
  fake <- local_fake_provider()
  decide <- decide_tool
  choose <- function(name) list(type = "function", `function` = list(name = name))

  cnd <- expect_arg_error(screen_a(fake, tools = list(decide), tool_choice = choose("other")), "tabscreen_error_tool_choice")
  expect_equal(cnd$arg, "tool_choice")
  expect_match(conditionMessage(cnd), "\"other\"", fixed = TRUE)
  expect_match(conditionMessage(cnd), "\"decide\"", fixed = TRUE)
  allowed <- function(name) {
    list(type = "allowed_tools", allowed_tools = list(mode = "required", tools = list(choose(name))))
  }
  expect_arg_error(screen_a(fake, tools = list(decide), tool_choice = allowed("other")), "tabscreen_error_tool_choice")
  # provider B's shape is not provider A's
  expect_arg_error(screen_a(fake, tools = list(decide), tool_choice = list(type = "tool", name = "decide")),
    "tabscreen_error_tool_choice")
  cnd <- expect_arg_error(screen_c(fake, tools = list(decide), tool_choice = choose("decid")),
    "tabscreen_error_tool_choice", fun = "tabscreen_c")
  expect_match(conditionMessage(cnd), "Did you mean", fixed = TRUE)
  expect_equal(fake$stats()$requests_total, 0)

  # the choices that name a tool that is there still screen
  res <- screen_a(fake, data = test_records()[1:2, ], tools = list(decide), tool_choice = choose("decide"))
  expect_equal(nrow(res$answer_data), 2)
  res <- screen_a(fake, data = test_records()[1:2, ], tools = list(decide), tool_choice = allowed("decide"))
  expect_equal(nrow(res$answer_data), 2)
  res <- screen_c(fake, data = test_records()[1:2, ], tools = list(decide), tool_choice = choose("decide"))
  expect_equal(nrow(res$answer_data), 2)
})

test_that("tools must have usable, distinct names (provider B's forced tool, and A and C)", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-check-args", PROVIDER_B_API_KEY = "sk-test-check-args")
  fake <- local_fake_provider()
  # Provider B forces no user choice; what it relies on is that tools have usable, distinct names.
  decide_b <- list(name = "decide", input_schema = list(type = "object",
    properties = list(decision_llm = list(type = "string", enum = c("1", "0")))))
  cnd <- expect_arg_error(screen_b(fake, tools = list(decide_b, decide_b)), "tabscreen_error_tools", fun = "tabscreen_b")
  expect_match(conditionMessage(cnd), "more than one tool named", fixed = TRUE)
  spaced <- decide_b
  spaced$name <- "record decision"
  expect_arg_error(screen_b(fake, tools = list(spaced)), "tabscreen_error_tools", fun = "tabscreen_b")
  expect_arg_error(screen_a(fake, tools = list(decide_tool, decide_tool)), "tabscreen_error_tools")
  expect_equal(fake$stats()$requests_total, 0)
})

test_that("screen_errors() checks its arguments even when there is nothing to re-send", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-check-args")
  fake <- local_fake_provider()
  res <- screen_a(fake, data = test_records()[1:2, ])
  expect_null(res$error_data)
  expect_arg_error(screen_errors(res, max_tries = 0), "tabscreen_error_max_tries", fun = "screen_errors")
  expect_arg_error(screen_errors(res, backoff = 2), "tabscreen_error_callback", fun = "screen_errors")
  expect_arg_error(screen_errors(res, api_key = NA), "tabscreen_error_api_key", fun = "screen_errors")
  expect_arg_error(screen_errors(res, stream = TRUE), "tabscreen_error_dots", fun = "screen_errors")
  expect_message(expect_identical(screen_errors(res, max_tries = 2, messages = TRUE), res), "no failed requests")
})
