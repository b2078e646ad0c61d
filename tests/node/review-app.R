# The R side of the browser test of screen_review() (review-browser.test.cjs), against the installed
# tabscreen (R_LIBS selects the library):
#   Rscript review-app.R setup DIR     screen the bundled data (two records made hostile) with the
#                                      fake provider; the result in DIR/result.rds, its store in
#                                      DIR/store.sqlite
#   Rscript review-app.R serve DIR N   screen_review() on it, waiting; the page's address in
#                                      DIR/url-N.txt, what screen_review() returned in
#                                      DIR/returned-N.json once the reviewer presses Finish
#   Rscript review-app.R check DIR     the decisions in SQLite and from screen_review_decisions(),
#                                      and the audit, as JSON on stdout
#   Rscript review-app.R events DIR    every event and current decision in SQLite, as JSON on stdout
suppressPackageStartupMessages(library(tabscreen))
args <- commandArgs(TRUE)
what <- args[1]
dir <- args[2]
options(tabscreen.store = file.path(dir, "store.sqlite"))

hostile_title <- "<img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=2</script> Family therapy & <b>drugs</b>"
hostile_abstract <- "</p><script>window.__pwned=3</script><a href=\"javascript:window.__pwned=4\">click</a> 'quoted' \"double\" &amp; <style>body{display:none}</style>"

if (what == "setup") {
  fake <- tabscreen:::fake_provider_start(seed = 11, decisions = list("1" = 0.35, "0" = 0.6, "1.1" = 0.05))
  on.exit(fake$stop())
  data <- filges2015_dat
  data$title[1] <- hostile_title
  data$abstract[1] <- hostile_abstract
  data$abstract[2] <- paste(hostile_abstract, data$abstract[2])
  Sys.setenv(PROVIDER_A_API_KEY = "sk-fake-browser-test")
  res <- tabscreen_a.tools(
    data, prompt = "Is this study about functional family therapy for young people who use drugs?",
    studyid = studyid, title = title, abstract = abstract, api_url = fake$url, reps = 3,
    incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.3, decision_description = TRUE,
    progress = FALSE, messages = FALSE
  )
  saveRDS(res, file.path(dir, "result.rds"))
  agg <- res$answer_data_aggregated
  cat(jsonlite::toJSON(list(run_id = attr(res, "store")$run_id, records = nrow(agg),
    verdicts = as.list(table(agg$final_decision_llm)), hostile_title = hostile_title,
    hostile_abstract = hostile_abstract), auto_unbox = TRUE), "\n")
} else if (what == "serve") {
  n <- args[3]
  res <- readRDS(file.path(dir, "result.rds"))
  # The address is in screen_review()'s message; the test reads it from the file.
  returned <- withCallingHandlers(
    screen_review(res, human_decision = human_code, audit = 10, seed = 7, reviewer = "ann", open = FALSE, wait = TRUE),
    tabscreen_message = function(m) {
      url <- regmatches(conditionMessage(m), regexpr("http://127\\.0\\.0\\.1:[0-9]+/[^ >\n]*", conditionMessage(m)))
      if (length(url)) writeLines(url, file.path(dir, paste0("url-", n, ".txt")))
    }
  )
  returned$decided_at <- format(returned$decided_at, "%Y-%m-%dT%H:%M:%OS3Z")
  writeLines(jsonlite::toJSON(returned, dataframe = "rows", na = "null", auto_unbox = TRUE),
    file.path(dir, paste0("returned-", n, ".json")))
} else if (what == "check") {
  res <- readRDS(file.path(dir, "result.rds"))
  con <- DBI::dbConnect(RSQLite::SQLite(), file.path(dir, "store.sqlite"))
  sqlite <- DBI::dbGetQuery(con, "SELECT studyid, reviewer, decision, note, queue, audit FROM review_decisions WHERE run_id = ? ORDER BY event_id",
    params = list(attr(res, "store")$run_id))
  events <- DBI::dbGetQuery(con, "SELECT count(*) AS n, sum(undone) AS undone FROM review_events")
  DBI::dbDisconnect(con)
  d <- screen_review_decisions(res)
  merged <- screen_review_merge(res, reviewer = "ann")
  audit <- screen_review_audit(res, reviewer = "ann")
  cat(jsonlite::toJSON(list(
    sqlite = sqlite, events = events,
    tibble = as.data.frame(d[c("studyid", "reviewer", "decision", "note", "queue", "audit")]),
    merged = as.list(table(merged$answer_data_aggregated$human_review, useNA = "always")),
    audit = as.data.frame(audit)
  ), dataframe = "rows", na = "null", auto_unbox = TRUE, digits = NA), "\n")
} else if (what == "events") {
  con <- DBI::dbConnect(RSQLite::SQLite(), file.path(dir, "store.sqlite"))
  events <- DBI::dbGetQuery(con, "SELECT * FROM review_events ORDER BY event_id")
  current <- DBI::dbGetQuery(con, "SELECT studyid, reviewer, decision, note FROM review_decisions ORDER BY event_id")
  DBI::dbDisconnect(con)
  cat(jsonlite::toJSON(list(events = events, current = current), dataframe = "rows", na = "null", auto_unbox = TRUE), "\n")
}
