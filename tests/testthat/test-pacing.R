# Pacing by tokens per minute: options(tabscreen.tpm), and the limits the provider reports in its
# rate-limit headers, against a fake provider that enforces them, counted as a refilled bucket, over
# a sliding minute, or by the second: a refilled bucket that holds only a second's tokens (tpm_mode).

# Records of one length, so that every request counts the same tokens and the engine's estimate,
# once corrected by the first answers, is that count: the outcome does not depend on timing.
even_records <- function(n) {
  data.frame(
    studyid = seq_len(n),
    title = sprintf("Trial %02d of family therapy for adolescents", seq_len(n)),
    abstract = sprintf("Abstract %02d: %s", seq_len(n), strrep("Young people who use drugs were randomised. ", 4))
  )
}

screen_even <- function(fun, url, n, reps) {
  screen_with(fun, url, data = even_records(n), reps = reps)
}

test_that("options(tabscreen.tpm) keeps a screening within the provider's tokens per minute", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-tpm")
  # a provider that holds 2,000 tokens a second, with no burst above; the option asks for half its limit
  fake <- local_fake_provider(tpm = 120000, tpm_mode = "second")
  withr::local_options(tabscreen.tpm = 60000)
  res <- screen_even("tabscreen_a.tools", fake$url, n = 10, reps = 2)
  st <- fake$stats()
  expect_equal(nrow(res$answer_data), 20)
  expect_null(res$error_data)
  # the screening needed more tokens than three seconds of the option's pace, and none was refused
  expect_gt(st$tokens_counted, 3 * 60000 / 60)
  expect_equal(sum(unlist(st$refused_by_cause)), 0)
  expect_equal(st$requests_total, 20)
  expect_equal(st$tokens_counted, sum(res$answer_data$prompt_tokens + res$answer_data$completion_tokens))
})

test_that("a token limit counted over any sliding minute or by the second is kept, learned from the headers", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-tpm")
  for (mode in c("window", "second")) {
    # 60,000 tokens a minute: in "second" mode, a bucket of 1,000 refilled at 1,000 a second
    fake <- local_fake_provider(tpm = 60000, tpm_mode = mode)
    res <- screen_even("tabscreen_a.tools", fake$url, n = 10, reps = 3)
    st <- fake$stats()
    expect_equal(nrow(res$answer_data), 30, label = mode)
    expect_null(res$error_data, label = mode)
    expect_gt(st$tokens_counted, 5 * 60000 / 60)
    # Sent as fast as the requests allow, every request after the first second would be refused.
    # The even pace keeps each second near the limit's sixtieth; a request that came late or an
    # estimate that fell short may be refused once or twice (requests in flight), and lowers it.
    expect_lte(st$refused_by_cause$tokens, if (mode == "window") 0 else 2, label = mode)
    expect_equal(st$refused_by_cause$requests + st$refused_by_cause$injected, 0, label = mode)
  }
})

test_that("without the option, the limits the provider reports are learned and followed", {
  withr::local_envvar(PROVIDER_B_API_KEY = "sk-test-tpm", PROVIDER_C_API_KEY = "sk-test-tpm")
  # one request at a time: each answer's headers are read before the next request is sent
  withr::local_options(tabscreen.max_active = 1)
  for (fun in c("tabscreen_b", "tabscreen_c")) {
    # a fake of its own per provider: the limits' history of one run does not reach the next
    fake <- local_fake_provider(tpm = 60000, rpm = 600, tpm_mode = "second")
    url <- if (fun == "tabscreen_b") fake$url_b else fake$url_c
    res <- screen_even(fun, url, n = 10, reps = 2)
    st <- fake$stats()
    expect_equal(nrow(res$answer_data), 20, label = fun)
    expect_null(res$error_data, label = fun)
    expect_gt(st$tokens_counted, 3 * 60000 / 60)
    # rpm = 10000 asked, 600 reported: the reported limit was kept, as was the token limit (at 600
    # requests a minute, unpaced, most seconds would hold twice the 1,000 tokens allowed)
    expect_equal(st$refused_by_cause$requests, 0, label = fun)
    expect_lte(st$refused_by_cause$tokens, 2, label = fun)
    expect_equal(st$requests_total, 20 + st$refused_by_cause$tokens, label = fun)
  }
})

test_that("a bad tabscreen.tpm is a classed error naming the option, before any request", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-tpm")
  fake <- local_fake_provider()
  for (bad in list(0, -5, NA_real_, Inf, c(1000, 2000), "200000", TRUE)) {
    withr::local_options(tabscreen.tpm = bad)
    cnd <- expect_error(screen_a(fake), class = "tabscreen_error_option")
    expect_s3_class(cnd, "tabscreen_error")
    expect_match(conditionMessage(cnd), "tabscreen.tpm", fixed = TRUE)
  }
  expect_equal(fake$stats()$requests_total, 0)

  # screen_errors() re-sends with this session's option
  withr::local_options(tabscreen.tpm = NULL)
  fake$configure(fail_matching = list(list(substring = test_records()$title[2], kind = "500")))
  res <- screen_a(fake, max_tries = 1)
  expect_equal(nrow(res$error_data), 1)
  fake$configure(fail_matching = list())
  withr::local_options(tabscreen.tpm = -1)
  expect_error(screen_errors(res, messages = FALSE), class = "tabscreen_error_option")
  withr::local_options(tabscreen.tpm = 100000)
  expect_null(screen_errors(res, messages = FALSE)$error_data)
})
