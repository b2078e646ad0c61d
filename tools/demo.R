# make demo [PROVIDER=a|b|c]: screens the bundled example references end to end.
# With the provider's key set (PROVIDER_A_API_KEY, PROVIDER_B_API_KEY or PROVIDER_C_API_KEY) it
# uses the real endpoint (and costs a few cents); otherwise it starts the local fake provider,
# which answers in the same protocol with made-up decisions.
suppressPackageStartupMessages(library(tabscreen))
provider <- tolower(commandArgs(TRUE)[1])
if (is.na(provider)) provider <- "a"
if (!provider %in% c("a", "b", "c")) stop("PROVIDER must be a, b or c", call. = FALSE)
screen <- list(a = "tabscreen_a.tools", b = "tabscreen_b", c = "tabscreen_c")[[provider]]
real_url <- list(a = "https://api.openai.com/v1/chat/completions", b = "https://api.anthropic.com",
                 c = "https://api.mistral.ai/v1/chat/completions")[[provider]]
key_var <- paste0("PROVIDER_", toupper(provider), "_API_KEY")

prompt <- paste(
  "We are screening studies for a systematic review of Functional Family Therapy (FFT) for young",
  "people in treatment for non-opioid drug use. Include studies that evaluate FFT or a close variant",
  "with young people (11-21 years) who use drugs other than opioids. Exclude everything else."
)
data <- filges2015_dat

if (nzchar(Sys.getenv(key_var))) {
  cli::cli_alert_info("{.envvar {key_var}} is set: screening with the real provider {toupper(provider)} endpoint.")
  api_url <- real_url
} else {
  fake <- fake_provider(latency_ms = 150)
  on.exit(fake$stop(), add = TRUE)
  do.call(Sys.setenv, stats::setNames(list("sk-demo-fake-provider"), key_var))
  api_url <- list(a = fake$url, b = fake$url_b, c = fake$url_c)[[provider]]
  # Made-up answers do not belong in the user's answer store; this one outlives the demo, for the
  # review below.
  options(tabscreen.store = file.path(dirname(tempdir()), "tabscreen-demo.sqlite"))
  cli::cli_alert_warning(c(
    "{.envvar {key_var}} is not set: screening against the LOCAL FAKE provider at ",
    "{.url {api_url}}. Its decisions are random, not a model's."
  ))
}

result <- do.call(screen, list(
  data, prompt = prompt, title = "title", abstract = "abstract", studyid = "studyid",
  api_url = api_url, reps = 3, rpm = 5000, decision_description = TRUE,
  # One include in three answers is a Check, for a human to decide (screen_review() below).
  incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.3
))
print(result)
cat("\nAggregated decisions against the human decisions (human_code: 1 = included):\n")
agg <- result$answer_data_aggregated
print(table(llm = agg$final_decision_llm, human = agg$human_code))
cat("\nFirst aggregated rows:\n")
print(agg[, c("studyid", "incl_p", "final_decision_llm", "reps", "n_mis_answers", "submodel")], n = 8)
cat("\nThe screening against the human decisions:\n")
print(screen_analyzer(result, human_decision = human_code))
cat("\nThe run in the answer store (", attr(result, "store")$path, "):\n", sep = "")
print(screen_store()[c("run_id", "status", "jobs", "answered", "failed", "price_dollar")])
saved <- file.path(dirname(tempdir()), "tabscreen-demo-result.rds")
saveRDS(result, saved)
cat("\nTo decide the Check records and audit 20 of the Excludes yourself, in the browser:\n")
cat(sprintf('  R_LIBS=%s R -q -e \'library(tabscreen); res <- readRDS("%s"); d <- screen_review(res, human_decision = human_code, audit = 20, seed = 1)\'\n',
  Sys.getenv("R_LIBS"), saved))

# Batch screening (screen_batch()): the same screening through the provider's batch API, at half the
# price. Always against the local fake (a real batch can take hours), whose batches end at once;
# a few of its lines fail, expire or go missing, and are submitted again.
cat("\nBatch screening of the same references through the LOCAL FAKE provider's batch API:\n")
batch_fake <- fake_provider(batches = TRUE, batch_fail = 0.05, batch_expire = 0.03, batch_vanish = 0.02)
on.exit(batch_fake$stop(), add = TRUE)
old_key <- Sys.getenv(key_var, NA)
do.call(Sys.setenv, stats::setNames(list("sk-demo-fake-provider"), key_var))
old_store <- options(tabscreen.store = tempfile("tabscreen-demo-batch-", fileext = ".sqlite"))
batch_url <- list(a = batch_fake$url, b = batch_fake$url_b, c = batch_fake$url_c)[[provider]]
batch_args <- list(data, prompt = prompt, title = "title", abstract = "abstract", studyid = "studyid",
  api_url = batch_url, reps = 1, messages = FALSE)
batched <- do.call(screen_batch, c(list(get(screen)), batch_args))
standard <- do.call(screen, c(batch_args, progress = FALSE))
cat(sprintf("%d answers, %d failed; price %.5f USD in batches against %.5f USD one request at a time.\n",
  nrow(batched$answer_data), NROW(batched$error_data), sum(batched$price_data$total_price_dollar),
  sum(standard$price_data$total_price_dollar)))
st <- batch_fake$stats()$batch
cat(sprintf("The fake received %d lines in %d batches: %d failed, %d expired, %d went missing, and were sent again.\n",
  st$lines_received, st$created, st$lines_failed, st$lines_expired, st$lines_vanished))
print(screen_store_batches(batched)[c("provider_id", "state", "collected", "lines", "done", "failed")])
options(old_store)
if (is.na(old_key)) Sys.unsetenv(key_var) else do.call(Sys.setenv, stats::setNames(list(old_key), key_var))
