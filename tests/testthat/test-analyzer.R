# screen_analyzer(): measures checked against hand-computed values of constructed confusion tables,
# then on real screenings of the fake provider (three providers, reps = 1 and > 1, failures).

# answer_data (reps = 1) of a screening whose confusion table is TP, FP, TN, FN: the records are
# laid out by hand, the expected measures below are not computed from them.
hand_answers <- function(TP, FP, TN, FN, human = NULL) {
  h <- rep(c(1L, 0L, 0L, 1L), c(TP, FP, TN, FN))
  d <- rep(c(1L, 1L, 0L, 0L), c(TP, FP, TN, FN))
  n <- length(h)
  tibble::new_tibble(list(
    studyid = seq_len(n), promptid = rep(1L, n), model = rep("m", n), iterations = rep(1, n),
    decision_llm = as.character(d), decision_binary = d, human_code = if (is.null(human)) h else human
  ), nrow = n, class = "llm_tbl")
}

# An answer_data_aggregated table with reps = 10 and cut-offs 0.5 (upper) / 0.2 (lower):
# human includes with incl_p 1, 0.5, 0.2 (Check), 0 and one whose 10 reps all failed (NA: the
# aggregation labels it Check); human excludes with incl_p 0, 0, 0, 0.3 (Check), 0.6; and one
# record without a human decision (incl_p 0.9).
hand_aggregated <- function() {
  incl_p <- c(1, 0.5, 0.2, 0, NA, 0, 0, 0, 0.3, 0.6, 0.9)
  verdict <- c("Include", "Include", "Check", "Exclude", "Check", "Exclude", "Exclude", "Exclude", "Check",
    "Include", "Include")
  n <- length(incl_p)
  out <- tibble::new_tibble(list(
    human_code = c(1L, 1L, 1L, 1L, 1L, 0L, 0L, 0L, 0L, 0L, NA),
    studyid = 101:111, title = paste("Record", 101:111), promptid = rep(1L, n), model = rep("m", n),
    top_p = rep(1, n), incl_p = incl_p, final_decision_llm = verdict,
    final_decision_llm_num = as.integer(verdict != "Exclude"), reps = rep(10L, n),
    n_mis_answers = c(0L, 0L, 3L, 0L, 10L, 0L, 0L, 0L, 0L, 0L, 0L)
  ), nrow = n, class = "llm_agg_tbl")
  attr(out, "incl_cutoff_upper") <- 0.5
  attr(out, "incl_cutoff_lower") <- 0.2
  out
}

test_that("every measure matches the hand computation for TP = 8, FP = 3, TN = 85, FN = 2", {
  res <- screen_analyzer(hand_answers(8, 3, 85, 2), key_result = FALSE)
  expect_s3_class(res, "tabscreen_analysis")
  expect_s3_class(res, "tbl_df")
  expect_equal(nrow(res), 1)
  expect_equal(res$rule, "verdict")
  expect_equal(c(res$TP, res$FP, res$TN, res$FN), c(8L, 3L, 85L, 2L))
  expect_equal(res$n, 98L)
  expect_equal(res$n_records, 98L)
  expect_equal(res$n_missing, 0L)
  expect_equal(res$recall, 8 / 10)
  expect_equal(res$specificity, 85 / 88)
  expect_equal(res$precision, 8 / 11)
  expect_equal(res$npv, 85 / 87)
  expect_equal(res$accuracy, 93 / 98)
  expect_equal(res$bacc, (8 / 10 + 85 / 88) / 2)
  expect_equal(res$F1, 2 * (8 / 11) * 0.8 / (8 / 11 + 0.8))
  expect_equal(res$F1, 16 / 21)
  expect_equal(res$F2, 5 * (8 / 11) * 0.8 / (4 * 8 / 11 + 0.8))
  expect_equal(res$F2, 40 / 51)
  # po = 93/98; pe = (11 * 10 + 87 * 88) / 98^2 = 7766/9604; kappa = (9114 - 7766) / (9604 - 7766)
  expect_equal(res$kappa, 1348 / 1838)
  expect_equal(res$kappa, 0.733405876, tolerance = 1e-8)
  po <- 93 / 98
  pe <- 7766 / 9604
  expect_equal(res$kappa_se, sqrt(po * (1 - po) / (98 * (1 - pe)^2)))
  expect_equal(res$kappa_se, 0.1161432587, tolerance = 1e-8)
  expect_equal(res$kappa_lower, 1348 / 1838 - 1.959963985 * 0.1161432587, tolerance = 1e-8)
  expect_equal(res$kappa_upper, 1348 / 1838 + 1.959963985 * 0.1161432587, tolerance = 1e-8)
  # (8 * 85 - 3 * 2) / sqrt(11 * 10 * 88 * 87)
  expect_equal(res$mcc, 674 / sqrt(842160))
  expect_equal(res$mcc, 0.7344506027, tolerance = 1e-8)
  expect_true(is.na(res$wss95)) # recall 0.8 does not reach 95 %
})

