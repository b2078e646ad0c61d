# screen_batch(): screenings through the provider's batch API, against the fake provider's batch
# endpoints (golib/fakeprovider/batch*.go), in simulated time.

batch_records <- function(n) {
  data.frame(studyid = seq_len(n), title = paste("Batch title", seq_len(n)),
    abstract = paste("Batch abstract about family therapy", seq_len(n)))
}

screen_batch_a <- function(fake, data, ..., wait = TRUE) {
  screen_batch(tabscreen_a.tools, data, prompt = "Is this study about family therapy?",
    studyid = studyid, title = title, abstract = abstract, api_url = fake$url,
    progress = FALSE, messages = FALSE, ..., wait = wait)
}

test_that("a batch screening returns the synchronous call's object at half its price, and keeps no key", {
  key <- "sk-test-batch-secret-key-0815"
  withr::local_envvar(PROVIDER_A_API_KEY = key)
  fake <- local_fake_provider(batches = TRUE, seed = 11)
  d <- batch_records(6)
  res <- screen_batch_a(fake, d, reps = 2)
  sync <- tabscreen_a.tools(d, prompt = "Is this study about family therapy?", studyid = studyid,
    title = title, abstract = abstract, api_url = fake$url, progress = FALSE, messages = FALSE, reps = 2)
  expect_s3_class(res, "llm")
  expect_equal(names(res), names(sync))
  expect_equal(names(res$answer_data), names(sync$answer_data))
  expect_equal(nrow(res$answer_data), 12)
  expect_equal(nrow(res$answer_data_aggregated), 6)
  expect_equal(res$answer_data$prompt_tokens, sync$answer_data$prompt_tokens)
  expect_equal(res$price_data$total_price_dollar, sync$price_data$total_price_dollar / 2)
  expect_gt(res$price_data$total_price_dollar, 0)
  expect_equal(fake$stats()$batch$lines_received, 12)

  runs <- screen_store()
  expect_match(runs$batches[runs$run_id == attr(res, "store")$run_id], "completed \\(collected\\)")
  b <- screen_store_batches(res)
  expect_equal(b$lines, 12)
  expect_true(all(b$collected))
  path <- attr(res, "store")$path
  bytes <- c(readBin(path, "raw", file.size(path)),
    if (file.exists(paste0(path, "-wal"))) readBin(paste0(path, "-wal"), "raw", file.size(paste0(path, "-wal"))))
  expect_length(grepRaw(key, bytes, fixed = TRUE), 0)
  expect_false(any(grepl(key, unlist(fake$requests()), fixed = TRUE)))
})

test_that("batch lines are priced at the batch prices of the price table, half the standard without them", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-batch-prices")
  fake <- local_fake_provider(batches = TRUE, seed = 13)
  d <- batch_records(4)
  own <- data.frame(provider = "a", model = "gpt-6-luna", input_per_million = 1, output_per_million = 4,
    batch_input_per_million = 0.3, batch_output_per_million = 1.2)
  withr::local_options(tabscreen.model_prizes = own)
  res <- screen_batch_a(fake, d)
  tokens <- res$answer_data
  expect_equal(res$price_data$input_price_dollar, sum(tokens$prompt_tokens) * 0.3 / 1e6)
  expect_equal(res$price_data$output_price_dollar, sum(tokens$completion_tokens) * 1.2 / 1e6)
  own$batch_input_per_million <- own$batch_output_per_million <- NULL
  withr::local_options(tabscreen.model_prizes = own)
  res <- screen_batch_a(fake, d, force = TRUE)
  expect_equal(res$price_data$input_price_dollar, sum(res$answer_data$prompt_tokens) * 0.5 / 1e6)
  expect_equal(res$price_data$output_price_dollar, sum(res$answer_data$completion_tokens) * 2 / 1e6)
})

