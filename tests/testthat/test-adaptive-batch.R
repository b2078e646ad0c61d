# screen_batch(screen_adaptive, ...): adaptive repetitions in rounds of batches, through the exported
# functions, C and Go, against the fake provider's batch APIs with a per-record tendency.

# The most rounds of a run of `reps` repetitions (help page of screen_adaptive()).
round_bound <- function(reps) 1 + ceiling(log2(reps))

# The screening of provider `p` on `data` (`how`: "batch", the full batch run; "adaptive_batch",
# through screen_batch(screen_adaptive, ...); "adaptive", synchronous and adaptive), quiet.
screen_how <- function(fake, p, how, data, ..., rule = "exact", wait = TRUE) {
  fun <- get(p$fun, envir = asNamespace("tabscreen"))
  args <- list(data, prompt = test_prompt, studyid = quote(studyid), title = quote(title),
    abstract = quote(abstract), api_url = fake[[p$url]], progress = FALSE, messages = FALSE, ...)
  switch(how,
    batch = do.call(screen_batch, c(list(fun), args, wait = wait)),
    adaptive_batch = do.call(screen_batch, c(list(screen_adaptive, fun), args, rule = rule, wait = wait)),
    adaptive = do.call(screen_adaptive, c(list(fun), args, rule = rule)))
}

# What the fake's batch APIs did during `expr` (its batch counts are not zeroed by reset()): its value, and the batches created and lines received.
batch_counts <- function(fake, expr) {
  before <- fake$stats()$batch
  value <- expr
  after <- fake$stats()$batch
  list(value = value, batches = after$created - before$created, lines = after$lines_received - before$lines_received)
}

for (letter in names(adaptive_providers)) {
  p <- adaptive_providers[[letter]]

  test_that(paste0(letter, ": an exact adaptive batch run has the full batch run's verdicts, in fewer lines and rounds within the bound"), {
    fake <- local_keyed_fake(p$key, "sk-test-adaptive-batch", batches = TRUE, tendency = TRUE, seed = 7)
    data <- filges2015_dat[1:24, ]
    full <- batch_counts(fake, screen_how(fake, p, "batch", data, reps = 6))
    expect_equal(full$lines, 144)
    # The fake answers the k-th request of a record alike in every run once its counts restart.
    fake$reset()
    run <- batch_counts(fake, screen_how(fake, p, "adaptive_batch", data, reps = 6))
    res <- run$value
    expect_s3_class(res, "llm")
    expect_equal(final_by_record(res), final_by_record(full$value))
    agg <- res$answer_data_aggregated
    saved <- attr(res, "run_info")$saved_requests
    expect_gt(saved, 0)
    expect_equal(sum(agg$reps_sent), run$lines)
    expect_lt(sum(agg$reps_sent), 6 * 24)
    expect_equal(saved, 6L * 24L - run$lines)
    expect_equal(agg$reps, rep(6L, 24))
    # One batch a round (one model, few lines): within the bound, and more than one round.
    expect_lte(run$batches, round_bound(6))
    expect_gte(run$batches, 2)
    # The lines never sent are in neither table.
    expect_null(res$error_data)
    expect_equal(nrow(res$answer_data), run$lines)
    expect_match(printed_message(res), paste0("Adaptive repetitions: ", saved, " requests? not sent"))
    expect_true(all(screen_store()$status == "completed"))
    # The synchronous adaptive run is the same object, at twice the price per token. It decides
    # after every answer, the rounds after 1, 2, 4, ... answers: a record it settles after m
    # answers is sent m to 2m - 1 lines.
    fake$reset()
    sync <- screen_how(fake, p, "adaptive", data, reps = 6)
    expect_equal(names(res), names(sync))
    expect_equal(names(agg), names(sync$answer_data_aggregated))
    expect_equal(names(res$answer_data), names(sync$answer_data))
    m <- sync$answer_data_aggregated$reps_sent
    expect_true(all(agg$reps_sent >= m & agg$reps_sent <= 2 * m - 1))
    expect_lte(saved, attr(sync, "run_info")$saved_requests)
    per_token <- function(x, price, tokens) sum(x$price_data[[price]]) / sum(x$answer_data[[tokens]])
    expect_equal(per_token(res, "input_price_dollar", "prompt_tokens"),
      per_token(sync, "input_price_dollar", "prompt_tokens") / 2)
    expect_equal(per_token(res, "output_price_dollar", "completion_tokens"),
      per_token(sync, "output_price_dollar", "completion_tokens") / 2)
    expect_gt(res$price_data$total_price_dollar, 0)
  })
}