test_that("the intervals are Wilson score intervals", {
  res <- screen_analyzer(hand_answers(8, 3, 85, 2), key_result = FALSE)
  z <- 1.959963985
  # recall: 8 of 10, by the formula written out
  p <- 0.8
  m <- 10
  centre <- (p + z^2 / (2 * m)) / (1 + z^2 / m)
  half <- z / (1 + z^2 / m) * sqrt(p * (1 - p) / m + z^2 / (4 * m^2))
  expect_equal(res$recall_lower, centre - half, tolerance = 1e-9)
  expect_equal(res$recall_upper, centre + half, tolerance = 1e-9)
  expect_equal(c(res$recall_lower, res$recall_upper), c(0.4901624715, 0.9433178485), tolerance = 1e-8)
  # specificity 85 of 88; the score test without continuity correction inverts to the same interval
  expect_equal(c(res$specificity_lower, res$specificity_upper), c(0.9045039578, 0.9883390028), tolerance = 1e-8)
  for (m in list(c("precision", 8, 11), c("npv", 85, 87), c("accuracy", 93, 98))) {
    ci <- stats::prop.test(as.numeric(m[2]), as.numeric(m[3]), correct = FALSE)$conf.int
    expect_equal(c(res[[paste0(m[1], "_lower")]], res[[paste0(m[1], "_upper")]]), as.numeric(ci), tolerance = 1e-9)
  }
  # a proportion of 0 or 1 keeps its bound at 0 or 1
  all_found <- screen_analyzer(hand_answers(5, 0, 5, 0), key_result = FALSE)
  expect_equal(all_found$recall_upper, 1)
  expect_equal(all_found$recall_lower, 5 / (5 + z^2), tolerance = 1e-9)
  # a 90 % level
  res90 <- screen_analyzer(hand_answers(8, 3, 85, 2), conf_level = 0.9, key_result = FALSE)
  expect_equal(c(res90$recall_lower, res90$recall_upper),
    as.numeric(stats::prop.test(8, 10, correct = FALSE, conf.level = 0.9)$conf.int), tolerance = 1e-9)
})

test_that("F2 and MCC are the real formulas, WSS@95 is defined at 95 % recall", {
  # P = 0.5, R = 1: F2 = 5 * 0.5 / (4 * 0.5 + 1) = 5/6 (the incumbent's formula gives 0.417)
  res <- screen_analyzer(hand_answers(5, 5, 10, 0), key_result = FALSE)
  expect_equal(res$precision, 0.5)
  expect_equal(res$recall, 1)
  expect_equal(res$F2, 5 / 6)
  # complete disagreement: MCC -1 and kappa -1 (not rescaled)
  res <- screen_analyzer(hand_answers(0, 5, 0, 5), key_result = FALSE)
  expect_equal(res$mcc, -1)
  expect_equal(res$kappa, -1)
  expect_equal(res$recall, 0)
  expect_true(is.na(res$wss95))
  # recall 19/20 = 0.95: WSS@95 = (TN + FN) / N - 0.05 = (50 + 1) / 100 - 0.05
  res <- screen_analyzer(hand_answers(19, 30, 50, 1), key_result = FALSE)
  expect_equal(res$recall, 0.95)
  expect_equal(res$wss95, 0.46)
  # no predicted include: precision, F1 and MCC are undefined / 0 as documented
  res <- screen_analyzer(hand_answers(0, 0, 10, 2), key_result = FALSE)
  expect_true(is.na(res$precision))
  expect_true(is.na(res$precision_lower))
  expect_equal(res$F1, 0)
  expect_true(is.na(res$mcc))
  # every record in one class by both raters: kappa undefined
  res <- screen_analyzer(hand_answers(0, 0, 10, 0), key_result = FALSE)
  expect_true(is.na(res$kappa))
  expect_true(is.na(res$kappa_se))
  expect_true(is.na(res$recall))
})

