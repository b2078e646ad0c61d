# screen_target_set() and screen_target_recall(): sizes and bounds against hand-computed values.

test_that("the target set has k = ceiling(log(1 - conf_level) / log(recall)) human includes", {
  # 0.95^58 = 0.0510 > 0.05 and 0.95^59 = 0.0485 <= 0.05
  expect_gt(0.95^58, 0.05)
  expect_lte(0.95^59, 0.05)
  target <- screen_target_set(filges2015_dat, human_code, seed = 1)
  expect_s3_class(target, "tbl_df")
  expect_equal(nrow(target), 59)
  expect_true(all(target$human_code == 1))
  expect_false(anyDuplicated(target$studyid) > 0)
  expect_equal(target$studyid, sort(target$studyid)) # in the order of data
  expect_equal(attr(target, "k"), 59)
  expect_equal(attr(target, "recall"), 0.95)
  expect_equal(attr(target, "conf_level"), 0.95)
  expect_named(target, names(filges2015_dat))
  # 0.9^28 = 0.0523 > 0.05 and 0.9^29 = 0.0471: 29
  expect_equal(nrow(screen_target_set(filges2015_dat, "human_code", recall = 0.9, seed = 1)), 29)
  expect_equal(attr(screen_target_set(filges2015_dat, recall = 0.5, conf_level = 0.75, seed = 1), "k"), 2) # 0.5^2 = 0.25 exactly
  expect_equal(nrow(screen_target_set(filges2015_dat, k = 5, seed = 2)), 5)
})

test_that("the draw is reproducible with a seed and leaves the session's random numbers alone", {
  a <- screen_target_set(filges2015_dat, k = 10, seed = 42)
  b <- screen_target_set(filges2015_dat, k = 10, seed = 42)
  expect_identical(a$studyid, b$studyid)
  c <- screen_target_set(filges2015_dat, k = 10, seed = 43)
  expect_false(identical(a$studyid, c$studyid))
  set.seed(7)
  first <- stats::runif(3)
  set.seed(7)
  screen_target_set(filges2015_dat, k = 10, seed = 42)
  expect_identical(stats::runif(3), first)
})

test_that("too few human includes, or bad arguments, are classed errors", {
  few <- filges2015_dat[c(1:20, 181:190), ] # 10 human includes
  cnd <- expect_error(screen_target_set(few, human_code), class = "tabscreen_error_target_set_size")
  expect_s3_class(cnd, "tabscreen_error_arg")
  expect_match(conditionMessage(cnd), "10 human includes", fixed = TRUE)
  expect_match(conditionMessage(cnd), "59", fixed = TRUE)
  # with all 10 found, the claim has confidence 1 - 0.95^10 = 0.401
  expect_match(conditionMessage(cnd), "0.401", fixed = TRUE)
  expect_error(screen_target_set(filges2015_dat, recall = 1), class = "tabscreen_error_recall")
  expect_error(screen_target_set(filges2015_dat, conf_level = 0), class = "tabscreen_error_conf_level")
  expect_error(screen_target_set(filges2015_dat, k = 2.5), class = "tabscreen_error_k")
  expect_error(screen_target_set(filges2015_dat, seed = "a"), class = "tabscreen_error_seed")
  cnd <- expect_error(screen_target_set(filges2015_dat, humancode), class = "tabscreen_error_human_decision")
  expect_match(conditionMessage(cnd), "data", fixed = TRUE)
  expect_error(screen_target_set(list(1)), class = "tabscreen_error_data")
})

test_that("the recall bound is the one-sided Clopper-Pearson bound", {
  all <- screen_target_recall(59, k = 59)
  expect_equal(all$found, 59)
  expect_equal(all$recall, 1)
  # all found: the bound solves p^59 = 0.05
  expect_equal(all$recall_lower, 0.05^(1 / 59))
  expect_equal(all$recall_lower, 0.9504923901, tolerance = 1e-9)
  expect_gte(all$recall_lower, 0.95)
  some <- screen_target_recall(57, k = 59)
  expect_equal(some$recall, 57 / 59)
  expect_equal(some$recall_lower, 0.8971108373, tolerance = 1e-9)
  # at the bound, finding 57 or more of 59 has probability exactly 5 %
  expect_equal(1 - stats::pbinom(56, 59, some$recall_lower), 0.05, tolerance = 1e-9)
  none <- screen_target_recall(0, k = 10)
  expect_equal(none$recall_lower, 0)
  both <- screen_target_recall(c(10, 9), k = 10, conf_level = 0.9)
  expect_equal(both$recall_lower[1], 0.1^(1 / 10))
  expect_equal(1 - stats::pbinom(8, 10, both$recall_lower[2]), 0.1, tolerance = 1e-9)
  expect_error(screen_target_recall(5), class = "tabscreen_error_k")
  expect_error(screen_target_recall(6, k = 5), class = "tabscreen_error_k")
  expect_error(screen_target_recall(-1, k = 5), class = "tabscreen_error_x")
})

