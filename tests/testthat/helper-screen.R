# Helpers for the tests of tabscreen_a.tools(), screen_errors() and the result object.

# Eight real records: four excluded and four included by the review's screeners.
test_records <- function() {
  filges2015_dat[c(1, 2, 4, 5, 181, 182, 183, 184), ]
}

test_prompt <- "Is this study about Functional Family Therapy for young people who use drugs?"

# tabscreen_a.tools() on the test records against a fake provider, quiet; `...` replaces or adds
# arguments (NULL values are kept, so tools = NULL can be passed; unnamed ones are appended).
screen_a <- function(fake, ...) {
  args <- list(
    data = test_records(), prompt = test_prompt, studyid = "studyid", title = "title",
    abstract = "abstract", api_url = fake$url, progress = FALSE, messages = FALSE
  )
  extra <- list(...)
  if (length(extra) > 0) {
    named <- names(extra) %||% rep("", length(extra))
    args[named[named != ""]] <- extra[named != ""]
    args <- c(args, unname(extra[named == ""]))
  }
  do.call("tabscreen_a.tools", args)
}

# The request bodies the fake received, oldest first.
request_bodies <- function(fake) {
  lapply(fake$requests(), function(r) r$body)
}

# An error of `class` (and of class tabscreen_error_arg unless `arg = FALSE`), raised at the
# call of the screening function.
expect_arg_error <- function(object, class, arg = TRUE, fun = "tabscreen_a.tools") {
  cnd <- expect_error(object, class = class)
  expect_s3_class(cnd, "tabscreen_error")
  if (arg) expect_s3_class(cnd, "tabscreen_error_arg")
  expect_equal(rlang::call_name(cnd$call), fun)
  invisible(cnd)
}

# A screening function (by name) on the test records against the fake provider at `url`, quiet;
# `...` as for screen_a().
screen_with <- function(fun, url, ...) {
  args <- list(
    data = test_records(), prompt = test_prompt, studyid = "studyid", title = "title",
    abstract = "abstract", api_url = url, progress = FALSE, messages = FALSE
  )
  extra <- list(...)
  if (length(extra) > 0) {
    named <- names(extra) %||% rep("", length(extra))
    args[named[named != ""]] <- extra[named != ""]
    args <- c(args, unname(extra[named == ""]))
  }
  do.call(fun, args)
}

# tabscreen_b() at the fake's provider B base URL, tabscreen_c() at its provider C URL.
screen_b <- function(fake, ...) screen_with("tabscreen_b", fake$url_b, ...)
screen_c <- function(fake, ...) screen_with("tabscreen_c", fake$url_c, ...)

# The messages a call shows, and its value.
collect_messages <- function(expr) {
  msgs <- character()
  value <- withCallingHandlers(expr, message = function(m) {
    msgs <<- c(msgs, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  list(value = value, messages = msgs)
}

# The properties of the first tool's schema, in order, in a request body of provider B or C.
tool_properties <- function(body) {
  tool <- body$tools[[1]]
  schema <- tool$input_schema %||% tool[["function"]]$parameters
  names(schema$properties)
}

# The key appears nowhere: not in the serialized result, not in anything printing the result or
# its parts shows, not in what screen_errors() makes of it.
expect_key_nowhere <- function(res, key) {
  expect_false(length(grepRaw(key, serialize(res, NULL), fixed = TRUE)) > 0)
  capture_all <- function(expr) {
    out <- NULL
    msg <- capture.output(out <- capture.output(expr), type = "message")
    c(msg, out)
  }
  printed <- c(capture_all(print(res)), capture_all(print(res$answer_data)),
    capture_all(print(res$answer_data_aggregated)), capture_all(print(res$error_data)),
    capture_all(str(unclass(res))), capture_all(print(attr(res, "arg_list"))))
  expect_false(any(grepl(key, printed, fixed = TRUE)))
  res2 <- screen_errors(res, max_tries = 1, messages = FALSE)
  expect_false(length(grepRaw(key, serialize(res2, NULL), fixed = TRUE)) > 0)
}

# A result of the spec's shape: its components, and answer_data's class, columns (the user's, then
# `answer_cols`) and their types. Returns answer_data.
expect_components <- function(res, user_cols, answer_cols, types) {
  expect_identical(class(res), c("llm", "list"))
  expect_named(res, c("answer_data", "price_dollar", "price_data", "run_date"))
  ad <- res$answer_data
  expect_identical(class(ad), c("llm_tbl", "tbl_df", "tbl", "data.frame"))
  expect_named(ad, c(user_cols, answer_cols))
  expect_equal(unname(vapply(ad[answer_cols], typeof, character(1))), types)
  invisible(ad)
}
