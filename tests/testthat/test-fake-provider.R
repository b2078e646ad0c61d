# The fake provider alone (R/fake-provider.R and the Go program cmd/tabscreen-fake): what it accepts,
# what it answers, what it counts. The client is not involved here.

fake_tool <- function(name = "record_decision") {
  list(type = "function", "function" = list(
    name = name, description = "Record the screening decision.", strict = TRUE,
    parameters = list(
      type = "object",
      properties = list(
        decision = list(type = "string", enum = list("1", "0", "1.1")),
        reason = list(type = "string"),
        confidence = list(type = "number", minimum = 0, maximum = 1)
      ),
      required = list("decision", "reason", "confidence"),
      additionalProperties = FALSE
    )
  ))
}

# The fake's counters in stats() `st`: the totals, and the responses by status (`by_status`, named
# by status code).
expect_counters <- function(st, total, valid, invalid, unauthorized, answered, by_status) {
  expect_identical(st$requests_total, total)
  expect_identical(st$valid, valid)
  expect_identical(st$invalid, invalid)
  expect_identical(st$unauthorized, unauthorized)
  expect_identical(st$answered, answered)
  for (status in names(by_status)) expect_identical(st$by_status[[status]], by_status[[status]], info = status)
}

# A valid request body; `...` replaces or adds top-level fields.
fake_body <- function(user = "Title: A trial\nAbstract: Something.", ...) {
  body <- list(
    model = "gpt-6-luna",
    messages = list(list(role = "system", content = "You screen records."),
                    list(role = "user", content = user)),
    tools = list(fake_tool()),
    tool_choice = list(type = "function", "function" = list(name = "record_decision")),
    reasoning_effort = "none",
    parallel_tool_calls = FALSE
  )
  extra <- list(...)
  body[names(extra)] <- extra
  body
}

# POST a body (a list, or a JSON string) with httr2; never raises on HTTP errors.
fake_post <- function(url, body, key = "sk-test-fake-0123456789") {
  req <- httr2::request(url)
  req <- httr2::req_options(req, noproxy = "*")
  req <- httr2::req_error(req, is_error = function(resp) FALSE)
  # httr2 0.2.2 sleeps for Retry-After on a 429 even without retries; this keeps the status as is.
  req <- httr2::req_retry(req, max_tries = 1, is_transient = function(resp) FALSE)
  if (!is.null(key)) {
    req <- httr2::req_headers(req, Authorization = paste("Bearer", key))
  }
  req <- if (is.character(body)) {
    httr2::req_body_raw(req, body, type = "application/json")
  } else {
    httr2::req_body_json(req, body)
  }
  httr2::req_perform(req)
}

resp_json <- function(resp) httr2::resp_body_json(resp, simplifyVector = FALSE)

test_that("a valid request gets a 200 with a tool call", {
  fp <- local_fake_provider()
  expect_match(fp$url, "^http://127\\.0\\.0\\.1:[0-9]+/v1/chat/completions$")
  expect_identical(paste0(fp$base_url, "/chat/completions"), fp$url)

  resp <- fake_post(fp$url, fake_body())
  expect_identical(httr2::resp_status(resp), 200L)
  expect_true(nzchar(httr2::resp_header(resp, "x-request-id")))
  expect_true(nzchar(httr2::resp_header(resp, "x-ratelimit-remaining-requests")))
  out <- resp_json(resp)
  expect_identical(out$object, "chat.completion")
  expect_identical(out$model, "gpt-6-luna-2026-09-22")
  choice <- out$choices[[1]]
  expect_identical(choice$finish_reason, "stop")
  expect_null(choice$message$content)
  call <- choice$message$tool_calls[[1]]
  expect_identical(call$type, "function")
  expect_identical(call[["function"]]$name, "record_decision")
  args <- jsonlite::fromJSON(call[["function"]]$arguments)
  expect_true(args$decision %in% c("1", "0", "1.1"))
  expect_true(args$confidence >= 0 && args$confidence <= 1)
  expect_gt(out$usage$prompt_tokens, 0)
  expect_identical(out$usage$total_tokens, out$usage$prompt_tokens + out$usage$completion_tokens)
})

