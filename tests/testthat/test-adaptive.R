# screen_adaptive(): repetitions stop once a record's verdict is settled, through the exported
# functions, C and Go, against the fake provider.

# The screening `p` (one of adaptive_providers) on the test records, adaptive unless `rule` is NULL.
screen_p <- function(fake, p, ..., rule = "exact") {
  if (is.null(rule)) return(screen_with(p$fun, fake[[p$url]], ...))
  screen_with("screen_adaptive", fake[[p$url]], screening = get(p$fun, envir = asNamespace("tabscreen")),
    rule = rule, ...)
}

for (letter in names(adaptive_providers)) {
  p <- adaptive_providers[[letter]]

  test_that(paste0(letter, ": an exact adaptive run has the full run's verdicts with fewer requests"), {
    fake <- local_keyed_fake(p$key, "sk-test-adaptive")
    full <- screen_p(fake, p, reps = 6, rule = NULL)
    sent_full <- fake$stats()$requests_total
    expect_equal(sent_full, 48)
    # The fake answers the k-th request of a question alike in both runs once its counts restart.
    fake$reset()
    res <- screen_p(fake, p, reps = 6)
    sent <- fake$stats()$requests_total
    expect_equal(final_by_record(res), final_by_record(full))
    expect_lt(sent, sent_full)
    # Every request sent is a row; the ones never sent are in neither table.
    expect_null(res$error_data)
    expect_equal(nrow(res$answer_data), sent)
    agg <- res$answer_data_aggregated
    expect_equal(agg$reps, rep(6L, 8))
    expect_equal(agg$reps_sent, as.integer(table(factor(res$answer_data$studyid, levels = agg$studyid))))
    expect_true(all(agg$reps_sent >= 1))
    expect_equal(attr(res, "run_info")$saved_requests, sent_full - sent)
    # Each record's answers are among the full run's answers of that record (the full run sends
    # repetitions 2 to 6 at once, so which of them got which answer differs).
    for (id in agg$studyid) {
      sent_answers <- table(res$answer_data$decision_llm[res$answer_data$studyid == id])
      full_answers <- table(full$answer_data$decision_llm[full$answer_data$studyid == id])
      expect_true(all(sent_answers <= full_answers[names(sent_answers)]), label = paste("answers of record", id))
    }
    expect_match(printed_message(res), paste0("Adaptive repetitions: ", sent_full - sent, " requests? not sent"))
    # summary(): the same count per prompt and model, priced at the group's price per request sent.
    s <- summary(res)
    expect_equal(s$requests_saved, sent_full - sent)
    expect_equal(s$price_saved_dollar, s$price_dollar / s$requests * s$requests_saved)
    expect_gt(s$price_saved_dollar, 0)
    expect_match(paste(utils::capture.output(print(s), type = "message"), collapse = "\n"),
      paste0("Adaptive repetitions: ", sent_full - sent, " requests? not sent, about \\$"))
    expect_false("requests_saved" %in% names(summary(full)))
    # A full run's result has no column reps_sent and no saved requests.
    expect_false("reps_sent" %in% names(full$answer_data_aggregated))
    expect_null(attr(full, "run_info")$saved_requests)
  })

  test_that(paste0(letter, ": a resumed adaptive run sends only what its stored answers leave open"), {
    fake <- local_keyed_fake(p$key, "sk-test-adaptive")
    fail_record(fake, 2, kind = "500")
    first <- screen_p(fake, p, reps = 6, max_tries = 1)
    expect_equal(nrow(first$error_data), 6)
    expect_equal(unique(first$error_data$studyid), test_records()$studyid[2])
    runs <- screen_store()
    expect_equal(runs$status, "incomplete")
    fake$configure(fail_matching = list())
    fake$reset()
    res <- screen_p(fake, p, reps = 6, max_tries = 1)
    bodies <- vapply(request_bodies(fake), function(b) jsonlite::toJSON(b, auto_unbox = TRUE), character(1))
    expect_gt(length(bodies), 0)
    expect_lte(length(bodies), 6)
    # Nothing answered before is sent again: every request is the failed record's.
    expect_true(all(grepl(test_records()$title[2], bodies, fixed = TRUE)))
    expect_null(res$error_data)
    expect_equal(attr(res, "run_info")$stored_answers, nrow(first$answer_data))
    expect_equal(nrow(res$answer_data), nrow(first$answer_data) + length(bodies))
    expect_equal(screen_store()$status, "completed")
    # A full run of the same call is another run.
    fake$reset()
    screen_p(fake, p, reps = 6, max_tries = 1, rule = NULL)
    expect_equal(fake$stats()$requests_total, 48)
    expect_equal(nrow(screen_store()), 2)
  })

  test_that(paste0(letter, ": screen_errors() re-sends an adaptive result's failures adaptively"), {
    fake <- local_keyed_fake(p$key, "sk-test-adaptive")
    fail_record(fake, 3, kind = "500")
    res <- screen_p(fake, p, reps = 6, max_tries = 1)
    expect_equal(nrow(res$error_data), 6)
    saved <- attr(res, "run_info")$saved_requests
    fixed <- resend_failed(fake, res)
    sent <- fake$stats()$requests_total
    expect_gt(sent, 0)
    expect_lte(sent, 6)
    bodies <- vapply(request_bodies(fake), function(b) jsonlite::toJSON(b, auto_unbox = TRUE), character(1))
    expect_true(all(grepl(test_records()$title[3], bodies, fixed = TRUE)))
    expect_equal(attr(fixed, "arg_list")$run_options$adaptive, list(rule = "exact"))
    agg <- fixed$answer_data_aggregated
    expect_true("reps_sent" %in% names(agg))
    expect_equal(agg$reps_sent[agg$studyid == test_records()$studyid[3]], sent)
    expect_equal(attr(fixed, "run_info")$saved_requests, saved + 6L - sent)
    expect_equal(nrow(fixed$answer_data), sum(agg$reps_sent))
    expect_equal(screen_store()$status, "completed")
  })
}

