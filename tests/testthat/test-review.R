# screen_review() and its siblings. The page itself is driven in a browser by
# tests/node/review-browser.test.cjs (make test-browser); here the app is talked to over HTTP the
# way the page does, and the decisions are read back in R.

review_result <- function(fake, data = filges2015_dat[c(1:15, 181:195), ], reps = 3) {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-review")
  tabscreen_a.tools(data, prompt = "Is this study about functional family therapy for young people who use drugs?",
    studyid = studyid, title = title, abstract = abstract, api_url = fake$url, reps = reps,
    incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.3, decision_description = TRUE,
    progress = FALSE, messages = FALSE)
}

test_that("the page's queues follow the model's verdicts and the human decisions", {
  fake <- local_fake_provider(seed = 3, decisions = list("1" = 0.4, "0" = 0.55, "1.1" = 0.05))
  res <- review_result(fake)
  agg <- res$answer_data_aggregated
  app <- local_review(res, human_decision = human_code, reviewer = "ann")
  st <- review_state(app)
  in_queue <- function(q) st$studyid[vapply(st$queues, function(x) q %in% x, logical(1))]
  expect_setequal(in_queue("check"), as.character(agg$studyid[agg$final_decision_llm == "Check"]))
  model <- agg$final_decision_llm_num
  expect_setequal(in_queue("disagreements"), as.character(agg$studyid[model != agg$human_code]))
  expect_setequal(in_queue("all"), as.character(agg$studyid))
  expect_length(in_queue("audit"), 0)
  expect_equal(st$meta$human_column, "human_code")
  expect_equal(st$meta$reviewer, "ann")
  expect_equal(st$meta$cutoffs, list(upper = 0.5, lower = 0.3))
  # Every repetition's explanation is on the page.
  expect_length(st$items[[1]]$explanations, 3)
  expect_true(all(c("functional", "family", "therapy", "drug") %in% unlist(st$meta$terms[["1"]])))
})

test_that("the audit sample is drawn from the Excludes with its seed, kept, and only grows", {
  fake <- local_fake_provider(seed = 4, decisions = list("1" = 0.2, "0" = 0.8))
  res <- review_result(fake)
  agg <- res$answer_data_aggregated
  excludes <- as.character(agg$studyid[agg$final_decision_llm == "Exclude"])
  expect_gt(length(excludes), 6)
  audit_of <- function(app) {
    st <- review_state(app)
    audited <- vapply(st$items, function(i) "audit" %in% unlist(i$queues), logical(1))
    ranks <- vapply(st$items[audited], function(i) i$audit_rank, integer(1))
    st$studyid[audited][order(ranks)]
  }
  set.seed(99)
  before <- stats::runif(1)
  set.seed(99)
  app <- local_review(res, audit = 4, seed = 11)
  expect_equal(stats::runif(1), before) # the user's random numbers are untouched
  first <- audit_of(app)
  app$stop()
  expect_length(first, 4)
  expect_true(all(first %in% excludes))

  # Without `audit` the run's sample stays; a larger one keeps the records drawn.
  app <- local_review(res)
  expect_equal(audit_of(app), first)
  app$stop()
  app <- local_review(res, audit = 6)
  expect_equal(audit_of(app)[1:4], first)
  expect_length(audit_of(app), 6)
  app$stop()
  expect_error(screen_review(res, audit = 6, seed = 12, open = FALSE, wait = FALSE), class = "tabscreen_error_review_audit")
  expect_error(screen_review(res, audit = 3, open = FALSE, wait = FALSE), class = "tabscreen_error_review_audit")
  # A seed drawn for the user is stated and kept.
  res2 <- review_result(fake, data = filges2015_dat[c(20:30, 200:210), ])
  msgs <- testthat::capture_messages(app <- screen_review(res2, audit = 2, open = FALSE, wait = FALSE))
  app$stop()
  seed <- as.numeric(sub(".*seed ([0-9]+).*", "\\1", grep("seed", msgs, value = TRUE)))
  expect_false(is.na(seed))
  expect_equal(screen_review_audit(res2)$seed, seed)
})

