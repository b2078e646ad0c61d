# screen_report(): the HTML disagreement report.
#
# The expected cards are derived here from the result's own tables, by the definitions of the
# report (missed include: human 1, model 0; false include: human 0, model 1; largest
# |incl_p - human| first, ties in the table's order), and compared with what the HTML holds.

# Example keys for the fake provider, for the calling test.
local_report_keys <- function(.env = parent.frame()) {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-report", PROVIDER_B_API_KEY = "sk-ant-test-report", .local_envir = .env)
}

report_records <- function() {
  filges2015_dat[c(1:10, 181:190), ]
}

# The cards of one section of a parsed report: "studyid|promptid|model" in page order.
card_keys <- function(doc, section_id) {
  cards <- xml2::xml_find_all(doc, sprintf("//section[@id='%s']//article", section_id))
  paste(xml2::xml_attr(cards, "data-studyid"), xml2::xml_attr(cards, "data-promptid"),
    xml2::xml_attr(cards, "data-model"), sep = "|")
}

# The expected cards of a section from a table with one decision per row.
expected_keys <- function(tab, section) {
  p <- if ("incl_p" %in% names(tab)) tab$incl_p else tab$decision_binary
  num <- if ("final_decision_llm_num" %in% names(tab)) tab$final_decision_llm_num else tab$decision_binary
  h <- tab$human_code
  keep <- !is.na(p) & !is.na(h) & if (section == "missed") h == 1 & num == 0 else h == 0 & num == 1
  idx <- which(keep)
  idx <- idx[order(-abs(p[idx] - h[idx]), idx)]
  paste(tab$studyid[idx], tab$promptid[idx], tab$model[idx], sep = "|")
}

tile_value <- function(doc, class) {
  as.integer(xml2::xml_text(xml2::xml_find_first(doc, sprintf("//div[contains(@class, 'tile %s')]/dd", class))))
}

card_for <- function(doc, studyid) {
  xml2::xml_find_first(doc, sprintf("//article[@data-studyid='%s']", studyid))
}

expect_self_contained <- function(path) {
  raw <- readChar(path, file.size(path), useBytes = TRUE)
  doc <- xml2::read_html(path)
  # Nothing is fetched: no scripts, style sheets, images, frames or objects, no src attributes,
  # links only to anchors of the page, no url() or @import in the style sheet.
  expect_length(xml2::xml_find_all(doc, "//script|//link|//img|//iframe|//object|//embed|//video|//audio|//source"), 0)
  expect_length(xml2::xml_find_all(doc, "//*[@src]"), 0)
  hrefs <- xml2::xml_attr(xml2::xml_find_all(doc, "//*[@href]"), "href")
  expect_true(all(startsWith(hrefs, "#")))
  expect_false(grepl("(src|href)\\s*=\\s*[\"']?\\s*(https?:)?//", raw, ignore.case = TRUE, useBytes = TRUE))
  css <- paste(xml2::xml_text(xml2::xml_find_all(doc, "//style")), collapse = "\n")
  expect_false(grepl("url\\(|@import", css))
  # Every in-page link has its target.
  ids <- xml2::xml_attr(xml2::xml_find_all(doc, "//*[@id]"), "id")
  expect_true(all(substring(hrefs, 2) %in% ids))
  expect_equal(xml2::xml_attr(xml2::xml_find_first(doc, "//meta[@charset]"), "charset"), "utf-8")
  invisible(doc)
}

