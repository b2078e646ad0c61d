# screen_ensemble(): screenings of the same records by providers A, B and C against the fake provider,
# whose answers lean the same way for each record (tendency), combined under each rule.

ensemble_records <- function() filges2015_dat[c(1:10, 181:190), ]

# The same records screened by A and B three times each, with a Check band, and by C once.
ensemble_members_abc <- function(fake, ...) {
  args <- list(data = ensemble_records(), api_key = "sk-test-ensemble", ...)
  list(
    a = do.call(screen_with, c(list("tabscreen_a.tools", fake$url, reps = 3, incl_cutoff_upper = 0.6,
      incl_cutoff_lower = 0.3), args)),
    b = do.call(screen_with, c(list("tabscreen_b", fake$url_b, reps = 3, incl_cutoff_upper = 0.6,
      incl_cutoff_lower = 0.3), args)),
    c = do.call(screen_with, c(list("tabscreen_c", fake$url_c), args))
  )
}

# Each member's verdict and incl_p on the records `ids`, read from its own result: the aggregated
# rows, or (asked once) the single answer, Include for 1, Exclude for 0, Check for a failure.
member_view <- function(res, ids) {
  agg <- res$answer_data_aggregated
  if (!is.null(agg)) {
    i <- match(ids, agg$studyid)
    return(list(verdict = agg$final_decision_llm[i], incl_p = agg$incl_p[i]))
  }
  rows <- rbind(as.data.frame(res$answer_data), as.data.frame(res$error_data))
  b <- rows$decision_binary[match(ids, rows$studyid)]
  list(verdict = ifelse(is.na(b), "Check", ifelse(b == 1, "Include", "Exclude")), incl_p = as.numeric(b))
}

