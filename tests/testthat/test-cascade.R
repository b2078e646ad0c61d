# screen_cascade(): a cheap model for every record, a strong one for the doubtful records, through
# the exported functions, C and Go, against the fake provider with its per-record tendency.

cascade_providers <- list(
  a = list(fun = tabscreen_a.tools, url = "url", key = "PROVIDER_A_API_KEY", cheap = "gpt-6-luna", strong = "gpt-6.1-terra"),
  b = list(fun = tabscreen_b, url = "url_b", key = "PROVIDER_B_API_KEY", cheap = "claude-haiku-5-5", strong = "claude-sonnet-5-5"),
  c = list(fun = tabscreen_c, url = "url_c", key = "PROVIDER_C_API_KEY", cheap = "mistral-small-latest", strong = "mistral-large-latest")
)

# The cheap models answer with a wide spread, the strong ones with a narrow one.
cascade_tendency <- list(models = list(luna = 0.6, haiku = 0.6, small = 0.6, terra = 2.5, sonnet = 2.5, large = 2.5))

cascade_records <- function() filges2015_dat[c(1:15, 181:195), ]

cascade_fake <- function(..., .env = parent.frame()) {
  for (p in cascade_providers) withr::local_envvar(stats::setNames("sk-test-cascade", p$key), .local_envir = .env)
  local_fake_provider(seed = 3, tendency = cascade_tendency, ..., .env = .env)
}

# A cascade of provider `p1`'s cheap model (5 repetitions, cut-offs 0.8 and 0.2) and `p2`'s strong
# one, on the cascade records; `...` adds or replaces shared arguments. `batch` runs it through
# screen_batch().
run_cascade <- function(fake, p1, p2 = p1, ..., first = list(), second = list(), batch = FALSE) {
  stage1 <- utils::modifyList(list(p1$fun, model = p1$cheap, reps = 5, incl_cutoff_upper = 0.8, incl_cutoff_lower = 0.2,
    api_url = fake[[p1$url]]), first)
  stage2 <- utils::modifyList(list(p2$fun, model = p2$strong, api_url = fake[[p2$url]]), second)
  shared <- utils::modifyList(list(data = cascade_records(), prompt = test_prompt, studyid = "studyid", title = "title",
    abstract = "abstract", progress = FALSE, messages = FALSE), list(...))
  if (batch) {
    return(do.call(screen_batch, c(list(screen_cascade, first = stage1, second = stage2), shared)))
  }
  do.call(screen_cascade, c(list(first = stage1, second = stage2), shared))
}

printed <- function(x) paste(utils::capture.output(print(x), type = "message"), collapse = "\n")

# What every cascade result holds: one row per record, stage 2's where the record was sent to it.
expect_cascade <- function(res, cheap, strong, doubtful) {
  expect_s3_class(res, c("llm_cascade", "llm"))
  agg <- res$answer_data_aggregated
  expect_s3_class(agg, "llm_agg_tbl")
  expect_equal(agg$studyid, cascade_records()$studyid)
  sent <- doubtful(agg)
  expect_gt(sum(sent), 0)
  expect_lt(sum(sent), nrow(agg))
  expect_equal(agg$stage, ifelse(sent, 2L, 1L))
  expect_equal(agg$model, ifelse(sent, strong, cheap))
  expect_equal(agg$final_decision_llm[!sent], agg$final_decision_llm_first[!sent])
  expect_equal(agg$incl_p[!sent], agg$incl_p_first[!sent])
  expect_true(all(agg$final_decision_llm[sent] %in% c("Include", "Exclude")))
  expect_true(all(agg$incl_p[sent] %in% c(0, 1)))
  ad <- res$answer_data
  expect_equal(as.integer(table(factor(ad$stage, 1:2))), c(5L * nrow(agg), sum(sent)))
  expect_setequal(ad$studyid[ad$stage == 2], agg$studyid[sent])
  expect_equal(unique(ad$model[ad$stage == 2]), strong)
  expect_true(all(user_cols %in% names(ad)))
  pd <- res$price_data
  expect_equal(pd$stage, 1:2)
  expect_equal(pd$model, c(cheap, strong))
  expect_equal(res$price_dollar, sum(pd$total_price_dollar))
  info <- attr(res, "run_info")$cascade
  expect_equal(info$records, nrow(agg))
  expect_equal(info$sent, sum(sent))
  expect_equal(info$share, sum(sent) / nrow(agg))
  expect_equal(unname(info$price), pd$total_price_dollar)
  expect_gt(info$estimate_all, info$estimate_second)
  expect_gt(info$estimate_second, 0)
  invisible(agg)
}

