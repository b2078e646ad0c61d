store_records <- function(n) {
  data.frame(studyid = seq_len(n), title = paste("Store test title", seq_len(n)),
             abstract = paste("Abstract of record", seq_len(n), strrep("text ", 20)))
}
screen_store_test <- function(url, n, ...) {
  tabscreen_a.tools(store_records(n), prompt = "Is this a trial of family therapy?", studyid = studyid,
                    title = title, abstract = abstract, api_url = url, progress = FALSE, messages = FALSE, ...)
}
job_keys <- function(res) {
  rows <- rbind(res$answer_data[c("studyid", "promptid", "model", "top_p", "n")],
                if (!is.null(res$error_data)) res$error_data[c("studyid", "promptid", "model", "top_p", "n")])
  do.call(paste, c(as.list(rows), sep = "/"))
}
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

  # Room again: screen_errors() writes the kept answers first, then sends only the failed jobs.
  expect_equal(system2("mount", c("-o", "remount,size=64m", shQuote(disk))), 0L)
  said <- testthat::capture_messages(fixed <- screen_errors(partial))
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