test_that("screen_adaptive() refuses bad arguments before any request", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-adaptive")
  adaptive_a <- function(...) {
    screen_with("screen_adaptive", fake$url, screening = tabscreen_a.tools, reps = 3, ...)
  }
  expect_arg_error(screen_adaptive(function(...) NULL, reps = 3), "tabscreen_error_adaptive_args",
    fun = "screen_adaptive")
  cnd <- expect_arg_error(adaptive_a(rule = "fast"), "tabscreen_error_adaptive_args", fun = "screen_adaptive")
  expect_equal(cnd$arg, "rule")
  for (bad in list(0, 1, -0.5, NA_real_, "0.01", c(0.01, 0.02))) {
    cnd <- expect_arg_error(adaptive_a(rule = "statistical", level = bad), "tabscreen_error_adaptive_args",
      fun = "screen_adaptive")
    expect_equal(cnd$arg, "level")
  }
  expect_equal(fake$stats()$requests_total, 0)
})

test_that("screen_adaptive() with reps = 1 is the ordinary screening", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-adaptive")
  plain <- screen_a(fake)
  res <- screen_with("screen_adaptive", fake$url, screening = tabscreen_a.tools)
  # The same run in the store: the adaptive call took the plain call's answers.
  expect_equal(attr(res, "store")$fingerprint, attr(plain, "store")$fingerprint)
  expect_equal(fake$stats()$requests_total, 8)
  expect_null(attr(res, "arg_list")$run_options$adaptive)
  expect_null(attr(res, "run_info")$saved_requests)
})

test_that("the statistical rule sends no more than the exact one and keeps its level", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-adaptive")
  data <- filges2015_dat[1:40, ]
  exact <- screen_with("screen_adaptive", fake$url, screening = tabscreen_a.tools, data = data, reps = 6)
  sent_exact <- fake$stats()$requests_total
  fake$reset()
  res <- screen_with("screen_adaptive", fake$url, screening = tabscreen_a.tools, data = data, reps = 6,
    rule = "statistical", level = 0.05)
  sent <- fake$stats()$requests_total
  expect_lte(sent, sent_exact)
  expect_equal(attr(res, "arg_list")$run_options$adaptive, list(rule = "statistical", level = 0.05))
  expect_equal(attr(res, "run_info")$saved_requests, 240L - sent)
  expect_null(res$error_data)
  # Every record where both rules sent all six repetitions has the same verdict.
  both <- exact$answer_data_aggregated$reps_sent == 6 & res$answer_data_aggregated$reps_sent == 6
  expect_equal(res$answer_data_aggregated$final_decision_llm[both], exact$answer_data_aggregated$final_decision_llm[both])
})

test_that("on a seeded run with a per-record tendency the statistical rule keeps its level and saves requests", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-adaptive", seed = 5, tendency = TRUE)
  run <- function(fun, ...) {
    fake$reset()
    # rpm: no pacing at the provider's default limit, which this many requests would reach.
    res <- screen_with(fun, fake$url, data = filges2015_dat, reps = 10, incl_cutoff_upper = 0.5, rpm = 1e7, ...)
    list(verdict = final_by_record(res), sent = fake$stats()$requests_total, res = res)
  }
  adaptive <- function(...) run("screen_adaptive", screening = tabscreen_a.tools, ...)
  # The fake answers a record the same in any order of requests, and the exact rule looks at a
  # record's own answers only: these two runs go at full speed.
  full <- run("tabscreen_a.tools")
  exact <- adaptive(rule = "exact")
  # One request in flight at a time: the answers arrive in one order, so the statistical run and
  # its fits of the spread are the same every time.
  stat <- withr::with_options(list(tabscreen.max_active = 1L), adaptive(rule = "statistical", level = 0.01))
  n <- length(full$verdict)
  expect_equal(n, 270)
  expect_identical(exact$verdict[names(full$verdict)], full$verdict)
  # Each record stopped early had less than a 1 % chance of another verdict, so the records whose
  # verdict differs are at most binomial(270, 0.01), here within its 99.9 % quantile (the bound on
  # 5,000 groups is checked in the core's TestStatisticalRuleKeepsItsLevelOnSeededRuns).
  differ <- sum(stat$verdict[names(full$verdict)] != full$verdict)
  expect_lte(differ, stats::qbinom(0.999, n, 0.01))
  # The statistical rule stops records the exact one must go on asking.
  expect_lt(stat$sent, 0.9 * exact$sent)
  expect_equal(attr(stat$res, "run_info")$saved_requests, 10L * n - stat$sent)
})

test_that("the estimate of an adaptive screening says it is the most the call can send and cost", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-adaptive")
  withr::local_options(tabscreen.estimate = TRUE)
  p <- adaptive_providers$a
  expect_message(screen_p(fake, p, reps = 3), "the most it can send and cost", class = "tabscreen_estimate")
  # An ordinary screening's estimate does not say it.
  msgs <- character()
  withCallingHandlers(screen_p(fake, p, reps = 3, prompt = "Another prompt?", rule = NULL),
    tabscreen_estimate = function(m) {
      msgs <<- c(msgs, conditionMessage(m))
      invokeRestart("muffleMessage")
    })
  expect_length(msgs, 1)
  expect_no_match(msgs, "the most it can send")
})