check_doubtful <- function(agg) agg$final_decision_llm_first == "Check"

for (letter in names(cascade_providers)) {
  p <- cascade_providers[[letter]]

  test_that(paste0(letter, ": the Check records go to the strong model, and the same call again sends nothing"), {
    fake <- cascade_fake()
    res <- run_cascade(fake, p)
    agg <- expect_cascade(res, p$cheap, p$strong, check_doubtful)
    sent <- fake$stats()$requests_total
    expect_equal(sent, 5 * 30 + sum(agg$stage == 2))
    # Each stage is its own run in the answer store; the second holds only the doubtful records.
    runs <- screen_store()
    expect_equal(sort(runs$records), sort(c(sum(agg$stage == 2), 30L)))
    expect_true(all(runs$status == "completed"))
    expect_setequal(attr(res, "run_info")$cascade$runs, runs$run_id)
    expect_error(screen_store_answers(res), class = "tabscreen_error_store_run")
    expect_equal(nrow(screen_store_answers(attr(res, "run_info")$cascade$runs[2])), sum(agg$stage == 2))

    again <- run_cascade(fake, p)
    expect_equal(fake$stats()$requests_total, sent)
    expect_equal(again$answer_data_aggregated, res$answer_data_aggregated)
    expect_equal(attr(again, "run_info")$stored_answers, sent)
    expect_match(printed(again), "taken from the answer store")

    # print() and summary() show both stages.
    out <- printed(res)
    expect_match(out, paste0("Stage 1 (\"", p$cheap, "\"): 30 records, 150 requests"), fixed = TRUE)
    expect_match(out, paste0("Sent to stage 2: ", sum(agg$stage == 2), " of 30 records"), fixed = TRUE)
    expect_match(out, paste0("Stage 2 (\"", p$strong, "\")"), fixed = TRUE)
    s <- summary(res)
    expect_equal(s$stage, 1:2)
    expect_equal(s$model, c(p$cheap, p$strong))
    expect_equal(s$requests, c(150L, sum(agg$stage == 2)))
    expect_equal(s$final_check[1], sum(agg$stage == 2))
    expect_equal(s$price_dollar, res$price_data$total_price_dollar)
    expect_match(paste(utils::capture.output(print(s), type = "message"), collapse = "\n"), "went to stage 2")
  })

  test_that(paste0(letter, ": a cascade through screen_batch() runs both stages through the batch API"), {
    fake <- cascade_fake(batches = TRUE)
    res <- run_cascade(fake, p, batch = TRUE)
    agg <- expect_cascade(res, p$cheap, p$strong, check_doubtful)
    lines <- fake$stats()$batch$lines_received
    expect_equal(lines, 5 * 30 + sum(agg$stage == 2))
    runs <- screen_store()
    expect_true(all(nzchar(runs$batches)))
    # Batch prices are half the synchronous ones: the same answers (same seed) cost half.
    fake$reset()
    store <- getOption("tabscreen.store")
    withr::local_options(tabscreen.store = tempfile("store-", fileext = ".sqlite"))
    sync <- run_cascade(fake, p)
    expect_equal(sync$answer_data_aggregated$final_decision_llm, agg$final_decision_llm)
    expect_equal(res$price_data$total_price_dollar, sync$price_data$total_price_dollar / 2)
    # The same batch call again collects nothing new and sends nothing.
    withr::local_options(tabscreen.store = store)
    again <- run_cascade(fake, p, batch = TRUE)
    expect_equal(fake$stats()$batch$lines_received, lines)
    expect_equal(again$answer_data_aggregated$final_decision_llm, agg$final_decision_llm)
  })
}

