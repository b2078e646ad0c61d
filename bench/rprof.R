# How often Rprof() during a screening crashes R (src/signals.c, docs/decisions/0003): the
# workload of test-run.R's profiling test (tests/testthat/helper-profiling.R), N times, each in a
# fresh callr child. Run from the package's folder with the package installed:
#   N=100 R_LIBS=$PWD/.rlib Rscript bench/rprof.R
libs <- .libPaths()
library(tabscreen)
source("tests/testthat/helper-profiling.R")
fake <- fake_provider()
n <- as.integer(Sys.getenv("N", "100"))
crashed <- 0
for (i in seq_len(n)) {
  answers <- tryCatch(callr::r(profiled_screening, args = list(url = fake$url, libs = libs,
    key = "sk-bench-profiling", store = tempfile(fileext = ".sqlite"))), error = function(e) NA)
  if (is.na(answers)) crashed <- crashed + 1
}
fake$stop()
cat(sprintf("Rprof() during a screening: %d crash(es) in %d runs (load average %s)\n", crashed, n,
            paste(utils::head(strsplit(readLines("/proc/loadavg"), " ")[[1]], 3), collapse = " ")))
