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
