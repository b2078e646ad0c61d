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
  expect_identical(st$requests_total, 3L)
  expect_identical(st$valid, 1L)
  expect_identical(st$invalid, 1L)
  expect_identical(st$unauthorized, 1L)
  expect_identical(st$answered, 1L)
  expect_identical(st$by_status[["200"]], 1L)
  expect_identical(st$by_status[["400"]], 1L)
  expect_identical(st$by_status[["401"]], 1L)
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
  bin <- fake_provider_bin()
  src <- test_path("..", "..", "R", "fake-provider.R")
  port_file <- withr::local_tempfile()
  child <- callr::r_bg(function(bin, src, port_file) {
    start <- if (nzchar(src)) {
      `%||%` <- rlang::`%||%`
      source(src, local = TRUE)
      fake_provider_start
    } else {
      utils::getFromNamespace("fake_provider_start", "tabscreen")
    }
    fp <- start(.bin = bin)
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
