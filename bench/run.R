# make bench: the performance targets of issue 9, measured end to end from R against the local
# fake provider. Each measurement is one screening in a fresh R process (the first call of a
# session is what a user waits for, and peak memory is then its own), repeated and reported as the
# median of the repeats (BENCH_REPEATS, default 3): the machine is shared and noisy.
# Prints a markdown table; record it, with the date and the machine's load, in bench/README.md.
libs <- .libPaths()
repeats <- as.integer(Sys.getenv("BENCH_REPEATS", "3"))
big_records <- as.integer(Sys.getenv("BENCH_BIG_RECORDS", "100000"))
# BENCH_ONLY=zero,ceiling,million,arrow,tokens runs some of the measurements (all by default).
only <- strsplit(Sys.getenv("BENCH_ONLY", "zero,ceiling,million,arrow,tokens"), ",")[[1]]
# The token pacing measurement's records (about 3 minutes at 200,000 tokens per minute), and the
# fake's ways of counting tokens it runs (BENCH_TOKEN_MODES, default bucket,window,second).
token_records <- as.integer(Sys.getenv("BENCH_TOKEN_RECORDS", "760"))

load_average <- function() {
  if (!file.exists("/proc/loadavg")) return("?")
  paste(utils::head(strsplit(readLines("/proc/loadavg"), " ")[[1]], 3), collapse = " ")
}

row <- function(what, value, target, ok) {
  cat(sprintf("| %s | %s | %s | %s |\n", what, value, target, if (ok) "met" else "MISSED"))
}

source("bench/records.R")
records <- load_abstracts()
cat(sprintf("records for the bench: %d distinct, mean abstract %.0f characters; %d repeats; load average %s\n",
            nrow(records), mean(nchar(records$abstract)), repeats,
            load_average()))

# One screening in a fresh R process against a fake provider started with `fake`, with a fresh
# answer store in a temporary file (a user's default): the jobs, the provider's counters, the
# elapsed time and the process's peak memory (VmHWM: R, Go and C together).
screen_run <- function(data, fake = list(), ...) {
  callr::r(function(libs, data, fake, args) {
    .libPaths(libs)
    library(tabscreen)
    options(tabscreen.store = tempfile(fileext = ".sqlite"))
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
         peak_mb = as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", status, value = TRUE))) / 1024)
  }, args = list(libs = libs, data = data, fake = fake, args = list(...)), show = FALSE)
}

# The median of a measure over the repeats, and the values themselves.
summarise_runs <- function(values, fmt) {
  each <- paste(vapply(values, function(v) sprintf(fmt, v), character(1)), collapse = ", ")
  sprintf(paste0(fmt, " (median of %d: %s)"), stats::median(values), length(values), each)
}

cat("\n| Measurement | Result | Target | |\n|---|---|---|---|\n")

if ("zero" %in% only) {
  # 1. Zero latency, 10,000 jobs, store on, the first screening of a fresh session.
  runs <- replicate(repeats, screen_run(grow(records, 10000), rpm = 1e7), simplify = FALSE)
  rate <- vapply(runs, function(r) r$jobs / r$seconds, numeric(1))
  failed <- sum(vapply(runs, function(r) r$failed, numeric(1)))
  row("Zero latency, 10,000 jobs, store on, first call of a fresh session",
      paste(summarise_runs(rate, "%.0f req/s"), sprintf("; %d failed", failed)),
      "reported; >= 3,000 req/s", stats::median(rate) >= 3000 && failed == 0)

}

if ("ceiling" %in% only) {
  # 2. Throughput at a 12,000 rpm ceiling with 250 ms lognormal latency, 6,000 jobs: the achieved rate
  # where the provider sees it (first to last arrival) and end to end from R.
  rpm <- 12000
  runs <- replicate(repeats, screen_run(grow(records, 6000), fake = list(rpm = rpm, latency_median_ms = 250, latency_sigma = 0.5),
                                        rpm = rpm), simplify = FALSE)
  at_provider <- vapply(runs, function(r) (r$stats$requests_total - 1) / (r$stats$last_request_unix - r$stats$first_request_unix) / (rpm / 60), numeric(1))
  end_to_end <- vapply(runs, function(r) r$jobs / r$seconds / (rpm / 60), numeric(1))
  refused <- sum(vapply(runs, function(r) r$stats$refused_rate + r$stats$refused_concurrency, numeric(1)))
  row("Ceiling 12,000 rpm, 250 ms lognormal latency, 6,000 jobs",
      sprintf("at the provider %s; end to end %s; %d refused", summarise_runs(at_provider, "%.3f"),
              summarise_runs(end_to_end, "%.3f"), refused),
      ">= 0.99 at the provider, >= 0.97 end to end, 0 refused",
      stats::median(at_provider) >= 0.99 && stats::median(end_to_end) >= 0.97 && refused == 0)

}

