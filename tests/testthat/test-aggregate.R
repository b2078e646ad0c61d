# Spec section 3 aggregation (done in Go) on hand-made answers tables: the edge cases of the
# incumbent package's notes (aiscreenr.md 5.3) and the fixes of its bugs.

answers_of <- function(cases, submodel = "gpt-6-luna-2026-09-22") {
  rows <- lapply(seq_along(cases), function(i) {
    d <- cases[[i]]
    data.frame(
      record = i, promptid = 1L, model = "gpt-6-luna", top_p = 1, n = seq_along(d),
      decision_binary = as.integer(d), detailed_description = NA_character_, confidence = NA_real_,
      submodel = ifelse(is.na(d), NA_character_, submodel), stringsAsFactors = FALSE
    )
  })
  do.call(rbind, rows)
}

agg_of <- function(cases, upper = NULL, lower = NULL) {
  agg <- aggregate_engine(answers_of(cases), upper, lower)
  agg[order(agg$record), ]
}

reps10 <- function(includes, failed = 0) {
  c(rep(1L, includes), rep(NA_integer_, failed), rep(0L, 10 - includes - failed))
}

test_that("the default cut-off includes 1 of 10 (>= is used)", {
  agg <- agg_of(list(reps10(1), reps10(0), rep(1L, 10), c(1L, 0L, 0L)))
  expect_equal(agg$incl_p, c(0.1, 0, 1, 1 / 3))
  expect_equal(agg$final_decision_llm, c("Include", "Exclude", "Include", "Include"))
  expect_equal(agg$final_decision_llm_num, c(1L, 0L, 1L, 1L))
  expect_equal(agg$reps, c(10L, 10L, 10L, 3L))
  expect_equal(agg$n_mis_answers, c(0L, 0L, 0L, 0L))
  expect_equal(attr(agg, "incl_cutoff_upper"), 0.1)
  expect_equal(attr(agg, "incl_cutoff_lower"), 0.1)
})

test_that("upper 0.5 and lower 0.2 flag the band between them", {
  agg <- agg_of(list(reps10(1), reps10(2), reps10(5), reps10(4)), upper = 0.5, lower = 0.2)
  expect_equal(agg$incl_p, c(0.1, 0.2, 0.5, 0.4))
  expect_equal(agg$final_decision_llm, c("Exclude", "Check", "Include", "Check"))
  expect_equal(agg$final_decision_llm_num, c(0L, 1L, 1L, 1L))
})

test_that("only an upper cut-off means no Check band", {
  agg <- agg_of(list(reps10(4), reps10(5)), upper = 0.5)
  expect_equal(agg$final_decision_llm, c("Exclude", "Include"))
  expect_equal(attr(agg, "incl_cutoff_lower"), 0.5)
  # the incumbent's disagreements example: 1 of 10 at 0.5 / 0.4
  expect_equal(agg_of(list(reps10(1)), 0.5, 0.4)$final_decision_llm, "Exclude")
})

test_that("exact decimal cut-offs are met", {
  agg <- agg_of(list(reps10(3), reps10(7)), upper = 0.3, lower = 0.3)
  expect_equal(agg$final_decision_llm, c("Include", "Include"))
  agg <- agg_of(list(reps10(7)), upper = 0.7, lower = 0.7)
  expect_equal(agg$final_decision_llm, "Include")
})

test_that("the lower cut-off is ignored while the upper one is 0.1 or below", {
  one_of_20 <- c(1L, rep(0L, 19))
  agg <- agg_of(list(one_of_20), upper = 0.1, lower = 0.05)
  expect_equal(agg$final_decision_llm, "Exclude")
  expect_equal(attr(agg, "incl_cutoff_lower"), 0.1)
})

test_that("failed repetitions are missing answers; a record whose repetitions all failed is Check", {
  agg <- agg_of(list(reps10(1, failed = 3), c(NA, NA, NA, NA, NA, NA, NA, NA, NA, 0L), rep(NA_integer_, 10)))
  expect_equal(agg$incl_p[1], 1 / 7)
  expect_equal(agg$final_decision_llm[1], "Include")
  expect_equal(agg$n_mis_answers, c(3L, 9L, 10L))
  expect_equal(agg$reps, c(10L, 10L, 10L))
  expect_equal(agg$final_decision_llm[2], "Exclude")
  expect_true(is.na(agg$incl_p[3]))
  expect_equal(agg$final_decision_llm[3], "Check")
  expect_equal(agg$final_decision_llm_num[3], 1L)
})

test_that("exactly one row per record x prompt x model x top_p, whatever the submodels", {
  a <- answers_of(list(reps10(2, failed = 2), reps10(1)))
  a$submodel[a$record == 2 & a$n == 5] <- "gpt-6-luna-2026-10-01"
  b <- a
  b$top_p <- 0.5
  agg <- aggregate_engine(rbind(a, b), NULL, NULL)
  expect_equal(nrow(agg), 4)
  expect_equal(nrow(unique(agg[c("record", "promptid", "model", "top_p")])), 4)
  expect_match(agg$submodel[agg$record == 2][1], "2026-09-22")
  expect_match(agg$submodel[agg$record == 2][1], "2026-10-01")
})

test_that("the longest answer is the longest across all repeats, whatever their decision", {
  a <- answers_of(list(c(1L, 1L, 0L)))
  a$detailed_description <- c("Include: short.", "Include: a much longer reason with many words.",
    "Exclude: the longest reason of all three, with even more words in it.")
  agg <- aggregate_engine(a, NULL, NULL)
  expect_equal(agg$final_decision_llm, "Include")
  expect_equal(agg$longest_answer, "Exclude: the longest reason of all three, with even more words in it.")
})

test_that("a screening's longest_answer is its longest description across the repeats", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-longest")
  fake <- local_fake_provider(seed = 7, decisions = list("1" = 0.5, "0" = 0.5))
  res <- screen_a(fake, reps = 4, decision_description = TRUE, incl_cutoff_upper = 0.5)
  a <- res$answer_data
  words <- lengths(regmatches(a$detailed_description, gregexpr("\\w+", a$detailed_description)))
  agg <- res$answer_data_aggregated
  disagreeing <- 0
  for (i in seq_len(nrow(agg))) {
    mine <- which(a$studyid == agg$studyid[i])
    longest <- mine[which.max(words[mine])]
    expect_equal(agg$longest_answer[i], a$detailed_description[longest])
    agreeing <- mine[a$decision_binary[mine] == agg$final_decision_llm_num[i]]
    disagreeing <- disagreeing + (max(words[mine]) > max(c(0, words[agreeing])))
  }
  # the case the rule is about: every description agreeing with the final decision is shorter
  expect_gt(disagreeing, 0)
})
