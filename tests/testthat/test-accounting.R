# The numbers of a result a user must be able to trust: the time each answer took, the tokens
# that add up to the price, and what a resumed or repaired run says about its own spend.

test_that("run_time is the whole request's time, its retries and waits included", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-run-time")
  fake <- local_fake_provider(retry_after_ms = 400)
  recs <- test_records()
  fake$configure(fail_matching = list(list(substring = recs$title[3], kind = "429", n = 1)))
  res <- screen_a(fake)
  a <- res$answer_data
  waited <- a$run_time[a$studyid == recs$studyid[3]]
  # the server said to wait 400 ms before the second attempt
  expect_gte(waited, 0.4)
  expect_true(all(a$run_time <= attr(res, "run_info")$elapsed_seconds))
  # the store keeps the same time, and its log the last attempt's own
  stored <- screen_store_answers(res)
  stored <- stored[match(as.character(a$studyid), stored$studyid), ]
  expect_equal(stored$run_time, a$run_time)
  log <- screen_store_log(res)
  last <- log[log$outcome == "answer" & log$studyid == as.character(recs$studyid[3]), ]
  expect_lt(last$took, waited - 0.4)
})
