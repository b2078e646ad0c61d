test_that("the rules files are well formed and cover every priced model", {
  rules <- tabscreen:::model_rules()
  expect_s3_class(rules, "data.frame")
  expect_named(rules, c("provider", "model", "min_cache_tokens", "notes", "rules"))
  expect_type(rules$min_cache_tokens, "integer")
  expect_true(all(rules$min_cache_tokens >= 512))
  expect_false(anyDuplicated(rules[c("provider", "model")]) > 0)
  # each row carries its provider's own columns as text, for its policy in the Go core
  for (p in unique(rules$provider)) {
    own <- rules$rules[rules$provider == p]
    expect_true(all(vapply(own, function(r) identical(names(r), names(own[[1]])), logical(1))), info = p)
    expect_true(all(vapply(own, function(r) all(vapply(r, rlang::is_string, logical(1))), logical(1))), info = p)
  }
  values <- unlist(lapply(rules$rules, function(r) strsplit(r$reasoning_values, "|", fixed = TRUE)))
  expect_true(all(values %in% c("none", "minimal", "low", "medium", "high", "xhigh", "max")))
  for (p in c("a", "b", "c")) {
    expect_setequal(rules$model[rules$provider == p], model_prizes$model[model_prizes$provider == p])
  }
  # read once
  expect_identical(tabscreen:::model_rules(), rules)
})

test_that("model_prizes holds dated, sourced prices of the three providers", {
  expect_s3_class(model_prizes, "tbl_df")
  expect_named(model_prizes, c("provider", "model", "input_per_million", "cached_input_per_million",
    "output_per_million", "cache_write_5m_per_million", "cache_write_1h_per_million", "long_prompt_above_tokens",
    "long_input_per_million", "long_cached_input_per_million", "long_output_per_million",
    "batch_input_per_million", "batch_cached_input_per_million", "batch_output_per_million",
    "flex_input_per_million", "flex_cached_input_per_million", "flex_output_per_million", "price_date", "source", "notes"))
  # batch at half the standard prices for all three providers; flex (provider A) as batch
  expect_equal(model_prizes$batch_input_per_million, model_prizes$input_per_million / 2)
  expect_equal(model_prizes$batch_output_per_million, model_prizes$output_per_million / 2)
  flex <- !is.na(model_prizes$flex_input_per_million)
  expect_true(all(model_prizes$provider[flex] == "a"))
  expect_equal(model_prizes$flex_input_per_million[flex], model_prizes$batch_input_per_million[flex])
  expect_setequal(unique(model_prizes$provider), c("a", "b", "c"))
  expect_type(model_prizes$input_per_million, "double")
  expect_type(model_prizes$output_per_million, "double")
  expect_s3_class(model_prizes$price_date, "Date")
  expect_false(anyNA(model_prizes$input_per_million))
  expect_false(anyNA(model_prizes$output_per_million))
  expect_false(anyNA(model_prizes$source))
  expect_false(anyDuplicated(model_prizes[c("provider", "model")]) > 0)
  luna <- model_prizes[model_prizes$model == "gpt-6-luna", ]
  expect_equal(c(luna$input_per_million, luna$cached_input_per_million, luna$output_per_million), c(0.10, 0.01, 0.50))
  haiku <- model_prizes[model_prizes$model == "claude-haiku-5-5", ]
  expect_equal(haiku$cache_write_5m_per_million, 0.125)
  expect_equal(c(haiku$long_prompt_above_tokens, haiku$long_input_per_million, haiku$long_cached_input_per_million,
    haiku$long_output_per_million), c(100000, 0.50, 0.05, 2.50))
  # every current model of B has its cache read and cache write prices
  b <- model_prizes[model_prizes$provider == "b", ]
  expect_false(anyNA(b$cached_input_per_million))
  expect_false(anyNA(b$cache_write_5m_per_million))
  expect_equal(is.na(model_prizes$long_prompt_above_tokens), is.na(model_prizes$long_input_per_million))
  expect_true(all(c("mistral-small-latest", "claude-haiku-5-5", "gpt-6-luna") %in% model_prizes$model))
})

test_that("filges2015_dat is the 270 screened references", {
  expect_s3_class(filges2015_dat, "tbl_df")
  expect_equal(dim(filges2015_dat), c(270L, 6L))
  expect_named(filges2015_dat, c("author", "eppi_id", "studyid", "title", "abstract", "human_code"))
  expect_equal(filges2015_dat$studyid, 1:270)
  expect_equal(sum(is.na(filges2015_dat$abstract)), 28)
  expect_equal(sum(filges2015_dat$human_code), 90)
  expect_type(filges2015_dat$eppi_id, "character")
})

