# screen_plan(): the plan and price of a call before anything is sent; the spending cap; the
# estimate of a resumed run; the estimate apart from the other messages.

plan_records <- function(n = 6) {
  data.frame(studyid = seq_len(n), title = paste("Plan test title", seq_len(n)),
    abstract = paste("Abstract of plan record", seq_len(n), strrep("words ", 30)))
}

plan_call <- function(fun, url, ...) {
  fun(plan_records(), prompt = "Is this a trial of family therapy?", studyid = studyid,
    title = title, abstract = abstract, api_url = url, progress = FALSE, ...)
}

test_that("screen_plan() returns the plan and prices without a key and without sending", {
  withr::local_envvar(PROVIDER_A_API_KEY = NA)
  fake <- local_fake_provider()
  plan <- screen_plan(tabscreen_a.tools, plan_records(), prompt = "Is this a trial of family therapy?",
    studyid = studyid, title = title, abstract = abstract, api_url = fake$url, reps = 3, rpm = 60)
  expect_s3_class(plan, "tabscreen_plan")
  expect_equal(fake$stats()$requests_total, 0)
  expect_equal(plan$records, 6)
  expect_equal(plan$requests, 18)
  expect_equal(plan$remaining, 18)
  expect_true(is.na(plan$run_id))
  expect_gt(plan$input_tokens, 18 * 150)
  expect_gt(plan$price, 0)
  expect_gte(plan$price_no_cache, plan$price)
  expect_equal(plan$price_batch, plan$price / 2, tolerance = 0.2)
  # 18 requests at 60 a minute.
  expect_equal(plan$minutes, 18 / 60)
  expect_equal(plan$models$model, "gpt-6-luna")
  table <- utils::capture.output(said <- utils::capture.output(print(plan), type = "message"))
  expect_true(any(grepl("gpt-6-luna", table)))
  text <- paste(cli::ansi_strip(said), collapse = "\n")
  expect_match(text, "6 records, 18 requests", fixed = TRUE)
  expect_match(text, "screen_batch()", fixed = TRUE)
  # An argument error is still an argument error.
  expect_error(screen_plan(tabscreen_a.tools, plan_records(), prompt = "p", title = title, abstract = abstract,
    reps = -1), class = "tabscreen_error_arg")
  expect_error(screen_plan(mean, 1), class = "tabscreen_error_plan_args")
})

test_that("on a resume the plan and the printed estimate count what remains", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-plan-resume")
  fake <- local_fake_provider()
  fake$configure(fail_matching = list(list(substring = "Plan test title 2", kind = "500"),
    list(substring = "Plan test title 5", kind = "500")))
  first <- plan_call(tabscreen_a.tools, fake$url, max_tries = 1, messages = FALSE)
  expect_equal(nrow(first$error_data), 2)
  plan <- screen_plan(tabscreen_a.tools, plan_records(), prompt = "Is this a trial of family therapy?",
    studyid = studyid, title = title, abstract = abstract, api_url = fake$url, progress = FALSE)
  expect_equal(plan$run_id, attr(first, "store")$run_id)
  expect_equal(plan$stored, 4)
  expect_equal(plan$remaining, 2)
  # Without the store, the same call's plan is the whole of it.
  full <- withr::with_options(list(tabscreen.store = FALSE), screen_plan(tabscreen_a.tools, plan_records(),
    prompt = "Is this a trial of family therapy?", studyid = studyid, title = title, abstract = abstract,
    api_url = fake$url, progress = FALSE))
  expect_equal(full$remaining, 6)
  expect_equal(plan$price, full$price * 2 / 6)

  fake$configure(fail_matching = list())
  fake$reset()
  said <- testthat::capture_messages(plan_call(tabscreen_a.tools, fake$url))
  said <- cli::ansi_strip(paste(said, collapse = "\n"))
  expect_match(said, "the answer store holds 4 of the 6 requests; 2 remain", fixed = TRUE)
  expect_equal(fake$stats()$requests_total, 2)
})

test_that("options(tabscreen.max_price) stops a run above it before sending; force = TRUE passes it", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-plan-cap")
  fake <- local_fake_provider()
  withr::local_options(tabscreen.max_price = 1e-7)
  cnd <- expect_error(plan_call(tabscreen_a.tools, fake$url, messages = FALSE), class = "tabscreen_error_price_cap")
  expect_s3_class(cnd, "tabscreen_error_force")
  expect_match(cli::ansi_strip(conditionMessage(cnd)), "options(tabscreen.max_price = 1e-07)", fixed = TRUE)
  expect_equal(fake$stats()$requests_total, 0)
  res <- plan_call(tabscreen_a.tools, fake$url, messages = FALSE, force = TRUE)
  expect_equal(nrow(res$answer_data), 6)
  withr::local_options(tabscreen.max_price = 100)
  expect_s3_class(plan_call(tabscreen_a.tools, fake$url, messages = FALSE, reps = 2), "llm")
  withr::local_options(tabscreen.max_price = "five")
  expect_error(plan_call(tabscreen_a.tools, fake$url, messages = FALSE), class = "tabscreen_error_option")
})

test_that("the estimate can be kept without the other messages, and silenced with them", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-plan-estimate")
  fake <- local_fake_provider()
  withr::local_options(tabscreen.store = FALSE)
  withr::local_options(tabscreen.estimate = TRUE)
  said <- testthat::capture_messages(plan_call(tabscreen_a.tools, fake$url, messages = FALSE))
  expect_true(any(grepl("Estimated price", said)))
  expect_length(said, 1)
  withr::local_options(tabscreen.estimate = FALSE)
  said <- testthat::capture_messages(plan_call(tabscreen_a.tools, fake$url, messages = TRUE))
  expect_false(any(grepl("Estimated price|Screening 6 records", said)))
})