test_that("an invalid body gets a 400 with an OpenAI-style error naming the parameter", {
  fp <- local_fake_provider()
  resp <- fake_post(fp$url, fake_body(messages = list()))
  expect_identical(httr2::resp_status(resp), 400L)
  err <- resp_json(resp)$error
  expect_identical(err$type, "invalid_request_error")
  expect_identical(err$param, "messages")
  expect_true("code" %in% names(err))

  bad_content <- fake_body()
  bad_content$messages[[2]]$content <- 42
  err <- resp_json(fake_post(fp$url, bad_content))$error
  expect_identical(err$param, "messages[1].content")

  not_strict <- fake_body()
  not_strict$tools[[1]][["function"]]$parameters$required <- list("decision", "reason")
  err <- resp_json(fake_post(fp$url, not_strict))$error
  expect_identical(err$param, "tools[0].function.parameters")
  expect_match(err$message, "Missing 'confidence'")

  err <- resp_json(fake_post(fp$url, fake_body(api_key = "sk-nope")))$error
  expect_match(err$message, "Unrecognized request argument supplied: api_key")

  resp <- fake_post(fp$url, '{"model": "gpt-6-luna", "messages": [')
  expect_identical(httr2::resp_status(resp), 400L)
  expect_null(resp_json(resp)$error$param)
})

test_that("counters count, the last body is kept without the key, reset zeroes", {
  fp <- local_fake_provider()
  key <- "sk-secret-do-not-send-42"
  fake_post(fp$url, fake_body(), key = key)
  fake_post(fp$url, fake_body(messages = list()), key = key)
  fake_post(fp$url, fake_body(), key = NULL)
  st <- fp$stats()
  expect_counters(st, total = 3L, valid = 1L, invalid = 1L, unauthorized = 1L, answered = 1L,
    by_status = c("200" = 1L, "400" = 1L, "401" = 1L))
  expect_gte(st$max_requests_1s, 1L)
  expect_identical(st$last_body$model, "gpt-6-luna")
  expect_false(grepl(key, jsonlite::toJSON(st$last_body), fixed = TRUE))
  reqs <- fp$requests(2)
  expect_length(reqs, 2L)
  expect_false(grepl(key, jsonlite::toJSON(reqs, auto_unbox = TRUE), fixed = TRUE))
  expect_match(reqs[[1]]$headers$Authorization[[1]], "redacted")

  fp$reset()
  st <- fp$stats()
  expect_identical(st$requests_total, 0L)
  expect_length(st$by_status, 0L)
})

test_that("authentication failures", {
  fp <- local_fake_provider(invalid_keys = "sk-revoked-key-000")
  resp <- fake_post(fp$url, fake_body(), key = NULL)
  expect_identical(httr2::resp_status(resp), 401L)
  resp <- fake_post(fp$url, fake_body(), key = "sk-revoked-key-000")
  expect_identical(httr2::resp_status(resp), 401L)
  expect_identical(resp_json(resp)$error$code, "invalid_api_key")
})

test_that("scripted faults, and a record that fails until reconfigured", {
  fp <- local_fake_provider(fail_first_n = list(kind = "500", n = 2), retry_after_ms = 20)
  status <- function(...) httr2::resp_status(fake_post(fp$url, fake_body(...)))
  expect_identical(c(status(), status(), status()), c(500L, 500L, 200L))

  fp$configure(fail_matching = list(substring = "POISON", kind = "503"))
  expect_identical(status(user = "Title: POISON"), 503L)
  expect_identical(status(user = "Title: POISON"), 503L)
  expect_identical(status(user = "Title: fine"), 200L)
  fp$configure(fail_matching = list())
  expect_identical(status(user = "Title: POISON"), 200L)

  fp$configure(faults = list("429" = 1))
  resp <- fake_post(fp$url, fake_body())
  expect_identical(httr2::resp_status(resp), 429L)
  expect_identical(httr2::resp_header(resp, "retry-after-ms"), "20")
  expect_identical(resp_json(resp)$error$code, "rate_limit_exceeded")
  fp$configure(faults = list())

  st <- fp$stats()
  expect_identical(st$by_fault[["500"]], 2L)
  expect_identical(st$by_fault[["503"]], 2L)
  expect_identical(st$by_fault[["429"]], 1L)
})