test_that("a report of repeated answers lists exactly the disagreements, in order and by section", {
  local_report_keys()
  fake <- local_fake_provider(seed = 11, decisions = list("1" = 0.45, "0" = 0.55),
    fail_matching = list(list(substring = "Selective Mutism", kind = "500")))
  res <- screen_a(fake, data = report_records(), reps = 3, decision_description = TRUE, max_tries = 1,
    incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.3)
  agg <- res$answer_data_aggregated
  # The fixture must hold both kinds of disagreement and a record with no answer.
  expect_gt(length(expected_keys(agg, "missed")), 0)
  expect_gt(length(expected_keys(agg, "false")), 0)
  expect_true(any(is.na(agg$incl_p)))

  file <- withr::local_tempfile(fileext = ".html")
  expect_invisible(out <- screen_report(res, human_decision = human_code, file = file, open = FALSE))
  expect_equal(out, normalizePath(file))
  doc <- expect_self_contained(file)

  expect_equal(card_keys(doc, "missed-includes"), expected_keys(agg, "missed"))
  expect_equal(card_keys(doc, "false-includes"), expected_keys(agg, "false"))
  failed <- agg[is.na(agg$incl_p), ]
  expect_equal(card_keys(doc, "failed"), paste(failed$studyid, failed$promptid, failed$model, sep = "|"))
  expect_equal(xml2::xml_attr(xml2::xml_find_all(doc, "//section[@id='missed-includes']//article"), "data-section"),
    rep("missed", length(expected_keys(agg, "missed"))))

  answered <- agg[!is.na(agg$incl_p), ]
  agree <- answered$final_decision_llm_num == answered$human_code
  expect_equal(tile_value(doc, "compared"), nrow(answered))
  expect_equal(tile_value(doc, "agree"), sum(agree))
  expect_equal(tile_value(doc, "missed"), sum(!agree & answered$human_code == 1))
  expect_equal(tile_value(doc, "false"), sum(!agree & answered$human_code == 0))
  expect_equal(tile_value(doc, "failed"), nrow(failed))

  # One card in full: what it says comes from its row of the aggregated table.
  row <- agg[match(strsplit(expected_keys(agg, "missed")[1], "|", fixed = TRUE)[[1]][1], agg$studyid), ]
  card <- card_for(doc, row$studyid)
  text_of <- function(xpath) xml2::xml_text(xml2::xml_find_first(card, xpath))
  expect_equal(text_of(".//h3"), row$title)
  expect_equal(text_of(".//section[contains(@class, 'abstract')]/p"), if (is.na(row$abstract)) "No abstract." else row$abstract)
  expect_equal(text_of(".//section[contains(@class, 'explanation')]/p"), row$longest_answer)
  expect_equal(text_of(".//span[@class='pval']"), formatC(row$incl_p, format = "f", digits = 2))
  expect_equal(text_of(".//span[@class='dist']"), formatC(abs(row$incl_p - 1), format = "f", digits = 2))
  expect_equal(text_of(".//span[contains(@class, 'pill')][1]"), "Include")
  expect_equal(xml2::xml_text(xml2::xml_find_all(card, ".//span[contains(@class, 'pill')]"))[2], row$final_decision_llm)
  expect_equal(text_of(".//details[@class='prompt']/p"), test_prompt)
  expect_match(text_of(".//p[@class='meta']"), row$model, fixed = TRUE)
  expect_match(text_of(".//span[@class='pnote']"), sprintf("%d of 3 answers include", round(row$incl_p * 3)), fixed = TRUE)
  width <- xml2::xml_attr(xml2::xml_find_first(card, ".//span[@class='fill']"), "style")
  expect_equal(width, paste0("width:", round(100 * row$incl_p, 1), "%"))
  ticks <- xml2::xml_attr(xml2::xml_find_all(card, ".//span[@class='tick']"), "style")
  expect_setequal(ticks, c("left:50%", "left:30%"))

  # The summary names the model, the prompt, the run date and the cut-offs.
  facts <- xml2::xml_text(xml2::xml_find_all(doc, "//dl[@class='facts']/div"))
  expect_true(any(grepl(unique(agg$model), facts, fixed = TRUE)))
  expect_true(any(grepl(test_prompt, facts, fixed = TRUE)))
  expect_true(any(grepl(res$run_date, facts, fixed = TRUE)))
  expect_true(any(grepl("Include when incl_p \u2265 0.5; Check when 0.3 \u2264 incl_p < 0.5", facts, fixed = TRUE)))
  expect_equal(xml2::xml_text(xml2::xml_find_first(doc, "//h1")), "Where the model and the human screeners disagree")
  expect_length(xml2::xml_find_all(doc, "//footer[@id='how-to-read']//li"), 5)

  # The aggregated table alone gives the same cards.
  file2 <- withr::local_tempfile(fileext = ".html")
  screen_report(agg, file = file2, open = FALSE)
  doc2 <- xml2::read_html(file2)
  expect_equal(card_keys(doc2, "missed-includes"), card_keys(doc, "missed-includes"))
  expect_equal(card_keys(doc2, "false-includes"), card_keys(doc, "false-includes"))
  expect_equal(card_keys(doc2, "failed"), card_keys(doc, "failed"))
})

