# screen_methods(): the methods paragraph from a screening, its store and the reviewers' decisions,
# through the exported functions against the fake provider; every figure checked against the data.

methods_result <- function(fake, ...) {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-methods")
  tabscreen_a.tools(filges2015_dat[c(1:15, 181:195), ], prompt = test_prompt, studyid = studyid, title = title,
    abstract = abstract, api_url = fake$url, reps = 3, incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.3,
    progress = FALSE, messages = FALSE, ...)
}

expect_says <- function(text, ...) {
  for (s in c(...)) expect_true(grepl(s, text, fixed = TRUE), info = paste0("'", s, "' not in:\n", text))
}

test_that("the methods text holds the run's own figures, the reviewers' decisions and the audit", {
  fake <- local_fake_provider(seed = 7, decisions = list("1" = 0.3, "0" = 0.7))
  res <- methods_result(fake)
  agg <- res$answer_data_aggregated
  checks <- as.character(agg$studyid[agg$final_decision_llm == "Check"])
  expect_gte(length(checks), 2)
  app <- local_review(res, audit = 6, seed = 2, reviewer = "ann")
  st <- review_state(app)
  audited <- st$studyid[vapply(st$queues, function(q) "audit" %in% q, logical(1))]
  decide(app, checks[1], "Include")
  decide(app, checks[2], "Exclude", reviewer = "bob")
  decide(app, audited[1], "Include")
  for (id in audited[-1]) decide(app, id, "Exclude")

  m <- screen_methods(res)
  expect_s3_class(m, "tabscreen_methods")
  text <- format(m, "text")
  a <- res$answer_data
  verdicts <- table(agg$final_decision_llm)
  audit <- screen_review_audit(res)
  expect_says(text,
    "Titles and abstracts of 30 records were screened on ", as.character(as.Date(a$run_date[1])),
    "with the large language model gpt-6-luna", paste0("answering as ", paste(setdiff(sort(unique(a$submodel)), "gpt-6-luna"), collapse = ", ")),
    "through the OpenAI Chat Completions interface at 127.0.0.1",
    paste0("tabscreen (version ", utils::packageVersion("tabscreen"), ")"),
    "Each record was screened 3 times", "was at least 0.5, flagged for a reviewer's check when it was at least 0.3 and below 0.5",
    paste0("included ", verdicts[["Include"]], " records, excluded ", verdicts[["Exclude"]], " and flagged ", verdicts[["Check"]]),
    "2 reviewers decided", paste0("1 of them was relevant. With 95 % confidence at most ", audit$missed_upper),
    paste0(audit$reviewed, " of the ", audit$excludes, " excluded records, drawn at random"),
    paste0("The screening made ", nrow(a), " requests, with ", format(sum(a$prompt_tokens), big.mark = ","), " input and ",
      format(sum(a$completion_tokens), big.mark = ","), " output tokens, at a price of US$ ", format(round(res$price_dollar, 2), nsmall = 2)),
    paste0("Appendix: the prompt\n\nPrompt 1:\n\n", test_prompt))
  expect_equal(audit$found, 1L)
  expect_says(format(m, "markdown"), "### Appendix: the prompt", paste0("> ", test_prompt))
  expect_equal(utils::capture.output(print(m)), strsplit(format(m), "\n", fixed = TRUE)[[1]])
  expect_false(grepl("sk-test", paste(unlist(m), collapse = " "), fixed = TRUE))
})

test_that("the methods text of an adaptive run and of a cascade says how the doubtful records were asked", {
  fake <- local_fake_provider(seed = 3, tendency = list(models = list(luna = 0.6, terra = 2.5)))
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-methods")
  ad <- screen_adaptive(tabscreen_a.tools, filges2015_dat[1:20, ], prompt = test_prompt, studyid = studyid,
    title = title, abstract = abstract, api_url = fake$url, reps = 5, progress = FALSE, messages = FALSE)
  saved <- attr(ad, "run_info")$saved_requests
  expect_gt(saved, 0)
  expect_says(format(screen_methods(ad), "text"), "Repetitions were adaptive: a record was asked again only until no answer still to come could change its verdict",
    paste0("(", saved, " requests were not sent)"), "Each record was screened 5 times")

  cas <- screen_cascade(list(tabscreen_a.tools, model = "gpt-6-luna", reps = 5, incl_cutoff_upper = 0.8, incl_cutoff_lower = 0.2,
    api_url = fake$url), list(tabscreen_a.tools, model = "gpt-6.1-terra", api_url = fake$url),
    data = filges2015_dat[1:20, ], prompt = test_prompt, studyid = "studyid", title = "title", abstract = "abstract",
    progress = FALSE, messages = FALSE)
  sent <- attr(cas, "run_info")$cascade$sent
  expect_gt(sent, 0)
  expect_says(format(screen_methods(cas), "text"), "with the large language model gpt-6-luna",
    paste0("The records the first model left doubtful (flagged for checking; ", sent, " of 20"),
    "were screened again with gpt-6.1-terra", "its verdict replaced the first model's")
})

test_that("screen_methods() refuses what is not a screening, naming the argument", {
  fake <- local_fake_provider(seed = 1)
  res <- methods_result(fake)
  cnd <- expect_error(screen_methods(res$answer_data), class = "tabscreen_error_methods_args")
  expect_equal(cnd$arg, "x")
  cnd <- expect_error(screen_methods(res, conf_level = 95), class = "tabscreen_error_methods_args")
  expect_equal(cnd$arg, "conf_level")
})