test_that("three screenings by A, B and C combine under each rule as their own verdicts say", {
  fake <- local_fake_provider(seed = 11, tendency = TRUE)
  res <- ensemble_members_abc(fake)
  ids <- ensemble_records()$studyid
  views <- lapply(res, member_view, ids = ids)
  v <- sapply(views, `[[`, "verdict")
  p <- sapply(views, `[[`, "incl_p")
  # The members disagree somewhere and flag some records, or the rules could not be told apart.
  expect_true(any(v[, "a"] != v[, "b"] | v[, "b"] != v[, "c"]))
  expect_true(any(v == "Check"))

  n_inc <- rowSums(v == "Include")
  n_exc <- rowSums(v == "Exclude")
  expected <- list(
    any = ifelse(n_inc > 0, "Include", ifelse(n_exc < 3, "Check", "Exclude")),
    majority = ifelse(n_inc >= 2, "Include", ifelse(n_exc >= 2, "Exclude", "Check")),
    all = ifelse(n_inc == 3, "Include", ifelse(n_exc > 0, "Exclude", "Check"))
  )
  for (rule in names(expected)) {
    ens <- screen_ensemble(a = res$a, b = res$b, c = res$c, rule = rule)
    agg <- ens$answer_data_aggregated
    expect_s3_class(ens, c("llm_ensemble", "llm"))
    expect_s3_class(agg, "llm_agg_tbl")
    expect_equal(agg$studyid, ids)
    expect_equal(agg$final_decision_llm, expected[[rule]], info = rule)
    expect_equal(agg$final_decision_llm_num, as.integer(expected[[rule]] != "Exclude"), info = rule)
    expect_equal(agg$incl_p, rowMeans(p), info = rule)
    expect_equal(agg$reps, rep(3L + 3L + 1L, length(ids)))
    expect_equal(agg$model[1], paste0("ensemble (", rule, ": a, b, c)"))
    expect_null(attr(agg, "incl_cutoff_upper"))
    expect_equal(agg$member_decisions[1], paste0("a: ", v[1, "a"], " (", sprintf("%.2f", p[1, "a"]), "); b: ", v[1, "b"],
      " (", sprintf("%.2f", p[1, "b"]), "); c: ", v[1, "c"], " (", sprintf("%.2f", p[1, "c"]), ")"))
    # The user's columns come along, for the evaluation against human decisions.
    expect_equal(agg$human_code, ensemble_records()$human_code)
  }
  expect_true(any(expected$any != expected$all))

  # The mean rule: the members' mean incl_p against the cut-offs, "at least" as in the aggregation.
  ens <- screen_ensemble(a = res$a, b = res$b, c = res$c, rule = "mean", incl_cutoff_upper = 0.5,
    incl_cutoff_lower = 0.2)
  mean_p <- rowMeans(p)
  expect_equal(ens$answer_data_aggregated$final_decision_llm,
    ifelse(mean_p >= 0.5 - 1e-9, "Include", ifelse(mean_p >= 0.2 - 1e-9, "Check", "Exclude")))
  expect_equal(attr(ens$answer_data_aggregated, "incl_cutoff_upper"), 0.5)
  expect_equal(attr(ens$answer_data_aggregated, "incl_cutoff_lower"), 0.2)
  # Default cut-offs: upper 0.1, no Check band.
  default <- screen_ensemble(res$a, res$b, res$c, rule = "mean")
  expect_equal(default$answer_data_aggregated$final_decision_llm, ifelse(mean_p >= 0.1 - 1e-9, "Include", "Exclude"))
  expect_equal(default$member_data_aggregated$member, rep(c("1", "2", "3"), each = length(ids)))

  # Every member's answers, failures, tokens and prices are kept, with their member.
  ens <- screen_ensemble(a = res$a, b = res$b, c = res$c)
  expect_equal(nrow(ens$answer_data), sum(vapply(res, function(r) nrow(r$answer_data), integer(1))))
  expect_equal(as.vector(table(ens$answer_data$member)[c("a", "b", "c")]), c(60L, 60L, 20L))
  expect_equal(names(ens$answer_data)[1], "member")
  expect_s3_class(ens$answer_data, "llm_tbl")
  expect_equal(ens$answer_data$decision_llm[ens$answer_data$member == "b"], res$b$answer_data$decision_llm)
  expect_equal(sum(ens$answer_data$prompt_tokens), sum(vapply(res, function(r) sum(r$answer_data$prompt_tokens), numeric(1))))
  expect_equal(ens$price_dollar, res$a$price_dollar + res$b$price_dollar + res$c$price_dollar)
  expect_gt(ens$price_dollar, 0)
  expect_equal(ens$price_data$member, c("a", "b", "c"))
  expect_equal(ens$price_data$total_price_dollar, c(res$a$price_dollar, res$b$price_dollar, res$c$price_dollar))
  # A's answers have top_p, B's do not: NA there.
  expect_true(all(is.na(ens$answer_data$top_p[ens$answer_data$member == "b"])))
  expect_equal(ens$member_data_aggregated$final_decision_llm, as.vector(v))

  withr::local_options(cli.width = 1000)
  out <- cli::cli_fmt(print(ens))
  expect_match(out[1], "Ensemble.*of 3 screenings, rule \"any\"")
  expect_true(any(grepl("b: provider B, model \"claude", out)))
  expect_true(any(grepl(paste0("Price: ", tabscreen:::format_dollars(ens$price_dollar), " (a "), out, fixed = TRUE)))
  s <- summary(ens)
  expect_s3_class(s, "llm_summary")
  expect_equal(s$member, c("a", "b", "c", "ensemble"))
  expect_equal(s$requests, c(60L, 60L, 20L, 140L))
  expect_equal(s$final_include[4], sum(expected$any == "Include"))
  expect_equal(s$final_include[1], sum(v[, "a"] == "Include"))
  expect_equal(sum(s$price_dollar[1:3]), s$price_dollar[4])
  expect_match(paste(cli::cli_fmt(print(s)), collapse = " "), "rule \"any\".*The ensemble: 20 records, 140 requests")
})

