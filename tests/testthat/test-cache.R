# Prompt caching: cache-aware requests, cached and cache-write tokens priced at their own
# rates, the cache figures of the result, and OpenAI flex processing, against the fake provider.

# A prompt long enough to be cached by every provider (about 1,900 tokens), as a real screening
# prompt with its criteria often is.
long_prompt <- paste(rep(paste(
  "Include randomised and quasi-randomised trials of Functional Family Therapy for young people",
  "aged 11 to 21 in treatment for non-opioid drug use, compared with any other treatment or none."
), 40), collapse = " ")

cache_of <- function(res) attr(res$price_data, "cache")

# One screening of three records, ten repetitions, with caching on and off (no answer store, so
# that the second run is sent again).
screen_cached_and_not <- function(screen, fake, ...) {
  withr::local_options(tabscreen.store = FALSE)
  on <- screen(fake, data = test_records()[1:3, ], prompt = long_prompt, reps = 10, ...)
  withr::local_options(tabscreen.cache = FALSE)
  off <- screen(fake, data = test_records()[1:3, ], prompt = long_prompt, reps = 10, ...)
  list(on = on, off = off)
}

test_that("B: breakpoints where they pay, cache writes then reads, priced lower than without caching", {
  withr::local_envvar(PROVIDER_B_API_KEY = "sk-ant-test-cache")
  fake <- local_fake_provider(keep_requests = 100, prompt_cache = TRUE)
  runs <- screen_cached_and_not(screen_b, fake)
  on <- runs$on
  expect_null(on$error_data)
  cache <- cache_of(on)
  expect_gt(cache$cached_input_tokens, 0)
  expect_gt(cache$cache_write_tokens, 0)
  expect_gt(cache$cache_saving_dollar, 0)
  # every token at its own rate: fresh 0.10, cache read 0.01, cache write 0.125 (claude-haiku-5-5)
  ad <- on$answer_data
  fresh <- sum(ad$prompt_tokens) - cache$cached_input_tokens - cache$cache_write_tokens
  expect_equal(on$price_data$input_price_dollar,
    (fresh * 0.10 + cache$cached_input_tokens * 0.01 + cache$cache_write_tokens * 0.125) / 1e6)
  expect_lt(on$price_dollar, runs$off$price_dollar / 2)
  expect_equal(sum(cache_of(runs$off)$cached_input_tokens), 0)

  # The requests of the cached run: prompt and record as two blocks, a breakpoint after each; the
  # requests of the run without caching: the question as one string.
  bodies <- request_bodies(fake)
  blocks <- Filter(function(b) is.list(b$messages[[1]]$content), bodies)
  expect_length(blocks, 30)
  content <- blocks[[1]]$messages[[1]]$content
  expect_equal(content[[1]]$text, trimws(gsub("\\s+", " ", long_prompt)))
  expect_equal(content[[1]]$cache_control$type, "ephemeral")
  expect_match(content[[2]]$text, "^Now evaluate the following record")
  expect_equal(content[[2]]$cache_control$type, "ephemeral")
  expect_length(Filter(function(b) is.character(b$messages[[1]]$content), bodies), 30)

  printed <- paste(capture.output(invisible(capture.output(print(on))), type = "message"), collapse = "\n")
  expect_match(printed, "Prompt cache: [0-9,]+ input tokens read, [0-9,]+ written; saved \\$")
})

test_that("B: a single short request carries no cache_control", {
  withr::local_envvar(PROVIDER_B_API_KEY = "sk-ant-test-cache-short")
  fake <- local_fake_provider(prompt_cache = TRUE)
  res <- screen_b(fake, data = test_records()[1, ])
  body <- request_bodies(fake)[[1]]
  expect_type(body$messages[[1]]$content, "character")
  expect_false(grepl("cache_control", jsonlite::toJSON(body, auto_unbox = TRUE), fixed = TRUE))
  expect_equal(cache_of(res)$cache_write_tokens, 0)
  # a long prompt sent once: a write would cost 1.25x for nothing
  res <- screen_b(fake, data = test_records()[1, ], prompt = long_prompt)
  expect_type(request_bodies(fake)[[2]]$messages[[1]]$content, "character")
  # a prompt of about 700 tokens, shared by three records: over claude-haiku-5-5's minimum of 512
  # (rules table), under the 1,024 assumed for a model without one
  mid_prompt <- substr(long_prompt, 1, 2400)
  res <- screen_b(fake, data = test_records()[1:3, ], prompt = mid_prompt)
  content <- request_bodies(fake)[[3]]$messages[[1]]$content
  expect_equal(content[[1]]$cache_control$type, "ephemeral")
  expect_null(content[[2]]$cache_control)
  res <- screen_b(fake, data = test_records()[1:3, ], prompt = mid_prompt, model = "claude-haiku-5-5",
    custom_model = TRUE)
  expect_type(request_bodies(fake)[[6]]$messages[[1]]$content, "character")
})

