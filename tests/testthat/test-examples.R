# Every help page's example, as a user pastes it: in a fresh R session with no API key in the
# environment, every line visible (no hidden setup), run without an error or a warning, and
# nothing written to the user's own answer store.

example_db <- function() {
  db <- tools::Rd_db("tabscreen")
  has_examples <- vapply(db, function(rd) {
    any(vapply(rd, function(x) identical(attr(x, "Rd_tag"), "\\examples"), logical(1)))
  }, logical(1))
  db[has_examples]
}

# The Rd tags inside a page's \examples section.
example_tags <- function(rd) {
  ex <- rd[vapply(rd, function(x) identical(attr(x, "Rd_tag"), "\\examples"), logical(1))][[1]]
  tags <- character()
  walk <- function(x) {
    tag <- attr(x, "Rd_tag")
    if (!is.null(tag)) tags <<- c(tags, tag)
    if (is.list(x)) for (y in x) walk(y)
  }
  walk(ex)
  unique(tags)
}

test_that("every exported function has an example, and no example hides a line", {
  db <- tools::Rd_db("tabscreen")
  aliases <- unlist(lapply(db[names(example_db())], function(rd) {
    unlist(lapply(rd[vapply(rd, function(x) identical(attr(x, "Rd_tag"), "\\alias"), logical(1))],
                  as.character))
  }))
  exports <- getNamespaceExports("tabscreen")
  expect_equal(setdiff(exports, aliases), character())
  for (page in names(example_db())) {
    hidden <- intersect(example_tags(example_db()[[page]]), c("\\dontshow", "\\dontrun", "\\donttest", "\\testonly"))
    expect(length(hidden) == 0, sprintf("%s: the example hides code with %s", page, paste(hidden, collapse = ", ")))
  }
})

test_that("every example runs when pasted into a fresh session without a key", {
  skip_if_not_installed("callr")
  user_data <- withr::local_tempdir()
  keys <- c("PROVIDER_A_API_KEY", "PROVIDER_B_API_KEY", "PROVIDER_C_API_KEY", "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY", "MISTRAL_API_KEY")
  env <- c(callr::rcmd_safe_env(), stats::setNames(rep("", length(keys)), keys),
           R_USER_DATA_DIR = user_data, R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  db <- example_db()
  expect_gt(length(db), 15)
  for (page in names(db)) {
    code <- withr::local_tempfile(fileext = ".R")
    tools::Rd2ex(db[[page]], code, commentDontrun = TRUE, commentDonttest = FALSE)
    out <- tryCatch(callr::r(function(code) {
      warnings <- character()
      # As a user pastes it: the package attached, the code at the top level.
      library(tabscreen)
      withCallingHandlers(
        source(code, local = globalenv(), echo = FALSE),
        warning = function(w) {
          warnings <<- c(warnings, conditionMessage(w))
          invokeRestart("muffleWarning")
        }
      )
      warnings
    }, args = list(code = code), env = env, wd = withr::local_tempdir(), timeout = 120), error = function(e) e)
    if (inherits(out, "error")) {
      cause <- if (inherits(out$parent, "condition")) out$parent else out
      expect(FALSE, sprintf("%s: the example failed: %s", page, conditionMessage(cause)))
      next
    }
    expect(length(out) == 0, sprintf("%s: the example warned: %s", page, paste(out, collapse = "; ")))
  }
  # The examples keep their answers in temporary stores, never in the user's.
  expect_equal(list.files(user_data, recursive = TRUE), character())
})

test_that("the vignettes are installed, and show every chunk but knitr's own settings", {
  found <- utils::vignette(package = "tabscreen")$results
  expect_true("tabscreen" %in% found[, "Item"])
  for (name in found[, "Item"]) {
    vig <- utils::vignette(name, package = "tabscreen")
    doc <- file.path(vig$Dir, "doc")
    expect_true(file.exists(file.path(doc, vig$PDF)), label = name)
    expect_match(vig$PDF, "[.]html$")
    # The installed source: a chunk that runs but is not shown may only set knitr's options.
    rmd <- readLines(file.path(doc, vig$File), encoding = "UTF-8")
    starts <- grep("^```\\{r", rmd)
    hidden <- starts[grepl("include *= *FALSE|echo *= *FALSE", rmd[starts])]
    for (start in hidden) {
      end <- start + match(TRUE, startsWith(rmd[-seq_len(start)], "```"))
      body <- rmd[seq(start + 1L, end - 1L)]
      expect_true(all(startsWith(trimws(body), "knitr::opts_chunk$set(")), label = paste(name, rmd[start]))
    }
  }
})

test_that("the vignettes' code runs when pasted into a fresh session without a key", {
  skip_if_not_installed("callr")
  found <- utils::vignette(package = "tabscreen")$results
  user_data <- withr::local_tempdir()
  keys <- c("PROVIDER_A_API_KEY", "PROVIDER_B_API_KEY", "PROVIDER_C_API_KEY", "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY", "MISTRAL_API_KEY")
  env <- c(callr::rcmd_safe_env(), stats::setNames(rep("", length(keys)), keys),
           R_USER_DATA_DIR = user_data, R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  for (name in found[, "Item"]) {
    vig <- utils::vignette(name, package = "tabscreen")
    code <- file.path(vig$Dir, "doc", vig$R)
    expect_true(file.exists(code), label = paste(name, "has its R code installed"))
    out <- tryCatch(callr::r(function(code) {
      source(code, local = globalenv(), echo = FALSE)
      TRUE
    }, args = list(code = code), env = env, wd = withr::local_tempdir(), timeout = 300), error = function(e) e)
    if (inherits(out, "error")) {
      cause <- if (inherits(out$parent, "condition")) out$parent else out
      expect(FALSE, sprintf("vignette %s failed: %s", name, conditionMessage(cause)))
    } else {
      expect_true(out)
    }
  }
  expect_equal(list.files(user_data, recursive = TRUE), character())
})

test_that("the README's first screening runs without a key, as written", {
  skip_if_not_installed("callr")
  readme <- test_path("..", "..", "README.md")
  skip_if_not(file.exists(readme), "README.md is not in the source package")
  md <- readLines(readme, encoding = "UTF-8")
  section <- match("## A first screening, without a key", md)
  expect_false(is.na(section))
  start <- section + match("```r", md[-seq_len(section)])
  end <- start + match("```", md[-seq_len(start)])
  code <- md[seq(start + 1L, end - 1L)]
  keys <- c("PROVIDER_A_API_KEY", "OPENAI_API_KEY")
  env <- c(callr::rcmd_safe_env(), stats::setNames(rep("", length(keys)), keys),
           R_USER_DATA_DIR = withr::local_tempdir(),
           R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  out <- callr::r(function(code) {
    exprs <- parse(text = code)
    for (e in exprs) eval(e, globalenv())
    list(class = class(res), rows = nrow(res$answer_data_aggregated),
         answers = nrow(res$answer_data), fake_alive = fake$is_alive())
  }, args = list(code = code), env = env, timeout = 120)
  expect_true("llm" %in% out$class)
  expect_equal(out$rows, 20)
  expect_equal(out$answers, 60)
  expect_false(out$fake_alive)
})