test_that("an ensemble goes through the analyzer, the threshold sweep, the report, write_refs() and the review app", {
  fake <- local_fake_provider(seed = 11, tendency = TRUE)
  res <- ensemble_members_abc(fake, decision_description = TRUE)
  ens <- screen_ensemble(a = res$a, b = res$b, c = res$c, rule = "any")
  agg <- ens$answer_data_aggregated
  human <- agg$human_code

  an <- screen_analyzer(ens, human_code, key_result = FALSE)
  verdict <- an[an$rule == "verdict", ]
  expect_equal(nrow(verdict), 1)
  expect_equal(verdict$model, agg$model[1])
  expect_equal(verdict$n, 20L)
  expect_equal(verdict$TP, sum(human == 1 & agg$final_decision_llm_num == 1))
  expect_equal(verdict$FN, sum(human == 1 & agg$final_decision_llm_num == 0))
  expect_equal(verdict$n_check, sum(agg$final_decision_llm == "Check"))
  # The cut-off rows are those of the members' answers added up.
  expect_equal(an$cutoff[an$rule == "cutoff"], (1:7) / 7)

  th <- screen_thresholds(ens, human_code)
  expect_equal(th$cutoff, sort(unique(agg$incl_p)))
  expect_equal(th$TP[2], sum(human == 1 & agg$incl_p >= th$cutoff[2]))

  path <- screen_report(ens, human_code, open = FALSE)
  html <- paste(readLines(path, encoding = "UTF-8"), collapse = "\n")
  expect_match(html, "ensemble (any: a, b, c)", fixed = TRUE)
  missed <- sum(human == 1 & agg$final_decision_llm_num == 0)
  expect_match(html, paste0("Missed includes <span class=\"count\">", missed, "</span>"), fixed = TRUE)

  # The methods text (also in the report) names the screenings and the rule.
  methods <- format(screen_methods(ens), "text")
  expect_match(methods, "records were screened on [0-9-]+ by an ensemble of 3 screenings")
  expect_match(methods, "With gpt-6-luna \\(answering as [^)]*\\) through the OpenAI Chat Completions interface")
  expect_match(methods, "rule \"any\": Include when any member includes a record", fixed = TRUE)
  expect_match(methods, paste0("The ensemble included ", sum(agg$final_decision_llm == "Include"), " records"), fixed = TRUE)
  expect_match(html, "by an ensemble of 3 screenings", fixed = TRUE)

  csv <- tempfile(fileext = ".csv")
  write_refs(ens, csv)
  back <- read_refs(csv)
  expect_equal(back$tabscreen_decision, agg$final_decision_llm)
  expect_equal(back$studyid, agg$studyid)
  ris <- tempfile(fileext = ".ris")
  write_refs(ens, ris)
  notes <- grep("^N1  - tabscreen:", readLines(ris, encoding = "UTF-8"), value = TRUE)
  expect_length(notes, 20)
  expect_match(notes[1], paste0("members ", agg$member_decisions[1]), fixed = TRUE)

  # The review app: the ensemble's Check records are its check queue, and a decision made on the
  # page comes back as a human decision on the ensemble's rows.
  app <- local_review(ens, human_decision = human_code, reviewer = "ann")
  st <- review_state(app)
  expect_length(st$items, 20)
  check <- vapply(st$queues, function(q) "check" %in% q, logical(1))
  expect_setequal(st$studyid[check], as.character(agg$studyid[agg$final_decision_llm == "Check"]))
  # The longest of the members' explanations, after its member's name.
  expect_match(unlist(lapply(st$items, function(i) i$explanations[[1]]$text))[1], "^[abc]: ")
  decide(app, st$studyid[1], "Include", group = st$items_group[1])
  merged <- screen_review_merge(ens, reviewer = "ann")
  expect_equal(merged$answer_data_aggregated$human_review, c(1L, rep(NA_integer_, 19)))
})

