# A cascade of models against each model alone: price and agreement with the strong model alone,
# on the fake's per-record answer model (bench/README.md, "The fake's answer model") with a cheap
# model that answers with a wide spread and a strong one with a narrow one. Every screening asks
# the same fake with the same seed, reset before each run, so that each model's k-th answer about
# a record is the same in every run: the second stage's answers are the strong model's own, and a
# cascade's verdicts differ from the strong model alone only where the first stage decided.
# R_LIBS=$PWD/.rlib Rscript bench/cascade.R   (BENCH_CASCADE_RECORDS, default 2000; BENCH_SEED)
library(tabscreen)
source("bench/records.R")
n_records <- as.integer(Sys.getenv("BENCH_CASCADE_RECORDS", "2000"))
records <- numbered_records(n_records)
seed <- as.integer(Sys.getenv("BENCH_SEED", "11"))

# Two real model names of provider A with their prices in model_prizes: the fake gives each the
# sharpness of the part of its name it contains.
cheap <- "gpt-6-luna"
strong <- "gpt-5.6-sol"
sharpness <- list(luna = 0.6, sol = 2.5)

# No answer store: each run asks anew instead of taking the last run's answers.
options(tabscreen.store = FALSE)
Sys.setenv(PROVIDER_A_API_KEY = "sk-bench-cascade")
fake <- fake_provider(seed = seed, tendency = list(models = sharpness))
on.exit(fake$stop(), add = TRUE)

shared <- list(records, prompt = "Is this study about friendship?", studyid = "studyid", title = "title",
  abstract = "abstract", api_url = fake$url, rpm = 1e7, progress = FALSE, messages = FALSE)
first <- list(tabscreen_a.tools, model = cheap, reps = 5, incl_cutoff_upper = 0.8, incl_cutoff_lower = 0.2)
second <- list(tabscreen_a.tools, model = strong)

outcome <- function(res) {
  agg <- res$answer_data_aggregated
  # Asked once, a record's verdict is its answer (an uncertain one counts as include).
  verdict <- if (is.null(agg)) {
    stats::setNames(ifelse(res$answer_data$decision_binary == 1, "Include", "Exclude"), res$answer_data$studyid)
  } else {
    stats::setNames(ifelse(agg$final_decision_llm == "Exclude", "Exclude", "Include"), agg$studyid)
  }
  list(requests = fake$stats()$requests_total, price = res$price_dollar, verdict = verdict,
    sent = attr(res, "run_info")$cascade$sent, estimate = attr(res, "run_info")$cascade)
}
alone <- function(stage, ...) {
  fake$reset()
  outcome(do.call(stage[[1]], c(shared, stage[-1], list(...))))
}
cascade <- function(...) {
  fake$reset()
  outcome(do.call(screen_cascade, c(list(first = first, second = second), shared, list(...))))
}

majority <- first
majority$incl_cutoff_upper <- 0.5
majority$incl_cutoff_lower <- NULL
runs <- list(
  `Strong alone (gpt-5.6-sol, reps 1)` = alone(second),
  `Cheap alone (gpt-6-luna, reps 5, majority: incl_cutoff_upper 0.5)` = alone(majority),
  `Cheap alone (gpt-6-luna, reps 5, cut-offs 0.8 / 0.2; Check counted as Include)` = alone(first),
  `Cascade, Check records (cut-offs 0.8 / 0.2: incl_p 0.2 to 0.6)` = cascade(),
  `Cascade, band c(0.2, 0.8)` = cascade(band = c(0.2, 0.8)),
  `Cascade, band c(0.4, 0.6)` = cascade(band = c(0.4, 0.6))
)
reference <- runs[[1]]
cat(sprintf("\n%d records, fake seed %d, tendency = list(models = list(luna = 0.6, sol = 2.5)), provider A\n\n",
  n_records, seed))
cat("| Run | Requests | Sent to stage 2 | Price | Price / strong alone | Same verdict as strong alone |\n|---|---|---|---|---|---|\n")
for (name in names(runs)) {
  r <- runs[[name]]
  same <- sum(r$verdict[names(reference$verdict)] == reference$verdict)
  cat(sprintf("| %s | %s | %s | $%.4f | %.3f | %s of %s (%.1f %%) |\n", name, format(r$requests, big.mark = ","),
    if (is.null(r$sent)) "" else sprintf("%d (%.1f %%)", r$sent, 100 * r$sent / n_records), r$price,
    r$price / reference$price, format(same, big.mark = ","), format(n_records, big.mark = ","), 100 * same / n_records))
}
est <- runs[[4]]$estimate
cat(sprintf("\nEstimate of the Check cascade's second stage: $%.4f for every record, $%.4f at 20 %%; $%.4f for the %d records sent (%.1f %%), which cost $%.4f.\n",
  est$estimate_all, est$estimate_all * 0.2, est$estimate_second, est$sent, 100 * est$share, est$price[["second"]]))
cat(sprintf("\nMeasured %s on %s\n", format(Sys.time(), "%Y-%m-%d %H:%M"), R.version.string))
