# make bench: the issue's performance targets, measured end to end from R against the local fake
# provider. Each measurement runs in a fresh R process so that peak memory is its own.
# Prints a markdown table; record it, with the date, in bench/README.md.
libs <- .libPaths()
friends <- "../shared/data/friends_dat.csv"

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


# One screening in a fresh R process against a fake provider started with `fake`: the answers,
# the provider's counters, the elapsed time and the process's peak memory.
# With `store = TRUE` the answers go to a fresh answer store in a temporary file (the default
# configuration of a user's screening); FALSE turns the store off.
screen_run <- function(data, fake = list(), ..., store = TRUE) {
  callr::r(function(libs, data, fake, args, store) {
    .libPaths(libs)
    library(tabscreen)
    store_file <- tempfile(fileext = ".sqlite")
    options(tabscreen.store = if (store) store_file else FALSE)
    provider <- do.call(tabscreen:::fake_provider_start, fake)
    Sys.setenv(PROVIDER_A_API_KEY = "sk-bench")
    call <- c(list(data, prompt = "Include?", title = "title", abstract = "abstract", api_url = provider$url,
                   progress = FALSE, messages = FALSE), args)
    t <- system.time(res <- do.call(tabscreen_a.tools, call))
    stats <- provider$stats()
    provider$stop()
    status <- readLines("/proc/self/status")
    list(jobs = nrow(res$answer_data) + NROW(res$error_data), failed = NROW(res$error_data),
         seconds = t[["elapsed"]], stats = stats,
         store_mb = if (store) sum(file.size(list.files(dirname(store_file), basename(store_file), full.names = TRUE))) / 2^20 else 0,
         peak_mb = as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", status, value = TRUE))) / 1024)
  }, args = list(libs = libs, data = data, fake = fake, args = list(...), store = store), show = FALSE)
}

# 1. Throughput at an rpm ceiling with realistic latency. The achieved rate is measured where the
# provider sees it, between the first and the last arrival; the end-to-end rate adds R's
# preparation and the last answers' latency.
rpm <- 12000
run <- screen_run(grow(records, 10000), fake = list(rpm = rpm, latency_median_ms = 250, latency_sigma = 0.5), rpm = rpm)
rate <- (run$stats$requests_total - 1) / (run$stats$last_request_unix - run$stats$first_request_unix)
refused <- run$stats$refused_rate + run$stats$refused_concurrency
row(sprintf("Throughput at rpm 12,000, 250 ms lognormal latency (%d requests)", run$jobs),
    sprintf(paste("%.1f req/s at the provider of %.0f = %.3f of the ceiling (end to end from R: %.3f, %.1f s);",
                  "%d refused; max %d in any 1 s; %d failed"),
            rate, rpm / 60, rate / (rpm / 60), run$jobs / run$seconds / (rpm / 60), run$seconds,
            refused, run$stats$max_requests_1s, run$failed),
    ">= 0.97, 0 refused", rate / (rpm / 60) >= 0.97 && refused == 0)

# 2. Requests per second at zero latency, with the answer store on (every request body and raw
# response committed to SQLite as it arrives) and off: the difference is the store's overhead.
off <- screen_run(grow(records, 20000), rpm = 1e7, store = FALSE)
run <- screen_run(grow(records, 20000), rpm = 1e7, store = TRUE)
row(sprintf("Zero latency, end to end from R, answer store on (%d requests)", run$jobs),
    sprintf("%.0f req/s (%.1f s; store file %.0f MB); %d failed. Store off: %.0f req/s (%.1f s): overhead %.0f %%",
            run$jobs / run$seconds, run$seconds, run$store_mb, run$failed, off$jobs / off$seconds, off$seconds,
            100 * (run$seconds / off$seconds - 1)),
    ">= 2,000 req/s with the store on", run$jobs / run$seconds >= 2000 && run$failed == 0)

# 3. Peak memory of a run of 100,000 answers (10,000 records x 10 repetitions).
run <- screen_run(grow(records, 10000), rpm = 1e7, reps = 10)
row(sprintf("Peak memory (VmHWM) of a run of %s answers", format(run$jobs, big.mark = ",")),
    sprintf("%.0f MB (run %.1f s)", run$peak_mb, run$seconds), "<= 400 MB", run$peak_mb <= 400)

# 4. Arrow round trip R -> Go -> R of 100,000 records with real-length abstracts.
ipc_run <- callr::r(function(libs, data) {
  .libPaths(libs)
  library(tabscreen)
  df <- data.frame(record = seq_len(nrow(data)), title = data$title, abstract = data$abstract,
                   score = stats::runif(nrow(data)), flag = rep(c(TRUE, FALSE, NA), length.out = nrow(data)))
  # The first call of a session also grows R's and Go's heaps; later calls reuse them.
  cold <- system.time(back <- tabscreen:::ipc_roundtrip_go(df))[["elapsed"]]
  warm <- replicate(3, system.time(tabscreen:::ipc_roundtrip_go(df))[["elapsed"]])
  list(rows = nrow(df), mb = sum(nchar(df$abstract, "bytes")) / 2^20, cold = cold, seconds = min(warm),
       identical = isTRUE(all.equal(as.data.frame(back), df, check.attributes = FALSE)))
}, args = list(libs = libs, data = grow(records, 100000)), show = FALSE)
row(sprintf("Arrow round trip R -> Go -> R, %s records (%.0f MB of abstracts)", format(ipc_run$rows, big.mark = ","), ipc_run$mb),
        sprintf("%.2f s warm (best of 3 after the first call); first call of the session %.2f s; identical: %s",
                ipc_run$seconds, ipc_run$cold, ipc_run$identical),
        "<= 1 s", ipc_run$seconds <= 1 && ipc_run$identical)

cat(sprintf("\nMeasured %s on %d cores (%s).\n", format(Sys.time(), "%Y-%m-%d"), parallel::detectCores(), R.version.string))
