# The answer store: every answer committed as it arrives, resume after any interruption, the
# screen_store() family, and the proofs under faults, kills and concurrent sessions.

# Every (record, prompt, model, top_p, rep) appears once in answer_data and error_data together.
job_keys <- function(res) {
  rows <- rbind(res$answer_data[c("studyid", "promptid", "model", "top_p", "n")],
                if (!is.null(res$error_data)) res$error_data[c("studyid", "promptid", "model", "top_p", "n")])
  do.call(paste, c(as.list(rows), sep = "/"))
}

# A screening run in a child R process, writing into `store`; returns what the child saw.
child_screen <- function(url, store, n, cap, libs) {
  .libPaths(libs)
  library(tabscreen)
  Sys.setenv(PROVIDER_A_API_KEY = "sk-test-store-child-key")
  options(tabscreen.store = store, tabscreen.max_active = cap)
  d <- data.frame(studyid = seq_len(n), title = paste("Child title", seq_len(n)), abstract = paste("Child abstract", seq_len(n)))
  msgs <- character()
  res <- withCallingHandlers(
    tryCatch(
      tabscreen_a.tools(d, prompt = "Include?", studyid = studyid, title = title, abstract = abstract,
                        api_url = url, progress = FALSE),
      error = function(e) e
    ),
    message = function(m) {
      msgs <<- c(msgs, conditionMessage(m))
      invokeRestart("muffleMessage")
    }
  )
  if (inherits(res, "error")) {
    return(list(error = class(res), message = conditionMessage(res), messages = msgs))
  }
  list(answers = nrow(res$answer_data), errors = NROW(res$error_data),
       keys = paste(res$answer_data$studyid, res$answer_data$n), run = attr(res, "store")$run_id,
       messages = msgs)
}

screen_in_child <- function(url, store, n, latency_cap = 4, background = TRUE) {
  args <- list(url = url, store = store, n = n, cap = latency_cap, libs = .libPaths())
  if (background) callr::r_bg(child_screen, args = args) else callr::r(child_screen, args = args)
}

wait_for <- function(condition, seconds = 30) {
  deadline <- Sys.time() + seconds
  while (!condition() && Sys.time() < deadline) Sys.sleep(0.05)
  condition()
}

test_that("every answer is stored with its request and response, and the key is nowhere in the file", {
  key <- "sk-test-store-secret-key-4711"
  withr::local_envvar(PROVIDER_A_API_KEY = key)
  fake <- local_fake_provider(seed = 2)
  res <- screen_store_test(fake$url, 6, reps = 2)
  info <- attr(res, "store")
  expect_equal(info$path, normalizePath(getOption("tabscreen.store")))
  runs <- screen_store()
  expect_equal(nrow(runs), 1)
  expect_equal(runs$run_id, info$run_id)
  expect_equal(runs$status, "completed")
  expect_equal(c(runs$jobs, runs$answered, runs$failed), c(12L, 12L, 0L))
  expect_equal(runs$price_dollar, res$price_dollar, tolerance = 1e-9)

  answers <- screen_store_answers(res)
  expect_equal(nrow(answers), 12)
  stored <- answers[order(as.integer(answers$studyid), answers$n), ]
  mine <- res$answer_data[order(res$answer_data$studyid, res$answer_data$n), ]
  expect_equal(stored$decision_llm, mine$decision_llm)
  expect_equal(stored$prompt_tokens, mine$prompt_tokens)
  expect_equal(stored$submodel, mine$submodel)

  log <- screen_store_log(res)
  expect_equal(nrow(log), 12)
  expect_true(all(log$outcome == "answer"))
  expect_true(all(log$http_status == 200L))
  bodies <- lapply(log$request_body, jsonlite::fromJSON)
  expect_true(all(vapply(bodies, function(b) grepl("Store test title", b$messages$content), logical(1))))
  expect_true(all(grepl("chat.completion", log$response_body, fixed = TRUE)))

  files <- list.files(dirname(info$path), pattern = basename(info$path), full.names = TRUE)
  expect_true(length(files) >= 1)
  for (f in files) {
    expect_length(grepRaw(key, readBin(f, "raw", file.size(f)), fixed = TRUE), 0)
  }
  expect_key_nowhere(res, key)
})

