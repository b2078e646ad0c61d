# Results a user can read: the spec's columns before the user's, tables printed with their decisions
# first, summary() per prompt and model, and plots whose bars and axes read right.

# The test records with `n` more columns of a wide export (named like a reference manager's).
wide_records <- function(n = 150) {
  recs <- test_records()
  extra <- stats::setNames(as.data.frame(matrix("x", nrow(recs), n), stringsAsFactors = FALSE),
    sprintf("field_%03d", seq_len(n)))
  cbind(extra, recs)
}

test_that("a wide export's columns come after the spec's, in answer_data and answer_data_aggregated", {
  withr::local_envvar(PROVIDER_C_API_KEY = "c-readable")
  fake <- local_fake_provider(seed = 51)
  data <- wide_records()
  res <- screen_c(fake, data = data, reps = 3)
  spec_answer <- c("studyid", "title", "abstract", "promptid", "prompt", "model", "iterations", "question", "top_p",
    "decision_llm", "decision_binary", "prompt_tokens", "completion_tokens", "submodel", "run_time", "run_date", "n")
  spec_agg <- c("studyid", "title", "abstract", "promptid", "prompt", "model", "question", "top_p", "incl_p",
    "final_decision_llm", "final_decision_llm_num", "reps", "n_mis_answers", "submodel")
  user <- setdiff(names(data), c("studyid", "title", "abstract"))
  expect_named(res$answer_data, c(spec_answer, user))
  expect_named(res$answer_data_aggregated, c(spec_agg, user))
  expect_equal(match("final_decision_llm", names(res$answer_data_aggregated)), 10)
  # the user's values travel with their records
  expect_equal(res$answer_data$author, rep(test_records()$author, each = 3))
  expect_equal(res$answer_data_aggregated$human_code, test_records()$human_code)
})

test_that("real exports read, deduplicated and screened keep title and decisions among the first columns", {
  dir <- shared_data("refs-corpus", "citation-file-formatting")
  files <- list.files(dir, pattern = "\\.ris$", full.names = TRUE)[1:14]
  refs <- dedup_refs(read_refs(files), messages = FALSE)
  withr::local_envvar(PROVIDER_C_API_KEY = "c-readable")
  fake <- local_fake_provider(seed = 52)
  res <- tabscreen_c(refs, test_prompt, title = title, abstract = abstract, api_url = fake$url_c, reps = 3,
    progress = FALSE, messages = FALSE)
  agg <- res$answer_data_aggregated
  expect_gt(ncol(agg), 40)
  expect_equal(match(c("studyid", "title", "final_decision_llm"), names(agg)), c(1, 2, 10))
  expect_equal(match(c("title", "decision_llm"), names(res$answer_data)), c(2, 10))
})

# What printing `x` shows: its messages (cli's lines) and its output.
printed <- function(x) {
  out <- NULL
  msg <- capture.output(out <- capture.output(print(x)), type = "message")
  c(msg, out)
}

# The column names of the first line of a printed tibble's header, with the tail of an abbreviated
# name ("decisio~1", "decisio…¹") cut off.
printed_header <- function(lines) {
  at <- grep("^# A tibble", lines)[1]
  sub("(~|\u2026).*$", "", strsplit(trimws(lines[at + 1]), "\\s+")[[1]])
}

# Whether each printed (perhaps abbreviated) name is the start of the expected name.
expect_header <- function(header, expected) {
  expect_true(all(startsWith(expected, header[seq_along(expected)])), info = paste(header, collapse = " "))
  expect_true(all(nchar(header[seq_along(expected)]) >= 4))
}

