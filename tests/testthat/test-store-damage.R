# A store damaged inside: refused before any request and left as it was; what can be read of it is
# copied into a new file by screen_store_recover(), from which the same call resumes.

# Overwrites `pages` pages of 4 KB in the middle of the file with random bytes (the header, page
# 1, is left as it was), as a disk error or another program might.
damage_store <- function(path, pages) {
  wal <- paste0(path, "-wal")
  expect_false(file.exists(wal) && file.size(wal) > 0) # every answer is in the file itself
  total <- file.size(path) %/% 4096
  expect_gt(total, 3 * pages)
  con <- file(path, "r+b")
  on.exit(close(con))
  seek(con, (total %/% 2 - pages %/% 2) * 4096, rw = "write")
  junk <- withr::with_seed(22, as.raw(sample.int(256, pages * 4096, replace = TRUE) - 1L))
  writeBin(junk, con)
}

file_md5 <- function(path) unname(tools::md5sum(path))

test_that("a store damaged inside is refused before any request, and its file is left as it was", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-store-damaged")
  fake <- local_fake_provider()
  path <- getOption("tabscreen.store")
  first <- screen_store_test(fake$url, 400)
  expect_equal(nrow(first$answer_data), 400)
  damage_store(path, 40)
  before <- file_md5(path)
  fake$reset()

  # The same screening (which would start a new run), and the same one resuming the first run.
  for (reuse in c(FALSE, TRUE)) {
    withr::local_options(tabscreen.store_reuse = reuse)
    cnd <- expect_error(screen_store_test(fake$url, 400), class = "tabscreen_error_store_damaged")
    expect_s3_class(cnd, "tabscreen_error_store")
    expect_match(conditionMessage(cnd), normalizePath(path), fixed = TRUE)
    expect_match(conditionMessage(cnd), "screen_store_recover(", fixed = TRUE)
    expect_equal(fake$stats()$requests_total, 0)
    expect_equal(file_md5(path), before)
  }
  expect_error(screen_store(), class = "tabscreen_error_store_damaged")
  expect_equal(file_md5(path), before)
})

test_that("screen_store_recover() copies every readable answer, and the same call then sends only the lost jobs", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-store-recover")
  fake <- local_fake_provider()
  path <- getOption("tabscreen.store")
  first <- screen_store_test(fake$url, 400)
  damage_store(path, 40)
  before <- file_md5(path)

  to <- withr::local_tempfile(fileext = ".sqlite")
  said <- testthat::capture_messages(summary <- screen_store_recover(path, to))
  expect_equal(file_md5(path), before)
  expect_named(summary, c("table", "copied", "lost", "exact"))
  answers <- summary[summary$table == "answers", ]
  expect_gt(answers$copied, 0)
  expect_gt(answers$lost, 0)
  expect_lt(answers$lost, 200) # 40 pages hold a few answers each, not the whole run
  expect_lte(answers$copied + answers$lost, 400)
  expect_match(said, sprintf("Copied %d answers", answers$copied), all = FALSE)
  expect_equal(summary$copied[summary$table == "runs"], 1)

  # The recovered file is a store: its run, with the answers copied, each as it was.
  runs <- screen_store(to)
  expect_equal(runs$run_id, attr(first, "store")$run_id)
  expect_equal(runs$answered, answers$copied)
  stored <- screen_store_answers(runs$run_id, store = to)
  mine <- first$answer_data[match(as.integer(stored$studyid), first$answer_data$studyid), ]
  expect_equal(stored$decision_llm, mine$decision_llm)
  expect_equal(stored$prompt_tokens, mine$prompt_tokens)

  # The run lost answers, so it is no longer complete: the same call on the recovered store
  # resumes it and sends only the jobs lost.
  expect_equal(runs$status, "incomplete")
  withr::local_options(tabscreen.store = to)
  fake$reset()
  again <- screen_store_test(fake$url, 400)
  expect_equal(fake$stats()$requests_total, 400 - answers$copied)
  expect_equal(nrow(again$answer_data), 400)
  expect_equal(attr(again, "store")$run_id, attr(first, "store")$run_id)
  expect_equal(screen_store(to)$answered, 400)

  expect_error(screen_store_recover(path, to), class = "tabscreen_error_store")
  expect_error(screen_store_recover(path), class = "tabscreen_error_store")
  expect_error(screen_store_recover(tempfile(), tempfile()), class = "tabscreen_error_store")
})