test_that("the file is a plain SQLite database that DBI can read", {
  skip_if_not_installed("RSQLite")
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-store-dbi")
  fake <- local_fake_provider(seed = 3)
  res <- screen_store_test(fake$url, 4)
  con <- DBI::dbConnect(RSQLite::SQLite(), attr(res, "store")$path)
  withr::defer(DBI::dbDisconnect(con))
  expect_setequal(DBI::dbListTables(con), c("runs", "answers", "attempts"))
  runs <- DBI::dbGetQuery(con, "SELECT run_id, status, jobs FROM runs")
  expect_equal(runs$status, "completed")
  a <- DBI::dbGetQuery(con, "SELECT studyid, decision_llm, answered, request_body FROM answers ORDER BY record")
  expect_equal(a$studyid, as.character(1:4))
  expect_equal(a$decision_llm, res$answer_data$decision_llm)
  expect_equal(DBI::dbGetQuery(con, "PRAGMA integrity_check")[[1]], "ok")
  expect_equal(DBI::dbGetQuery(con, "PRAGMA journal_mode")[[1]], "wal")
})

test_that("a store named with '?', '#' or '%' is the file of that name", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-store-name")
  dir <- withr::local_tempdir()
  # Windows allows no '?' in a file name.
  path <- file.path(dir, if (.Platform$OS.type == "windows") "review#v2 100%.sqlite" else "review?v=2#100%.sqlite")
  fake <- local_fake_provider(seed = 3)
  withr::local_options(tabscreen.store = path)
  res <- screen_store_test(fake$url, 3)
  expect_equal(attr(res, "store")$path, normalizePath(path))
  made <- list.files(dir)
  expect_true(basename(path) %in% made)
  expect_true(all(startsWith(made, basename(path))))
  expect_equal(screen_store()$answered, 3L)
})

test_that("the same call on a completed run returns its answers; store_reuse = FALSE screens anew", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-store-reuse")
  fake <- local_fake_provider(seed = 4)
  first <- screen_store_test(fake$url, 5)
  fake$reset()
  said <- testthat::capture_messages(second <- tabscreen_a.tools(store_records(5),
    prompt = "Is this a trial of family therapy?", studyid = studyid, title = title, abstract = abstract,
    api_url = fake$url, progress = FALSE))
  said <- paste(said, collapse = "\n")
  expect_match(said, "completed the same requests: its 5 of 5 answers are returned and nothing is sent")
  expect_match(said, "options(tabscreen.store_reuse = FALSE)", fixed = TRUE)
  expect_equal(fake$stats()$requests_total, 0)
  expect_equal(attr(second, "store")$run_id, attr(first, "store")$run_id)
  expect_equal(second$answer_data$decision_llm, first$answer_data$decision_llm)
  expect_equal(second$price_dollar, first$price_dollar)

  withr::local_options(tabscreen.store_reuse = FALSE)
  fake$reset()
  said <- testthat::capture_messages(third <- tabscreen_a.tools(store_records(5),
    prompt = "Is this a trial of family therapy?", studyid = studyid, title = title, abstract = abstract,
    api_url = fake$url, progress = FALSE))
  expect_match(paste(said, collapse = "\n"), "completed the same requests; this call screens them anew")
  expect_equal(fake$stats()$requests_total, 5)
  expect_false(identical(attr(third, "store")$run_id, attr(first, "store")$run_id))
  expect_equal(nrow(screen_store()), 2)
})

test_that("a run that ended with failures (the network lost) is resumed by the same call", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-store-network")
  fake <- local_fake_provider()
  # Records 1 and 10 lose their connection on every attempt.
  fake$configure(fail_matching = list(list(substring = "Store test title 1", kind = "drop")))
  first <- screen_store_test(fake$url, 10, max_tries = 2)
  expect_equal(nrow(first$error_data), 2)
  expect_equal(screen_store()$status, "incomplete")

  fake$configure(fail_matching = list())
  fake$reset()
  said <- testthat::capture_messages(again <- tabscreen_a.tools(store_records(10),
    prompt = "Is this a trial of family therapy?", studyid = studyid, title = title, abstract = abstract,
    api_url = fake$url, progress = FALSE, max_tries = 2))
  expect_true(any(grepl("Resuming run .*8 of 10 answers already stored", said)))
  expect_equal(fake$stats()$requests_total, 2)
  expect_equal(nrow(again$answer_data), 10)
  expect_null(again$error_data)
  expect_equal(attr(again, "store")$run_id, attr(first, "store")$run_id)
  expect_equal(screen_store()$status, "completed")
})

