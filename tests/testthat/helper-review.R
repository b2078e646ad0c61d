# The review app driven over HTTP the way its page does (test-review.R, test-prisma.R).

# A review app for the test, stopped when the test ends.
local_review <- function(x, ..., .env = parent.frame()) {
  app <- suppressMessages(screen_review(x, ..., open = FALSE, wait = FALSE))
  withr::defer(app$stop(), envir = .env)
  app
}

# One call of the page's API.
review_api <- function(app, path, body = NULL, token = NULL) {
  root <- sub("/\\?.*$", "", app$url)
  token <- token %||% sub(".*[?&]token=([0-9a-f]+).*", "\\1", app$url)
  req <- httr2::request(paste0(root, path))
  req <- httr2::req_options(req, noproxy = "*")
  req <- httr2::req_headers(req, "X-Tabscreen-Token" = token)
  req <- httr2::req_error(req, is_error = function(resp) FALSE)
  if (!is.null(body)) req <- httr2::req_body_json(req, body)
  resp <- httr2::req_perform(req)
  list(status = httr2::resp_status(resp), body = httr2::resp_body_json(resp, simplifyVector = FALSE))
}

decide <- function(app, studyid, decision, reviewer = "ann", note = "", group = NULL) {
  group <- group %||% review_state(app)$items_group[[1]]
  out <- review_api(app, "/api/decide", list(studyid = studyid, group = group, reviewer = reviewer,
    decision = decision, note = note, seconds = 2, queue = "check"))
  expect_equal(out$status, 200L, info = paste(unlist(out$body), collapse = " "))
  out$body$decision
}

review_state <- function(app) {
  st <- review_api(app, "/api/state")$body
  items <- st$page$items
  list(meta = st$page$meta, decisions = st$decisions,
    items_group = vapply(items, `[[`, "", "group"), studyid = vapply(items, `[[`, "", "studyid"),
    queues = lapply(items, function(i) unlist(i$queues)), items = items)
}