test_that("the estimate before a batch screening is at the batch prices", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-batch-estimate")
  fake <- local_fake_provider(batches = TRUE, seed = 14)
  d <- batch_records(5)
  estimated <- function(expr) {
    said <- character()
    withCallingHandlers(expr, message = function(m) {
      said <<- c(said, conditionMessage(m))
      invokeRestart("muffleMessage")
    })
    as.numeric(sub(".*about \\$([0-9.]+).*", "\\1", grep("Estimated price", said, value = TRUE)))
  }
  args <- list(d, prompt = "Is this study about family therapy?", studyid = quote(studyid), title = quote(title),
    abstract = quote(abstract), api_url = fake$url, progress = FALSE, messages = TRUE)
  sync <- estimated(do.call(tabscreen_a.tools, args))
  batch <- estimated(do.call(screen_batch, c(list(tabscreen_a.tools), args)))
  expect_length(batch, 1)
  expect_equal(batch, sync / 2, tolerance = 0.05)
})

test_that("failed, expired and vanished lines are submitted again until every job is answered once", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-batch-faults")
  fake <- local_fake_provider(batches = TRUE, seed = 12, batch_fail = 0.05, batch_fail_zero = 0.02, batch_expire = 0.03,
    batch_vanish = 0.02, batch_create_fail_once = TRUE)
  res <- screen_batch_a(fake, batch_records(100), reps = 3)
  expect_equal(nrow(res$answer_data), 300)
  expect_equal(NROW(res$error_data), 0)
  expect_equal(anyDuplicated(paste(res$answer_data$studyid, res$answer_data$n)), 0)
  st <- fake$stats()$batch
  redo <- st$lines_failed + st$lines_expired + st$lines_vanished
  expect_gt(redo, 0)
  expect_equal(st$lines_received, 300 + redo)
  expect_equal(st$lines_answered, 300)
  expect_equal(st$create_refused, 1)
  expect_equal(nrow(screen_store_answers(res)), 300)
})

test_that("wait = FALSE returns after submitting, and the same call later collects without resubmitting", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-batch-nowait")
  fake <- local_fake_provider(batches = TRUE, seed = 13, batch_delay_ms = 300)
  d <- batch_records(8)
  sent <- screen_batch_a(fake, d, wait = FALSE)
  expect_s3_class(sent, "tabscreen_batch")
  expect_equal(sent$pending, 8)
  expect_equal(sent$submitted, 8)
  expect_equal(nrow(sent$batches), 1)
  expect_output(print(sent), "8 requests waiting")
  res <- screen_batch_a(fake, d)
  expect_s3_class(res, "llm")
  expect_equal(nrow(res$answer_data), 8)
  expect_equal(attr(res, "store")$run_id, sent$run_id)
  expect_equal(fake$stats()$batch$created, 1)
  expect_equal(fake$stats()$batch$lines_received, 8)
})

test_that("the same call with wait = FALSE collects the batches that have ended and returns the result", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-batch-nowait")
  fake <- local_fake_provider(batches = TRUE, seed = 13, batch_delay_ms = 0)
  d <- batch_records(6)
  sent <- screen_batch_a(fake, d, wait = FALSE)
  expect_s3_class(sent, "tabscreen_batch")
  expect_equal(sent$pending, 6)
  # The batch has ended at the provider: the next call without waiting collects it.
  res <- screen_batch_a(fake, d, wait = FALSE)
  expect_s3_class(res, "llm")
  expect_equal(nrow(res$answer_data), 6)
  expect_equal(attr(res, "store")$run_id, sent$run_id)
  expect_equal(fake$stats()$batch$created, 1)

  # A batch still running stays at the provider: the call says so and submits nothing again.
  slow <- local_fake_provider(batches = TRUE, seed = 13, batch_delay_ms = 600000)
  d2 <- batch_records(4)
  first <- screen_batch_a(slow, d2, wait = FALSE)
  again <- screen_batch_a(slow, d2, wait = FALSE)
  expect_s3_class(again, "tabscreen_batch")
  expect_equal(again$pending, 4)
  expect_equal(again$submitted, 0)
  expect_equal(slow$stats()$batch$created, 1)
})