test_that("a report of single answers compares each answer and lists the failed requests", {
  local_report_keys()
  fake <- local_fake_provider(seed = 3, decisions = list("1" = 0.5, "0" = 0.5),
    fail_matching = list(list(substring = "Selective Mutism", kind = "500")))
  prompts <- c(test_prompt, "Does this study evaluate a family-based intervention?")
  res <- screen_a(fake, data = report_records(), prompt = prompts, reps = 1, max_tries = 1)
  ans <- res$answer_data
  expect_null(res$answer_data_aggregated)
  expect_gt(length(expected_keys(ans, "missed")), 0)
  expect_gt(length(expected_keys(ans, "false")), 0)

  file <- withr::local_tempfile(fileext = ".html")
  screen_report(res, file = file, open = FALSE)
  doc <- expect_self_contained(file)
  expect_equal(card_keys(doc, "missed-includes"), expected_keys(ans, "missed"))
  expect_equal(card_keys(doc, "false-includes"), expected_keys(ans, "false"))
  err <- res$error_data
  expect_equal(card_keys(doc, "failed"), paste(err$studyid, err$promptid, err$model, sep = "|"))
  expect_equal(tile_value(doc, "compared"), nrow(ans))

  # With one answer the card shows that decision, no bar, and says that there is no explanation.
  first <- xml2::xml_find_first(doc, "//section[@id='missed-includes']//article")
  expect_equal(xml2::xml_text(xml2::xml_find_first(first, ".//span[@class='pval']")), "0.00")
  expect_length(xml2::xml_find_all(first, ".//div[@class='bar']"), 0)
  expect_match(xml2::xml_text(xml2::xml_find_first(first, ".//section[contains(@class, 'explanation')]")),
    "decision_description = TRUE", fixed = TRUE)
  # Both prompts are in the summary, and each card holds its own prompt.
  expect_equal(xml2::xml_text(xml2::xml_find_all(doc, "//ol[@class='prompts']/li")), prompts)
  cards <- xml2::xml_find_all(doc, "//article[@data-promptid and @data-section != 'failed']")
  shown <- xml2::xml_text(xml2::xml_find_first(cards, ".//details[@class='prompt']/p"))
  expect_equal(shown, prompts[as.integer(xml2::xml_attr(cards, "data-promptid"))])
  expect_match(xml2::xml_text(xml2::xml_find_first(doc, "//p[@class='unit-note']")), "once per prompt")

  # answer_data alone: the same comparisons, no failures known.
  file2 <- withr::local_tempfile(fileext = ".html")
  screen_report(ans, file = file2, open = FALSE)
  doc2 <- xml2::read_html(file2)
  expect_equal(card_keys(doc2, "missed-includes"), expected_keys(ans, "missed"))
  expect_length(xml2::xml_find_all(doc2, "//section[@id='failed']"), 0)
})

test_that("reports work for provider B results, without top_p", {
  local_report_keys()
  fake <- local_fake_provider(seed = 5, decisions = list("1" = 0.5, "0" = 0.5))
  res <- screen_b(fake, data = report_records(), reps = 2, decision_description = TRUE)
  agg <- res$answer_data_aggregated
  expect_false("top_p" %in% names(agg))
  file <- withr::local_tempfile(fileext = ".html")
  screen_report(res, human_decision = "human_code", file = file, open = FALSE)
  doc <- expect_self_contained(file)
  expect_equal(card_keys(doc, "missed-includes"), expected_keys(agg, "missed"))
  expect_equal(card_keys(doc, "false-includes"), expected_keys(agg, "false"))
  expect_gt(length(c(expected_keys(agg, "missed"), expected_keys(agg, "false"))), 0)
  cards <- xml2::xml_find_all(doc, "//article")
  expect_true(all(is.na(xml2::xml_attr(cards, "data-top-p"))))
  expect_false(any(grepl("top_p", xml2::xml_text(xml2::xml_find_all(doc, "//article//p[@class='meta']")))))
  facts <- xml2::xml_text(xml2::xml_find_all(doc, "//dl[@class='facts']/div"))
  expect_true(any(grepl("provider B", facts, fixed = TRUE)))
})