test_that("A: the repetitions read the prompt cache; cached tokens are priced at the cached rate", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-cache-a")
  fake <- local_fake_provider(keep_requests = 100, prompt_cache = TRUE)
  runs <- screen_cached_and_not(screen_a, fake)
  on <- runs$on
  cache <- cache_of(on)
  ad <- on$answer_data
  expect_gt(cache$cached_input_tokens, 0)
  expect_equal(cache$cache_write_tokens, 0)
  # gpt-6-luna: input 0.10, cached input 0.01
  expect_equal(on$price_data$input_price_dollar,
    ((sum(ad$prompt_tokens) - cache$cached_input_tokens) * 0.10 + cache$cached_input_tokens * 0.01) / 1e6)
  expect_lt(on$price_data$input_price_dollar, sum(ad$prompt_tokens) * 0.10 / 1e6)
  keys <- vapply(request_bodies(fake), function(b) b$prompt_cache_key %||% NA_character_, character(1))
  expect_equal(sum(!is.na(keys)), 30)
  expect_length(unique(keys[!is.na(keys)]), 1)
})

test_that("C: prompt_cache_key brings cache reads, priced lower than without caching", {
  withr::local_envvar(PROVIDER_C_API_KEY = "c-test-cache")
  fake <- local_fake_provider(prompt_cache = TRUE)
  runs <- screen_cached_and_not(screen_c, fake)
  expect_gt(cache_of(runs$on)$cached_input_tokens, 0)
  expect_equal(cache_of(runs$off)$cached_input_tokens, 0)
  expect_lt(runs$on$price_dollar, runs$off$price_dollar)
})

test_that("the estimate counts the expected cache reads and writes", {
  withr::local_envvar(PROVIDER_B_API_KEY = "sk-ant-test-cache-estimate")
  fake <- local_fake_provider(prompt_cache = TRUE)
  out <- withr::with_options(list(tabscreen.store = FALSE), evaluate_promise(
    screen_b(fake, data = test_records()[1:3, ], prompt = long_prompt, reps = 10, messages = TRUE)))
  expect_true(any(grepl("read from the provider's prompt cache", out$messages, fixed = TRUE)))
  models <- tabscreen:::lookup_models("claude-haiku-5-5", "b", FALSE)
  settings <- list(list(reasoning_effort = "medium"))
  est <- function(reps) estimate_price(test_records(), long_prompt, models, settings, reps, 1, FALSE)
  expect_gt(est(10)$cached_tokens, est(1)$cached_tokens)
  withr::local_options(tabscreen.cache = FALSE)
  expect_equal(est(10)$cached_tokens, 0)
  expect_gt(est(10)$price, withr::with_options(list(tabscreen.cache = TRUE), est(10)$price))
})

test_that("flex: priced at the flex rate, its 429 'resource unavailable' retried", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-flex")
  fake <- local_fake_provider(flex_unavailable_n = 1)
  res <- screen_a(fake, data = test_records()[1:2, ], service_tier = "flex", backoff = function(...) 0)
  expect_null(res$error_data)
  expect_equal(nrow(res$answer_data), 2)
  expect_equal(fake$stats()$requests_total, 3)
  bodies <- request_bodies(fake)
  expect_true(all(vapply(bodies, function(b) identical(b$service_tier, "flex"), logical(1))))
  # gpt-6-luna at flex: input 0.05, cached input 0.005, output 0.25
  ad <- res$answer_data
  expect_equal(res$price_data$input_price_dollar, sum(ad$prompt_tokens) * 0.05 / 1e6)
  expect_equal(res$price_data$output_price_dollar, sum(ad$completion_tokens) * 0.25 / 1e6)
})

test_that("flex for a model without a flex price is refused before any request", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-flex-4o")
  fake <- local_fake_provider()
  expect_arg_error(screen_a(fake, model = "gpt-4o", service_tier = "flex"), "tabscreen_error_flex")
  expect_equal(fake$stats()$requests_total, 0)
})

test_that("options(tabscreen.cache) must be TRUE or FALSE", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-cache-option")
  fake <- local_fake_provider()
  withr::local_options(tabscreen.cache = "yes")
  expect_error(screen_a(fake), class = "tabscreen_error_option")
  expect_equal(fake$stats()$requests_total, 0)
})

test_that("B in batches: the lines carry the breakpoints, and the cache cuts the batch price", {
  withr::local_envvar(PROVIDER_B_API_KEY = "sk-ant-test-cache-batch")
  withr::local_options(tabscreen.store = FALSE)
  fake <- local_fake_provider(prompt_cache = TRUE, batches = TRUE)
  batch_b <- function() {
    screen_batch(tabscreen_b, test_records()[1:3, ], prompt = long_prompt, studyid = studyid, title = title,
      abstract = abstract, api_url = fake$url_b, reps = 10, progress = FALSE, messages = FALSE)
  }
  on <- batch_b()
  expect_null(on$error_data)
  expect_gt(cache_of(on)$cached_input_tokens, 0)
  withr::local_options(tabscreen.cache = FALSE)
  off <- batch_b()
  expect_equal(sum(cache_of(off)$cached_input_tokens), 0)
  expect_lt(on$price_dollar, off$price_dollar / 2)
})
