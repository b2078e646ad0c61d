test_that("llm_is_transient() classifies a table of responses", {
  cases <- list(
    list(httr2::response(200), FALSE),
    list(httr2::response(400), FALSE),
    list(httr2::response(401), FALSE),
    list(httr2::response(403), FALSE),
    list(httr2::response(404), FALSE),
    list(httr2::response(422), FALSE),
    list(httr2::response(501), FALSE),
    list(httr2::response(408), TRUE),
    list(httr2::response(409), TRUE),
    list(httr2::response(429), TRUE),
    list(httr2::response(500), TRUE),
    list(httr2::response(502), TRUE),
    list(httr2::response(503), TRUE),
    list(httr2::response(504), TRUE),
    list(httr2::response(529), TRUE),
    list(json_response(429, '{"error":{"message":"Rate limit","type":"requests","code":"rate_limit_exceeded"}}'), TRUE),
    list(json_response(429, '{"error":{"message":"Quota","type":"insufficient_quota","code":"insufficient_quota"}}'), FALSE),
    list(json_response(429, '{"error":{"message":"Quota","type":"insufficient_quota","code":null}}'), FALSE),
    list(json_response(429, '{"error":{"message":"No credit","type":"billing","code":"credit_balance_exhausted"}}'), FALSE),
    list(json_response(429, '{"error":{"type":"credit_balance_exhausted"}}'), FALSE),
    list(json_response(429, '{"error":"insufficient_quota"}'), TRUE),
    list(json_response(429, 'not json at all'), TRUE),
    list(json_response(429, '{"object":"error","message":"No allowance"}', list("x-ratelimit-limit-req-minute" = "0")), FALSE),
    list(json_response(429, '{"object":"error","message":"Slow down"}', list("x-ratelimit-limit-req-minute" = "60")), TRUE),
    list(httr2::response(400, headers = list("x-should-retry" = "true")), TRUE),
    list(httr2::response(503, headers = list("x-should-retry" = "false")), FALSE),
    list(json_response(429, '{"error":{"code":"insufficient_quota"}}', list("x-should-retry" = "true")), TRUE),
    list(httr2::response(503, headers = list("X-Should-Retry" = "false")), FALSE),
    list(httr2::response(503, headers = list("x-should-retry" = "maybe")), TRUE)
  )
  for (case in cases) expect_transient(case[[1]], case[[2]])
})

test_that("llm_is_transient() wants a response", {
  expect_error(llm_is_transient(503), class = "tabscreen_error_arg")
  expect_error(llm_is_transient(list(status_code = 503)), class = "tabscreen_error_arg")
})
