# Where a million-job screening's memory goes: one screening of BENCH_BIG_RECORDS records (default
# 100,000) x 10 reps at zero latency, in this R process, against the local fake provider. Run it
# with TABSCREEN_MEMSTATS=1 in the environment (Go reads it when the library loads) for the Go
# heap at each phase of TsRunStart and TsRunResult on standard error; the process's peak memory
# (VmHWM: R, Go and C together) and the elapsed time follow.
library(tabscreen)
n <- as.integer(Sys.getenv("BENCH_BIG_RECORDS", "100000"))
friends <- "../shared/data/friends_dat.csv"
d <- if (file.exists(friends)) utils::read.csv(friends, encoding = "UTF-8", stringsAsFactors = FALSE) else
  tabscreen::filges2015_dat
d <- d[nzchar(d$abstract), c("title", "abstract")]
d <- d[rep_len(seq_len(nrow(d)), n), ]
d$title <- paste(d$title, seq_len(n))
rownames(d) <- NULL
options(tabscreen.store = tempfile(fileext = ".sqlite"))
provider <- tabscreen:::fake_provider_start(rpm = 1e7)
Sys.setenv(PROVIDER_A_API_KEY = "sk-bench")
t <- system.time(tabscreen_a.tools(d, prompt = "Include?", title = "title", abstract = "abstract",
                                   api_url = provider$url, progress = FALSE, messages = FALSE,
                                   rpm = 1e7, reps = 10))
provider$stop()
cat(grep("^VmHWM", readLines("/proc/self/status"), value = TRUE), "\n")
cat(sprintf("%.1f s for %d jobs\n", t[["elapsed"]], 10L * n))