test_that("an adaptive batch call with wait = FALSE submits a round; each call again goes a round on, and one that waits finishes", {
  p <- adaptive_providers$a
  fake <- local_keyed_fake(p$key, "sk-test-adaptive-batch-wait", batches = TRUE, tendency = TRUE, seed = 7)
  data <- filges2015_dat[1:24, ]
  full <- screen_how(fake, p, "batch", data, reps = 6)
  fake$reset()
  first <- batch_counts(fake, screen_how(fake, p, "adaptive_batch", data, reps = 6, wait = FALSE))
  sent <- first$value
  expect_s3_class(sent, "tabscreen_batch")
  expect_equal(sent$pending, 24)
  expect_equal(sent$later, 24 * 5)
  expect_equal(first$lines, 24)
  expect_output(print(sent), "Later rounds of adaptive repetitions: at most 120 more")
  # The same call again with wait = FALSE collects the round, which has ended (the fake's batches
  # end at once), and submits the next round: fewer lines, as some records settled.
  again <- batch_counts(fake, screen_how(fake, p, "adaptive_batch", data, reps = 6, wait = FALSE))
  expect_s3_class(again$value, "tabscreen_batch")
  expect_gt(again$lines, 0)
  expect_lt(again$lines, 24)
  expect_equal(again$value$pending, again$lines)
  rest <- batch_counts(fake, screen_how(fake, p, "adaptive_batch", data, reps = 6))
  res <- rest$value
  sent_lines <- first$lines + again$lines + rest$lines
  expect_s3_class(res, "llm")
  expect_equal(attr(res, "store")$run_id, sent$run_id)
  expect_equal(final_by_record(res), final_by_record(full))
  expect_null(res$error_data)
  expect_equal(sum(res$answer_data_aggregated$reps_sent), sent_lines)
  expect_equal(attr(res, "run_info")$saved_requests, 6L * 24L - sent_lines)
  expect_lte(first$batches + again$batches + rest$batches, round_bound(6))
  expect_equal(screen_store()$status[screen_store()$run_id == sent$run_id], "completed")
  # The same call without an interruption (in another store) sends the same lines.
  withr::local_options(tabscreen.store = tempfile("store-", fileext = ".sqlite"))
  fake$reset()
  whole <- batch_counts(fake, screen_how(fake, p, "adaptive_batch", data, reps = 6))
  expect_equal(whole$lines, sent_lines)
  expect_equal(final_by_record(whole$value), final_by_record(res))
})

test_that("the statistical rule runs through batches too, sending no more than the exact one", {
  p <- adaptive_providers$a
  fake <- local_keyed_fake(p$key, "sk-test-adaptive-batch-stat", batches = TRUE, tendency = TRUE, seed = 5)
  data <- filges2015_dat[1:40, ]
  exact <- batch_counts(fake, screen_how(fake, p, "adaptive_batch", data, reps = 6))
  fake$reset()
  stat <- batch_counts(fake, screen_how(fake, p, "adaptive_batch", data, reps = 6, rule = "statistical", level = 0.05))
  res <- stat$value
  expect_equal(attr(res, "arg_list")$run_options$adaptive, list(rule = "statistical", level = 0.05))
  expect_lte(stat$lines, exact$lines)
  expect_equal(attr(res, "run_info")$saved_requests, 240L - stat$lines)
  expect_lte(stat$batches, round_bound(6))
  expect_null(res$error_data)
  # Every record where both rules sent all six repetitions has the same verdict.
  a <- exact$value$answer_data_aggregated
  s <- res$answer_data_aggregated
  both <- a$reps_sent == 6 & s$reps_sent == 6
  expect_equal(s$final_decision_llm[both], a$final_decision_llm[both])
})

test_that("screen_adaptive() goes inside screen_batch(), not outside", {
  fake <- local_keyed_fake("PROVIDER_A_API_KEY", "sk-test-adaptive-batch-args", batches = TRUE)
  cnd <- expect_arg_error(screen_adaptive(screen_batch, tabscreen_a.tools, test_records(), reps = 3),
    "tabscreen_error_adaptive_args", fun = "screen_adaptive")
  expect_equal(cnd$arg, "screening")
  expect_match(conditionMessage(cnd), "screen_batch(screen_adaptive", fixed = TRUE)
  # Without a screening function after screen_adaptive, or with a bad rule: refused before any batch.
  expect_arg_error(screen_batch(screen_adaptive, reps = 3), "tabscreen_error_batch_args", fun = "screen_batch")
  expect_arg_error(screen_batch(screen_adaptive, mean, reps = 3), "tabscreen_error_batch_args", fun = "screen_batch")
  expect_arg_error(screen_how(fake, adaptive_providers$a, "adaptive_batch", test_records(), reps = 3, rule = "fast"),
    "tabscreen_error_adaptive_args", fun = "screen_adaptive")
  expect_equal(fake$stats()$batch$created, 0)
  expect_equal(fake$stats()$requests_total, 0)
})