test_that("every decision is in the store at once, survives a killed app, and comes back to R", {
  fake <- local_fake_provider(seed = 5)
  res <- review_result(fake)
  app <- local_review(res, reviewer = "ann")
  st <- review_state(app)
  ids <- st$studyid
  decide(app, ids[1], "Include", note = "RCT <script>alert(1)</script>")
  decide(app, ids[2], "Exclude")
  decide(app, ids[3], "Unsure")
  decide(app, ids[3], "Exclude")
  expect_equal(nrow(screen_review_decisions(res)), 3) # read while the app runs

  # Undo restores the earlier decision of the record.
  undone <- review_api(app, "/api/undo", list(reviewer = "ann"))$body$undone
  expect_equal(undone$studyid, ids[3])
  expect_equal(undone$now$decision, "Unsure")

  # The app's process is killed: nothing is lost, and it comes back on the same address.
  url <- app$url
  app$process$kill()
  app2 <- local_review(res, reviewer = "ann")
  expect_equal(app2$url, url)
  d <- screen_review_decisions(app2)
  expect_equal(d$studyid, ids[1:3])
  expect_equal(d$decision, c("Include", "Exclude", "Unsure"))
  expect_equal(d$note, c("RCT <script>alert(1)</script>", NA, NA))
  expect_equal(unique(d$reviewer), "ann")
  expect_equal(unique(d$run_id), attr(res, "store")$run_id)
  expect_s3_class(d$decided_at, "POSIXct")
  expect_equal(d$seconds, rep(2, 3))
  expect_named(d, c("run_id", "studyid", "promptid", "model", "top_p", "reviewer", "decision", "note",
    "decided_at", "seconds", "queue", "audit"))

  # The page gets the note back as it was written.
  expect_equal(review_state(app2)$decisions[[1]]$note, "RCT <script>alert(1)</script>")
  # Only the page with the run's token may read or write.
  expect_equal(review_api(app2, "/api/state", token = "0123")$status, 403L)
  # Finish ends the app.
  review_api(app2, "/api/finish", list())
  for (i in 1:100) if (app2$is_alive()) Sys.sleep(0.05)
  expect_false(app2$is_alive())
})

test_that("the merged decisions are a human decision column the other functions take", {
  fake <- local_fake_provider(seed = 6)
  res <- review_result(fake)
  app <- local_review(res, reviewer = "ann")
  ids <- review_state(app)$studyid
  decide(app, ids[1], "Include")
  decide(app, ids[2], "Exclude")
  decide(app, ids[3], "Unsure")
  decide(app, ids[4], "Include")
  decide(app, ids[4], "Exclude", reviewer = "bob")
  decide(app, ids[1], "Include", reviewer = "bob")

  expect_message(merged <- screen_review_merge(res), "1 record decided differently", class = "tabscreen_message")
  agg <- merged$answer_data_aggregated
  expect_equal(agg$human_review[match(ids[1:5], agg$studyid)], c(1L, 0L, NA, NA, NA))
  expect_equal(merged$answer_data$human_review[merged$answer_data$studyid == ids[2]], rep(0L, 3))
  ann <- screen_review_merge(res, reviewer = "ann", column = "ann")
  expect_equal(ann$answer_data_aggregated$ann[match(ids[4], agg$studyid)], 1L)

  a <- screen_analyzer(merged, human_decision = human_review)
  expect_equal(a$n[a$rule == "verdict"], 2L)
  expect_true(file.exists(screen_report(merged, human_decision = human_review, open = FALSE)))
  csv <- withr::local_tempfile(fileext = ".csv")
  written <- write_refs(merged, csv)
  expect_equal(written$human_review[match(ids[1:2], written$studyid)], c(1L, 0L))
  # A table gets the column too.
  expect_message(table <- screen_review_merge(res$answer_data_aggregated, screen_review_decisions(res)), class = "tabscreen_message")
  expect_equal(table$human_review, agg$human_review)
})

