# Adaptive repetitions against the full run: requests sent and verdicts that differ, on the fake's
# per-record answer model (bench/README.md, "The fake's answer model"). Every screening asks the
# same fake with the same seed, reset before each run, so that a record's k-th answer is the same
# in every run: the full run's verdict is what an adaptive run is compared with.
# R_LIBS=$PWD/.rlib Rscript bench/adaptive.R   (BENCH_ADAPTIVE_RECORDS, default 2000; BENCH_SEED)
library(tabscreen)
`%||%` <- function(x, y) if (is.null(x)) y else x
source("bench/records.R")
n_records <- as.integer(Sys.getenv("BENCH_ADAPTIVE_RECORDS", "2000"))
records <- numbered_records(n_records)
seed <- as.integer(Sys.getenv("BENCH_SEED", "11"))

# No answer store: each run asks anew instead of taking the last run's answers.
options(tabscreen.store = FALSE)
Sys.setenv(PROVIDER_A_API_KEY = "sk-bench-adaptive")
fake <- fake_provider(seed = seed, tendency = TRUE)
on.exit(fake$stop(), add = TRUE)

screen <- function(cutoffs, adaptive = NULL) {
  fake$reset()
  args <- c(list(records, prompt = "Is this study about friendship?", studyid = "studyid", title = "title",
    abstract = "abstract", api_url = fake$url, reps = 10, rpm = 1e7, progress = FALSE, messages = FALSE), cutoffs)
  res <- if (is.null(adaptive)) {
    do.call(tabscreen_a.tools, args)
  } else {
    do.call(screen_adaptive, c(list(tabscreen_a.tools), args, adaptive))
  }
  agg <- res$answer_data_aggregated
  list(requests = fake$stats()$requests_total, verdict = stats::setNames(agg$final_decision_llm, agg$studyid))
}

# The same rule knowing the fake's own mixture (the default of tendency = TRUE, bench/README.md)
# instead of fitting it: its expected share of requests and of verdicts that differ, computed over
# every sequence of answers (no sampling). No rule that stops a record only when its chance of
# changing is below `level` can do better on this mixture.
known_mixture <- function(level, upper = 0.1, lower = upper, reps = 10) {
  p <- (seq_len(4000) - 0.5) / 4000
  density <- 0.7 * stats::dbeta(p, 0.3, 12) + 0.1 * stats::dbeta(p, 12, 0.3) + 0.2 * stats::dbeta(p, 1.5, 1.5)
  verdict <- function(incl_p) ifelse(incl_p >= upper - 1e-9, 2, ifelse(incl_p >= lower - 1e-9, 1, 0))
  posterior <- function(n, k) {
    w <- density * p^k * (1 - p)^(n - k)
    w / sum(w)
  }
  change <- function(n, k) {
    left <- reps - n
    x <- 0:left
    ahead <- colSums(posterior(n, k) * outer(p, x, function(p, x) stats::dbinom(x, left, p)))
    sum(ahead[verdict((k + x) / reps) != verdict(k / n)])
  }
  reach <- matrix(0, reps + 1, reps + 1)   # reach[n + 1, k + 1]: P(a record gets k includes of n answers)
  reach[1, 1] <- 1
  sent <- 0
  differ <- 0
  for (n in 0:(reps - 1)) for (k in 0:n) {
    at <- reach[n + 1, k + 1]
    if (at == 0) next
    if (n > 0) {
      ch <- change(n, k)
      if (ch < level) {
        differ <- differ + at * ch
        next
      }
    }
    sent <- sent + at
    q <- if (n == 0) sum(density * p) / sum(density) else sum(posterior(n, k) * p)
    reach[n + 2, k + 2] <- reach[n + 2, k + 2] + at * q
    reach[n + 2, k + 1] <- reach[n + 2, k + 1] + at * (1 - q)
  }
  c(requests = sent / reps, differ = differ)
}

row <- function(what, requests, full, differ, target, ok) {
  cat(sprintf("| %s | %s requests (%.3f of the full run); %d of %d verdicts differ (%.2f %%) | %s | %s |\n",
    what, format(requests, big.mark = ","), requests / full, differ, n_records, 100 * differ / n_records, target,
    if (is.na(ok)) "reported" else if (ok) "met" else "MISSED"))
}

cat(sprintf("\n%d records x reps 10, fake seed %d with tendency = TRUE, provider A\n\n", n_records, seed))
cat("| Run | Result | Target | |\n|---|---|---|---|\n")
bands <- list(`the spec's cut-offs` = list(), `cut-offs 0.2 and 0.8` = list(incl_cutoff_lower = 0.2, incl_cutoff_upper = 0.8),
  `a majority (upper cut-off 0.5)` = list(incl_cutoff_upper = 0.5))
for (band in names(bands)) {
  full <- screen(bands[[band]])
  cat(sprintf("| Full run, %s | %s requests; %s | | |\n", band, format(full$requests, big.mark = ","),
    paste(names(table(full$verdict)), table(full$verdict), collapse = ", ")))
  differ <- function(run) sum(run$verdict[names(full$verdict)] != full$verdict)
  exact <- screen(bands[[band]], list(rule = "exact"))
  row(paste("Adaptive, exact,", band), exact$requests, full$requests, differ(exact), "0 verdicts differ", differ(exact) == 0)
  for (level in c(0.001, 0.01, 0.05)) {
    stat <- screen(bands[[band]], list(rule = "statistical", level = level))
    target <- if (level == 0.01) "<= 0.35 of the requests, <= 1 % differ" else "reported"
    ok <- if (level == 0.01) stat$requests / full$requests <= 0.35 && differ(stat) <= 0.01 * n_records else NA
    row(sprintf("Adaptive, statistical at %g %%, %s", 100 * level, band), stat$requests, full$requests, differ(stat), target, ok)
    cut <- bands[[band]]
    bound <- known_mixture(level, cut$incl_cutoff_upper %||% 0.1, cut$incl_cutoff_lower %||% (cut$incl_cutoff_upper %||% 0.1))
    cat(sprintf("| The same rule knowing the mixture, at %g %%, %s (expected) | %.3f of the requests; %.2f %% of verdicts differ | | |\n",
      100 * level, band, bound[["requests"]], 100 * bound[["differ"]]))
  }
}
cat(sprintf("\nMeasured %s on %s\n", format(Sys.time(), "%Y-%m-%d %H:%M"), R.version.string))