test_that("decision weights and configuration errors", {
  fp <- local_fake_provider(decisions = c("1.1" = 1))
  args <- function() {
    out <- resp_json(fake_post(fp$url, fake_body()))
    jsonlite::fromJSON(out$choices[[1]]$message$tool_calls[[1]][["function"]]$arguments)
  }
  expect_identical(args()$decision, "1.1")
  fp$configure(decisions = list("0" = 1))
  expect_identical(args()$decision, "0")
  expect_identical(fp$config()$decisions, list("0" = 1L))

  expect_error(fp$configure(no_such_setting = 1), class = "tabscreen_error_fake")
  expect_error(fp$configure(faults = list("418" = 0.5)), class = "tabscreen_error_fake")
  expect_error(fp$configure(1), class = "tabscreen_error_fake")
  expect_error(fake_provider_start(rpm = -5), class = "tabscreen_error_fake")
})

test_that("rate limit: at most rpm/60 requests in any second", {
  fp <- local_fake_provider(rpm = 120)
  codes <- vapply(1:4, function(i) httr2::resp_status(fake_post(fp$url, fake_body())), integer(1))
  expect_identical(codes, c(200L, 200L, 429L, 429L))
  st <- fp$stats()
  expect_identical(st$refused_rate, 2L)
})

# Provider B (Anthropic Messages) ---------------------------------------------------------------

fake_body_b <- function(user = "Title: A trial\nAbstract: Something.", model = "claude-haiku-5-5",
                        tool_choice = list(type = "tool", name = "record_decision"),
                        thinking = list(type = "disabled"), max_tokens = 1024L) {
  tool <- fake_tool()[["function"]]
  body <- list(
    model = model, max_tokens = max_tokens, system = "You screen records.",
    messages = list(list(role = "user", content = user)),
    tools = list(list(name = tool$name, description = tool$description, strict = TRUE,
                      input_schema = tool$parameters)),
    tool_choice = tool_choice, thinking = thinking
  )
  Filter(Negate(is.null), body)
}

# POST to provider B's endpoint under `base` (fp$url_b), with its headers; NULL leaves one out.
fake_post_b <- function(base, body, key = "sk-ant-test-0123456789", version = "2023-06-01") {
  req <- httr2::request(paste0(base, "/v1/messages"))
  req <- httr2::req_options(req, noproxy = "*")
  req <- httr2::req_error(req, is_error = function(resp) FALSE)
  req <- httr2::req_retry(req, max_tries = 1, is_transient = function(resp) FALSE)
  headers <- list(`x-api-key` = key, `anthropic-version` = version)
  req <- do.call(httr2::req_headers, c(list(req), Filter(Negate(is.null), headers)))
  req <- if (is.character(body)) {
    httr2::req_body_raw(req, body, type = "application/json")
  } else {
    httr2::req_body_json(req, body)
  }
  httr2::req_perform(req)
}

expect_b_error <- function(resp, status, type, message = NULL) {
  expect_identical(httr2::resp_status(resp), status)
  out <- resp_json(resp)
  expect_identical(out$type, "error")
  expect_identical(out$error$type, type)
  expect_match(out$request_id, "^req_")
  expect_identical(out$request_id, httr2::resp_header(resp, "request-id"))
  if (!is.null(message)) expect_match(out$error$message, message, fixed = TRUE)
  invisible(out)
}