test_that("the key result holds the short columns, the full one every measure", {
  key <- screen_analyzer(hand_answers(8, 3, 85, 2))
  expect_named(key, c("promptid", "model", "reps", "n", "recall", "recall_lower", "recall_upper", "specificity",
    "specificity_lower", "specificity_upper", "precision", "kappa", "n_missing", "FN"))
  expect_equal(key$FN, 2L)
  full <- screen_analyzer(hand_answers(8, 3, 85, 2), key_result = FALSE)
  expect_true(all(c("promptid", "model", "reps", "rule", "cutoff", "n_records", "n", "n_missing", "n_human_missing",
    "n_incomplete", "n_check", "TP", "FP", "TN", "FN", "recall", "specificity", "precision", "npv", "accuracy",
    "bacc", "F1", "F2", "kappa", "kappa_se", "kappa_lower", "kappa_upper", "mcc", "wss95", "missing_studyid") %in% names(full)))
  printed <- NULL
  msg <- capture_messages(printed <- utils::capture.output(shown <- withVisible(print(key))))
  expect_false(shown$visible)
  expect_identical(shown$value, key)
  expect_true(any(grepl("human_code", msg)))
  expect_true(any(grepl("Wilson", msg)))
  expect_true(any(grepl("recall", printed)))
})

test_that("human decisions may be 1/0, logical or include/exclude; other values are an error", {
  base <- hand_answers(8, 3, 85, 2)
  h <- base$human_code
  as_logical <- base
  as_logical$human_code <- h == 1L
  as_text <- base
  as_text$human_code <- ifelse(h == 1L, "Include", "EXCLUDE")
  as_factor <- base
  as_factor$human_code <- factor(ifelse(h == 1L, "include", "exclude"))
  as_double <- base
  as_double$human_code <- as.numeric(h)
  ref <- screen_analyzer(base, key_result = FALSE)
  for (tab in list(as_logical, as_text, as_factor, as_double)) {
    res <- screen_analyzer(tab, key_result = FALSE)
    expect_equal(c(res$TP, res$FP, res$TN, res$FN), c(ref$TP, ref$FP, ref$TN, ref$FN))
  }
  # bare name, string, a variable holding the string
  col <- "human_code"
  expect_equal(screen_analyzer(base, "human_code")$recall, 0.8)
  expect_equal(screen_analyzer(base, col)$recall, 0.8)
  renamed <- base
  names(renamed)[names(renamed) == "human_code"] <- "screener"
  expect_equal(screen_analyzer(renamed, screener)$recall, 0.8)

  bad <- base
  bad$human_code[1:2] <- c(2L, 3L)
  cnd <- expect_error(screen_analyzer(bad), class = "tabscreen_error_human_decision")
  expect_s3_class(cnd, "tabscreen_error_arg")
  expect_equal(cnd$arg, "human_decision")
  expect_match(conditionMessage(cnd), "human_code", fixed = TRUE)
  bad_text <- base
  bad_text$human_code <- ifelse(h == 1L, "yes", "no")
  expect_error(screen_analyzer(bad_text), class = "tabscreen_error_human_decision")
  cnd <- expect_error(screen_analyzer(base, human_cod), class = "tabscreen_error_human_decision")
  expect_equal(cnd$arg, "human_decision")
  expect_match(conditionMessage(cnd), "human_code", fixed = TRUE) # suggested
  expect_error(screen_analyzer(base, "nope"), class = "tabscreen_error_human_decision")
})

test_that("records without a human decision are counted apart", {
  h <- rep(c(1L, 0L, 0L, 1L), c(8, 3, 85, 2))
  h[c(1, 20)] <- NA # one human include (TP) and one human exclude (TN) lose their human decision
  res <- screen_analyzer(hand_answers(8, 3, 85, 2, human = h), key_result = FALSE)
  expect_equal(c(res$TP, res$FP, res$TN, res$FN), c(7L, 3L, 84L, 2L))
  expect_equal(res$n_human_missing, 2L)
  expect_equal(res$n, 96L)
  expect_equal(res$n_records, 98L)
  expect_equal(res$n_missing, 0L)
  text <- hand_answers(8, 3, 85, 2)
  text$human_code <- ifelse(h == 1L, "include", "exclude")
  text$human_code[is.na(h)] <- "" # an empty cell is no decision
  expect_equal(screen_analyzer(text, key_result = FALSE)$n_human_missing, 2L)
})

