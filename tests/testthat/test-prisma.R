# screen_prisma(): the PRISMA 2020 flow counts from real exports read and deduplicated, a screening
# against the fake provider and decisions taken in the review app, and its diagram.

prisma_files <- function() {
  dir <- shared_data("refs-corpus", "asreview")
  file.path(dir, c("_baseline.ris", "baseline_zotero.ris", "pubmed_zotero.ris", "scopus.ris"))
}

prisma_screening <- function(fake, refs) {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-prisma")
  tabscreen_a.tools(refs, prompt = "Is this study about a treatment of depression?", title = title,
    abstract = abstract, api_url = fake$url, reps = 3, incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.3,
    progress = FALSE, messages = FALSE)
}

test_that("the counts follow the exports read, the duplicates removed, the screening and the reviewers", {
  files <- prisma_files()
  expected <- jsonlite::read_json(file.path(dirname(dirname(files[1])), "expected.json"))
  refs <- dedup_refs(read_refs(files), messages = FALSE)
  fake <- local_fake_provider(seed = 4, decisions = list("1" = 0.35, "0" = 0.65))
  res <- prisma_screening(fake, refs)
  agg <- res$answer_data_aggregated
  verdict <- stats::setNames(agg$final_decision_llm, agg$studyid)
  checks <- names(verdict)[verdict == "Check"]
  includes <- names(verdict)[verdict == "Include"]
  expect_gte(length(checks), 4)
  expect_gte(length(includes), 1)

  app <- local_review(res, reviewer = "ann")
  decide(app, checks[1], "Include")
  decide(app, checks[2], "Exclude")
  decide(app, checks[3], "Unsure")
  # Left undecided: checks[-(1:3)].
  decide(app, includes[1], "Exclude")

  expect_message(counts <- screen_prisma(res, refs, not_retrieved = 2, reports_excluded = 5,
    studies_included = 7, reports_included = 8), "no reviewer's decision", class = "tabscreen_message")
  expect_s3_class(counts, "tabscreen_prisma")
  n <- function(box) counts$n[counts$box == box]

  per_file <- counts[counts$box == "identified_source", ]
  expect_equal(per_file$label, basename(files))
  expect_equal(per_file$n, vapply(file.path("asreview", basename(files)), function(f) expected[[f]]$n, integer(1),
    USE.NAMES = FALSE))
  expect_equal(n("identified"), sum(per_file$n))
  expect_equal(n("duplicates_removed"), n("identified") - nrow(refs))
  expect_gt(n("duplicates_removed"), 90)
  expect_equal(n("screened"), nrow(refs))

  excludes <- sum(verdict == "Exclude")
  expect_equal(n("excluded_model"), excludes)
  expect_equal(n("excluded_reviewers"), 2L)   # a Check and an Include
  expect_equal(n("excluded"), excludes + 2L)
  expect_equal(n("awaiting"), length(checks) - 3L + 1L)   # the Unsure one is not decided
  expect_equal(n("sought"), length(includes) - 1L + 1L)
  expect_equal(n("not_retrieved"), 2L)
  expect_equal(n("assessed"), n("sought") - 2L)
  expect_equal(n("reports_excluded"), 5L)
  expect_equal(n("studies_included"), 7L)
  expect_equal(n("reports_included"), 8L)
  expect_equal(n("screened"), n("excluded") + n("awaiting") + n("sought"))
  expect_equal(counts$from[counts$box == "excluded_reviewers"], "review")

  skip_if_not_installed("ggplot2")
  p <- plot(counts)
  expect_s3_class(p, "ggplot")
  text <- ggplot2::layer_data(p, 2)$label
  expect_true(any(grepl(paste0("Records screened\n(n = ", n("screened"), ")"), text, fixed = TRUE)))
  expect_true(any(grepl(paste0("_baseline.ris (n = ", per_file$n[1], ")"), text, fixed = TRUE)))
  expect_true(any(grepl(paste0("Duplicate records removed (n = ", n("duplicates_removed"), ")"), text, fixed = TRUE)))
})

test_that("without the references the identification counts are given or unknown", {
  fake <- local_fake_provider(seed = 2, decisions = list("1" = 0.5, "0" = 0.5))
  res <- prisma_screening(fake, filges2015_dat[1:12, ])
  counts <- suppressMessages(screen_prisma(res, identified = c(MEDLINE = 10, Embase = 7), other_removed = 5))
  expect_equal(counts$label[counts$box == "identified_source"], c("MEDLINE", "Embase"))
  expect_equal(counts$n[counts$box == "identified"], 17L)
  expect_true(is.na(counts$n[counts$box == "duplicates_removed"]))
  expect_true(all(counts$from[counts$box %in% c("identified", "identified_source")] == "given"))
  unknown <- suppressMessages(screen_prisma(res))
  expect_true(is.na(unknown$n[unknown$box == "identified"]))
  expect_true(is.na(unknown$n[unknown$box == "assessed"]))
  expect_equal(unknown$n[unknown$box == "screened"], 12L)
  skip_if_not_installed("ggplot2")
  text <- ggplot2::layer_data(plot(unknown), 2)$label
  expect_true(any(grepl("Reports not retrieved\n(n = ?)", text, fixed = TRUE)))
})