test_that("a batch cascade with wait = FALSE returns the waiting stage, and the same call goes on from there", {
  fake <- cascade_fake(batches = TRUE, batch_delay_ms = 300)
  p <- cascade_providers$a
  sent <- run_cascade(fake, p, batch = TRUE, wait = FALSE)
  expect_s3_class(sent, "tabscreen_batch")
  expect_equal(sent$pending, 150)
  expect_equal(fake$stats()$batch$created, 1)
  res <- run_cascade(fake, p, batch = TRUE)
  agg <- expect_cascade(res, p$cheap, p$strong, check_doubtful)
  expect_equal(fake$stats()$batch$created, 2)
  expect_equal(fake$stats()$batch$lines_received, 150 + sum(agg$stage == 2))
  expect_equal(attr(res, "cascade")$parts[[1]] |> attr("store") |> getElement("run_id"), sent$run_id)
  # With every batch collected, wait = FALSE returns the result too.
  again <- run_cascade(fake, p, batch = TRUE, wait = FALSE)
  expect_s3_class(again, "llm_cascade")
  expect_equal(fake$stats()$batch$created, 2)
})

test_that("a cascade across providers with a band: provider A's cheap model, then provider B's strong one", {
  fake <- cascade_fake()
  a <- cascade_providers$a
  b <- cascade_providers$b
  res <- run_cascade(fake, a, b, band = c(0.2, 0.6), first = list(incl_cutoff_upper = NULL, incl_cutoff_lower = NULL))
  in_band <- function(agg) agg$incl_p_first >= 0.2 & agg$incl_p_first <= 0.6
  agg <- expect_cascade(res, a$cheap, b$strong, in_band)
  expect_equal(attr(res, "arg_list")$provider, c("a", "b"))
  # The first stage's cut-offs are the defaults: its verdicts are Include or Exclude.
  expect_true(all(agg$final_decision_llm_first %in% c("Include", "Exclude")))
  expect_true(all(is.na(res$answer_data$top_p[res$answer_data$stage == 2])))
  expect_true(all(res$answer_data$top_p[res$answer_data$stage == 1] == 1))
  requests <- request_bodies(fake)
  expect_equal(sum(vapply(requests, function(r) identical(r$model, b$strong), logical(1))), sum(agg$stage == 2))
})

test_that("the estimates: the second stage's price for every record before, the real share after", {
  fake <- cascade_fake()
  p <- cascade_providers$a
  out <- collect_messages(run_cascade(fake, p, messages = TRUE))
  res <- out$value
  msgs <- out$messages
  info <- attr(res, "run_info")$cascade
  before <- grep("if every record were doubtful", msgs, value = TRUE)
  expect_length(before, 1)
  expect_match(before, paste0("about ", tabscreen:::format_dollars(info$estimate_all), " if every record"), fixed = TRUE)
  expect_match(before, paste0("about ", tabscreen:::format_dollars(info$estimate_all * 0.2), " if 20 % are"), fixed = TRUE)
  after <- grep("The first stage found", msgs, value = TRUE)
  expect_match(after, paste0("found ", info$sent, " of 30 records doubtful"), fixed = TRUE)
  second <- grep("Second stage: [0-9]+ request", msgs, value = TRUE)
  expect_match(second, paste0(info$sent, " requests, estimated at ", tabscreen:::format_dollars(info$estimate_second)), fixed = TRUE)
  # The first stage prints its own estimate; the second's is the cascade's line only.
  expect_length(grep("Estimated price", msgs), 1)
  expect_true(any(grepl("Screening 30 records: 150 requests, about", msgs, fixed = TRUE)))
  # The estimate for the records sent is close to their share of the estimate for all of them.
  expect_equal(info$estimate_second / info$estimate_all, info$share, tolerance = 0.5)
})