test_that("an aggregated table: Check counts as include, a record without answers is missing", {
  res <- screen_analyzer(hand_aggregated(), key_result = FALSE)
  expect_equal(res$rule, c("verdict", rep("cutoff", 10)))
  expect_equal(res$cutoff, c(NA, (1:10) / 10))
  v <- res[1, ]
  # human includes: 1 (Include), 0.5 (Include), 0.2 (Check -> include), 0 (Exclude); NA missing
  # human excludes: 0, 0, 0 (Exclude), 0.3 (Check -> include), 0.6 (Include)
  expect_equal(c(v$TP, v$FP, v$TN, v$FN), c(3L, 2L, 3L, 1L))
  expect_equal(v$n, 9L)
  expect_equal(v$n_missing, 1L)
  expect_equal(v$n_human_missing, 1L)
  expect_equal(v$n_records, 11L)
  expect_equal(v$n_check, 2L)
  expect_equal(v$n_incomplete, 1L) # 0.2 rests on 7 answers
  expect_equal(v$missing_studyid[[1]], 105L)
  expect_equal(v$recall, 3 / 4)
  expect_equal(v$specificity, 3 / 5)
  miss <- attr(res, "missing")
  expect_equal(miss$studyid, 105L)
  expect_equal(miss$reason, "all repetitions failed")
  expect_equal(miss$title, "Record 105")
  # the cut-off rows: include iff incl_p >= k/10, counted by hand
  at <- function(cut) res[!is.na(res$cutoff) & abs(res$cutoff - cut) < 1e-12, ]
  expect_equal(unlist(at(0.1)[c("TP", "FP", "TN", "FN")]), c(TP = 3L, FP = 2L, TN = 3L, FN = 1L))
  expect_equal(unlist(at(0.3)[c("TP", "FP", "TN", "FN")]), c(TP = 2L, FP = 2L, TN = 3L, FN = 2L))
  expect_equal(unlist(at(0.6)[c("TP", "FP", "TN", "FN")]), c(TP = 1L, FP = 1L, TN = 4L, FN = 3L))
  expect_equal(unlist(at(1)[c("TP", "FP", "TN", "FN")]), c(TP = 1L, FP = 0L, TN = 5L, FN = 3L))
  expect_true(all(is.na(res$n_check[-1])))
  expect_true(all(res$n_missing == 1L))
  # the key result keeps the rule columns when there are cut-off rows
  key <- screen_analyzer(hand_aggregated())
  expect_equal(names(key)[1:6], c("promptid", "model", "top_p", "reps", "rule", "cutoff"))
  msg <- capture_messages(utils::capture.output(print(key)))
  expect_true(any(grepl("1 record without a model decision", msg)))
})

test_that("x must be a screening; repeated answers need their aggregation; no record twice", {
  cnd <- expect_error(screen_analyzer(1:3), class = "tabscreen_error_analyzer_object")
  expect_s3_class(cnd, "tabscreen_error_arg")
  expect_equal(cnd$arg, "x")
  expect_error(screen_analyzer(data.frame(a = 1)), class = "tabscreen_error_analyzer_object")
  reps <- hand_answers(2, 1, 1, 1)
  reps$iterations <- 3
  expect_error(screen_analyzer(reps), class = "tabscreen_error_analyzer_reps")
  twice <- hand_aggregated()
  twice <- tibble::new_tibble(as.list(rbind(as.data.frame(twice), as.data.frame(twice))), nrow = 22, class = "llm_agg_tbl")
  expect_error(screen_analyzer(twice), class = "tabscreen_error_analyzer_duplicated")
  no_col <- hand_answers(2, 1, 1, 1)
  no_col$model <- NULL
  expect_error(screen_analyzer(no_col), class = "tabscreen_error_analyzer_object")
  expect_error(screen_analyzer(hand_answers(2, 1, 1, 1), key_result = NA), class = "tabscreen_error_arg_flag")
  expect_error(screen_analyzer(hand_answers(2, 1, 1, 1), conf_level = 95), class = "tabscreen_error_conf_level")
  expect_error(screen_analyzer(hand_answers(2, 1, 1, 1), human_code, TRUE, 0.9), class = "rlib_error_dots_nonempty")
  # a plain data frame with the columns of a screening table is accepted
  plain <- as.data.frame(hand_answers(8, 3, 85, 2))
  expect_equal(screen_analyzer(plain)$recall, 0.8)
})