test_that("a screening of the target set: found are the model's includes, failures are not found", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-target")
  fake <- local_fake_provider(seed = 31, decisions = list("1" = 0.7, "0" = 0.3))
  target <- screen_target_set(filges2015_dat, k = 8, seed = 3)
  fake$configure(fail_first_n = list(kind = "500", n = 2))
  res <- screen_a(fake, data = target, max_tries = 1)
  ad <- res$answer_data
  out <- screen_target_recall(res)
  expect_equal(out$k, 8)
  expect_equal(out$found, sum(ad$decision_binary == 1))
  expect_equal(out$n_missing, 2)
  expect_equal(out$recall, sum(ad$decision_binary == 1) / 8)
  x <- sum(ad$decision_binary == 1)
  expected <- if (x == 0) 0 else stats::qbeta(0.05, x, 8 - x + 1)
  expect_equal(out$recall_lower, expected)
  # a larger k counts the records not screened as not found
  expect_equal(screen_target_recall(res, k = 10)$recall, x / 10)
  expect_error(screen_target_recall(res, k = 3), class = "tabscreen_error_k")
  # k by position, where it was before human_decision came second
  expect_warning(old <- screen_target_recall(res, 10), class = "tabscreen_warning_deprecated")
  expect_identical(old, screen_target_recall(res, k = 10))
  # with the human column, records the humans excluded are not target records
  mixed <- screen_a(fake, data = test_records())
  only <- screen_target_recall(mixed, human_decision = human_code)
  ad <- mixed$answer_data
  expect_equal(only$k, sum(ad$human_code == 1))
  expect_equal(only$found, sum(ad$human_code == 1 & ad$decision_binary == 1))
})

test_that("confidence, the old name of conf_level, is still taken with a classed deprecation warning", {
  expect_warning(old <- screen_target_set(filges2015_dat, recall = 0.5, confidence = 0.75, seed = 1),
    class = "tabscreen_warning_deprecated")
  expect_identical(old, screen_target_set(filges2015_dat, recall = 0.5, conf_level = 0.75, seed = 1))
  expect_equal(attr(old, "conf_level"), 0.75)
  expect_warning(old <- screen_target_recall(c(10, 9), k = 10, confidence = 0.9), class = "tabscreen_warning_deprecated")
  expect_identical(old, screen_target_recall(c(10, 9), k = 10, conf_level = 0.9))
  # a bad value under the old name is named so in the error
  expect_error(suppressWarnings(screen_target_set(filges2015_dat, confidence = 0)), class = "tabscreen_error_confidence")
  # both names, or an argument that is neither, are errors
  expect_error(screen_target_recall(1, k = 2, conf_level = 0.9, confidence = 0.9), class = "tabscreen_error_conf_level")
  cnd <- expect_error(screen_target_recall(1, k = 2, conf = 0.9, recal = 1), class = "tabscreen_error_dots")
  expect_match(conditionMessage(cnd), "recal", fixed = TRUE)
  expect_error(screen_target_set(filges2015_dat, 1, 2, 3, 4, 5, 6), class = "tabscreen_error_dots")
})

test_that("human_decision is the second argument of screen_target_recall(); k by position the old way still works", {
  expect_named(formals(screen_target_recall)[1:2], c("x", "human_decision"))
  for (f in list(screen_analyzer, screen_thresholds, screen_target_set, screen_target_recall, screen_review, screen_report)) {
    expect_identical(names(formals(f))[2], "human_decision")
  }
  # the old order (x, k, confidence), by position
  expect_warning(old <- screen_target_recall(57, 59), class = "tabscreen_warning_deprecated")
  expect_identical(old, screen_target_recall(57, k = 59))
  n <- 59
  expect_warning(old <- screen_target_recall(57, n, 0.9), class = "tabscreen_warning_deprecated")
  expect_identical(old, screen_target_recall(57, k = 59, conf_level = 0.9))
})
