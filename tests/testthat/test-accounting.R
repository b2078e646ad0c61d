# The numbers of a result a user must be able to trust: the time each answer took, the tokens
# that add up to the price, and what a resumed or repaired run says about its own spend.

test_that("run_time is the whole request's time, its retries and waits included", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-run-time")
  fake <- local_fake_provider(retry_after_ms = 400)
  recs <- test_records()
  fake$configure(fail_matching = list(list(substring = recs$title[3], kind = "429", n = 1)))
  res <- screen_a(fake)
  a <- res$answer_data
  waited <- a$run_time[a$studyid == recs$studyid[3]]
  # the server said to wait 400 ms before the second attempt
  expect_gte(waited, 0.4)
  expect_true(all(a$run_time <= attr(res, "run_info")$elapsed_seconds))
  # the store keeps the same time, and its log the last attempt's own
  stored <- screen_store_answers(res)
  stored <- stored[match(as.character(a$studyid), stored$studyid), ]
  expect_equal(stored$run_time, a$run_time)
  log <- screen_store_log(res)
  last <- log[log$outcome == "answer" & log$studyid == as.character(recs$studyid[3]), ]
  expect_lt(last$took, waited - 0.4)
})

# The token columns of answer_data and error_data priced at the model's list price (the fake
# reports no cached tokens unless asked to, so every prompt token is priced alike).
priced <- function(res) {
  rows <- tabscreen:::rbind_rows(res$answer_data, res$error_data)
  prices <- tabscreen::model_prizes[tabscreen::model_prizes$provider == "a", ]
  p <- prices[match(rows$model, prices$model), ]
  sum((rows$prompt_tokens * p$input_per_million + rows$completion_tokens * p$output_per_million) / 1e6, na.rm = TRUE)
}

test_that("every billed token is in the token columns of its job, so that they price at price_dollar", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-tokens")
  fake <- local_fake_provider(seed = 11)
  recs <- test_records()
  for (store in c(TRUE, FALSE)) {
    if (!store) withr::local_options(tabscreen.store = FALSE)
    # re-asked replies (a value outside the enum, no tool call) on some jobs; record 2 never answers
    fake$configure(faults = list(bad_enum = 0.2, no_tool = 0.1),
      fail_matching = list(list(substring = recs$title[2], kind = "bad_enum")))
    res <- screen_a(fake, reps = 2)
    errors <- res$error_data
    expect_equal(sum(errors$studyid == recs$studyid[2]), 2)
    expect_true(all(errors$prompt_tokens > 0))
    expect_gt(fake$stats()$requests_total, 16)
    expect_equal(priced(res), res$price_dollar, tolerance = 1e-12)
    expect_equal(sum(res$price_data$total_price_dollar), res$price_dollar)

    # re-sent: the new answers carry what the first call spent on them, the price adds this call's
    fake$configure(faults = list(), fail_matching = list())
    fake$reset()
    again <- screen_errors(res, messages = FALSE)
    expect_null(again$error_data)
    expect_equal(fake$stats()$requests_total, nrow(errors))
    expect_equal(priced(again), again$price_dollar, tolerance = 1e-12)
    job <- function(d) paste(d$studyid, d$n)
    resent <- again$answer_data[match(job(errors), job(again$answer_data)), ]
    expect_true(all(resent$prompt_tokens > errors$prompt_tokens))
  }
})

test_that("a resumed run's tokens include its earlier calls' and price at its price_dollar", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-tokens-resume")
  fake <- local_fake_provider(seed = 12)
  recs <- test_records()
  fake$configure(fail_matching = list(list(substring = recs$title[4], kind = "bad_enum")))
  first <- screen_a(fake)
  expect_equal(nrow(first$error_data), 1)
  fake$configure(fail_matching = list())
  fake$reset()
  resumed <- screen_a(fake)
  expect_equal(fake$stats()$requests_total, 1)
  expect_null(resumed$error_data)
  expect_equal(priced(resumed), resumed$price_dollar, tolerance = 1e-12)
  # the whole run: what the first call spent, and the one request of this one
  expect_gt(resumed$price_dollar, first$price_dollar)
})

test_that("max_tries counts re-asks: max_tries = 1 sends exactly one request per job", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-max-tries")
  fake <- local_fake_provider(seed = 13)
  fake$configure(faults = list(no_tool = 1))
  for (tries in 1:3) {
    fake$reset()
    res <- screen_a(fake, data = test_records()[1:2, ], max_tries = tries)
    expect_equal(fake$stats()$requests_total, 2 * tries)
    expect_equal(nrow(res$error_data), 2)
    expect_equal(priced(res), res$price_dollar, tolerance = 1e-12)
  }
  # the re-ask cap of two stays: three replies at most, whatever max_tries allows
  fake$reset()
  res <- screen_a(fake, data = test_records()[1, ], max_tries = 16)
  expect_equal(fake$stats()$requests_total, 3)
  expect_match(res$error_data$decision_llm, "no usable answer in 3 replies")
})