# The confusion table of decisions `d` against human decisions `h`, counted independently.
count_table <- function(h, d) {
  ok <- !is.na(h) & !is.na(d)
  c(TP = sum(ok & h == 1 & d == 1), FP = sum(ok & h == 0 & d == 1), TN = sum(ok & h == 0 & d == 0),
    FN = sum(ok & h == 1 & d == 0))
}

test_that("provider A, reps = 1: the decision is decision_binary of answer_data", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-analyzer")
  fake <- local_fake_provider(seed = 11, decisions = list("1" = 0.4, "0" = 0.6))
  res <- screen_a(fake)
  ad <- res$answer_data
  out <- screen_analyzer(res, key_result = FALSE)
  expect_equal(nrow(out), 1)
  expect_equal(out$model, unique(ad$model))
  expect_equal(out$top_p, 1)
  expect_equal(out$reps, 1L)
  expect_equal(unlist(out[c("TP", "FP", "TN", "FN")]), count_table(ad$human_code, ad$decision_binary))
  expect_equal(out$n, nrow(test_records()))
  expect_equal(out$n_check, 0L) # no uncertain answers with these decision weights
  tab <- count_table(ad$human_code, ad$decision_binary)
  expect_equal(out$recall, tab[["TP"]] / (tab[["TP"]] + tab[["FN"]]))
  expect_equal(out$specificity, tab[["TN"]] / (tab[["TN"]] + tab[["FP"]]))
  # answer_data alone gives the same
  expect_equal(screen_analyzer(res$answer_data, key_result = FALSE)$recall, out$recall)
  # two top_p values are two groups
  res2 <- screen_a(fake, top_p = c(0.5, 1), model = "gpt-4o-mini")
  out2 <- screen_analyzer(res2)
  expect_equal(out2$top_p, c(0.5, 1))
  for (tp in c(0.5, 1)) {
    sub <- res2$answer_data[res2$answer_data$top_p == tp, ]
    tab <- count_table(sub$human_code, sub$decision_binary)
    expect_equal(out2$FN[out2$top_p == tp], tab[["FN"]])
    expect_equal(out2$recall[out2$top_p == tp], tab[["TP"]] / (tab[["TP"]] + tab[["FN"]]))
  }
})

test_that("provider A, reps > 1: the verdict and the cut-off grid", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-analyzer")
  fake <- local_fake_provider(seed = 12, decisions = list("1" = 0.4, "0" = 0.5, "1.1" = 0.1))
  res <- screen_a(fake, reps = 4, incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.25)
  agg <- res$answer_data_aggregated
  out <- screen_analyzer(res, key_result = FALSE)
  expect_equal(out$rule, c("verdict", rep("cutoff", 4)))
  expect_equal(out$cutoff, c(NA, 0.25, 0.5, 0.75, 1))
  expect_equal(unlist(out[1, c("TP", "FP", "TN", "FN")]), count_table(agg$human_code, agg$final_decision_llm_num))
  expect_equal(out$n_check[1], sum(agg$final_decision_llm == "Check"))
  for (k in 1:4) {
    expect_equal(unlist(out[k + 1, c("TP", "FP", "TN", "FN")]),
      count_table(agg$human_code, as.integer(agg$incl_p * 4 >= k)))
  }
})

test_that("provider B (no top_p) and provider C, reps = 1 and reps > 1", {
  withr::local_envvar(PROVIDER_B_API_KEY = "sk-ant-test-analyzer", PROVIDER_C_API_KEY = "test-analyzer")
  fake <- local_fake_provider(seed = 13, decisions = list("1" = 0.5, "0" = 0.5))
  res_b <- screen_b(fake, reps = 3)
  out_b <- screen_analyzer(res_b, key_result = FALSE)
  expect_false("top_p" %in% names(out_b))
  agg <- res_b$answer_data_aggregated
  expect_equal(unlist(out_b[1, c("TP", "FP", "TN", "FN")]), count_table(agg$human_code, agg$final_decision_llm_num))
  expect_equal(nrow(out_b), 4)
  res_b1 <- screen_b(fake)
  out_b1 <- screen_analyzer(res_b1)
  expect_false("top_p" %in% names(out_b1))
  ad <- res_b1$answer_data
  expect_equal(out_b1$FN, count_table(ad$human_code, ad$decision_binary)[["FN"]])

  res_c <- screen_c(fake, reps = 2)
  out_c <- screen_analyzer(res_c, key_result = FALSE)
  expect_equal(out_c$top_p, rep(1, 3))
  agg <- res_c$answer_data_aggregated
  expect_equal(unlist(out_c[1, c("TP", "FP", "TN", "FN")]), count_table(agg$human_code, agg$final_decision_llm_num))
  res_c1 <- screen_c(fake)
  ad <- res_c1$answer_data
  expect_equal(screen_analyzer(res_c1)$recall,
    count_table(ad$human_code, ad$decision_binary)[["TP"]] / sum(ad$human_code == 1))
})