if ("million" %in% only) {
  # 3. A million jobs (100,000 records x 10 reps) against 100,000 (10,000 x 10), store on: peak memory
  # and time per job.
  small <- replicate(repeats, screen_run(grow(records, big_records / 10), rpm = 1e7, reps = 10), simplify = FALSE)
  big <- replicate(repeats, screen_run(grow(records, big_records), rpm = 1e7, reps = 10), simplify = FALSE)
  per_job <- function(runs) vapply(runs, function(r) 1e6 * r$seconds / r$jobs, numeric(1))
  peak <- vapply(big, function(r) r$peak_mb, numeric(1))
  ratio <- stats::median(per_job(big)) / stats::median(per_job(small))
  row(sprintf("%s jobs (%s records x 10 reps), store on", format(big[[1]]$jobs, big.mark = ","), format(big_records, big.mark = ",")),
      sprintf("peak RSS %s; %s per job against %s for %s jobs (ratio %.2f)", summarise_runs(peak, "%.0f MB"),
              summarise_runs(per_job(big), "%.0f us"), summarise_runs(per_job(small), "%.0f us"),
              format(small[[1]]$jobs, big.mark = ","), ratio),
      "<= 1 GB, time per job within 10 %", stats::median(peak) <= 1024 && ratio <= 1.10)

}

if ("arrow" %in% only) {
  # 4. Arrow round trip R -> Go -> R of 100,000 records with real-length abstracts: the first call of a
  # session, and warm (the median of three calls after it).
  ipc_run <- function(data) {
    callr::r(function(libs, data) {
      .libPaths(libs)
      library(tabscreen)
      df <- data.frame(record = seq_len(nrow(data)), title = data$title, abstract = data$abstract,
                       score = stats::runif(nrow(data)), flag = rep(c(TRUE, FALSE, NA), length.out = nrow(data)))
      # TsRoundTrip, a test-only export of the core (golib/cabi/testonly.go): R -> Go -> R.
      Sys.setenv(TABSCREEN_TESTING = "1")
      ipc_roundtrip_go <- function(df) {
        tabscreen:::go_call(tabscreen:::C_ipc_roundtrip_go, tabscreen:::df_to_ipc(df))$table
      }
      cold <- system.time(back <- ipc_roundtrip_go(df))[["elapsed"]]
      warm <- replicate(3, system.time(ipc_roundtrip_go(df))[["elapsed"]])
      # Large text columns come back lazy (src/ipc_lazy.c): R makes a string when it is first read.
      # What reading every title and abstract then costs, once, on a fresh result:
      fresh <- ipc_roundtrip_go(df)
      read_all <- system.time(for (col in c("title", "abstract")) nchar(fresh[[col]], "bytes"))[["elapsed"]]
      list(rows = nrow(df), mb = sum(nchar(df$abstract, "bytes")) / 2^20, cold = cold, warm = stats::median(warm),
           read_all = read_all, identical = isTRUE(all.equal(as.data.frame(back), df, check.attributes = FALSE)))
    }, args = list(libs = libs, data = data), show = FALSE)
}
data <- grow(records, 100000)
runs <- replicate(repeats, ipc_run(data), simplify = FALSE)
cold <- vapply(runs, function(r) r$cold, numeric(1))
warm <- vapply(runs, function(r) r$warm, numeric(1))
read_all <- vapply(runs, function(r) r$read_all, numeric(1))
same <- all(vapply(runs, function(r) r$identical, logical(1)))
row(sprintf("Arrow round trip R -> Go -> R, 100,000 records (%.0f MB of abstracts)", runs[[1]]$mb),
    sprintf("warm %s; first call of a session %s; identical: %s; then reading every string once %s",
            summarise_runs(warm, "%.2f s"), summarise_runs(cold, "%.2f s"), same, summarise_runs(read_all, "%.2f s")),
    "<= 0.5 s warm, <= 1 s first call", stats::median(warm) <= 0.5 && stats::median(cold) <= 1 && same)

}

if ("tokens" %in% only) {
  # 5. Token pacing against a fake enforcing 200,000 tokens per minute, counted in each of its three
  # ways, with 250 ms lognormal latency and rpm = 5000: the limit is learned from the headers (no
  # tabscreen.tpm). The share of the ceiling is the tokens the fake counted over the minutes
  # between its first and last arrival, times the limit; refused are its 429s of any cause.
  tpm <- 200000
  for (mode in strsplit(Sys.getenv("BENCH_TOKEN_MODES", "bucket,window,second"), ",")[[1]]) {
    runs <- replicate(repeats, screen_run(grow(records, token_records),
                                          fake = list(tpm = tpm, tpm_mode = mode, latency_median_ms = 250,
                                                      latency_sigma = 0.5, seed = 1),
                                          rpm = 5000), simplify = FALSE)
    share <- vapply(runs, function(r) {
      r$stats$tokens_counted / (tpm * (r$stats$last_request_unix - r$stats$first_request_unix) / 60)
    }, numeric(1))
    refused <- vapply(runs, function(r) 100 * sum(unlist(r$stats$refused_by_cause)) / r$stats$requests_total, numeric(1))
    minutes <- vapply(runs, function(r) (r$stats$last_request_unix - r$stats$first_request_unix) / 60, numeric(1))
    failed <- sum(vapply(runs, function(r) r$failed, numeric(1)))
    row(sprintf("Tokens, 200,000 a minute counted as \"%s\", learned from the headers, %d records", mode, token_records),
        sprintf("of the ceiling %s; refused %s; over %s; %d failed", summarise_runs(share, "%.3f"),
                summarise_runs(refused, "%.2f %%"), summarise_runs(minutes, "%.2f min"), failed),
        "<= 0.5 % refused, >= 0.95 of the ceiling",
        stats::median(refused) <= 0.5 && stats::median(share) >= 0.95 && failed == 0)
  }
}

cat(sprintf("\nMeasured %s on %d cores (%s); load average after: %s.\n", format(Sys.time(), "%Y-%m-%d %H:%M"),
            parallel::detectCores(), R.version.string, load_average()))
