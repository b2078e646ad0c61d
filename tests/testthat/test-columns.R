# The columns of answer_data and answer_data_aggregated of the three providers against the tables
# of spec sections 2.3 and 2.4 ("Present in"), with the conditions of the spec and of provider A
# (decision_description, confidence, token_info, time_info).

# Spec 2.3, in order: column, providers, condition (NA: always).
spec_answer_columns <- data.frame(
  column = c("studyid", "title", "abstract", "promptid", "prompt", "model", "iterations", "question",
    "top_p", "decision_llm", "detailed_description", "decision_binary", "confidence", "prompt_tokens",
    "completion_tokens", "submodel", "run_time", "run_date", "n"),
  present_in = c("abc", "abc", "abc", "abc", "abc", "abc", "abc", "abc",
    "ac", "abc", "abc", "abc", "bc", "abc",
    "abc", "abc", "abc", "abc", "abc"),
  condition = c(NA, NA, NA, NA, NA, NA, NA, NA,
    NA, NA, "decision_description", NA, "confidence", "token_info",
    "token_info", NA, "time_info", NA, NA),
  stringsAsFactors = FALSE
)

# Spec 2.4, in order.
spec_aggregated_columns <- data.frame(
  column = c("studyid", "title", "abstract", "promptid", "prompt", "model", "question", "top_p", "incl_p",
    "final_decision_llm", "final_decision_llm_num", "longest_answer", "mean_confidence", "reps",
    "n_mis_answers", "submodel"),
  present_in = c("abc", "abc", "abc", "abc", "abc", "abc", "abc", "ac", "abc",
    "abc", "abc", "abc", "bc", "abc",
    "abc", "abc"),
  condition = c(NA, NA, NA, NA, NA, NA, NA, NA, NA,
    NA, NA, "decision_description", "confidence", NA,
    NA, NA),
  stringsAsFactors = FALSE
)

expected_columns <- function(spec, provider, flags) {
  keep <- grepl(provider, spec$present_in, fixed = TRUE) &
    (is.na(spec$condition) | vapply(spec$condition, function(c) isTRUE(flags[[c]]), logical(1)))
  spec$column[keep]
}

screen_provider <- function(provider, fake, ...) {
  switch(provider,
    a = screen_a(fake, ...),
    b = screen_b(fake, ...),
    c = screen_c(fake, ...)
  )
}

test_that("every provider has exactly the spec's columns, in order, and the user's after them", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-a-cols", PROVIDER_B_API_KEY = "sk-b-cols", PROVIDER_C_API_KEY = "c-cols")
  fake <- local_fake_provider()
  user <- c("author", "eppi_id", "human_code")
  combos <- list(
    list(decision_description = FALSE, confidence = FALSE, token_info = TRUE, time_info = TRUE),
    list(decision_description = TRUE, confidence = TRUE, token_info = TRUE, time_info = TRUE),
    list(decision_description = TRUE, confidence = FALSE, token_info = FALSE, time_info = FALSE),
    list(decision_description = FALSE, confidence = TRUE, token_info = FALSE, time_info = TRUE)
  )
  recs <- test_records()[c(1, 5), ]
  for (provider in c("a", "b", "c")) {
    for (flags in combos) {
      args <- flags
      if (provider == "a") args$confidence <- NULL # not an argument of provider A
      info <- paste(provider, paste(names(flags), unlist(flags), collapse = ", "))
      res <- do.call(screen_provider, c(list(provider, fake, data = recs, reps = 2), args))
      expect_named(res$answer_data, c(expected_columns(spec_answer_columns, provider, flags), user))
      expect_named(res$answer_data_aggregated, c(expected_columns(spec_aggregated_columns, provider, flags), user))
      expect_s3_class(res$answer_data, "llm_tbl")
      expect_s3_class(res$answer_data_aggregated, "llm_agg_tbl")
      expect_equal(!is.null(res$price_data), flags$token_info, info = info)
    }
  }
})

test_that("error_data has the columns of answer_data for every provider", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-a-cols", PROVIDER_B_API_KEY = "sk-b-cols", PROVIDER_C_API_KEY = "c-cols")
  fake <- local_fake_provider()
  fake$configure(fail_matching = list(list(substring = test_records()$title[1], kind = "500")))
  for (provider in c("a", "b", "c")) {
    args <- list(provider, fake, max_tries = 1, reps = 2, decision_description = TRUE)
    if (provider != "a") args$confidence <- TRUE
    res <- do.call(screen_provider, args)
    expect_named(res$error_data, names(res$answer_data))
    expect_equal(nrow(res$error_data), 2)
    expect_equal(res$answer_data_aggregated$n_mis_answers[1], 2L)
  }
})