test_that("titles, abstracts and explanations are escaped: markup in them is shown as text", {
  local_report_keys()
  fake <- local_fake_provider(seed = 1, decisions = list("1" = 1))
  data <- report_records()[1:3, ]
  evil_title <- "Family <script>alert(\"x\")</script> therapy & drugs: 'a' <b>trial</b>"
  evil_abstract <- "Results <img src=\"http://example.com/x.png\"> & <a href=\"https://example.com\">more</a>\nSecond line"
  data$title[2] <- evil_title
  data$abstract[2] <- evil_abstract
  data$human_code <- c(0L, 0L, 1L)
  res <- screen_a(fake, data = data, reps = 1)
  expect_true(all(res$answer_data$decision_binary == 1))

  file <- withr::local_tempfile(fileext = ".html")
  screen_report(res, file = file, open = FALSE, title = "Report <i>&</i> more")
  doc <- expect_self_contained(file)
  card <- card_for(doc, data$studyid[2])
  expect_equal(xml2::xml_attr(card, "data-section"), "false")
  expect_equal(xml2::xml_text(xml2::xml_find_first(card, ".//h3")), evil_title)
  expect_equal(xml2::xml_text(xml2::xml_find_first(card, ".//section[contains(@class, 'abstract')]/p")), evil_abstract)
  expect_length(xml2::xml_find_all(doc, "//script|//b|//img|//i"), 0)
  expect_length(xml2::xml_find_all(doc, "//a[not(starts-with(@href, '#'))]"), 0)
  expect_equal(xml2::xml_text(xml2::xml_find_first(doc, "//title")), "Report <i>&</i> more")
  expect_equal(xml2::xml_text(xml2::xml_find_first(doc, "//h1")), "Report <i>&</i> more")
  raw <- paste(readLines(file, encoding = "UTF-8", warn = FALSE), collapse = "\n")
  expect_true(grepl("Family &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; therapy &amp; drugs", raw, fixed = TRUE))
  # The record that humans included agrees with the model: no card.
  expect_equal(card_keys(doc, "missed-includes"), character())
  expect_equal(xml2::xml_text(xml2::xml_find_first(doc, "//section[@id='missed-includes']/p[@class='empty']")), "None.")
})

test_that("the bundled disagreements.csv reads as an aggregated table", {
  path <- system.file("extdata", "disagreements.csv", package = "tabscreen")
  expect_true(nzchar(path))
  dis <- utils::read.csv(path, encoding = "UTF-8")
  expect_equal(nrow(dis), 7)

  # As tabscreen's own aggregated table, with its cut-offs.
  agg <- dis
  names(agg) <- sub("^final_decision_gpt", "final_decision_llm", names(agg))
  agg <- tibble::new_tibble(agg, nrow = nrow(agg), class = "llm_agg_tbl")
  attr(agg, "incl_cutoff_upper") <- 0.5
  attr(agg, "incl_cutoff_lower") <- 0.4
  file <- withr::local_tempfile(fileext = ".html")
  screen_report(agg, file = file, open = FALSE)
  doc <- expect_self_contained(file)
  expected <- expected_keys(agg, "missed")
  expect_length(expected, 7)
  expect_equal(card_keys(doc, "missed-includes"), expected)
  expect_equal(card_keys(doc, "false-includes"), character())
  # The record with incl_p 0.1 is the least far from the humans' include: last.
  expect_equal(sub("\\|.*", "", tail(card_keys(doc, "missed-includes"), 1)), as.character(agg$studyid[agg$incl_p == max(agg$incl_p)]))
  for (i in seq_len(nrow(agg))) {
    card <- card_for(doc, agg$studyid[i])
    expect_equal(xml2::xml_text(xml2::xml_find_first(card, ".//section[contains(@class, 'explanation')]/p")), agg$longest_answer[i])
    expect_equal(xml2::xml_text(xml2::xml_find_first(card, ".//p[@class='author']")), agg$author[i])
    expect_match(xml2::xml_text(xml2::xml_find_first(card, ".//span[@class='pnote']")),
      sprintf("%d of 10 answers include", round(agg$incl_p[i] * 10)), fixed = TRUE)
  }
  facts <- xml2::xml_text(xml2::xml_find_all(doc, "//dl[@class='facts']/div"))
  expect_true(any(grepl("Include when incl_p \u2265 0.5; Check when 0.4 \u2264 incl_p < 0.5", facts, fixed = TRUE)))
  expect_true(any(grepl("gpt-4o-mini-2024-07-18", facts, fixed = TRUE)))

  # As read, with the AIscreenR column names: the same cards, cut-offs unknown.
  file2 <- withr::local_tempfile(fileext = ".html")
  screen_report(dis, file = file2, open = FALSE)
  doc2 <- xml2::read_html(file2)
  expect_equal(card_keys(doc2, "missed-includes"), expected)
  facts2 <- xml2::xml_text(xml2::xml_find_all(doc2, "//dl[@class='facts']/div"))
  expect_true(any(grepl("not recorded with this table", facts2, fixed = TRUE)))
})

