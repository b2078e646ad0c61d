# Batch screening at scale (issue 11): 20,000 jobs through the fake provider's batch API, with 5 % of
# the lines failing and 3 % expiring on their first submission, every job answered once in the end.
# Run with the package installed: Rscript bench/batch.R [provider letter, default a].
suppressPackageStartupMessages(library(tabscreen))
provider <- tolower(commandArgs(TRUE)[1])
if (is.na(provider)) provider <- "a"
screen <- get(list(a = "tabscreen_a.tools", b = "tabscreen_b", c = "tabscreen_c")[[provider]])
key_var <- paste0("PROVIDER_", toupper(provider), "_API_KEY")
do.call(Sys.setenv, stats::setNames(list("sk-bench-batch"), key_var))
options(tabscreen.store = tempfile("bench-batch-", fileext = ".sqlite"))

fake <- tabscreen:::fake_provider_start(batches = TRUE, batch_fail = 0.05, batch_expire = 0.03)
url <- list(a = fake$url, b = fake$url_b, c = fake$url_c)[[provider]]
n <- 2000
reps <- 10
base <- filges2015_dat[rep_len(seq_len(nrow(filges2015_dat)), n), c("title", "abstract")]
base$title <- paste(base$title, seq_len(n))
base$studyid <- seq_len(n)

t0 <- proc.time()[["elapsed"]]
res <- screen_batch(screen, base, prompt = "Is this study about functional family therapy?",
  studyid = studyid, title = title, abstract = abstract, api_url = url, reps = reps,
  progress = FALSE, messages = FALSE)
elapsed <- proc.time()[["elapsed"]] - t0
st <- fake$stats()$batch
keys <- paste(res$answer_data$studyid, res$answer_data$n)
batches <- screen_store_batches(res)
cat(sprintf("provider %s: %d jobs in %.1f s; answered %d (distinct %d), error_data %d\n", provider, n * reps, elapsed,
  nrow(res$answer_data), length(unique(keys)), NROW(res$error_data)))
cat(sprintf("fake: %d batches, %d lines received (%d failed, %d expired on their first submission), %d answered\n",
  st$created, st$lines_received, st$lines_failed, st$lines_expired, st$lines_answered))
cat(sprintf("batches in the store: %s\n", paste(batches$lines, collapse = " + ")))
cat(sprintf("price: %.4f USD (batch rate)\n", sum(res$price_data$total_price_dollar)))
fake$stop()