test_that("lookup_models() finds prices and rules, and user prices come first", {
  m <- tabscreen:::lookup_models(c("gpt-6-luna", "gpt-4o-mini"), "a", custom_model = FALSE)
  expect_equal(m$model, c("gpt-6-luna", "gpt-4o-mini"))
  expect_equal(m$price_in, c(0.10, 0.15))
  expect_equal(vapply(m$rules, function(r) r$force_class, ""), c("small_default", "small_old"))

  withr::local_options(tabscreen.model_prizes = data.frame(model = c("my-ft-model", "gpt-6-luna"),
    input_per_million = c(1, 0.2), output_per_million = c(2, 0.6)))
  m <- tabscreen:::lookup_models(c("my-ft-model", "gpt-6-luna"), "a", custom_model = FALSE)
  expect_equal(m$price_in, c(1, 0.2))
  expect_equal(m$price_out, c(2, 0.6))
  expect_null(m$rules[[1]]) # no rules: sent as given
  expect_equal(m$rules[[2]]$force_class, "small_default")

  custom <- tabscreen:::lookup_models("ft:gpt-4o-mini:org::x", "a", custom_model = TRUE)
  expect_true(is.na(custom$price_in))
  expect_null(custom$rules[[1]])
})

test_that("a bad price option is a classed error", {
  withr::local_options(tabscreen.model_prizes = "cheap")
  expect_error(tabscreen:::lookup_models("gpt-6-luna", "a", FALSE), class = "tabscreen_error_model_prizes")
  withr::local_options(tabscreen.model_prizes = data.frame(model = "m", input_per_million = 1))
  expect_error(tabscreen:::lookup_models("gpt-6-luna", "a", FALSE), class = "tabscreen_error_model_prizes")
  withr::local_options(tabscreen.model_prizes = data.frame(model = "m", input_per_million = -1, output_per_million = 1))
  expect_error(tabscreen:::lookup_models("gpt-6-luna", "a", FALSE), class = "tabscreen_error_model_prizes")
})

test_that("unknown models get the closest known names", {
  cnd <- expect_error(tabscreen:::lookup_models("gpt-5.4-nanoo", "a", FALSE), class = "tabscreen_error_model_unknown")
  expect_match(conditionMessage(cnd), "gpt-5.4-nano", fixed = TRUE)
  expect_equal(tabscreen:::closest_names("gpt-6-lun", c("gpt-6-luna", "claude-haiku-5-5")), "gpt-6-luna")
  expect_equal(tabscreen:::closest_names("zzzzzzzzzzzzzzzz", c("gpt-6-luna")), character())
})

settings_for <- function(model, reasoning_effort = "medium", verbosity = "low", top_p = 1,
                         given = list(reasoning_effort = FALSE, verbosity = FALSE, top_p = FALSE), custom = FALSE) {
  m <- tabscreen:::lookup_models(model, "a", custom_model = custom)
  model_settings(m, "a", reasoning_effort, verbosity, top_p, given)[[1]]
}

test_that("reasoning_effort follows each model's rules", {
  # tools need "none": an effort not given is the model's own, "none"
  s <- settings_for("gpt-6-luna")
  expect_equal(s$reasoning_effort, "none")
  expect_true(s$send_top_p)
  s <- settings_for("gpt-6-luna", "none", given = list(reasoning_effort = TRUE, verbosity = FALSE, top_p = FALSE))
  expect_equal(s$reasoning_effort, "none")
  expect_error(settings_for("gpt-6-luna", "high", given = list(reasoning_effort = TRUE, verbosity = FALSE, top_p = FALSE)),
    class = "tabscreen_error_model_reasoning")
  # older reasoning models take the value
  s <- settings_for("gpt-5-mini", "low", given = list(reasoning_effort = TRUE, verbosity = FALSE, top_p = FALSE))
  expect_equal(s$reasoning_effort, "low")
  expect_false(s$send_top_p)
  expect_equal(settings_for("gpt-5-mini")$reasoning_effort, "medium")
  # non-reasoning models get no field
  s <- settings_for("gpt-4o-mini")
  expect_null(s$reasoning_effort)
  expect_null(s$verbosity)
  expect_true(s$send_top_p)
  # custom models: only what was given
  s <- settings_for("my-model", custom = TRUE)
  expect_null(s$reasoning_effort)
  expect_null(s$verbosity)
  expect_false(s$send_top_p)
  s <- settings_for("my-model", "high", "medium", 0.5, given = list(reasoning_effort = TRUE, verbosity = TRUE, top_p = TRUE), custom = TRUE)
  expect_equal(s$reasoning_effort, "high")
  expect_equal(s$verbosity, "medium")
  expect_true(s$send_top_p)
})