test_that("printing a result table shows the study id and decisions first, at any width", {
  withr::local_envvar(PROVIDER_C_API_KEY = "c-readable")
  fake <- local_fake_provider(seed = 53)
  res <- screen_c(fake, data = wide_records(), reps = 2, confidence = TRUE)
  for (width in c(40, 80, 200)) {
    withr::local_options(width = width)
    agg_lines <- printed(res$answer_data_aggregated)
    expect_match(agg_lines[1], "<llm_agg_tbl>: Aggregated decisions:", fixed = TRUE)
    expect_header(printed_header(agg_lines), c("studyid", "final_decision_llm"))
    ans_lines <- printed(res$answer_data)
    expect_header(printed_header(ans_lines), c("studyid", "decision_llm"))
    expect_false(any(grepl("field_001", printed_header(ans_lines), fixed = TRUE)))
    expect_match(paste(ans_lines, collapse = " "), "Shown with studyid, decision_llm, decision_binary,")
  }
  withr::local_options(width = 200)
  expect_header(printed_header(printed(res$answer_data)), c("studyid", "decision_llm", "decision_binary", "confidence"))
  expect_header(printed_header(printed(res$answer_data_aggregated)),
    c("studyid", "final_decision_llm", "incl_p", "mean_confidence", "n_mis_answers"))
  # columns the user put in an order with the decision before any text print in that order
  sel <- res$answer_data_aggregated[c("studyid", "incl_p", "n_mis_answers", "final_decision_llm", "title")]
  expect_equal(printed_header(printed(sel)), names(sel))
  # printing leaves the table as it was
  expect_equal(names(res$answer_data)[1:3], c("studyid", "title", "abstract"))
  expect_invisible(suppressMessages(print(res$answer_data)))
})

test_that("summary() counts per prompt and model what the answer data hold", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-readable")
  fake <- local_fake_provider(seed = 54, decisions = list("1" = 0.3, "0" = 0.4, "1.1" = 0.3))
  recs <- test_records()
  fail_record(fake, 2)
  prompts <- c(test_prompt, "Does the study evaluate a family therapy?")
  models <- c("gpt-6-luna", "gpt-4o-mini")
  res <- screen_a(fake, prompt = prompts, model = models, reps = 3, max_tries = 1, incl_cutoff_upper = 0.6,
    incl_cutoff_lower = 0.3)
  s <- summary(res)
  expect_s3_class(s, c("llm_summary", "tbl_df"))
  expect_named(s, c("promptid", "model", "records", "requests", "answers", "failures", "include", "exclude",
    "uncertain", "final_include", "final_check", "final_exclude", "prompt_tokens", "completion_tokens",
    "price_dollar", "run_time"))
  expect_equal(nrow(s), 4)
  ad <- res$answer_data
  ed <- res$error_data
  agg <- res$answer_data_aggregated
  all <- rbind(as.data.frame(ad), as.data.frame(ed))
  for (i in seq_len(nrow(s))) {
    g <- s[i, ]
    a <- ad[ad$promptid == g$promptid & ad$model == g$model, ]
    e <- ed[ed$promptid == g$promptid & ed$model == g$model, ]
    r <- all[all$promptid == g$promptid & all$model == g$model, ]
    f <- agg$final_decision_llm[agg$promptid == g$promptid & agg$model == g$model]
    info <- paste(g$promptid, g$model)
    expect_equal(g$records, nrow(recs), info = info)
    expect_equal(g$requests, nrow(recs) * 3L, info = info)
    expect_equal(g$answers, nrow(a), info = info)
    expect_equal(g$failures, nrow(e), info = info)
    expect_equal(g$failures, 3L, info = info)
    expect_equal(c(g$include, g$exclude, g$uncertain), c(sum(a$decision_llm == "1"), sum(a$decision_llm == "0"),
      sum(a$decision_llm == "1.1")), info = info)
    expect_equal(c(g$final_include, g$final_check, g$final_exclude),
      c(sum(f == "Include"), sum(f == "Check"), sum(f == "Exclude")), info = info)
    expect_equal(g$prompt_tokens, sum(r$prompt_tokens, na.rm = TRUE), info = info)
    expect_equal(g$completion_tokens, sum(r$completion_tokens, na.rm = TRUE), info = info)
    expect_equal(g$price_dollar, sum(res$price_data$total_price_dollar[res$price_data$prompt == g$promptid &
      res$price_data$model == g$model]), info = info)
    expect_equal(g$run_time, sum(r$run_time, na.rm = TRUE), info = info)
  }
  expect_equal(sum(s$price_dollar), res$price_dollar)
  expect_gt(sum(s$uncertain), 0)
  expect_gt(sum(s$final_check), 0)
  # the print method shows every group, readable at any width
  withr::local_options(width = 40)
  out <- paste(capture.output(print(s), type = "message"), capture.output(print(s)), collapse = "\n")
  expect_match(out, "Prompt 2, model \"gpt-4o-mini\"", fixed = TRUE)
  expect_match(out, "8 records, 24 requests: 21 answered, 3 failed.", fixed = TRUE)
  # one repetition: nothing aggregated, no final decisions; no tokens without token_info
  once <- summary(screen_a(fake, token_info = FALSE, time_info = FALSE, max_tries = 1))
  expect_true(all(is.na(once[c("final_include", "final_check", "final_exclude", "prompt_tokens", "price_dollar",
    "run_time")])))
  expect_equal(once$answers + once$failures, nrow(recs))
})

