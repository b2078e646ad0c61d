# How often Rprof() during a screening crashes R (src/signals.c, docs/decisions/0003): the
# workload of test-run.R's profiling test, N times, each in a fresh callr child. Run from the
# package's folder with the package installed:
#   N=100 R_LIBS=$PWD/.rlib Rscript bench/rprof.R
libs <- .libPaths()
library(tabscreen)
fake <- fake_provider()
n <- as.integer(Sys.getenv("N", "100"))
crashed <- 0
for (i in seq_len(n)) {
  answers <- tryCatch(callr::r(function(url, libs) {
    .libPaths(libs)
    library(tabscreen)
    Sys.setenv(PROVIDER_A_API_KEY = "sk-bench-profiling")
    options(tabscreen.store = tempfile(fileext = ".sqlite"))
    d <- data.frame(title = paste("title", 1:2000), abstract = strrep("a long abstract ", 120))
    Rprof(tempfile(), interval = 0.002, memory.profiling = TRUE)
    on.exit(Rprof(NULL))
    res <- tabscreen_a.tools(d, prompt = "Include?", title = title, abstract = abstract, api_url = url,
                             rpm = 1e6, reps = 3, progress = FALSE, messages = FALSE)
    nrow(res$answer_data)
  }, args = list(url = fake$url, libs = libs)), error = function(e) NA)
  if (is.na(answers)) crashed <- crashed + 1
}
fake$stop()
cat(sprintf("Rprof() during a screening: %d crash(es) in %d runs (load average %s)\n", crashed, n,
            paste(utils::head(strsplit(readLines("/proc/loadavg"), " ")[[1]], 3), collapse = " ")))