test_that("each force class has its limit", {
  check_models <- function(models, reps, force) {
    invisible(model_settings(models, "a", "medium", "low", 1, reps = reps, force = force))
  }
  check <- function(model, reps, force = FALSE) check_models(tabscreen:::lookup_models(model, "a", FALSE), reps, force)
  # small_default: no repetition limit
  expect_silent(check("gpt-6-luna", 50))
  # small_old: at most 10
  expect_silent(check("gpt-4o-mini", 10))
  expect_error(check("gpt-4o-mini", 11), class = "tabscreen_error_force")
  expect_silent(check("gpt-4o-mini", 11, force = TRUE))
  # large: at most 1
  expect_silent(check("gpt-6.1-terra", 1))
  expect_error(check("gpt-6.1-terra", 2), class = "tabscreen_error_force")
  expect_silent(check("gpt-6.1-terra", 2, force = TRUE))
  # a model without rules (custom, or a user's price row) gets the rule of providers B and C
  custom <- tabscreen:::lookup_models("ft:gpt-4o-mini:org::x", "a", custom_model = TRUE)
  expect_silent(check_models(custom, 10, FALSE))
  cnd <- expect_error(check_models(custom, 11, FALSE), class = "tabscreen_error_force")
  expect_match(conditionMessage(cnd), "at most 10 times per record")
  expect_silent(check_models(custom, 11, TRUE))
  # every rule row has one of the three classes, and each class is tested above; the guard comes
  # after the model's own rules, so a model that cannot call tools on this endpoint is refused for
  # that at any reps
  rules <- tabscreen:::model_rules()
  for (i in which(rules$provider == "a")) {
    limit <- switch(rules$rules[[i]]$force_class, small_default = Inf, small_old = 10, large = 1)
    r <- rules$rules[[i]]
    if (r$tools_need_none == "TRUE" && !grepl("none", r$reasoning_values, fixed = TRUE)) {
      expect_error(check(rules$model[i], 1), class = "tabscreen_error_model_tools")
      next
    }
    if (is.finite(limit)) {
      expect_error(check(rules$model[i], limit + 1), class = "tabscreen_error_force")
    }
    expect_silent(check(rules$model[i], min(limit, 10)))
  }
})

test_that("a custom model is refused above 10 repetitions by every provider, unless forced", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-guard", PROVIDER_B_API_KEY = "sk-ant-test-guard",
    PROVIDER_C_API_KEY = "c-test-guard")
  fake <- local_fake_provider()
  one <- test_records()[1, ]
  calls <- list(
    a = function(...) screen_a(fake, model = "ft:gpt-4o-mini:acme::abc123", custom_model = TRUE, data = one, ...),
    b = function(...) screen_b(fake, model = "my-claude", custom_model = TRUE, data = one, ...),
    c = function(...) screen_c(fake, model = "my-mistral", custom_model = TRUE, data = one, ...)
  )
  for (provider in names(calls)) {
    cnd <- expect_error(calls[[provider]](reps = 11), class = "tabscreen_error_force")
    expect_s3_class(cnd, "tabscreen_error_arg")
    expect_match(conditionMessage(cnd), "11 repetitions")
  }
  expect_equal(fake$stats()$requests_total, 0)
  for (provider in names(calls)) {
    res <- calls[[provider]](reps = 10)
    expect_equal(nrow(res$answer_data), 10)
    res <- calls[[provider]](reps = 11, force = TRUE)
    expect_equal(nrow(res$answer_data), 11)
  }
})

test_that("the price estimate counts characters, tool schema and reps", {
  records <- data.frame(title = c("a b c d", NA), abstract = c(strrep("x", 400), "  "), stringsAsFactors = FALSE)
  models <- tabscreen:::lookup_models(c("gpt-6-luna", "gpt-4o-mini"), "a", FALSE)
  settings <- list(list(reasoning_effort = "none"), list(reasoning_effort = NULL))
  est <- estimate_price(records, "12345678", models, settings, reps = c(2, 1), n_top_p = 1,
    decision_description = FALSE)
  chars <- (7 + 400) + (14 + 14) + 2 * 8 # titles and abstracts ("No information"), prompt per record
  expect_equal(est$requests, c(4, 2))
  expect_equal(est$input_tokens, c(2, 1) * (chars / 4 + 2 * 150))
  expect_equal(est$output_tokens, c(40, 20))
  expect_equal(est$price, (est$input_tokens * c(0.1, 0.15) + est$output_tokens * c(0.5, 0.6)) / 1e6)
  dd <- estimate_price(records, "p", models, settings, c(1, 1), 1, decision_description = TRUE)
  expect_true(all(dd$output_tokens > c(20, 20)))
  expect_equal(completion_allowance("medium", FALSE), 210)
  expect_equal(tabscreen:::format_dollars(0.000123), "$0.00012")
  expect_equal(tabscreen:::format_dollars(12.345), "$12.35")
})

