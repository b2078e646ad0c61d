# The screening that Rprof() profiles in test-run.R, run in a callr child (a crash stays contained
# there); bench/rprof.R sources this file and counts how often the same workload crashes.
profiled_screening <- function(url, libs, key, store = NULL) {
  .libPaths(libs)
  library(tabscreen)
  Sys.setenv(PROVIDER_A_API_KEY = key)
  if (!is.null(store)) options(tabscreen.store = store)
  d <- data.frame(title = paste("title", 1:2000), abstract = strrep("a long abstract ", 120))
  Rprof(tempfile(), interval = 0.002, memory.profiling = TRUE)
  on.exit(Rprof(NULL))
  res <- tabscreen_a.tools(d, prompt = "Include?", title = title, abstract = abstract, api_url = url,
                           rpm = 1e6, reps = 3, progress = FALSE, messages = FALSE)
  nrow(res$answer_data)
}
