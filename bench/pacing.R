# Token-rate pacing (issue 11): a screening against the local fake provider enforcing 200,000
# tokens per minute (and answering after a lognormal latency, median 250 ms), with rpm = 5000.
# The engine learns the token limit from the fake's rate-limit headers (PACING_TPM_OPTION=1 sets
# options(tabscreen.tpm = 200000) instead). Measured where the provider sees it: the tokens it
# counted (prompt and completion of every request it admitted) against the most it allows between
# the first and the last arrival (one minute's tokens at once, then 200,000 a minute), and the
# requests it refused. Prints a markdown table; record it in bench/README.md.
#
# Command: R_LIBS=$PWD/.rlib Rscript bench/pacing.R   (about 3 minutes; PACING_RECORDS, default 1100)
library(tabscreen)

tpm <- 200000
n <- as.integer(Sys.getenv("PACING_RECORDS", "1100"))
use_option <- identical(Sys.getenv("PACING_TPM_OPTION"), "1")
source("bench/records.R")
records <- grow(load_abstracts(), n)

options(tabscreen.store = tempfile(fileext = ".sqlite"))
if (use_option) options(tabscreen.tpm = tpm)
fake <- tabscreen:::fake_provider_start(tpm = tpm, latency_median_ms = 250, latency_sigma = 0.5, seed = 1)
Sys.setenv(PROVIDER_A_API_KEY = "sk-bench")
load <- if (file.exists("/proc/loadavg")) paste(utils::head(strsplit(readLines("/proc/loadavg"), " ")[[1]], 3), collapse = " ") else "?"

t0 <- Sys.time()
res <- tabscreen_a.tools(records, prompt = "Is this study about Functional Family Therapy for young people who use drugs?",
                         title = "title", abstract = "abstract", api_url = fake$url, rpm = 5000,
                         progress = FALSE, messages = FALSE)
elapsed <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
st <- fake$stats()
fake$stop()

span <- (st$last_request_unix - st$first_request_unix) / 60 # minutes between the first and last arrival
allowed <- tpm + tpm * span
refused <- sum(unlist(st$refused_by_cause))
steady <- (st$tokens_counted - tpm) / span / tpm # the rate after the first minute's tokens
answered <- nrow(res$answer_data)
failed <- if (is.null(res$error_data)) 0L else nrow(res$error_data)

cat(sprintf("%d records; token limit %s; load average %s\n", n,
            if (use_option) "from options(tabscreen.tpm)" else "learned from the headers", load))
cat("| Measurement | Result | Target | |\n|---|---|---|---|\n")
cat(sprintf("| Tokens counted by the fake / most it allows over %.2f min (%s + %s per minute) | %s / %s = %.3f | >= 0.95 | %s |\n",
            span, format(tpm, big.mark = ",", scientific = FALSE), format(tpm, big.mark = ",", scientific = FALSE), format(st$tokens_counted, big.mark = ","),
            format(round(allowed), big.mark = ","), st$tokens_counted / allowed,
            if (st$tokens_counted / allowed >= 0.95) "met" else "MISSED"))
cat(sprintf("| Rate after the first minute's tokens | %.3f of %s tokens per minute | | |\n", steady, format(tpm, big.mark = ",", scientific = FALSE)))
cat(sprintf("| Refused requests (429) / all requests | %d / %d = %.2f %% (tokens %d, requests %d, concurrency %d) | <= 1 %% | %s |\n",
            refused, st$requests_total, 100 * refused / st$requests_total, st$refused_by_cause$tokens,
            st$refused_by_cause$requests, st$refused_by_cause$concurrency,
            if (refused <= 0.01 * st$requests_total) "met" else "MISSED"))
cat(sprintf("| Jobs answered / failed; whole call from R | %d / %d; %.1f s | every job answered | %s |\n",
            answered, failed, elapsed, if (answered == n) "met" else "MISSED"))