printed_text <- function(x) {
  out <- NULL
  msg <- capture.output(out <- capture.output(print(x)), type = "message")
  paste(c(msg, out), collapse = "\n")
}

test_that("a resumed run says what this call spent and how many answers came from the store", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-resume-spend")
  fake <- local_fake_provider(seed = 14)
  recs <- test_records()
  fresh <- screen_a(fake, data = recs[1:3, ])
  info <- attr(fresh, "run_info")
  expect_equal(info$stored_answers, 0L)
  expect_equal(info$call_price_dollar, fresh$price_dollar)
  expect_no_match(printed_text(fresh), "this call|answer store")

  fake$configure(fail_matching = list(list(substring = recs$title[4], kind = "bad_enum")))
  first <- screen_a(fake)
  fake$configure(fail_matching = list())
  # quiet: the result itself must tell
  resumed <- screen_a(fake, messages = FALSE)
  info <- attr(resumed, "run_info")
  expect_equal(info$stored_answers, 7L)
  expect_equal(first$price_dollar + info$call_price_dollar, resumed$price_dollar, tolerance = 1e-12)
  expect_lt(info$call_price_dollar, resumed$price_dollar)
  text <- printed_text(resumed)
  expect_match(text, "for the whole run, of which this call spent", fixed = TRUE)
  expect_match(text, "7 of the 8 answers were taken from the answer store", fixed = TRUE)

  # screen_errors(): what it spent, added to the price it repairs
  fake$configure(fail_matching = list(list(substring = recs$title[5], kind = "bad_enum")))
  broken <- screen_a(fake, data = recs, prompt = "Another prompt, so another run.")
  fake$configure(fail_matching = list())
  repaired <- screen_errors(broken, messages = FALSE)
  info <- attr(repaired, "run_info")
  expect_equal(broken$price_dollar + info$call_price_dollar, repaired$price_dollar, tolerance = 1e-12)
  expect_match(printed_text(repaired), "of which this call spent", fixed = TRUE)
})

test_that("a completed run reused from the store is not called a resumption", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-reuse-words")
  fake <- local_fake_provider(seed = 15)
  first <- screen_a(fake)
  fake$reset()
  out <- collect_messages(screen_a(fake, messages = TRUE))
  expect_equal(fake$stats()$requests_total, 0)
  expect_no_match(paste(out$messages, collapse = "\n"), "Resuming")
  expect_match(paste(out$messages, collapse = "\n"), "completed the same requests: its 8 of 8 answers are returned and nothing is sent")
  info <- attr(out$value, "run_info")
  expect_equal(info$stored_answers, 8L)
  expect_equal(info$call_price_dollar, 0)
  expect_equal(out$value$price_dollar, first$price_dollar)
  text <- printed_text(out$value)
  expect_match(text, "of which this call spent $0.", fixed = TRUE)
  expect_match(text, "8 of the 8 answers were taken from the answer store", fixed = TRUE)
})

test_that("screen_errors() carries the repaired result's size, time and date, with or without a store", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-repair-info")
  fake <- local_fake_provider(seed = 16)
  recs <- test_records()
  for (store in list(FALSE, withr::local_tempfile(fileext = ".sqlite"))) {
    withr::local_options(tabscreen.store = store)
    fake$configure(fail_matching = list(list(substring = recs$title[2], kind = "bad_enum")))
    broken <- screen_a(fake, data = recs, prompt = paste("Repair info, store", store), reps = 2)
    before <- attr(broken, "run_info")
    expect_gt(before$failed, 0)
    fake$configure(fail_matching = list())
    repaired <- screen_errors(broken, messages = FALSE)
    info <- attr(repaired, "run_info")
    expect_null(repaired$error_data)
    expect_equal(info$total, before$total)
    expect_equal(info$total, nrow(repaired$answer_data))
    expect_equal(repaired$run_date, broken$run_date)
    expect_gt(info$elapsed_seconds, before$elapsed_seconds)
    expect_equal(nrow(repaired$answer_data_aggregated), nrow(broken$answer_data_aggregated))
    expect_true(all(repaired$answer_data_aggregated$n_mis_answers == 0))
  }
})
