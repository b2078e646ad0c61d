# Messages a user meets on the first day: none about a default the user did not set, and counts
# that agree with their nouns.

test_that("the defaults send no message about reasoning_effort, and the model's own effort", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-messages")
  fake <- local_fake_provider(seed = 61)
  out <- collect_messages(screen_a(fake, messages = TRUE))
  expect_false(any(grepl("reasoning", out$messages)))
  expect_true(any(grepl("Screening 8 records", out$messages, fixed = TRUE)))
  expect_true(all(vapply(request_bodies(fake), function(b) identical(b$reasoning_effort, "none"), logical(1))))
  # what the user sets and the model cannot take is still refused, before any request
  fake$reset()
  expect_arg_error(screen_a(fake, reasoning_effort = "high"), "tabscreen_error_model_reasoning")
  expect_equal(fake$stats()$requests_total, 0)
  # providers B and C with their defaults: no message about reasoning either
  withr::local_envvar(PROVIDER_B_API_KEY = "sk-ant-messages", PROVIDER_C_API_KEY = "c-messages")
  for (screen in list(screen_b, screen_c)) {
    out <- collect_messages(screen(fake, messages = TRUE))
    expect_false(any(grepl("reasoning", out$messages)))
  }
})

test_that("counts in argument errors agree with their nouns", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-messages")
  fake <- local_fake_provider(seed = 62)
  msg <- function(...) conditionMessage(expect_error(screen_a(fake, ...), class = "tabscreen_error_arg"))
  expect_match(msg(prompt = c("a", " ")), "prompt 2 is.", fixed = TRUE)
  expect_match(msg(prompt = c("a", " ", "")), "prompts 2 and 3 are.", fixed = TRUE)
  expect_match(msg(prompt = c("a", "a")), "(prompt 2)", fixed = TRUE)
  expect_match(msg(prompt = c("a", "b", "a", "b")), "(prompts 3 and 4)", fixed = TRUE)
  expect_match(msg(reps = 0), "0 is not.", fixed = TRUE)
  expect_match(msg(reps = c(0, 0.5), model = c("gpt-6-luna", "gpt-4o-mini")), "0 and 0.5 are not.", fixed = TRUE)
  recs <- test_records()
  recs$studyid[3] <- NA
  expect_match(msg(data = recs), "in row 3.", fixed = TRUE)
  recs$studyid[5] <- NA
  expect_match(msg(data = recs), "in rows 3 and 5.", fixed = TRUE)
  tool <- list(type = "function", `function` = list(description = "no name"))
  expect_match(msg(tools = list(tool)), "Tool 1 of `tools` has no", fixed = TRUE)
  expect_match(msg(tools = list(tool, tool)), "Tools 1 and 2 of `tools` have no", fixed = TRUE)
  withr::local_options(tabscreen.model_prizes = data.frame(model = c("m1", "m2"), input_per_million = c(-1, 1),
    output_per_million = c(1, -1)))
  expect_match(msg(), "Rows 1 and 2 of the option", fixed = TRUE)
  expect_equal(fake$stats()$requests_total, 0)
})