test_that("provider B: a valid Messages request gets a tool_use block", {
  fp <- local_fake_provider()
  expect_match(fp$url_b, "^http://127\\.0\\.0\\.1:[0-9]+$")
  resp <- fake_post_b(fp$url_b, fake_body_b())
  expect_identical(httr2::resp_status(resp), 200L)
  expect_match(httr2::resp_header(resp, "request-id"), "^req_")
  reset <- httr2::resp_header(resp, "anthropic-ratelimit-requests-reset")
  expect_false(is.na(as.POSIXct(reset, format = "%Y-%m-%dT%H:%M:%SZ", tz = "UTC")))
  expect_true(nzchar(httr2::resp_header(resp, "anthropic-ratelimit-tokens-remaining")))
  out <- resp_json(resp)
  expect_identical(out$type, "message")
  expect_identical(out$model, "claude-haiku-5-5")
  expect_identical(out$stop_reason, "tool_use")
  types <- vapply(out$content, function(b) b$type, "")
  expect_identical(types, "tool_use")
  call <- out$content[[1]]
  expect_identical(call$name, "record_decision")
  expect_true(call$input$decision %in% c("1", "0", "1.1"))
  expect_true(call$input$confidence >= 0 && call$input$confidence <= 1)
  expect_gt(out$usage$input_tokens, 0)
  expect_true(all(c("output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens") %in%
                    names(out$usage)))

  # thinking on by default (Claude 5.5) with tool_choice auto: a thinking block comes first
  out <- resp_json(fake_post_b(fp$url_b, fake_body_b(model = "claude-sonnet-5-5", thinking = NULL,
                                                    tool_choice = list(type = "auto"))))
  expect_identical(vapply(out$content, function(b) b$type, ""), c("thinking", "tool_use"))
})

test_that("provider B: invalid requests get a 400 or 401 in Anthropic's shape", {
  fp <- local_fake_provider()
  expect_b_error(fake_post_b(fp$url_b, fake_body_b(), version = NULL), 400L, "invalid_request_error",
                 "anthropic-version")
  expect_b_error(fake_post_b(fp$url_b, fake_body_b(), key = NULL), 401L, "authentication_error")
  expect_b_error(fake_post_b(fp$url_b, fake_body_b(max_tokens = 1024.5)), 400L, "invalid_request_error",
                 "max_tokens: Input should be a valid integer")
  expect_b_error(fake_post_b(fp$url_b, fake_body_b(thinking = list(type = "adaptive"))), 400L,
                 "invalid_request_error", "Thinking may not be enabled when tool_choice forces tool use")
  expect_b_error(fake_post_b(fp$url_b, fake_body_b(model = "claude-opus-5-5", thinking = NULL)), 400L,
                 "invalid_request_error", "not supported for model claude-opus-5-5")
  prefill <- fake_body_b()
  prefill$messages <- c(prefill$messages, list(list(role = "assistant", content = "{")))
  expect_b_error(fake_post_b(fp$url_b, prefill), 400L, "invalid_request_error", "prefill not supported")
  expect_b_error(fake_post_b(fp$url_b, c(fake_body_b(), list(top_p = 1, seed = 1L))), 400L,
                 "invalid_request_error", "seed: Extra inputs are not permitted")
})

test_that("provider B: faults in Anthropic's shapes", {
  fp <- local_fake_provider(retry_after_ms = 20)
  fp$configure(fail_first_n = list(kind = "529", n = 1))
  resp <- fake_post_b(fp$url_b, fake_body_b())
  expect_b_error(resp, 529L, "overloaded_error")
  expect_identical(httr2::resp_header(resp, "retry-after"), "1")
  fp$configure(fail_first_n = list(kind = "quota", n = 1))
  resp <- fake_post_b(fp$url_b, fake_body_b())
  expect_b_error(resp, 429L, "rate_limit_error")
  expect_null(httr2::resp_header(resp, "retry-after"))
  fp$configure(fail_first_n = list(kind = "429", n = 1))
  resp <- fake_post_b(fp$url_b, fake_body_b())
  expect_b_error(resp, 429L, "rate_limit_error")
  expect_identical(httr2::resp_header(resp, "retry-after"), "1")
  expect_identical(httr2::resp_status(fake_post_b(fp$url_b, fake_body_b())), 200L)
  st <- fp$stats()
  expect_identical(st$by_fault[["529"]], 1L)
  expect_identical(st$by_fault[["quota"]], 1L)
})

