# The wording of the main messages and errors of the screening functions, the store, batch
# screening and the review, pinned by snapshots (tests/testthat/_snaps/snapshots.md): a change of
# wording shows in review as a diff of that file. What varies between runs (temporary paths, ports,
# times, run ids) is scrubbed by scrub_snapshot().

test_that("argument errors of the screening functions", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-snap", PROVIDER_B_API_KEY = "sk-test-snap")
  fake <- local_fake_provider(seed = 91)
  expect_snapshot(error = TRUE, screen_a(fake, prompt = c("a", " ")))
  expect_snapshot(error = TRUE, screen_a(fake, model = "gpt-6-lunar"))
  expect_snapshot(error = TRUE, screen_a(fake, title = "ttitle"))
  expect_snapshot(error = TRUE, screen_a(fake, reps = 0))
  expect_snapshot(error = TRUE, screen_a(fake, data = "x", fine_tuned = TRUE))
  withr::local_envvar(PROVIDER_A_API_KEY = NA)
  expect_snapshot(error = TRUE, screen_a(fake))
  expect_equal(fake$stats()$requests_total, 0)
})

test_that("a run stopped by the provider, and the message of failed requests", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-snap-stop", seed = 92, invalid_keys = "sk-test-snap-stop")
  expect_snapshot(error = TRUE, screen_a(fake), transform = scrub_snapshot)
  fake$configure(invalid_keys = character())
  fail_record(fake, 3, "500")
  expect_snapshot(res <- screen_a(fake, max_tries = 1, messages = TRUE, progress = FALSE), transform = scrub_snapshot)
  expect_equal(nrow(res$error_data), 1)
})

test_that("evaluation: a missing human column, too few includes, the deprecated argument name", {
  expect_snapshot(error = TRUE, screen_target_set(filges2015_dat, humancode))
  expect_snapshot(error = TRUE, screen_target_set(filges2015_dat[c(1:20, 181:190), ], human_code))
  expect_snapshot(screen_target_recall(57, k = 59, confidence = 0.9))
  expect_snapshot(screen_target_recall(57, 59))
  expect_snapshot(error = TRUE, screen_target_recall(57, k = 59, conf = 0.9, recal = 1))
  expect_snapshot(error = TRUE, screen_analyzer(filges2015_dat))
  expect_snapshot(error = TRUE, screen_thresholds(filges2015_dat, conf_level = 1))
})

test_that("the answer store: no such run, a store that does not exist, a deleted run", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-snap-store")
  fake <- local_fake_provider(seed = 93)
  res <- screen_a(fake)
  expect_snapshot(error = TRUE, screen_store_answers("no-such-run"), transform = scrub_snapshot)
  expect_snapshot(error = TRUE, screen_store_delete("r1", store = file.path(tempdir(), "none.sqlite")),
    transform = scrub_snapshot)
  expect_snapshot(screen_store_delete(res), transform = scrub_snapshot)
})

test_that("batch screening: bad arguments, and a batch the provider refuses", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-snap-batch")
  fake <- local_fake_provider(batches = TRUE, seed = 94, batch_create_fail_always = TRUE)
  expect_snapshot(error = TRUE, screen_batch(mean))
  expect_snapshot(error = TRUE, screen_batch(tabscreen_a.tools, wait = NA))
  expect_snapshot(error = TRUE, transform = scrub_snapshot,
    screen_batch(tabscreen_a.tools, test_records()[1:3, ], prompt = test_prompt, studyid = studyid,
      title = title, abstract = abstract, api_url = fake$url, progress = FALSE, messages = FALSE, max_tries = 2))
})

test_that("the review: a bad queue, no audit sample, a result that is not one", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-snap-review")
  fake <- local_fake_provider(seed = 95)
  res <- screen_a(fake)
  expect_snapshot(error = TRUE, screen_review(res, queue = "everything", open = FALSE, wait = FALSE))
  expect_snapshot(error = TRUE, screen_review_audit(res), transform = scrub_snapshot)
  expect_snapshot(error = TRUE, screen_review_decisions(list(1)))
})