test_that("summary() prints one block per group", {
  withr::local_envvar(PROVIDER_B_API_KEY = "sk-ant-readable")
  fake <- local_fake_provider(seed = 55, decisions = list("1" = 1))
  res <- screen_b(fake, data = test_records()[1:3, ], reps = 2, time_info = FALSE)
  withr::local_options(cli.width = 100, cli.unicode = FALSE)
  lines <- printed(summary(res))
  expect_equal(lines[-length(lines)], c(
    "Screening summary (<llm_summary>, one row per prompt and model)",
    "",
    "-- Prompt 1, model \"claude-haiku-5-5\" ",
    "* 3 records, 6 requests: 6 answered, 0 failed.",
    "* Answers: 6 include, 0 exclude, 0 uncertain.",
    "* Final decisions: 3 Include, 0 Check, 0 Exclude (cut-offs: upper 0.1, lower 0.1).",
    sprintf("* Tokens: %s prompt, %s completion.", format(sum(res$answer_data$prompt_tokens), big.mark = ","),
      format(sum(res$answer_data$completion_tokens), big.mark = ",")),
    sprintf("* Price: %s.", tabscreen:::format_dollars(res$price_dollar)),
    ""
  ))
  expect_match(lines[length(lines)], "^The screening took [0-9.]+ s\\.$")
})

test_that("the incl_p plot draws the bars at 0 and 1 whole, inside the axis", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-readable")
  fake <- local_fake_provider(seed = 56, decisions = list("1" = 0.5, "0" = 0.5))
  withr::local_options(tabscreen.store_reuse = FALSE) # the same call again draws fresh answers
  for (reps in c(2, 3)) {
    res <- screen_a(fake, reps = reps)
    incl <- res$answer_data_aggregated$incl_p
    expect_true(any(incl == 0) || any(incl == 1))
    built <- ggplot2::ggplot_build(plot(res))
    axis <- built$layout$panel_params[[1]]
    bars <- built$data[[1]]
    # a margin beyond the outer bars, not an edge through them
    expect_gt(min(bars$xmin), axis$x.range[1])
    expect_lt(max(bars$xmax), axis$x.range[2])
    expect_equal(axis$x$breaks[!is.na(axis$x$breaks)], seq(0, 1, by = 0.25))
    expect_lt(axis$x.range[2] - axis$x.range[1], 1.3)
  }
  # the caption counts in words that agree with the count
  fail_record(fake, 2)
  expect_equal(plot(screen_a(fake, reps = 2, max_tries = 1))$labels$caption, "1 record without any answer left out")
})

test_that("the price plot of one model has plain numbers on its axes and each bar's value", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-readable")
  fake <- local_fake_provider(seed = 57)
  res <- screen_a(fake, reps = 4)
  p <- plot(res, type = "price")
  built <- ggplot2::ggplot_build(p)
  labels <- lapply(built$layout$panel_params, function(pp) pp$y$get_labels())
  expect_false(any(grepl("e[+-]", unlist(labels))))
  tokens <- sum(res$answer_data$prompt_tokens)
  expect_gt(tokens, 10000)
  expect_true(any(grepl("^[0-9]{1,3}(,[0-9]{3})+$", labels[[2]])))
  text <- built$data[[2]]
  ad <- res$answer_data
  expect_equal(text$label, c(tabscreen:::format_dollars(res$price_dollar), format(sum(ad$prompt_tokens), big.mark = ","),
    format(sum(ad$completion_tokens), big.mark = ",")))
  expect_equal(p$labels$title, "Price and tokens of gpt-6-luna")
  expect_null(p$labels$x)
  # with two models the axis names them
  two <- plot(screen_a(fake, model = c("gpt-6-luna", "gpt-4o-mini")), type = "price")
  expect_equal(two$labels$x, "Model")
  expect_equal(two$labels$title, "Price and tokens by model")
})