test_that("screen_errors() re-sends each stage's failures and sends records made doubtful to the second stage", {
  # Two stand-ins with the same answers, one per stage, so that each stage's failures can be set.
  fake <- cascade_fake()
  strong <- local_fake_provider(seed = 3, tendency = cascade_tendency)
  p <- cascade_providers$a
  run <- function(...) run_cascade(fake, p, second = list(api_url = strong$url), ...)
  clean <- run()
  agg <- clean$answer_data_aggregated
  doubtful_id <- agg$studyid[agg$stage == 2][1]
  strong_id <- agg$studyid[agg$stage == 2][2]
  title_of <- function(id) cascade_records()$title[cascade_records()$studyid == id]

  # A fresh store and the same answers: the first doubtful record fails in the first stage, so it
  # is not sent on; the second fails in the second stage.
  fake$reset()
  strong$reset()
  withr::local_options(tabscreen.store = tempfile("store-", fileext = ".sqlite"))
  fake$configure(fail_matching = list(list(substring = title_of(doubtful_id), kind = "500")))
  strong$configure(fail_matching = list(list(substring = title_of(strong_id), kind = "500")))
  res <- run(max_tries = 1)
  expect_equal(sort(unique(res$error_data$studyid)), sort(c(doubtful_id, strong_id)))
  expect_equal(res$error_data$stage[res$error_data$studyid == strong_id], 2L)
  expect_equal(sum(res$error_data$stage == 1), 5)
  ragg <- res$answer_data_aggregated
  expect_equal(ragg$stage[ragg$studyid == doubtful_id], 1L)
  expect_true(is.na(ragg$incl_p[ragg$studyid == doubtful_id]))
  expect_true(is.na(ragg$incl_p[ragg$studyid == strong_id]))
  expect_match(printed(res), "screen_errors()", fixed = TRUE)

  fake$configure(fail_matching = list())
  strong$configure(fail_matching = list())
  before <- c(fake$stats()$requests_total, strong$stats()$requests_total)
  fixed <- screen_errors(res, max_tries = 1, messages = FALSE)
  expect_s3_class(fixed, "llm_cascade")
  expect_null(fixed$error_data)
  # The five failed repetitions; the failed second-stage request and the record now doubtful.
  expect_equal(c(fake$stats()$requests_total, strong$stats()$requests_total) - before, c(5, 2))
  fagg <- fixed$answer_data_aggregated
  expect_equal(fagg$stage[fagg$studyid == doubtful_id], 2L)
  expect_equal(fagg$model[fagg$studyid == doubtful_id], p$strong)
  expect_equal(fagg[c("studyid", "stage", "incl_p_first", "final_decision_llm_first")],
    agg[c("studyid", "stage", "incl_p_first", "final_decision_llm_first")])
  expect_equal(attr(fixed, "run_info")$cascade$sent, sum(agg$stage == 2))
  expect_equal(nrow(fixed$answer_data), nrow(clean$answer_data))
  expect_gt(attr(fixed, "run_info")$call_price_dollar, 0)
  expect_lt(attr(fixed, "run_info")$call_price_dollar, fixed$price_dollar)
  # The second-stage records of the repair are a run of their own in the store.
  expect_equal(nrow(screen_store()), 3)
  # Nothing left to re-send.
  expect_message(same <- screen_errors(fixed, messages = TRUE), "no failed requests")
  expect_identical(same, fixed)
})

test_that("screen_analyzer() and screen_report() evaluate a cascade's final verdicts as one", {
  fake <- cascade_fake()
  p <- cascade_providers$a
  res <- run_cascade(fake, p)
  agg <- res$answer_data_aggregated
  an <- screen_analyzer(res, human_decision = human_code)
  expect_equal(nrow(an), 1)
  expect_equal(an$model, paste(p$cheap, ">", p$strong))
  expect_equal(an$n, 30)
  human <- agg$human_code
  model <- as.integer(agg$final_decision_llm %in% c("Include", "Check"))
  expect_equal(an$recall, sum(human == 1 & model == 1) / sum(human == 1))
  expect_equal(an$specificity, sum(human == 0 & model == 0) / sum(human == 0))
  expect_equal(nrow(screen_analyzer(agg, human_decision = "human_code")), 1)

  path <- screen_report(res, human_decision = human_code, file = tempfile(fileext = ".html"), open = FALSE)
  html <- paste(readLines(path, warn = FALSE), collapse = "\n")
  disagree <- sum(human != model)
  expect_gt(disagree, 0)
  # A card per disagreement, each naming the model whose verdict it shows.
  expect_match(html, p$strong, fixed = TRUE)
  expect_match(html, p$cheap, fixed = TRUE)
})