test_that("with the store off nothing is written and nothing resumes", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-store-off")
  fake <- local_fake_provider()
  path <- getOption("tabscreen.store")
  withr::local_options(tabscreen.store = FALSE)
  res <- screen_store_test(fake$url, 3)
  expect_null(attr(res, "store"))
  expect_false(file.exists(path))
  expect_error(screen_store(), class = "tabscreen_error_store")
  expect_error(screen_store_answers(res), class = "tabscreen_error_store_run")
})

test_that("an unusable store is a classed error before any request is sent", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-store-bad")
  fake <- local_fake_provider()
  junk <- withr::local_tempfile(fileext = ".sqlite")
  writeBin(as.raw(rep(c(0x13, 0x37, 0x00, 0xff), 4096)), junk)
  not_a_folder <- withr::local_tempfile()
  writeLines("a file", not_a_folder)
  cases <- list(
    list(store = junk, message = "not an SQLite database"),
    list(store = file.path(not_a_folder, "answers.sqlite"), message = "cannot be created"),
    list(store = 42, message = "must be the path of a file")
  )
  for (case in cases) {
    withr::local_options(tabscreen.store = case$store)
    cnd <- expect_error(screen_store_test(fake$url, 3), class = "tabscreen_error_store")
    expect_match(conditionMessage(cnd), case$message)
    expect_s3_class(cnd, "tabscreen_error")
  }
  withr::local_options(tabscreen.store = tempfile(), tabscreen.store_reuse = "yes")
  expect_error(screen_store_test(fake$url, 3), class = "tabscreen_error_store")
  expect_equal(fake$stats()$requests_total, 0)
})

test_that("screen_store_delete() removes a run and all it holds", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-store-delete")
  fake <- local_fake_provider()
  a <- screen_store_test(fake$url, 3)
  b <- screen_store_test(fake$url, 4)
  expect_message(n <- screen_store_delete(attr(a, "store")$run_id), "Deleted 1 run")
  expect_equal(n, 1)
  expect_equal(screen_store()$run_id, attr(b, "store")$run_id)
  expect_error(screen_store_log(a), class = "tabscreen_error_store_run")
  expect_error(screen_store_answers(17), class = "tabscreen_error_store_run")
  expect_error(screen_store_delete(character()), class = "tabscreen_error_store_run")
})

test_that("every fault at once: each job answered or failed exactly once, retried to success, then repaired", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-store-faults")
  withr::local_options(tabscreen.timeout = 1)
  kinds <- c("429", "500", "502", "503", "hang", "drop", "malformed", "no_tool", "bad_args")
  # 20 % of all requests fail, spread over the nine kinds.
  fake <- local_fake_provider(retry_after_ms = 5, seed = 11,
                              faults = stats::setNames(as.list(rep(0.2 / length(kinds), length(kinds))), kinds))
  res <- screen_store_test(fake$url, 150, reps = 2, max_tries = 2, backoff = function(attempt) 0.01)
  jobs <- 300
  keys <- job_keys(res)
  expect_equal(length(keys), jobs)
  expect_false(anyDuplicated(keys) > 0)
  answered <- nrow(res$answer_data)
  failed <- NROW(res$error_data)
  expect_equal(answered + failed, jobs)

  stats <- fake$stats()
  faulted <- stats$requests_total - stats$answered
  expect_gt(faulted, 30)
  log <- screen_store_log(res)
  retried_then_answered <- unique(paste(log$studyid, log$n)[log$outcome == "retried"]) %in%
    unique(paste(log$studyid, log$n)[log$outcome == "answer"])
  expect_gt(sum(retried_then_answered), 20)
  store_answers <- screen_store_answers(res)
  expect_equal(sum(store_answers$answered), answered)
  expect_equal(sum(!store_answers$answered), failed)

  # The faults stop: screen_errors() recovers every failure, into the same run.
  fake$configure(faults = list())
  fixed <- if (failed > 0) screen_errors(res, messages = FALSE) else res
  expect_equal(nrow(fixed$answer_data), jobs)
  expect_null(fixed$error_data)
  expect_false(anyDuplicated(job_keys(fixed)) > 0)
  expect_equal(attr(fixed, "store")$run_id, attr(res, "store")$run_id)
  runs <- screen_store()
  expect_equal(nrow(runs), 1)
  expect_equal(c(runs$answered, runs$failed), c(jobs, 0L))
})

