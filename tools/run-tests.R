# Runs the R tests against the installed package and ends with a plain "N passed, N failed" line.
library(testthat)
# expect_snapshot() runs only when NOT_CRAN is set: the snapshots of messages and errors are tests here.
Sys.setenv(NOT_CRAN = "true")
res <- as.data.frame(test_dir("tests/testthat", package = "tabscreen", load_package = "installed",
                              reporter = SummaryReporter$new(show_praise = FALSE), stop_on_failure = FALSE))
failed <- sum(res$failed) + sum(res$error)
passed <- sum(res$passed)
cat(sprintf("\ntestthat: %d passed, %d failed, %d skipped\n", passed, failed, sum(res$skipped)))
quit(status = if (failed > 0) 1 else 0)