test_that("human decisions may be logical or text, named by a string or a variable; NA ones are counted apart", {
  dis <- utils::read.csv(system.file("extdata", "disagreements.csv", package = "tabscreen"), encoding = "UTF-8")
  dis$included <- c(TRUE, FALSE, TRUE, NA, TRUE, FALSE, TRUE)
  column <- "included"
  file <- withr::local_tempfile(fileext = ".html")
  screen_report(dis, human_decision = column, file = file, open = FALSE)
  doc <- xml2::read_html(file)
  h <- as.integer(dis$included)
  expect_equal(sub("\\|.*", "", card_keys(doc, "missed-includes")), as.character(dis$studyid[which(h == 1)]))
  expect_equal(tile_value(doc, "agree"), sum(h == 0, na.rm = TRUE))
  expect_equal(tile_value(doc, "no-human"), 1L)
  expect_equal(tile_value(doc, "compared"), 6L)

  for (values in list(c("1", "0", "1", NA, "1", "0", "1"), c("Include", "exclude", " INCLUDE", "", "include", "Exclude", "include"))) {
    dis$included <- values
    screen_report(dis, human_decision = included, file = file, open = FALSE)
    doc <- xml2::read_html(file)
    expect_equal(sub("\\|.*", "", card_keys(doc, "missed-includes")), as.character(dis$studyid[which(h == 1)]))
    expect_equal(tile_value(doc, "no-human"), 1L)
  }
})

test_that("open = TRUE opens the written report in the browser", {
  dis <- utils::read.csv(system.file("extdata", "disagreements.csv", package = "tabscreen"), encoding = "UTF-8")
  opened <- NULL
  withr::local_options(browser = function(url) opened <<- url)
  file <- withr::local_tempfile(fileext = ".html")
  path <- screen_report(dis, file = file, open = TRUE)
  expect_equal(opened, path)
  expect_true(file.exists(path))
})