test_that("failed requests are missing, not agreements, until screen_errors() repairs them", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-analyzer")
  fake <- local_fake_provider(seed = 14, decisions = list("1" = 0.5, "0" = 0.5))
  fake$configure(fail_first_n = list(kind = "500", n = 3))
  res <- screen_a(fake, max_tries = 1)
  failed <- res$error_data$studyid
  expect_length(failed, 3)
  out <- screen_analyzer(res, key_result = FALSE)
  expect_equal(out$n_missing, 3L)
  expect_equal(out$n, nrow(test_records()) - 3L)
  expect_equal(out$TP + out$FP + out$TN + out$FN, out$n)
  expect_equal(sort(out$missing_studyid[[1]]), sort(failed))
  miss <- attr(out, "missing")
  expect_equal(sort(miss$studyid), sort(failed))
  expect_true(all(miss$reason == "request failed"))
  ad <- res$answer_data
  expect_equal(unlist(out[c("TP", "FP", "TN", "FN")]), count_table(ad$human_code, ad$decision_binary))
  msg <- capture_messages(utils::capture.output(print(out)))
  expect_true(any(grepl("3 records without a model decision", msg)))

  fake$configure(fail_first_n = list(kind = "500", n = 0))
  fixed <- screen_errors(res, messages = FALSE)
  out2 <- screen_analyzer(fixed, key_result = FALSE)
  expect_equal(out2$n_missing, 0L)
  expect_equal(out2$n, nrow(test_records()))
  expect_equal(nrow(attr(out2, "missing")), 0)
  ad <- fixed$answer_data
  expect_equal(unlist(out2[c("TP", "FP", "TN", "FN")]), count_table(ad$human_code, ad$decision_binary))
})

test_that("with reps > 1, records whose reps all failed are missing and partial ones incomplete", {
  withr::local_envvar(PROVIDER_C_API_KEY = "test-analyzer")
  fake <- local_fake_provider(seed = 15, decisions = list("1" = 0.5, "0" = 0.5))
  # every repetition of the third record fails, one repetition of the fifth
  recs <- test_records()
  fake$configure(fail_matching = list(list(substring = recs$title[3], kind = "500"),
    list(substring = recs$title[5], kind = "500", n = 1)))
  res <- screen_c(fake, reps = 3, max_tries = 1)
  agg <- res$answer_data_aggregated
  out <- screen_analyzer(res, key_result = FALSE)
  all_failed <- agg$studyid[is.na(agg$incl_p)]
  expect_equal(all_failed, recs$studyid[3])
  expect_equal(out$n_incomplete[1], 1L)
  expect_equal(attr(out, "missing")$reason, "all repetitions failed")
  expect_equal(out$n_missing[1], length(all_failed))
  expect_equal(sort(attr(out, "missing")$studyid), sort(all_failed))
  expect_equal(out$n_incomplete[1], sum(!is.na(agg$incl_p) & agg$n_mis_answers > 0))
  known <- !is.na(agg$incl_p)
  expect_equal(unlist(out[1, c("TP", "FP", "TN", "FN")]),
    count_table(agg$human_code[known], agg$final_decision_llm_num[known]))
  expect_equal(out$n[1], sum(known))

  fake$configure(fail_matching = list())
  fixed <- screen_errors(res, messages = FALSE)
  out2 <- screen_analyzer(fixed, key_result = FALSE)
  expect_equal(out2$n_incomplete[1], 0L)
  expect_equal(out2$n_missing[1], 0L)
  expect_equal(out2$n[1], nrow(test_records()))
})