# Provider C (Mistral chat completions) -----------------------------------------------------------

fake_body_c <- function(...) fake_body(model = "mistral-small-latest", random_seed = 42L, ...)

test_that("provider C: a valid request gets a tool call; unknown fields get a 422", {
  fp <- local_fake_provider()
  expect_identical(fp$url_c, sub("/v1/chat/completions$", "/mistral/v1/chat/completions", fp$url))
  resp <- fake_post(fp$url_c, fake_body_c())
  expect_identical(httr2::resp_status(resp), 200L)
  expect_true(nzchar(httr2::resp_header(resp, "x-ratelimit-remaining-req-minute")))
  out <- resp_json(resp)
  expect_identical(out$model, "mistral-small-latest")
  choice <- out$choices[[1]]
  expect_identical(choice$finish_reason, "tool_calls")
  expect_identical(choice$message$content, "")
  call <- choice$message$tool_calls[[1]]
  args <- jsonlite::fromJSON(call[["function"]]$arguments)
  expect_true(args$decision %in% c("1", "0", "1.1"))
  expect_identical(names(out$usage), c("prompt_tokens", "completion_tokens", "total_tokens"))

  for (field in list(list(seed = 1L), list(max_completion_tokens = 300L), list(verbosity = "low"))) {
    resp <- fake_post(fp$url_c, do.call(fake_body_c, field))
    expect_identical(httr2::resp_status(resp), 422L)
    detail <- resp_json(resp)$detail
    expect_length(detail, 1L)
    expect_identical(detail[[1]]$type, "extra_forbidden")
    expect_identical(detail[[1]]$loc, list("body", names(field)))
    expect_identical(detail[[1]]$msg, "Extra inputs are not permitted")
  }
  resp <- fake_post(fp$url_c, fake_body_c(model = "ministral-8b-latest"))
  expect_identical(httr2::resp_status(resp), 422L)
  expect_identical(resp_json(resp)$param, "reasoning_effort")

  fp$configure(mistral_args_as_object = TRUE, fail_first_n = list(kind = "finish_error", n = 1))
  expect_identical(resp_json(fake_post(fp$url_c, fake_body_c()))$choices[[1]]$finish_reason, "error")
  call <- resp_json(fake_post(fp$url_c, fake_body_c()))$choices[[1]]$message$tool_calls[[1]]
  expect_true(is.list(call[["function"]]$arguments))
  fp$configure(fail_first_n = list(kind = "quota", n = 1))
  resp <- fake_post(fp$url_c, fake_body_c())
  expect_identical(httr2::resp_status(resp), 429L)
  expect_identical(httr2::resp_header(resp, "x-ratelimit-limit-req-minute"), "0")
})

test_that("one program serves A, B and C; the counters cover all three", {
  fp <- local_fake_provider()
  fake_post(fp$url, fake_body())
  fake_post_b(fp$url_b, fake_body_b())
  fake_post_b(fp$url_b, fake_body_b(max_tokens = "1024"))
  fake_post(fp$url_c, fake_body_c())
  fake_post(fp$url_c, fake_body_c(seed = 1L))
  fake_post(fp$url_c, fake_body_c(), key = NULL)
  st <- fp$stats()
  expect_counters(st, total = 6L, valid = 3L, invalid = 2L, unauthorized = 1L, answered = 3L,
    by_status = c("200" = 3L, "400" = 1L, "422" = 1L, "401" = 1L))
  expect_identical(st$by_protocol$openai$answered, 1L)
  b <- st$by_protocol$anthropic
  expect_identical(c(b$requests_total, b$valid, b$invalid, b$answered), c(2L, 1L, 1L, 1L))
  expect_identical(b$by_status[["400"]], 1L)
  m <- st$by_protocol$mistral
  expect_identical(c(m$requests_total, m$valid, m$invalid, m$unauthorized, m$answered), c(3L, 1L, 1L, 1L, 1L))
  expect_identical(m$by_status[["422"]], 1L)
  fp$reset()
  expect_identical(fp$stats()$by_protocol$mistral$requests_total, 0L)
})