test_that("kill -9 half way, then the same call in a new process: only the unanswered jobs are sent", {
  skip_on_os("windows")
  fake <- local_fake_provider(latency_ms = 40)
  store <- withr::local_tempfile(fileext = ".sqlite")
  n <- 400
  cap <- 4
  proc <- screen_in_child(fake$url, store, n, latency_cap = cap)
  withr::defer(if (proc$is_alive()) proc$kill())
  expect_true(wait_for(function() fake$stats()$answered >= n / 2 || !proc$is_alive()))
  proc$signal(tools::SIGKILL)
  proc$wait(5000)
  expect_false(proc$is_alive())
  answered_before_kill <- fake$stats()$answered
  expect_lt(answered_before_kill, n)

  runs <- screen_store(store)
  expect_equal(runs$status, "running")
  stored <- runs$answered
  expect_gte(stored, answered_before_kill - cap)
  expect_lte(stored, answered_before_kill)

  fake$reset()
  out <- screen_in_child(fake$url, store, n, latency_cap = cap, background = FALSE)
  expect_equal(out$answers, n)
  expect_equal(out$errors, 0)
  expect_false(anyDuplicated(out$keys) > 0)
  expect_equal(out$run, runs$run_id)
  expect_true(any(grepl(sprintf("Resuming run .*%d of %d answers already stored", stored, n), out$messages)))
  # The second process sent exactly the jobs without a stored answer.
  expect_equal(fake$stats()$requests_total, n - stored)
  after <- screen_store(store)
  expect_equal(c(after$status, after$answered, after$failed), c("completed", n, 0))
})

test_that("Ctrl-C half way, then the same call: it resumes", {
  skip_on_os("windows")
  fake <- local_fake_provider(latency_ms = 40)
  store <- withr::local_tempfile(fileext = ".sqlite")
  n <- 300
  proc <- screen_in_child(fake$url, store, n)
  withr::defer(if (proc$is_alive()) proc$kill())
  expect_true(wait_for(function() fake$stats()$answered >= 60 || !proc$is_alive()))
  proc$interrupt()
  proc$wait(10000)
  first <- proc$get_result()
  expect_true("tabscreen_interrupted" %in% first$error)
  runs <- screen_store(store)
  expect_equal(runs$status, "interrupted")
  expect_gte(runs$answered, 60)

  fake$reset()
  out <- screen_in_child(fake$url, store, n, background = FALSE)
  expect_equal(out$answers, n)
  expect_true(any(grepl(sprintf("Resuming run .*%d of %d", runs$answered, n), out$messages)))
  expect_equal(fake$stats()$requests_total, n - runs$answered)
})

test_that("two sessions share one store: different screenings both complete, the same one is refused", {
  skip_on_os("windows")
  fake <- local_fake_provider(latency_ms = 60)
  store <- withr::local_tempfile(fileext = ".sqlite")
  one <- screen_in_child(fake$url, store, 200)
  two <- callr::r_bg(function(url, store, libs) {
    .libPaths(libs)
    library(tabscreen)
    Sys.setenv(PROVIDER_A_API_KEY = "sk-test-store-child-key")
    options(tabscreen.store = store, tabscreen.max_active = 4)
    d <- data.frame(studyid = 1:150, title = paste("Other data", 1:150), abstract = "Other abstract")
    res <- tabscreen_a.tools(d, prompt = "Include?", studyid = studyid, title = title, abstract = abstract,
                             api_url = url, progress = FALSE, messages = FALSE)
    nrow(res$answer_data)
  }, args = list(url = fake$url, store = store, libs = .libPaths()))
  withr::defer({
    if (one$is_alive()) one$kill()
    if (two$is_alive()) two$kill()
  })
  # While the first is running, the same screening in a third session (started and loaded
  # beforehand, so that it calls at once) is refused, sending nothing.
  third <- callr::r_session$new()
  withr::defer(third$close())
  third$run(function(libs) {
    .libPaths(libs)
    library(tabscreen)
  }, args = list(libs = .libPaths()))
  first_running <- function() {
    runs <- screen_store(store)
    any(runs$records == 200 & runs$status == "running")
  }
  expect_true(wait_for(first_running))
  same <- third$run(child_screen, args = list(url = fake$url, store = store, n = 200, cap = 4, libs = .libPaths()))
  expect_true(one$is_alive())
  expect_true("tabscreen_error_store_busy" %in% same$error)
  expect_match(same$message, "another R session")

  one$wait(60000)
  two$wait(60000)
  expect_equal(one$get_result()$answers, 200)
  expect_equal(two$get_result(), 150)
  # Nothing was sent twice: 350 jobs, 350 requests.
  expect_equal(fake$stats()$requests_total, 350)
  runs <- screen_store(store)
  expect_equal(sort(runs$answered), c(150L, 200L))
  expect_true(all(runs$status == "completed"))
  expect_equal(sum(runs$failed), 0)
  if (requireNamespace("RSQLite", quietly = TRUE)) {
    con <- DBI::dbConnect(RSQLite::SQLite(), store)
    withr::defer(DBI::dbDisconnect(con))
    expect_equal(DBI::dbGetQuery(con, "PRAGMA integrity_check")[[1]], "ok")
    expect_equal(DBI::dbGetQuery(con, "SELECT count(*) AS n FROM answers")$n, 350)
  }
})

