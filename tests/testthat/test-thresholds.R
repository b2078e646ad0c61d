# screen_thresholds(): the sweep over every observed incl_p, by hand and on fake screenings.

# reps = 10; human includes with incl_p 1, 0.5, 0.2, 0 and one without any answer (NA); human
# excludes with incl_p 0, 0, 0, 0.3, 0.6; one record without a human decision (0.9).
sweep_table <- function() {
  incl_p <- c(1, 0.5, 0.2, 0, NA, 0, 0, 0, 0.3, 0.6, 0.9)
  n <- length(incl_p)
  out <- tibble::new_tibble(list(
    human_code = c(1L, 1L, 1L, 1L, 1L, 0L, 0L, 0L, 0L, 0L, NA),
    studyid = 1:n, promptid = rep(1L, n), model = rep("m", n), incl_p = incl_p,
    final_decision_llm = ifelse(is.na(incl_p) | incl_p >= 0.1, "Include", "Exclude"),
    final_decision_llm_num = as.integer(is.na(incl_p) | incl_p >= 0.1), reps = rep(10L, n),
    n_mis_answers = c(0L, 0L, 0L, 0L, 10L, rep(0L, 6))
  ), nrow = n, class = "llm_agg_tbl")
  out
}

test_that("the sweep matches the hand-counted table at every observed incl_p", {
  th <- screen_thresholds(sweep_table())
  expect_s3_class(th, "tabscreen_thresholds")
  expect_equal(th$cutoff, c(0, 0.2, 0.3, 0.5, 0.6, 1))
  expect_false("top_p" %in% names(th))
  expect_equal(th$TP, c(4L, 3L, 2L, 2L, 1L, 1L))
  expect_equal(th$FN, c(0L, 1L, 2L, 2L, 3L, 3L))
  expect_equal(th$FP, c(5L, 2L, 2L, 1L, 1L, 0L))
  expect_equal(th$TN, c(0L, 3L, 3L, 4L, 4L, 5L))
  expect_equal(th$n_included, c(9L, 5L, 4L, 3L, 2L, 1L))
  expect_true(all(th$n == 9L))
  expect_true(all(th$n_missing == 1L))
  expect_true(all(th$n_human_missing == 1L))
  expect_equal(th$recall, c(1, 3 / 4, 1 / 2, 1 / 2, 1 / 4, 1 / 4))
  expect_equal(th$specificity, c(0, 3 / 5, 3 / 5, 4 / 5, 4 / 5, 1))
  expect_equal(th$precision, c(4 / 9, 3 / 5, 2 / 4, 2 / 3, 1 / 2, 1))
  expect_equal(c(th$recall_lower[2], th$recall_upper[2]),
    as.numeric(suppressWarnings(stats::prop.test(3, 4, correct = FALSE))$conf.int), tolerance = 1e-9)
  expect_equal(c(th$specificity_lower[4], th$specificity_upper[4]),
    as.numeric(suppressWarnings(stats::prop.test(4, 5, correct = FALSE))$conf.int), tolerance = 1e-9)
  # only the lowest cut-off reaches 95 % recall; it saves nothing: (0 + 0) / 9 - 0.05
  expect_equal(th$wss95, c(-0.05, NA, NA, NA, NA, NA))
  expect_equal(attr(th, "missing")$studyid, 5L)
  msg <- capture_messages(utils::capture.output(print(th)))
  expect_true(any(grepl("incl_p >= cutoff", msg, fixed = TRUE)))
  expect_true(any(grepl("1 record without an inclusion probability", msg)))
})

test_that("a group without any inclusion probability has no cut-off to sweep", {
  none <- sweep_table()
  none$incl_p <- NA_real_
  th <- screen_thresholds(none)
  expect_equal(nrow(th), 0)
  expect_type(th$cutoff, "double")
  expect_type(th$recall, "double")
  expect_equal(nrow(attr(th, "missing")), 11)
})

test_that("screen_thresholds() needs reps > 1", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-thresholds")
  fake <- local_fake_provider(seed = 21)
  res <- screen_a(fake)
  cnd <- expect_error(screen_thresholds(res), class = "tabscreen_error_thresholds_reps")
  expect_s3_class(cnd, "tabscreen_error_arg")
  expect_equal(cnd$arg, "x")
  expect_match(conditionMessage(cnd), "reps > 1", fixed = TRUE)
  expect_error(screen_thresholds(res$answer_data), class = "tabscreen_error_thresholds_reps")
  expect_error(screen_thresholds(sweep_table(), conf_level = 2), class = "tabscreen_error_conf_level")
  expect_error(screen_thresholds(sweep_table(), nope), class = "tabscreen_error_human_decision")
})

# The counts at cut-off `cut` (include iff incl_p >= cut), counted independently.
counts_at <- function(agg, cut) {
  ok <- !is.na(agg$incl_p) & !is.na(agg$human_code)
  h <- agg$human_code[ok]
  d <- agg$incl_p[ok] >= cut
  c(TP = sum(h == 1 & d), FP = sum(h == 0 & d), TN = sum(h == 0 & !d), FN = sum(h == 1 & !d))
}

test_that("on fake screenings: provider A with a model screened once beside one screened 3 times, provider B", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-thresholds", PROVIDER_B_API_KEY = "sk-ant-test-thresholds")
  fake <- local_fake_provider(seed = 22, decisions = list("1" = 0.5, "0" = 0.5))
  res <- screen_a(fake, model = c("gpt-6-luna", "gpt-4o-mini"), reps = c(1, 3))
  th <- screen_thresholds(res, human_code)
  expect_equal(unique(th$model), "gpt-4o-mini") # the model screened once has nothing to sweep
  agg <- res$answer_data_aggregated
  agg <- agg[agg$model == "gpt-4o-mini", ]
  expect_equal(th$cutoff, sort(unique(agg$incl_p)))
  for (i in seq_len(nrow(th))) {
    expect_equal(unlist(th[i, c("TP", "FP", "TN", "FN")]), counts_at(agg, th$cutoff[i]))
  }
  expect_equal(th$recall[1], 1)
  # screen_analyzer() gives cut-off rows only to the model screened 3 times
  an <- screen_analyzer(res, key_result = FALSE)
  expect_equal(an$model, c("gpt-6-luna", rep("gpt-4o-mini", 4)))
  expect_equal(an$rule, c("verdict", "verdict", "cutoff", "cutoff", "cutoff"))

  res_b <- screen_b(fake, reps = 4)
  th_b <- screen_thresholds(res_b, "human_code")
  agg_b <- res_b$answer_data_aggregated
  expect_false("top_p" %in% names(th_b))
  expect_equal(th_b$cutoff, sort(unique(agg_b$incl_p)))
  for (i in seq_len(nrow(th_b))) {
    expect_equal(unlist(th_b[i, c("TP", "FP", "TN", "FN")]), counts_at(agg_b, th_b$cutoff[i]))
  }
})
