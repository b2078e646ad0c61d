# A wrong or unreachable api_url stops a screening within seconds with a classed error that names
# the URL, the cause and the fix, instead of retrying each request for minutes.

# A local port where nothing listens: a fake provider's, once stopped.
closed_port_url <- function() {
  fp <- fake_provider_start()
  url <- fp$url
  fp$stop()
  url
}

# The call, its error and how long it took (a hang guard, not a timing test).
endpoint_failure <- function(fun, url, ...) {
  started <- Sys.time()
  cnd <- expect_error(screen_with(fun, url, ...), class = "tabscreen_error_endpoint")
  list(cnd = cnd, seconds = as.numeric(difftime(Sys.time(), started, units = "secs")),
    text = cli::ansi_strip(conditionMessage(cnd)))
}

test_that("a closed port stops the run with tabscreen_error_endpoint, saying nothing listens there", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-endpoint-closed")
  withr::local_options(tabscreen.store = tempfile(fileext = ".sqlite"))
  url <- closed_port_url()
  out <- endpoint_failure("tabscreen_a.tools", url)
  expect_s3_class(out$cnd, "tabscreen_error")
  # no answer, so no HTTP status
  expect_false(inherits(out$cnd, "tabscreen_error_http"))
  expect_null(out$cnd$status)
  expect_match(out$text, url, fixed = TRUE)
  expect_match(out$text, "connection was refused", fixed = TRUE)
  expect_match(out$text, "Is the server running at 127.0.0.1", fixed = TRUE)
  expect_match(out$text, "ending in /v1/chat/completions", fixed = TRUE)
  expect_lt(out$seconds, 60)
  # The partial result accounts for every request: none answered.
  res <- out$cnd$result
  expect_equal(nrow(res$answer_data), 0)
  expect_equal(nrow(res$error_data), 8)
})

test_that("a server without the path (HTTP 404) stops the run and says which URL the protocol expects", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-endpoint-404", PROVIDER_B_API_KEY = "sk-test-endpoint-404")
  fake <- local_fake_provider()
  # The path left off: the issue's first case.
  out <- endpoint_failure("tabscreen_a.tools", fake$base_url)
  expect_match(out$text, fake$base_url, fixed = TRUE)
  expect_match(out$text, "HTTP 404", fixed = TRUE)
  expect_http_status(out$cnd, 404)
  expect_match(out$text, "full endpoint, ending in /v1/chat/completions", fixed = TRUE)
  expect_lt(out$seconds, 60)
  # A few quick tries, not max_tries = 16 for each of the 8 requests.
  expect_lte(fake$stats()$requests_total, 8 * 3)

  # screen_errors() says the endpoint was the problem rather than sending to it again.
  fake$reset()
  again <- expect_error(screen_errors(out$cnd$result), class = "tabscreen_error_endpoint")
  expect_match(cli::ansi_strip(conditionMessage(again)), "did not fail at the provider", fixed = TRUE)
  expect_equal(fake$stats()$requests_total, 0)

})

test_that("provider B's error says that its api_url is a base URL", {
  withr::local_envvar(PROVIDER_B_API_KEY = "sk-test-endpoint-b")
  withr::local_options(tabscreen.store = tempfile(fileext = ".sqlite"))
  # The hint comes from the provider's registry entry, not from the letter.
  out_b <- endpoint_failure("tabscreen_b", closed_port_url())
  expect_match(out_b$text, "/v1/chat/completions/v1/messages", fixed = TRUE)
  expect_match(out_b$text, "a base URL such as https://api.anthropic.com (/v1/messages is added to it)", fixed = TRUE)
})

test_that("an unknown host stops the run with tabscreen_error_endpoint", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-endpoint-dns")
  withr::local_options(tabscreen.store = tempfile(fileext = ".sqlite"))
  url <- "http://tabscreen-no-such-host.invalid/v1/chat/completions"
  out <- endpoint_failure("tabscreen_a.tools", url)
  expect_match(out$text, url, fixed = TRUE)
  expect_match(out$text, "does not resolve (unknown host)", fixed = TRUE)
  expect_lt(out$seconds, 60)
})

test_that("the progress line of a dead endpoint shows the commonest problem and the requests not sent", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-endpoint-progress")
  withr::local_options(tabscreen.store = tempfile(fileext = ".sqlite"), cli.progress_show_after = 0,
    cli.dynamic = FALSE, cli.width = 150, tabscreen.max_active = 1)
  url <- closed_port_url()
  lines <- capture.output(
    cnd <- tryCatch(screen_with("tabscreen_a.tools", url, progress = TRUE), tabscreen_error_endpoint = identity),
    type = "message"
  )
  expect_s3_class(cnd, "tabscreen_error_endpoint")
  last <- cli::ansi_strip(utils::tail(grep("Screening", lines, value = TRUE), 1))
  # Not "8/8 | failed: 0": nothing answered, the failures with their cause, the rest called off.
  expect_match(last, "0/8 answered", fixed = TRUE)
  expect_match(last, "failed: [12] \\(mostly connection refused\\)")
  expect_match(last, "stopped: [67]")
})
