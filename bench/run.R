# make bench: the issue's performance targets, measured end to end from R against the local fake
# provider. Each measurement runs in a fresh R process so that peak memory is its own.
# Prints a markdown table; record it, with the date, in bench/README.md.
libs <- .libPaths()
friends <- "../shared/data/friends_dat.csv"

measure <- function(fun, ...) callr::r(fun, args = list(libs = libs, ...), show = FALSE)
row <- function(what, value, target, ok) {
  cat(sprintf("| %s | %s | %s | %s |\n", what, value, target, if (ok) "met" else "MISSED"))
}

load_abstracts <- function(path) {
  if (file.exists(path)) {
    d <- utils::read.csv(path, encoding = "UTF-8", stringsAsFactors = FALSE)
    d[nzchar(d$abstract), c("title", "abstract")]
  } else {
    tabscreen::filges2015_dat[c("title", "abstract")]
  }
}
records <- load_abstracts(friends)
cat(sprintf("records for the bench: %d distinct, mean abstract %.0f characters\n",
            nrow(records), mean(nchar(records$abstract))))
grow <- function(d, n) {
  d <- d[rep_len(seq_len(nrow(d)), n), ]
  d$title <- paste(d$title, seq_len(n))
  rownames(d) <- NULL
  d
}

cat("\n| Measurement | Result | Target | |\n|---|---|---|---|\n")


# 1. Throughput at an rpm ceiling with realistic latency.
ceiling_run <- measure(function(libs, data) {
  .libPaths(libs)
  library(tabscreen)
  rpm <- 12000
  fake <- tabscreen:::fake_provider_start(rpm = rpm, latency_median_ms = 250, latency_sigma = 0.5)
  Sys.setenv(PROVIDER_A_API_KEY = "sk-bench")
  t <- system.time(res <- tabscreen_a.tools(data, prompt = "Include?", title = title, abstract = abstract,
                                            api_url = fake$url, rpm = rpm, progress = FALSE, messages = FALSE))
  st <- fake$stats()
  fake$stop()
  n <- nrow(res$answer_data) + NROW(res$error_data)
  # The achieved rate is measured where the provider sees it: requests between the first and the
  # last arrival. The end-to-end rate adds R's preparation and the last answers' latency.
  window <- st$last_request_unix - st$first_request_unix
  list(requests = n, seconds = t[["elapsed"]], rate = (st$requests_total - 1) / window,
       e2e = n / t[["elapsed"]], ceiling = rpm / 60,
       refused = st$refused_rate + st$refused_concurrency, max_1s = st$max_requests_1s,
       failed = NROW(res$error_data))
}, data = grow(records, 10000))
row(sprintf("Throughput at rpm 12,000, 250 ms lognormal latency (%d requests)", ceiling_run$requests),
        sprintf(paste("%.1f req/s at the provider of %.0f = %.3f of the ceiling (end to end from R: %.3f, %.1f s);",
                      "%d refused; max %d in any 1 s; %d failed"),
                ceiling_run$rate, ceiling_run$ceiling, ceiling_run$rate / ceiling_run$ceiling,
                ceiling_run$e2e / ceiling_run$ceiling, ceiling_run$seconds,
                ceiling_run$refused, ceiling_run$max_1s, ceiling_run$failed),
        ">= 0.97, 0 refused", ceiling_run$rate / ceiling_run$ceiling >= 0.97 && ceiling_run$refused == 0)

# 2. Requests per second at zero latency.
zero_run <- measure(function(libs, data) {
  .libPaths(libs)
  library(tabscreen)
  fake <- tabscreen:::fake_provider_start()
  Sys.setenv(PROVIDER_A_API_KEY = "sk-bench")
  t <- system.time(res <- tabscreen_a.tools(data, prompt = "Include?", title = title, abstract = abstract,
                                            api_url = fake$url, rpm = 1e7, progress = FALSE, messages = FALSE))
  fake$stop()
  n <- nrow(res$answer_data) + NROW(res$error_data)
  list(requests = n, seconds = t[["elapsed"]], rate = n / t[["elapsed"]], failed = NROW(res$error_data))
}, data = grow(records, 20000))
row(sprintf("Zero latency, end to end from R (%d requests)", zero_run$requests),
        sprintf("%.0f req/s (%.1f s)", zero_run$rate, zero_run$seconds), ">= 2,000 req/s", zero_run$rate >= 2000)

# 3. Peak memory of a run of 100,000 answers (10,000 records x 10 repetitions).
memory_run <- measure(function(libs, data) {
  .libPaths(libs)
  library(tabscreen)
  fake <- tabscreen:::fake_provider_start()
  Sys.setenv(PROVIDER_A_API_KEY = "sk-bench")
  t <- system.time(res <- tabscreen_a.tools(data, prompt = "Include?", title = title, abstract = abstract,
                                            api_url = fake$url, rpm = 1e7, reps = 10,
                                            progress = FALSE, messages = FALSE))
  fake$stop()
  status <- readLines("/proc/self/status")
  hwm <- as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", status, value = TRUE))) / 1024
  list(answers = nrow(res$answer_data) + NROW(res$error_data), peak_mb = hwm, seconds = t[["elapsed"]],
       aggregated = nrow(res$answer_data_aggregated))
}, data = grow(records, 10000))
row(sprintf("Peak memory (VmHWM) of a run of %s answers", format(memory_run$answers, big.mark = ",")),
        sprintf("%.0f MB (run %.1f s)", memory_run$peak_mb, memory_run$seconds), "<= 400 MB", memory_run$peak_mb <= 400)

# 4. Arrow round trip R -> Go -> R of 100,000 records with real-length abstracts.
ipc_run <- measure(function(libs, data) {
  .libPaths(libs)
  library(tabscreen)
  df <- data.frame(record = seq_len(nrow(data)), title = data$title, abstract = data$abstract,
                   score = stats::runif(nrow(data)), flag = rep(c(TRUE, FALSE, NA), length.out = nrow(data)))
  invisible(tabscreen:::ipc_roundtrip_go(df[1:1000, ]))
  times <- replicate(3, system.time(tabscreen:::ipc_roundtrip_go(df))[["elapsed"]])
  back <- tabscreen:::ipc_roundtrip_go(df)
  list(rows = nrow(df), mb = sum(nchar(df$abstract, "bytes")) / 2^20, seconds = min(times),
       identical = isTRUE(all.equal(as.data.frame(back), df, check.attributes = FALSE)))
}, data = grow(records, 100000))
row(sprintf("Arrow round trip R -> Go -> R, %s records (%.0f MB of abstracts)", format(ipc_run$rows, big.mark = ","), ipc_run$mb),
        sprintf("%.2f s (best of 3), identical: %s", ipc_run$seconds, ipc_run$identical), "<= 1 s", ipc_run$seconds <= 1 && ipc_run$identical)

cat(sprintf("\nMeasured %s on %d cores (%s).\n", format(Sys.time(), "%Y-%m-%d"), parallel::detectCores(), R.version.string))