test_that("the audit reports the includes found, the exact bound and Clopper-Pearson's on the missed includes", {
  fake <- local_fake_provider(seed = 7, decisions = list("1" = 0.2, "0" = 0.8))
  res <- review_result(fake)
  app <- local_review(res, audit = 5, seed = 2, reviewer = "ann")
  st <- review_state(app)
  audited <- st$studyid[vapply(st$queues, function(q) "audit" %in% q, logical(1))]
  # Nothing reviewed yet: nothing is known of the Exclude pile, so the bound is all of it.
  none <- screen_review_audit(res)
  expect_equal(none$reviewed, 0L)
  expect_equal(none$share_upper, 1)
  expect_equal(none$missed_upper, none$excludes)
  expect_equal(none$share_upper_binomial, 1)
  expect_equal(none$missed_upper_binomial, none$excludes)
  decide(app, audited[1], "Include")
  decide(app, audited[2], "Exclude")
  decide(app, audited[3], "Exclude")
  decide(app, audited[4], "Unsure")
  # A decision outside the sample does not count.
  decide(app, setdiff(st$studyid, audited)[1], "Include")
  a <- screen_review_audit(res)
  excludes <- sum(res$answer_data_aggregated$final_decision_llm == "Exclude")
  expect_equal(a$excludes, excludes)
  expect_equal(a$sampled, 5L)
  expect_equal(a$reviewed, 4L)
  expect_equal(a$found, 1L)
  expect_equal(a$unsure, 1L)
  expect_equal(a$share, 2 / 4)
  expect_equal(a$share_upper_binomial, stats::qbeta(0.95, 3, 2))
  expect_equal(a$missed_upper_binomial, ceiling(stats::qbeta(0.95, 3, 2) * excludes))
  # The exact bound: the largest number of includes among the Excludes that finding 2 of 4 does
  # not rule out, by brute force over every number.
  hyper <- function(conf) max(which(stats::phyper(2, 0:excludes, excludes - 0:excludes, 4) > 1 - conf)) - 1
  expect_equal(a$missed_upper, hyper(0.95))
  expect_equal(a$share_upper, hyper(0.95) / excludes)
  expect_lte(a$missed_upper, a$missed_upper_binomial)
  expect_equal(screen_review_audit(res, conf_level = 0.8)$share_upper_binomial, stats::qbeta(0.8, 3, 2))
  expect_equal(screen_review_audit(res, conf_level = 0.8)$missed_upper, hyper(0.8))
  expect_equal(screen_review_audit(res, conf_level = 0.8)$conf_level, 0.8)
  expect_warning(old <- screen_review_audit(res, confidence = 0.8), class = "tabscreen_warning_deprecated")
  expect_equal(old$share_upper_binomial, stats::qbeta(0.8, 3, 2))
  app$stop()
  res3 <- review_result(fake, data = filges2015_dat[c(40:55), ])
  expect_error(screen_review_audit(res3), class = "tabscreen_error_review_audit")
})

test_that("an audit of the size the plan gives supports its claim, and bounds the screening's recall", {
  fake <- local_fake_provider(seed = 9, decisions = list("1" = 0.3, "0" = 0.7))
  res <- review_result(fake)
  agg <- res$answer_data_aggregated
  excludes <- sum(agg$final_decision_llm == "Exclude")
  plan <- screen_audit_plan(res, max_missed = 4, conf_level = 0.9)
  expect_equal(plan$excludes, excludes)
  expect_equal(plan$promptid, 1L)
  expect_lt(plan$audit, excludes)
  app <- local_review(res, audit = plan$audit, seed = 3, reviewer = "ann")
  st <- review_state(app)
  audited <- st$studyid[vapply(st$queues, function(q) "audit" %in% q, logical(1))]
  expect_length(audited, plan$audit)
  for (id in audited) decide(app, id, "Exclude")
  kept <- as.character(agg$studyid[agg$final_decision_llm != "Exclude"])
  decide(app, kept[1], "Include")
  decide(app, kept[2], "Include")
  decide(app, kept[3], "Exclude")
  hyper <- function(k, n) max(which(stats::phyper(k, 0:excludes, excludes - 0:excludes, n) > 0.1)) - 1

  # Nothing found among the audited Excludes: the claim of the plan holds.
  a <- screen_review_audit(res, conf_level = 0.9)
  expect_equal(c(a$reviewed, a$found, a$unsure), c(plan$audit, 0, 0))
  expect_equal(a$missed_upper, hyper(0, plan$audit))
  expect_lte(a$missed_upper, 4)
  expect_equal(a$included, length(kept))
  expect_equal(a$relevant, 2)
  expect_equal(a$recall_lower, 2 / (2 + a$missed_upper))
  same <- screen_audit_bound(excludes, reviewed = plan$audit, found = 0, conf_level = 0.9, relevant = 2)
  expect_equal(same$missed_upper, a$missed_upper)
  expect_equal(same$recall_lower, a$recall_lower)

  # One include found, more than the plan allowed for: the claim no longer holds, and the finding
  # counts for the recall of the screening with its audit.
  decide(app, audited[1], "Include")
  b <- screen_review_audit(res, conf_level = 0.9)
  expect_equal(b$found, 1)
  expect_equal(b$missed_upper, hyper(1, plan$audit))
  expect_gt(b$missed_upper, 4)
  expect_equal(b$recall_lower, (2 + 1) / (2 + b$missed_upper))
  expect_lte(b$missed_upper, b$missed_upper_binomial)
})