test_that("one screening of two models is an ensemble of its models; a failed member flags its records", {
  fake <- local_fake_provider(seed = 11, tendency = TRUE)
  recs <- ensemble_records()
  fake$configure(fail_matching = list(list(substring = recs$title[3], kind = "500")))
  two <- screen_with("tabscreen_c", fake$url_c, data = recs, model = c("mistral-small-latest", "mistral-large-latest"),
    reps = 2, max_tries = 1, api_key = "sk-test-ensemble")
  expect_equal(sum(two$error_data$studyid == recs$studyid[3]), 4)
  ens <- screen_ensemble(c = two, rule = "all")
  expect_equal(attr(ens, "ensemble")$members$member, c("c.1", "c.2"))
  expect_equal(attr(ens, "ensemble")$members$model, c("mistral-small-latest", "mistral-large-latest"))
  agg <- ens$answer_data_aggregated
  # Both members have no answer for record 3: Check whatever the rule, incl_p unknown.
  expect_equal(agg$final_decision_llm[3], "Check")
  expect_true(is.na(agg$incl_p[3]))
  expect_equal(agg$n_mis_answers[3], 4L)
  expect_equal(nrow(ens$error_data), 4)
  expect_setequal(ens$error_data$member, c("c.1", "c.2"))
  small <- two$answer_data_aggregated[two$answer_data_aggregated$model == "mistral-small-latest", ]
  large <- two$answer_data_aggregated[two$answer_data_aggregated$model == "mistral-large-latest", ]
  rank <- function(v) match(v, c("Exclude", "Check", "Include"))
  expect_equal(rank(agg$final_decision_llm), pmin(rank(small$final_decision_llm), rank(large$final_decision_llm)))
  expect_error(screen_errors(ens), class = "tabscreen_error_object", regexp = "ensemble")
})

test_that("the top_p values of one screening are members that share its price row", {
  fake <- local_fake_provider(seed = 11, tendency = TRUE)
  res <- screen_with("tabscreen_a.tools", fake$url, data = ensemble_records(), reps = 2, top_p = c(0.5, 1),
    api_key = "sk-test-ensemble")
  ens <- screen_ensemble(a = res, rule = "majority")
  expect_equal(attr(ens, "ensemble")$members$top_p, c(0.5, 1))
  expect_equal(ens$price_data$member, "a.1, a.2")
  expect_equal(ens$price_dollar, res$price_dollar)
  s <- summary(ens)
  expect_equal(s$price_dollar, rep(res$price_dollar, 3))
  expect_equal(s$requests, c(40L, 40L, 80L))
  withr::local_options(cli.width = 1000)
  expect_true(any(grepl("a.2 (prompt 1, model \"gpt-6-luna\", top_p 1)", cli::cli_fmt(print(s)), fixed = TRUE)))
  # Two members: a tie (one includes, one excludes) is Check.
  m <- ens$member_data_aggregated
  v1 <- m$final_decision_llm[m$member == "a.1"]
  v2 <- m$final_decision_llm[m$member == "a.2"]
  expect_true(all(c(v1, v2) %in% c("Include", "Exclude")))
  expect_equal(ens$answer_data_aggregated$final_decision_llm, ifelse(v1 == v2, v1, "Check"))
})

