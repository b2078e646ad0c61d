# Provider errors are caught by their HTTP status, through a class hierarchy as httr2's
# (tabscreen_error_http_429 < tabscreen_error_http < tabscreen_error), and keep the classes they had.

test_that("a run stopped by a refused key (401) is caught as tabscreen_error_http, and still as tabscreen_error_auth", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-revoked", seed = 81, invalid_keys = "sk-test-revoked")
  cnd <- tryCatch(screen_a(fake), tabscreen_error_http = identity)
  expect_s3_class(cnd, "tabscreen_error_auth")
  expect_http_status(cnd, 401)
  expect_s3_class(cnd$result, "llm")
  caught <- tryCatch(screen_a(fake), tabscreen_error_http_401 = function(e) "401", tabscreen_error_http = function(e) "other")
  expect_identical(caught, "401")
})

test_that("a run stopped by an exhausted quota (429) has the classes of 429 besides tabscreen_error_quota", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-quota", seed = 82)
  cnd <- expect_quota_stop(fake, screen_a)
  expect_http_status(cnd, 429)
  expect_false(inherits(cnd, "tabscreen_error_http_401"))
})

test_that("rate_limits_per_minute() raises the provider's error status as tabscreen_error_http_<status>", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-probe", seed = 83)
  fake$configure(fail_first_n = list(kind = "500", n = 1))
  cnd <- expect_error(rate_limits_per_minute(api_url = fake$url), class = "tabscreen_error_http_500")
  expect_http_status(cnd, 500)
  expect_false(inherits(cnd, "tabscreen_error_auth"))
  fake$configure(invalid_keys = "sk-bad")
  cnd <- expect_error(rate_limits_per_minute(api_key = "sk-bad", api_url = fake$url), class = "tabscreen_error_http")
  expect_s3_class(cnd, "tabscreen_error_auth")
  expect_http_status(cnd, 401)
  # nothing answers: no status, the class of a run that cannot reach its endpoint
  url <- fake$url
  fake$stop()
  cnd <- expect_error(rate_limits_per_minute(api_url = url), class = "tabscreen_error_endpoint")
  expect_false(inherits(cnd, "tabscreen_error_http"))
  expect_null(cnd$status)
})

test_that("a batch create refused with 429 stops with tabscreen_error_batch and the classes of 429", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-batch-429", batches = TRUE, seed = 84,
    batch_create_fail_always = TRUE)
  cnd <- expect_error(screen_batch(tabscreen_a.tools, test_records()[1:3, ], prompt = test_prompt,
    studyid = studyid, title = title, abstract = abstract, api_url = fake$url, progress = FALSE, messages = FALSE,
    max_tries = 1), class = "tabscreen_error_batch")
  expect_http_status(cnd, 429)
})

test_that("a bad option value is the one class tabscreen_error_option", {
  withr::local_options(tabscreen.timeout = -1)
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-option", seed = 86)
  cnd <- expect_error(screen_a(fake), class = "tabscreen_error_option")
  expect_false(inherits(cnd, "tabscreen_error_options"))
  expect_match(conditionMessage(cnd), "tabscreen.timeout", fixed = TRUE)
})