test_that("a table read back from a file is reviewed under an id of its records, in a store of its own", {
  fake <- local_fake_provider(seed = 8)
  res <- review_result(fake)
  csv <- withr::local_tempfile(fileext = ".csv")
  utils::write.csv(res$answer_data_aggregated, csv, row.names = FALSE)
  back <- utils::read.csv(csv)
  store <- withr::local_tempfile(fileext = ".sqlite")
  app <- local_review(back, human_decision = "human_code", store = store, reviewer = "ann")
  expect_match(app$run_id, "^review-[0-9a-f]{16}$")
  expect_equal(app$store, store)
  decide(app, review_state(app)$studyid[1], "Include")
  app$stop()
  again <- utils::read.csv(csv)
  d <- screen_review_decisions(again, store = store)
  expect_equal(d$run_id, app$run_id)
  expect_equal(nrow(d), 1)
  expect_equal(screen_review_merge(again, d)$human_review[1], 1L)

  withr::local_options(tabscreen.store = FALSE)
  expect_error(screen_review(back, open = FALSE, wait = FALSE), class = "tabscreen_error_store")
})

test_that("hostile text reaches the page as it is, for the page to show as text", {
  fake <- local_fake_provider(seed = 9)
  data <- filges2015_dat[c(1:4, 181:184), ]
  hostile <- "<img src=x onerror=\"alert(1)\"><script>alert('x')</script> & \u00e9t\u00e9 \u201cquoted\u201d"
  data$title[1] <- hostile
  data$abstract[2] <- hostile
  res <- review_result(fake, data = data)
  app <- local_review(res)
  st <- review_state(app)
  expect_equal(st$items[[which(st$studyid == as.character(data$studyid[1]))]]$title, hostile)
  expect_equal(st$items[[which(st$studyid == as.character(data$studyid[2]))]]$abstract, hostile)
  # The page's own files allow no inline script and load nothing from elsewhere.
  resp <- httr2::req_perform(httr2::req_options(httr2::request(sub("\\?.*$", "", app$url)), noproxy = "*"))
  csp <- httr2::resp_header(resp, "Content-Security-Policy")
  expect_match(csp, "script-src 'self'", fixed = TRUE)
  expect_match(csp, "default-src 'none'", fixed = TRUE)
})

test_that("arguments are checked before anything starts", {
  fake <- local_fake_provider(seed = 10)
  res <- review_result(fake, data = filges2015_dat[1:4, ], reps = 1)
  expect_error(screen_review(res, queue = "later", open = FALSE, wait = FALSE), class = "tabscreen_error_review")
  expect_error(screen_review(res, reviewer = "a\nb", open = FALSE, wait = FALSE), class = "tabscreen_error_review")
  expect_error(screen_review(res, seed = 1, open = FALSE, wait = FALSE), class = "tabscreen_error_review_audit")
  expect_error(screen_review(res, audit = 0, open = FALSE, wait = FALSE), class = "tabscreen_error_arg")
  expect_error(screen_review(res, port = 80, open = FALSE, wait = FALSE), class = "tabscreen_error_review")
  expect_error(screen_review(res, human_decision = nope, open = FALSE, wait = FALSE), class = "tabscreen_error_human_decision")
  expect_error(screen_review(list(), open = FALSE, wait = FALSE), class = "tabscreen_error_object")
  expect_error(screen_review_merge(res, column = ""), class = "tabscreen_error_review")
  # A screening asked once: its uncertain answers are the Check queue.
  app <- local_review(res)
  st <- review_state(app)
  uncertain <- as.character(res$answer_data$studyid[res$answer_data$decision_llm == "1.1"])
  in_check <- st$studyid[vapply(st$queues, function(q) "check" %in% q, logical(1))]
  expect_setequal(in_check, uncertain)
})

test_that("prompt_terms() keeps the words of the topic, not of the task", {
  expect_equal(prompt_terms("Is this study about Functional Family Therapy (FFT) for young people who use drugs?"),
    c("functional", "family", "therapy", "fft", "young", "people", "drug"))
  expect_equal(prompt_terms("Include studies of therapies."), "therap")
  expect_equal(prompt_terms(""), character())
})