# Another R process that screens the 10 records of batch_records(10) as a batch of provider A
# against `fake`, with the answer store of this one; returns it once the fake has created the
# batch. The process's value is the class of what screen_batch() returned and its pending count.
waiting_batch_process <- function(fake, key, progress = FALSE) {
  child <- callr::r_bg(function(url, store, libs, key, progress) {
    .libPaths(libs)
    library(tabscreen)
    Sys.setenv(PROVIDER_A_API_KEY = key)
    options(tabscreen.store = store, cli.progress_show_after = 0, cli.dynamic = FALSE, cli.width = 150)
    d <- data.frame(studyid = 1:10, title = paste("Batch title", 1:10),
      abstract = paste("Batch abstract about family therapy", 1:10))
    res <- screen_batch(tabscreen_a.tools, d, prompt = "Is this study about family therapy?", studyid = studyid,
      title = title, abstract = abstract, api_url = url, progress = progress, messages = FALSE)
    list(class = class(res), pending = res$pending)
  }, args = list(url = fake$url, store = getOption("tabscreen.store"), libs = .libPaths(), key = key, progress = progress))
  withr::defer(if (child$is_alive()) child$kill(), envir = parent.frame())
  deadline <- Sys.time() + 60
  while (fake$stats()$batch$created < 1 && Sys.time() < deadline) Sys.sleep(0.05)
  child
}

test_that("an R process killed while it waits leaves nothing to submit twice", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-batch-kill")
  fake <- local_fake_provider(batches = TRUE, seed = 14, batch_delay_ms = 2000)
  child <- waiting_batch_process(fake, "sk-test-batch-kill")
  expect_equal(fake$stats()$batch$created, 1)
  child$kill() # SIGKILL: no handler runs
  expect_false(child$is_alive())
  res <- screen_batch_a(fake, batch_records(10))
  expect_equal(nrow(res$answer_data), 10)
  expect_equal(NROW(res$error_data), 0)
  expect_equal(fake$stats()$batch$created, 1)
  expect_equal(fake$stats()$batch$lines_received, 10)
})

test_that("Ctrl-C while waiting stops waiting: the batches run on and the same call collects them", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-batch-interrupt")
  fake <- local_fake_provider(batches = TRUE, seed = 15, batch_delay_ms = 3000)
  child <- waiting_batch_process(fake, "sk-test-batch-interrupt", progress = TRUE)
  Sys.sleep(0.5) # into the wait
  child$interrupt() # SIGINT, as Ctrl-C sends
  child$wait(30000)
  out <- child$get_result()
  expect_identical(out$class, "tabscreen_batch")
  expect_equal(out$pending, 10)
  # The bar ends as things are, not at 10/10.
  bar <- utils::tail(grep("Batch", cli::ansi_strip(child$read_all_error_lines()), value = TRUE), 1)
  expect_match(bar, "0/10 lines answered", fixed = TRUE)
  expect_match(bar, "waiting at the provider: 10", fixed = TRUE)
  expect_equal(fake$stats()$batch$cancelled %||% 0, 0)
  res <- screen_batch_a(fake, batch_records(10))
  expect_equal(nrow(res$answer_data), 10)
  expect_equal(fake$stats()$batch$created, 1)
  expect_equal(fake$stats()$batch$lines_received, 10)
})

test_that("lines that fail within max_tries go to error_data with their reason, and screen_errors() repairs them", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-batch-errors")
  fake <- local_fake_provider(batches = TRUE, seed = 15, batch_fail = 0.3, batch_expire = 0.1)
  res <- screen_batch_a(fake, batch_records(20), max_tries = 1)
  failed <- NROW(res$error_data)
  st <- fake$stats()$batch
  expect_equal(failed, st$lines_failed + st$lines_expired)
  expect_gt(failed, 0)
  expect_equal(nrow(res$answer_data) + failed, 20)
  expect_true(all(grepl("gave up after 1 batch", res$error_data$decision_llm)))
  fixed <- screen_errors(res, progress = FALSE, messages = FALSE)
  expect_equal(nrow(fixed$answer_data), 20)
  expect_equal(NROW(fixed$error_data), 0)
})