test_that("blank fields follow the engine's rule", {
  x <- c("text", NA, "", "  \n\t ", "NA", " NA ", "N A", "\u00a0", "\u00a0NA\n", strrep(" ", 100), "NAB")
  expect_equal(is_blank_field(x), c(FALSE, TRUE, TRUE, TRUE, TRUE, TRUE, FALSE, TRUE, TRUE, TRUE, FALSE))
  expect_equal(field_chars(c("abc", NA, " ")), c(3, 14, 14))
})

test_that("lookup_models() gives provider B's cache prices and the rules of B and C", {
  m <- tabscreen:::lookup_models(c("claude-haiku-5-5", "claude-opus-5-5"), "b", custom_model = FALSE)
  expect_equal(m$price_in, c(0.10, 4.00))
  expect_equal(m$price_cached_in, c(0.01, 0.20))
  expect_equal(m$price_cache_write, c(0.125, 5.00))
  expect_equal(vapply(m$rules, function(r) r$forced_tool_ok, ""), c("TRUE", "FALSE"))
  expect_equal(vapply(m$rules, function(r) r$can_disable_thinking, ""), c("TRUE", "FALSE"))
  c_ <- tabscreen:::lookup_models(c("mistral-small-latest", "ministral-8b-latest"), "c", custom_model = FALSE)
  expect_equal(vapply(c_$rules, function(r) r$accepts_reasoning_field, ""), c("TRUE", "FALSE"))
  expect_true(all(is.na(c_$price_cache_write)))
  expect_error(tabscreen:::lookup_models("gpt-6-luna", "b", FALSE), class = "tabscreen_error_model_unknown")
  expect_error(tabscreen:::lookup_models("claude-haiku-5-5", "c", FALSE), class = "tabscreen_error_model_unknown")
  withr::local_options(tabscreen.model_prizes = data.frame(provider = "b", model = "my-claude",
    input_per_million = 1, output_per_million = 5, cached_input_per_million = 0.1, cache_write_per_million = 1.25))
  m <- tabscreen:::lookup_models("my-claude", "b", FALSE)
  expect_equal(c(m$price_in, m$price_cached_in, m$price_cache_write, m$price_out), c(1, 0.1, 1.25, 5))
  expect_null(m$rules[[1]])
  expect_error(tabscreen:::lookup_models("my-claude", "a", FALSE), class = "tabscreen_error_model_unknown")
  withr::local_options(tabscreen.model_prizes = data.frame(model = "m", input_per_million = 1, output_per_million = 1,
    cache_write_per_million = -1))
  expect_error(tabscreen:::lookup_models("m", "b", FALSE), class = "tabscreen_error_model_prizes")
})

test_that("model_settings_c() sends reasoning_effort only where the model takes it", {
  settings_c <- function(model, effort = "none", top_p = 1, given = list(reasoning_effort = FALSE, top_p = FALSE),
                         custom = FALSE) {
    m <- tabscreen:::lookup_models(model, "c", custom_model = custom)
    model_settings(m, "c", effort, top_p = top_p, given = given)[[1]]
  }
  expect_equal(settings_c("mistral-small-latest"), list(reasoning_effort = "none", send_top_p = TRUE))
  expect_equal(settings_c("mistral-medium-latest", "high")$reasoning_effort, "high")
  expect_null(settings_c("mistral-large-latest")$reasoning_effort)
  expect_null(settings_c("ministral-3b-latest", given = list(reasoning_effort = TRUE, top_p = FALSE))$reasoning_effort)
  expect_error(settings_c("ministral-3b-latest", "high"), class = "tabscreen_error_model_reasoning")
  expect_equal(settings_c("my-model", custom = TRUE), list(reasoning_effort = NULL, send_top_p = FALSE))
  s <- settings_c("my-model", "high", 0.5, given = list(reasoning_effort = TRUE, top_p = TRUE), custom = TRUE)
  expect_equal(s, list(reasoning_effort = "high", send_top_p = TRUE))
})

test_that("the price estimate counts no reasoning where provider B's thinking is off", {
  records <- data.frame(title = "a", abstract = "b", stringsAsFactors = FALSE)
  models <- tabscreen:::lookup_models(c("claude-haiku-5-5", "claude-opus-5-5"), "b", FALSE)
  settings <- model_settings(models, "b", "medium", given = list(reasoning_effort = FALSE), builtin = TRUE)
  est <- estimate_price(records, "p", models, settings, reps = c(1, 1), n_top_p = 1,
    decision_description = FALSE)
  expect_equal(est$output_tokens, c(10, 210))
})