test_that("the three functions take the spec's arguments in the spec's order, with its defaults", {
  spec <- list(
    tabscreen_a.tools = "data, prompt, studyid, title, abstract, api_url, model, role, tools, tool_choice, top_p, time_info, token_info, api_key, max_tries, max_seconds, is_transient, backoff, after, rpm, reps, seed_par, progress, decision_description, messages, incl_cutoff_upper, incl_cutoff_lower, force, custom_model, fine_tuned, reasoning_effort, verbosity, overinclusive, ...",
    tabscreen_b = "data, prompt, studyid, title, abstract, api_url, model, role, tools, time_info, token_info, api_key, max_tries, max_tokens, max_seconds, is_transient, backoff, after, rpm, reps, seed_par, progress, decision_description, messages, incl_cutoff_upper, incl_cutoff_lower, force, custom_model, reasoning_effort, overinclusive, confidence, ...",
    tabscreen_c = "data, prompt, studyid, title, abstract, api_url, model, role, tools, tool_choice, top_p, time_info, token_info, api_key, max_tries, max_seconds, is_transient, backoff, after, rpm, reps, seed_par, progress, decision_description, messages, incl_cutoff_upper, incl_cutoff_lower, force, custom_model, reasoning_effort, overinclusive, confidence, ..."
  )
  for (fun in names(spec)) {
    expect_identical(names(formals(fun)), strsplit(spec[[fun]], ", ")[[1]], info = fun)
  }
  defaults <- list(role = "user", tools = NULL, time_info = TRUE, token_info = TRUE, max_tries = 16,
    max_seconds = NULL, backoff = NULL, after = NULL, rpm = 10000, reps = 1, seed_par = NULL, progress = TRUE,
    decision_description = FALSE, messages = TRUE, incl_cutoff_upper = NULL, incl_cutoff_lower = NULL,
    force = FALSE, custom_model = FALSE, overinclusive = TRUE)
  for (fun in names(spec)) {
    f <- formals(fun)
    for (arg in names(defaults)) expect_identical(f[[arg]], defaults[[arg]], info = paste(fun, arg))
    expect_identical(f$is_transient, quote(llm_is_transient), info = fun)
  }
  b <- formals(tabscreen_b)
  expect_identical(b[c("api_url", "model", "max_tokens", "reasoning_effort", "confidence")],
    list(api_url = "https://api.anthropic.com", model = "claude-haiku-5-5", max_tokens = 1024,
      reasoning_effort = "medium", confidence = FALSE))
  expect_identical(b$api_key, quote(get_api_key_b()))
  c_ <- formals(tabscreen_c)
  expect_identical(c_[c("api_url", "model", "tool_choice", "top_p", "reasoning_effort", "confidence")],
    list(api_url = "https://api.mistral.ai/v1/chat/completions", model = "mistral-small-latest", tool_choice = NULL,
      top_p = 1, reasoning_effort = "none", confidence = FALSE))
  expect_identical(c_$api_key, quote(get_api_key_c()))
  # the default models are known and have rules
  rules <- tabscreen:::model_rules()
  expect_true(all(c("claude-haiku-5-5", "mistral-small-latest") %in% rules$model))
})

test_that("custom tools: the explanation fills detailed_description, every argument is kept in tool_arguments", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-a-tools", PROVIDER_B_API_KEY = "sk-b-tools", PROVIDER_C_API_KEY = "c-tools")
  fake <- local_fake_provider(seed = 21)
  schema <- list(type = "object", properties = list(
    decision_llm = list(type = "string", enum = c("1", "0")),
    population = list(type = "string", enum = c("adolescents", "adults")),
    notes = list(type = "string"),
    reason = list(type = "string"),
    pages = list(type = "array", items = list(type = "integer"))
  ), required = c("decision_llm", "population", "notes", "reason", "pages"))
  chat_tool <- list(list(type = "function", `function` = list(name = "judge", parameters = schema)))
  tools <- list(a = chat_tool, b = list(list(name = "judge", input_schema = schema)), c = chat_tool)
  arguments <- c("decision_llm", "population", "notes", "reason", "pages")
  recs <- test_records()[1:3, ]
  for (provider in c("a", "b", "c")) {
    res <- screen_provider(provider, fake, data = recs, tools = tools[[provider]], decision_description = TRUE, reps = 2)
    a <- res$answer_data
    expect_equal(names(a)[match("n", names(a)) + 0:1], c("n", "tool_arguments"))
    expect_equal(tail(names(a), 3), user_cols)
    args <- lapply(a$tool_arguments, jsonlite::fromJSON)
    expect_true(all(vapply(args, function(x) setequal(names(x), arguments), logical(1))), info = provider)
    expect_equal(a$decision_llm, vapply(args, `[[`, "", "decision_llm"))
    # "reason" names a reason; "notes" is free text too but does not
    expect_equal(a$detailed_description, vapply(args, `[[`, "", "reason"), info = provider)
    expect_false(anyNA(res$answer_data_aggregated$longest_answer))
  }
  # the built-in tool has no such column
  expect_false("tool_arguments" %in% names(screen_a(fake, data = recs)$answer_data))

  # answers taken from the store keep their arguments, and so do re-sent ones
  fake$configure(fail_matching = list(list(substring = recs$title[2], kind = "500")))
  first <- screen_a(fake, data = recs, tools = chat_tool, decision_description = TRUE, max_tries = 1)
  expect_equal(nrow(first$error_data), 1)
  expect_equal(names(first$error_data), names(first$answer_data))
  expect_true(is.na(first$error_data$tool_arguments))
  fake$configure(fail_matching = list())
  resumed <- screen_a(fake, data = recs, tools = chat_tool, decision_description = TRUE, max_tries = 1)
  expect_equal(attr(resumed, "run_info")$stored_answers, 2L)
  expect_equal(resumed$answer_data$tool_arguments[-2], first$answer_data$tool_arguments)
  expect_false(anyNA(resumed$answer_data$tool_arguments))
  repaired <- screen_errors(first, messages = FALSE)
  expect_equal(names(repaired$answer_data), names(first$answer_data))
  expect_false(anyNA(repaired$answer_data$tool_arguments))
})