test_that("bad arguments are classed errors that name the argument", {
  dis <- utils::read.csv(system.file("extdata", "disagreements.csv", package = "tabscreen"), encoding = "UTF-8")
  file <- withr::local_tempfile(fileext = ".html")

  cnd <- expect_error(screen_report(dis, human_decision = human, file = file, open = FALSE),
    class = "tabscreen_error_human_decision")
  expect_s3_class(cnd, "tabscreen_error_arg")
  expect_equal(cnd$arg, "human_decision")
  expect_match(conditionMessage(cnd), "human_decision")
  expect_match(conditionMessage(cnd), "human_code")   # the suggestion
  expect_equal(rlang::call_name(cnd$call), "screen_report")
  expect_false(file.exists(file))

  no_human <- dis[setdiff(names(dis), "human_code")]
  cnd <- expect_error(screen_report(no_human, file = file, open = FALSE), class = "tabscreen_error_human_decision")
  expect_match(conditionMessage(cnd), "human_code")

  bad <- dis
  bad$human_code[2] <- 2L
  cnd <- expect_error(screen_report(bad, file = file, open = FALSE), class = "tabscreen_error_human_decision")
  expect_match(conditionMessage(cnd), "not 2")
  bad$human_code <- c("include", "maybe", rep("exclude", 5))
  cnd <- expect_error(screen_report(bad, file = file, open = FALSE), class = "tabscreen_error_human_decision")
  expect_match(conditionMessage(cnd), "maybe")

  cnd <- expect_error(screen_report(list(a = 1), file = file, open = FALSE), class = "tabscreen_error_object")
  expect_equal(cnd$arg, "x")
  expect_error(screen_report(dis[c("studyid", "title", "human_code")], file = file, open = FALSE),
    class = "tabscreen_error_object")

  missing_dir <- file.path(withr::local_tempdir(), "no", "such", "folder", "r.html")
  cnd <- expect_error(screen_report(dis, file = missing_dir, open = FALSE), class = "tabscreen_error_file")
  expect_s3_class(cnd, "tabscreen_error_arg")
  expect_equal(cnd$arg, "file")
  expect_match(conditionMessage(cnd), "does not exist")

  folder <- withr::local_tempdir()
  cnd <- expect_error(screen_report(dis, file = folder, open = FALSE), class = "tabscreen_error_file")
  expect_match(conditionMessage(cnd), "folder")

  # A file where a folder should be: the path cannot be created.
  plain <- withr::local_tempfile()
  writeLines("x", plain)
  expect_error(screen_report(dis, file = file.path(plain, "r.html"), open = FALSE), class = "tabscreen_error_file")
  expect_error(screen_report(dis, file = c("a.html", "b.html"), open = FALSE), class = "tabscreen_error_file")
  expect_error(screen_report(dis, file = NA_character_, open = FALSE), class = "tabscreen_error_file")
  expect_error(screen_report(dis, file = file, open = "yes"), class = "tabscreen_error_arg_flag")
  expect_error(screen_report(dis, file = file, open = FALSE, title = c("a", "b")), class = "tabscreen_error_title")
})

test_that("a table with several answers per record is refused with a pointer to the aggregated one", {
  local_report_keys()
  fake <- local_fake_provider(seed = 2)
  res <- screen_a(fake, data = report_records()[1:4, ], reps = 2)
  file <- withr::local_tempfile(fileext = ".html")
  cnd <- expect_error(screen_report(res$answer_data, file = file, open = FALSE), class = "tabscreen_error_object")
  expect_match(conditionMessage(cnd), "answer_data_aggregated")
  expect_false(file.exists(file))
})

test_that("Chromium renders the report's records", {
  browsers <- Sys.which(c("chromium", "chromium-browser", "google-chrome"))
  browsers <- browsers[nzchar(browsers)]
  skip_if(length(browsers) == 0, "no Chromium on the PATH")
  dis <- utils::read.csv(system.file("extdata", "disagreements.csv", package = "tabscreen"), encoding = "UTF-8")
  dis$title[1] <- "Title with <script>document.title='x'</script> & markup"
  file <- withr::local_tempfile(fileext = ".html")
  screen_report(dis, file = file, open = FALSE)
  profile <- withr::local_tempdir()
  out <- processx::run(browsers[[1]], c("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    paste0("--user-data-dir=", profile), "--dump-dom", paste0("file://", normalizePath(file))),
    timeout = 60, error_on_status = FALSE)
  expect_equal(out$status, 0L)
  dom <- xml2::read_html(out$stdout)
  cards <- xml2::xml_find_all(dom, "//section[@id='missed-includes']//article")
  expect_equal(xml2::xml_attr(cards, "data-studyid"), as.character(dis$studyid[order(-abs(dis$incl_p - 1), seq_len(nrow(dis)))]))
  expect_equal(xml2::xml_text(xml2::xml_find_first(cards[[1]], ".//h3")), dis$title[1])
  expect_length(xml2::xml_find_all(dom, "//script"), 0)
  expect_equal(xml2::xml_text(xml2::xml_find_first(dom, "//title")), "Where the model and the human screeners disagree")
})