test_that("a cascade is one member, whichever stage gave its verdicts", {
  fake <- local_fake_provider(seed = 11, tendency = TRUE)
  recs <- ensemble_records()
  cas <- suppressMessages(screen_cascade(
    first = list(tabscreen_c, model = "ministral-8b-latest", reps = 3, incl_cutoff_upper = 0.6, incl_cutoff_lower = 0.3),
    second = list(tabscreen_c, model = "mistral-large-latest"),
    recs, prompt = test_prompt, studyid = studyid, title = title, abstract = abstract,
    api_url = fake$url_c, api_key = "sk-test-ensemble", progress = FALSE))
  a <- screen_with("tabscreen_a.tools", fake$url, data = recs, reps = 3, api_key = "sk-test-ensemble")
  ens <- screen_ensemble(cascade = cas, a = a, rule = "all")
  members <- attr(ens, "ensemble")$members
  expect_equal(members$member, c("cascade", "a"))
  expect_equal(members$model[1], "ministral-8b-latest > mistral-large-latest")
  m <- ens$member_data_aggregated
  expect_equal(m$final_decision_llm[m$member == "cascade"], cas$answer_data_aggregated$final_decision_llm)
  rank <- function(v) match(v, c("Exclude", "Check", "Include"))
  expect_equal(rank(ens$answer_data_aggregated$final_decision_llm),
    pmin(rank(cas$answer_data_aggregated$final_decision_llm), rank(a$answer_data_aggregated$final_decision_llm)))
  expect_equal(nrow(ens$answer_data), nrow(cas$answer_data) + nrow(a$answer_data))
  expect_equal(sum(ens$answer_data$member == "cascade"), nrow(cas$answer_data))
  expect_equal(ens$price_dollar, cas$price_dollar + a$price_dollar)
  expect_equal(unique(ens$price_data$member), c("cascade", "a"))
  expect_match(format(screen_methods(ens), "text"), "the Mistral chat completions interface", fixed = TRUE)
  expect_true(file.exists(screen_report(ens, human_code, open = FALSE)))
})

test_that("bad arguments are refused before anything is combined, naming the argument", {
  fake <- local_fake_provider(seed = 11, tendency = TRUE)
  recs <- ensemble_records()
  a <- screen_with("tabscreen_a.tools", fake$url, data = recs, reps = 2, api_key = "sk-test-ensemble")
  b <- screen_with("tabscreen_b", fake$url_b, data = recs, api_key = "sk-test-ensemble")
  ensemble_error <- function(expr, arg, regexp = NULL, class = "tabscreen_error_ensemble_args") {
    cnd <- expect_error(expr, class = class, regexp = regexp)
    expect_s3_class(cnd, "tabscreen_error_arg")
    expect_equal(cnd$arg, arg)
    expect_equal(rlang::call_name(cnd$call), "screen_ensemble")
    invisible(cnd)
  }
  ensemble_error(screen_ensemble(), "...", "at least two members")
  ensemble_error(screen_ensemble(a = a), "...", "at least two members")
  ensemble_error(screen_ensemble(a = a, b = recs), "...", "`b` must be a screening result")
  ensemble_error(screen_ensemble(a, "b"), "...", "Argument 2 of `...` must be a screening result")
  ens <- screen_ensemble(a = a, b = b)
  ensemble_error(screen_ensemble(ens, a), "...", "itself an ensemble")
  ensemble_error(screen_ensemble(a = a, a = b), "...", "more than once")
  ensemble_error(screen_ensemble(a, b, rule = "most"), "rule")
  ensemble_error(screen_ensemble(a, b, rule = c("any", "all")), "rule")
  ensemble_error(screen_ensemble(a, b, incl_cutoff_upper = 0.5), "incl_cutoff_upper", "only to `rule = \"mean\"`")
  ensemble_error(screen_ensemble(a, b, rule = "mean", incl_cutoff_upper = 2), "incl_cutoff_upper", class = "tabscreen_error_cutoff")
  ensemble_error(screen_ensemble(a, b, rule = "mean", incl_cutoff_lower = 0.2), "incl_cutoff_lower", class = "tabscreen_error_cutoff")

  # Screenings of other records: which records each lacks.
  fewer <- screen_with("tabscreen_b", fake$url_b, data = recs[1:17, ], api_key = "sk-test-ensemble")
  cnd <- ensemble_error(screen_ensemble(a = a, b = fewer), "...", class = "tabscreen_error_ensemble_records")
  expect_match(conditionMessage(cnd), "\"b\" lacks 3 records: \"188\", \"189\", and \"190\"")
  # The same study ids on other records.
  other <- recs
  other$title <- filges2015_dat$title[21:40]
  moved <- screen_with("tabscreen_b", fake$url_b, data = other, api_key = "sk-test-ensemble")
  cnd <- ensemble_error(screen_ensemble(a = a, b = moved), "...", class = "tabscreen_error_ensemble_records")
  expect_match(conditionMessage(cnd), "another title in \"b\" than in \"a\"")
})