test_that("screen_batch_cancel() cancels the open batches, and the next call submits their lines again", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-batch-cancel")
  fake <- local_fake_provider(batches = TRUE, seed = 16, batch_delay_ms = 60000)
  d <- batch_records(5)
  sent <- screen_batch_a(fake, d, wait = FALSE)
  expect_message(n <- screen_batch_cancel(sent), "Cancelled 1 batch")
  expect_equal(n, 1)
  expect_equal(screen_store_batches(sent$run_id)$state, "cancelled")
  fake$configure(batch_delay_ms = 0)
  res <- screen_batch_a(fake, d)
  expect_equal(nrow(res$answer_data), 5)
  expect_equal(fake$stats()$batch$cancelled, 1)
  expect_equal(fake$stats()$batch$lines_received, 10)
})

test_that("providers B and C screen in batches too: the same object at half the price, lines resubmitted", {
  withr::local_envvar(PROVIDER_B_API_KEY = "sk-ant-test-batch", PROVIDER_C_API_KEY = "test-batch-c")
  fake <- local_fake_provider(batches = TRUE, seed = 18, batch_fail = 0.1, batch_expire = 0.1, batch_vanish = 0.05)
  d <- batch_records(10)
  for (p in list(list(fun = tabscreen_b, url = fake$url_b), list(fun = tabscreen_c, url = fake$url_c))) {
    before <- fake$stats()$batch
    res <- screen_batch(p$fun, d, prompt = "Is this study about family therapy?", studyid = studyid,
      title = title, abstract = abstract, api_url = p$url, reps = 2, progress = FALSE, messages = FALSE)
    sync <- p$fun(d, prompt = "Is this study about family therapy?", studyid = studyid,
      title = title, abstract = abstract, api_url = p$url, reps = 2, progress = FALSE, messages = FALSE)
    expect_s3_class(res, "llm")
    expect_equal(names(res$answer_data), names(sync$answer_data))
    expect_equal(nrow(res$answer_data), 20)
    expect_equal(NROW(res$error_data), 0)
    expect_equal(res$price_data$total_price_dollar, sync$price_data$total_price_dollar / 2)
    after <- fake$stats()$batch
    expect_equal(after$lines_answered - before$lines_answered, 20)
    redo <- (after$lines_failed + after$lines_expired + after$lines_vanished) -
      (before$lines_failed + before$lines_expired + before$lines_vanished)
    expect_equal(after$lines_received - before$lines_received, 20 + redo)
  }
})

test_that("bad arguments are classed errors before any request", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-batch-args")
  fake <- local_fake_provider(batches = TRUE, seed = 17)
  d <- batch_records(2)
  expect_error(screen_batch(mean, d), class = "tabscreen_error_batch_args")
  expect_error(screen_batch("tabscreen_a.tools", d), class = "tabscreen_error_batch_args")
  expect_error(screen_batch_a(fake, d, wait = "no"), class = "tabscreen_error_batch_args")
  withr::with_options(list(tabscreen.store = FALSE),
    expect_error(screen_batch_a(fake, d, wait = FALSE), class = "tabscreen_error_batch_args"))
  expect_error(screen_batch_a(fake, d, reps = 0), class = "tabscreen_error")
  expect_error(screen_batch_cancel(42), class = "tabscreen_error_store_run")
  expect_equal(fake$stats()$requests_total, 0)
  expect_equal(fake$stats()$batch$created, 0)
})