# A store on a small tmpfs of its own (mounted as root; the test is skipped where that cannot be done).
local_small_disk <- function(size = "2m", .env = parent.frame()) {
  skip_on_os(c("windows", "mac"))
  skip_if_not(identical(unname(Sys.info()[["effective_user"]]), "root"), "mounting a tmpfs needs root")
  dir <- withr::local_tempdir(.local_envir = .env)
  mounted <- suppressWarnings(system2("mount", c("-t", "tmpfs", "-o", paste0("size=", size), "tmpfs", shQuote(dir)),
    stdout = FALSE, stderr = FALSE))
  skip_if_not(identical(mounted, 0L), "a tmpfs cannot be mounted here")
  withr::defer(system2("umount", c("-l", shQuote(dir)), stdout = FALSE, stderr = FALSE), envir = .env)
  dir
}

test_that("a full disk loses no answer: screen_errors() stores every one once and sends no answered job again", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-store-full-disk")
  fake <- local_fake_provider(count_bodies = TRUE, latency_ms = 30)
  disk <- local_small_disk("2m")
  store <- file.path(disk, "answers.sqlite")
  withr::local_options(tabscreen.store = store, tabscreen.max_active = 64)
  n <- 1500

  err <- tryCatch(screen_store_test(fake$url, n, rpm = 60000), tabscreen_error_store = function(e) e)
  expect_s3_class(err, "tabscreen_error_store")
  partial <- err$result
  answered <- nrow(partial$answer_data)
  expect_gt(answered, 0)
  expect_lt(answered, n)
  # The requests in flight when the store failed were let finish: every request sent was answered
  # and is in the partial result.
  sent <- fake$stats()
  expect_equal(sent$requests_total, answered)
  expect_equal(sent$bodies$sent_after_answer, 0)
  expect_match(conditionMessage(err), "could not be written to the answer store")
  expect_equal(screen_store(store)$status, "stopped")

  # Room again: a listing writes the kept answers in; screen_errors() sends only the failed jobs.
  expect_equal(system2("mount", c("-o", "remount,size=64m", shQuote(disk))), 0L)
  runs <- screen_store(store)
  expect_equal(runs$answered, answered)
  expect_equal(runs$status, "stopped")
  fixed <- suppressMessages(screen_errors(partial))
  expect_equal(nrow(fixed$answer_data), n)
  expect_equal(NROW(fixed$error_data), 0)
  bodies <- fake$stats()$bodies
  expect_equal(fake$stats()$requests_total, n)
  expect_equal(bodies$distinct, n)
  expect_equal(bodies$max_sent, 1)
  expect_equal(bodies$sent_after_answer, 0)
  expect_equal(bodies$answered_again, 0)
  runs <- screen_store(store)
  expect_equal(runs$answered, n)
  expect_equal(runs$status, "completed")
  stored <- screen_store_answers(fixed)
  expect_equal(nrow(stored), n)
  expect_true(all(stored$answered == 1))
  expect_equal(sort(as.integer(stored$studyid)), seq_len(n))
  expect_false(file.exists(paste0(store, ".journal")))

  # The same call with the store's answers taken sends nothing.
  withr::local_options(tabscreen.store_reuse = TRUE)
  again <- screen_store_test(fake$url, n, rpm = 60000)
  expect_equal(nrow(again$answer_data), n)
  expect_equal(fake$stats()$requests_total, n)
})