test_that("stop() ends the program; a missing program is a classed error", {
  fp <- fake_provider_start()
  expect_true(fp$is_alive())
  fp$stop()
  expect_false(fp$process$is_alive())
  expect_false(fp$is_alive())
  expect_error(fp$stats(), class = "tabscreen_error_fake")
  fp$stop() # twice is fine

  withr::local_envvar(TABSCREEN_FAKE_BIN = file.path(tempdir(), "no-such-tabscreen-fake"))
  expect_error(fake_provider_start(), class = "tabscreen_error_fake")
  expect_false(fake_provider_available())
})

test_that("the fake is served from the package's own core library, not a second program", {
  skip_if(nzchar(Sys.getenv("TABSCREEN_FAKE_BIN")), "a developer's fake program is in use")
  expect_identical(system.file("bin", package = "tabscreen"), "")
  fp <- fake_provider_start()
  on.exit(fp$stop(), add = TRUE)
  expect_true(any(grepl("C_fake_serve", fp$process$get_cmdline(), fixed = TRUE)))
  expect_true(fp$is_alive())
  expect_identical(fp$stats()$requests_total, 0L)
  # A configuration the fake refuses stops the child with the fake's own words.
  expect_error(fake_provider_start(latency_ms = -1), "latency_ms must be >= 0", class = "tabscreen_error_fake")
})

test_that("the program stops when its object is garbage-collected", {
  fp <- fake_provider_start()
  proc <- fp$process
  rm(fp)
  invisible(gc())
  deadline <- Sys.time() + 10
  while (proc$is_alive() && Sys.time() < deadline) Sys.sleep(0.05)
  expect_false(proc$is_alive())
})

test_that("the program never outlives the R process that started it", {
  skip_if_not_installed("callr")
  bin <- Sys.getenv("TABSCREEN_FAKE_BIN")
  src <- test_path("..", "..", "R", "fake-provider.R")
  port_file <- withr::local_tempfile()
  child <- callr::r_bg(function(bin, src, port_file) {
    start <- if (nzchar(src)) {
      # The source's fake, over the package's other functions (the registry gives its URLs).
      env <- new.env(parent = asNamespace("tabscreen"))
      source(src, local = env)
      env$fake_provider_start
    } else {
      utils::getFromNamespace("fake_provider_start", "tabscreen")
    }
    fp <- start(.bin = if (nzchar(bin)) bin)
    writeLines(as.character(fp$port), port_file)
    Sys.sleep(120)
  }, args = list(bin = bin, src = if (file.exists(src)) normalizePath(src) else "", port_file = port_file))
  on.exit(child$kill(), add = TRUE)
  deadline <- Sys.time() + 20
  while (length(suppressWarnings(tryCatch(readLines(port_file), error = function(e) NULL))) != 1L &&
         Sys.time() < deadline) {
    Sys.sleep(0.05)
  }
  health <- paste0("http://127.0.0.1:", readLines(port_file), "/_fake/health")
  answers <- function() {
    req <- httr2::req_options(httr2::request(health), noproxy = "*", timeout_ms = 2000)
    tryCatch(httr2::resp_status(httr2::req_perform(req)) == 200L, error = function(e) FALSE)
  }
  expect_true(answers())
  child$kill() # SIGKILL: no finalizer, no on.exit; only the closed pipe tells the program
  deadline <- Sys.time() + 10
  while (answers() && Sys.time() < deadline) Sys.sleep(0.05)
  expect_false(answers())
})

test_that("collecting one fake never stops another started after the same seed", {
  # R CMD check seeds every example alike; processx's tree markers then collided, and collecting
  # one example's fake killed the next example's (see fake_provider_start()).
  first <- withr::with_seed(1, fake_provider_start())
  second <- withr::with_seed(1, fake_provider_start())
  withr::defer(second$stop())
  rm(first)
  invisible(gc())
  Sys.sleep(0.5)
  expect_true(second$is_alive())
  expect_true(is.list(second$stats()))
})
