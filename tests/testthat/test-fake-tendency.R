# The fake provider's per-record tendency (fake_provider(tendency = ...)): each record has an include
# probability that its answers follow, the same in every provider, sharpened per model.

tendency_records <- function() filges2015_dat[1:40, ]

# The aggregated result of `fun` on the 40 records with 10 repetitions, ordered by model and studyid.
tendency_run <- function(fun, url, ...) {
  res <- screen_with(fun, url, data = tendency_records(), reps = 10, api_key = "sk-test-tendency", ...)
  agg <- res$answer_data_aggregated
  agg[order(agg$model, agg$studyid), ]
}

# The share of records whose incl_p is near 0 or 1.
share_clear <- function(incl_p) mean(incl_p <= 0.2 | incl_p >= 0.8)

test_that("with a tendency, a record leans the same way in every provider, most of them clearly", {
  fake <- local_fake_provider(seed = 5)
  # Without it every answer is drawn alike: incl_p scatters around one share.
  off <- tendency_run("tabscreen_a.tools", fake$url, prompt = "Without a tendency?")
  expect_lt(share_clear(off$incl_p), 0.5)

  fake$configure(tendency = TRUE)
  expect_length(fake$config()$tendency$components, 3)
  a <- tendency_run("tabscreen_a.tools", fake$url)
  b <- tendency_run("tabscreen_b", fake$url_b)
  c <- tendency_run("tabscreen_c", fake$url_c)
  for (agg in list(a, b, c)) {
    expect_equal(nrow(agg), 40)
    expect_true(all(agg$reps == 10))
    expect_gte(share_clear(agg$incl_p), 0.7)
  }
  expect_equal(a$studyid, b$studyid)
  expect_equal(a$studyid, c$studyid)
  same_side <- (a$incl_p >= 0.5) == (b$incl_p >= 0.5) & (b$incl_p >= 0.5) == (c$incl_p >= 0.5)
  expect_gte(mean(same_side), 0.8)
  # Without a tendency incl_p would not correlate between providers.
  expect_gt(cor(a$incl_p, b$incl_p), 0.7)
  expect_gt(cor(a$incl_p, c$incl_p), 0.7)
  # Clear excludes outnumber clear includes, as the default mixture has them (70 % and 10 %).
  expect_gt(sum(a$incl_p <= 0.2), 2 * sum(a$incl_p >= 0.8))
})

test_that("a sharper model gives fewer Check verdicts and puts records on the same side", {
  fake <- local_fake_provider(seed = 5, tendency = list(models = list("large" = 4, "ministral" = 0.5)))
  agg <- tendency_run("tabscreen_c", fake$url_c, model = c("ministral-8b-latest", "mistral-large-latest"),
    incl_cutoff_upper = 0.8, incl_cutoff_lower = 0.2)
  cheap <- agg[agg$model == "ministral-8b-latest", ]
  strong <- agg[agg$model == "mistral-large-latest", ]
  expect_equal(cheap$studyid, strong$studyid)
  checks_cheap <- sum(cheap$final_decision_llm == "Check")
  checks_strong <- sum(strong$final_decision_llm == "Check")
  expect_lt(checks_strong, checks_cheap / 2)
  expect_gt(share_clear(strong$incl_p), share_clear(cheap$incl_p))
  expect_gte(mean((cheap$incl_p >= 0.5) == (strong$incl_p >= 0.5)), 0.8)
})

test_that("a malformed tendency is refused, naming it", {
  expect_error(fake_provider(tendency = list(components = list(list(weight = 1, a = 0, b = 2)))),
    class = "tabscreen_error_fake", regexp = "tendency: components\\[0\\]: a and b")
  fake <- local_fake_provider()
  expect_error(fake$configure(tendency = list(model = list(large = 2))),
    class = "tabscreen_error_fake", regexp = "tendency must be true, false or an object")
  expect_error(fake$configure(tendency = list(models = list(large = -1))),
    class = "tabscreen_error_fake", regexp = "sharpness of \"large\" must be > 0")
  expect_null(fake$config()$tendency)
})