test_that("a cascade's arguments are checked, and both keys read, before any request", {
  fake <- cascade_fake()
  a <- cascade_providers$a
  expect_cascade_error <- function(expr, class = "tabscreen_error_cascade_args", pattern = NULL) {
    err <- expect_error(expr, class = class)
    if (!is.null(pattern)) expect_match(conditionMessage(err), pattern)
    expect_equal(fake$stats()$requests_total, 0)
    invisible(err)
  }
  expect_cascade_error(screen_cascade(tabscreen_a.tools, list(tabscreen_a.tools), cascade_records()), pattern = "first")
  expect_cascade_error(screen_cascade(list(mean), list(tabscreen_a.tools), cascade_records()), pattern = "screening function")
  expect_cascade_error(screen_cascade(list(tabscreen_a.tools, 5), list(tabscreen_a.tools), cascade_records()), pattern = "named")
  expect_cascade_error(run_cascade(fake, a, first = list(prompt = "x")), pattern = "both stages share")
  expect_cascade_error(run_cascade(fake, a, second = list(messages = TRUE)), pattern = "given both")
  expect_cascade_error(run_cascade(fake, a, band = c(0.8, 0.2)), pattern = "band")
  expect_cascade_error(run_cascade(fake, a, band = 0.5), pattern = "band")
  expect_cascade_error(run_cascade(fake, a, first = list(reps = 1)), pattern = "give none")
  expect_cascade_error(run_cascade(fake, a, first = list(incl_cutoff_lower = NULL, incl_cutoff_upper = NULL)), pattern = "give none")
  expect_cascade_error(run_cascade(fake, a, second = list(model = c("gpt-6.1-terra", "gpt-6-luna"))), pattern = "one .*model")
  expect_cascade_error(run_cascade(fake, a, prompt = c("one", "two")), pattern = "one prompt")
  d <- cascade_records()
  d$stage <- 1
  expect_cascade_error(run_cascade(fake, a, data = d), pattern = "stage")
  # A stage's own argument errors keep their class and say which stage.
  err <- expect_cascade_error(run_cascade(fake, a, second = list(model = "no-such-model")),
    class = "tabscreen_error_cascade_stage", pattern = "second stage")
  expect_s3_class(err, "tabscreen_error_arg")
  expect_cascade_error(run_cascade(fake, a, first = list(reps = 0)), class = "tabscreen_error_cascade_stage",
    pattern = "first stage")
  # The second stage's key is read before the first stage sends anything.
  withr::local_envvar(PROVIDER_B_API_KEY = NA)
  expect_cascade_error(run_cascade(fake, a, cascade_providers$b), class = "tabscreen_error_api_key")
  expect_cascade_error(run_cascade(fake, a, second = list(api_key = "")), class = "tabscreen_error_api_key")
})

test_that("a cascade whose first stage finds no doubtful record is the first stage's result", {
  fake <- cascade_fake()
  p <- cascade_providers$b
  # Five repetitions give incl_p in steps of 0.2: none lies in this band.
  out <- collect_messages(run_cascade(fake, p, band = c(0.9, 0.95), messages = TRUE))
  res <- out$value
  expect_true(any(grepl("the second stage sends nothing", out$messages)))
  expect_equal(fake$stats()$requests_total, 150)
  agg <- res$answer_data_aggregated
  expect_equal(agg$stage, rep(1L, 30))
  expect_equal(agg$final_decision_llm, agg$final_decision_llm_first)
  expect_equal(unique(res$answer_data$stage), 1L)
  expect_equal(attr(res, "run_info")$cascade$sent, 0)
  expect_equal(attr(res, "run_info")$cascade$estimate_second, 0)
  expect_match(printed(res), "Sent to stage 2: 0 of 30 records")
  expect_equal(summary(res)$stage, 1L)
  expect_equal(nrow(screen_analyzer(res, human_decision = human_code)), 1)
})

test_that("generated study ids are the same in both stages", {
  fake <- cascade_fake()
  p <- cascade_providers$c
  d <- cascade_records()
  d$studyid <- NULL
  res <- run_cascade(fake, p, data = d, studyid = NULL)
  agg <- res$answer_data_aggregated
  expect_equal(agg$studyid, 1:30)
  sent <- agg$stage == 2
  expect_gt(sum(sent), 0)
  ad <- res$answer_data[res$answer_data$stage == 2, ]
  expect_equal(d$title[ad$studyid], ad$title)
  expect_false(".cascade_id" %in% names(ad))
})