test_that("screen_prisma() refuses what it cannot count, naming the argument", {
  fake <- local_fake_provider(seed = 2)
  res <- prisma_screening(fake, filges2015_dat[1:4, ])
  expect_arg <- function(expr, arg) {
    cnd <- expect_error(expr, class = "tabscreen_error_prisma_args")
    expect_equal(cnd$arg, arg)
  }
  expect_arg(screen_prisma(res$answer_data_aggregated), "x")
  expect_arg(screen_prisma(res, not_retrieved = -1), "not_retrieved")
  expect_arg(screen_prisma(res, studies_included = 2.5), "studies_included")
  expect_arg(screen_prisma(res, reports_excluded = "3"), "reports_excluded")
  expect_arg(screen_prisma(res, identified = c(10, 7)), "identified")
  expect_arg(screen_prisma(res, filges2015_dat[1:4, ]), "refs")
  refs <- dedup_refs(filges2015_dat[1:4, c("title", "abstract")], messages = FALSE)
  expect_arg(screen_prisma(res, refs), "refs")
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-prisma")
  two <- tabscreen_a.tools(filges2015_dat[1:3, ], prompt = c("Is this about therapy?", "Is this about drugs?"),
    title = title, abstract = abstract, api_url = fake$url, progress = FALSE, messages = FALSE)
  expect_arg(screen_prisma(two), "x")
})

test_that("screen_report() shows the PRISMA flow, the audit's bound and the methods text of a screening", {
  files <- prisma_files()
  refs <- dedup_refs(read_refs(files), messages = FALSE)
  refs$human_code <- NA_integer_   # the report compares with the people's decisions; none here
  fake <- local_fake_provider(seed = 4, decisions = list("1" = 0.35, "0" = 0.65))
  res <- prisma_screening(fake, refs)
  app <- local_review(res, audit = 8, seed = 1, reviewer = "ann")
  st <- review_state(app)
  audited <- st$studyid[vapply(st$queues, function(q) "audit" %in% q, logical(1))]
  for (id in audited) decide(app, id, "Exclude")
  counts <- suppressMessages(screen_prisma(res, refs, not_retrieved = 3))
  audit <- screen_review_audit(res)
  html <- paste(readLines(screen_report(res, open = FALSE, prisma = counts), encoding = "UTF-8"),
    collapse = "\n")
  n <- function(box) format(counts$n[counts$box == box], big.mark = ",")
  expect_match(html, "PRISMA 2020 flow", fixed = TRUE)
  expect_match(html, paste0("Records screened<br>(n = ", n("screened"), ")"), fixed = TRUE)
  expect_match(html, paste0("_baseline.ris (n = ", counts$n[counts$box == "identified_source"][1], ")"), fixed = TRUE)
  expect_match(html, paste0("Duplicate records removed (n = ", n("duplicates_removed"), ")"), fixed = TRUE)
  expect_match(html, paste0("Reports not retrieved<br>(n = 3)"), fixed = TRUE)
  expect_match(html, paste0("<td>", audit$excludes, "</td><td>8</td><td>0</td><td><strong>", audit$missed_upper, "</strong>"), fixed = TRUE)
  expect_match(html, html_escape(strsplit(format(screen_methods(res), "text"), "\n\n", fixed = TRUE)[[1]][1]), fixed = TRUE)
  # Without the counts given, the report counts what the screening alone tells.
  alone <- paste(readLines(screen_report(res, open = FALSE), encoding = "UTF-8"), collapse = "\n")
  expect_match(alone, "Records identified from:<br>  Databases (n = ?)", fixed = TRUE)
  expect_match(alone, paste0("Records screened<br>(n = ", n("screened"), ")"), fixed = TRUE)
  none <- paste(readLines(screen_report(res, open = FALSE, prisma = FALSE, methods = FALSE)), collapse = "\n")
  expect_no_match(none, "review-report", fixed = TRUE)
  table_only <- paste(readLines(screen_report(res$answer_data_aggregated, open = FALSE)), collapse = "\n")
  expect_no_match(table_only, "review-report", fixed = TRUE)
  cnd <- expect_error(screen_report(res, open = FALSE, prisma = "yes"), class = "tabscreen_error_arg_prisma")
  expect_equal(cnd$arg, "prisma")
})