screen_batch_c <- function(fake, data, ..., wait = TRUE) {
  screen_batch(tabscreen_c, data, prompt = "Is this study about family therapy?",
    studyid = studyid, title = title, abstract = abstract, api_url = fake$url_c,
    progress = FALSE, messages = FALSE, ..., wait = wait)
}

test_that("odd result lines stand alone: every job ends in answer_data or in error_data with its reason", {
  withr::local_envvar(PROVIDER_C_API_KEY = "test-batch-odd-lines")
  odd <- list(batches = TRUE, batch_fail_numeric = 0.2, batch_garbled = 0.15, batch_fail_zero = 0.05,
    batch_unknown_fields = TRUE)
  fake <- do.call(local_fake_provider, c(odd, seed = 21))
  res <- screen_batch_c(fake, batch_records(40), max_tries = 1)
  st <- fake$stats()$batch
  expect_gt(st$lines_failed, 0)
  expect_gt(st$lines_garbled, 0)
  expect_equal(nrow(res$answer_data), st$lines_answered)
  expect_equal(nrow(res$answer_data) + NROW(res$error_data), 40)
  reasons <- res$error_data$decision_llm
  expect_length(reasons, st$lines_failed + st$lines_garbled)
  expect_equal(sum(grepl("could not be read", reasons)), st$lines_garbled)
  expect_true(all(grepl("gave up after 1 batch", reasons)))
  expect_true(all(grepl("could not be read|HTTP 500|could not be processed", reasons)))
  expect_equal(nrow(screen_store_answers(res)), 40)

  # With retries, the lines that failed or could not be read are submitted again and answered.
  fake <- do.call(local_fake_provider, c(odd, seed = 22))
  res <- screen_batch_c(fake, batch_records(40))
  st <- fake$stats()$batch
  expect_equal(nrow(res$answer_data), 40)
  expect_equal(NROW(res$error_data), 0)
  expect_equal(st$lines_received, 40 + st$lines_failed + st$lines_garbled)
})

test_that("a batch create refused every time stops at max_tries with a classed error, its file uploaded once", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-batch-refused")
  fake <- local_fake_provider(batches = TRUE, seed = 23, batch_create_fail_always = TRUE)
  d <- batch_records(4)
  err <- expect_error(screen_batch_a(fake, d, max_tries = 3), class = "tabscreen_error_batch")
  expect_match(conditionMessage(err), "refused to create a batch of 4 requests")
  expect_match(conditionMessage(err), "max_tries = 3", fixed = TRUE)
  st <- fake$stats()$batch
  expect_equal(st$create_refused, 3)
  expect_equal(st$files_uploaded, 1)
  expect_equal(st$created, 0)
  expect_equal(fake$stats()$requests_total, 0)

  fake$configure(batch_create_fail_always = FALSE)
  res <- screen_batch_a(fake, d, max_tries = 3)
  expect_equal(nrow(res$answer_data), 4)
  expect_equal(fake$stats()$batch$created, 1)
})

test_that("a batch whose results cannot be read says why, and the same call collects it later", {
  withr::local_envvar(PROVIDER_C_API_KEY = "test-batch-results-gone")
  fake <- local_fake_provider(batches = TRUE, seed = 24, batch_results_gone = TRUE)
  d <- batch_records(5)
  err <- expect_error(screen_batch_c(fake, d), class = "tabscreen_error_batch")
  msg <- conditionMessage(err)
  expect_match(msg, "could not be collected")
  expect_match(msg, "HTTP 404")
  expect_match(msg, err$batch$batches$provider_id, fixed = TRUE)
  expect_no_match(msg, "still waiting")
  expect_s3_class(err$batch, "tabscreen_batch")
  expect_equal(err$batch$pending, 5)

  fake$configure(batch_results_gone = FALSE)
  res <- screen_batch_c(fake, d)
  expect_equal(nrow(res$answer_data), 5)
  expect_equal(fake$stats()$batch$lines_received, 5)
})
