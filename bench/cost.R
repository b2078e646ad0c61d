# The cost table of README.md ("Cost"): the price of screening 1,000 records like those of
# filges2015_dat, at reps 1 and 10, for providers A, B and C (their default models), with the
# prompt cache off (options(tabscreen.cache = FALSE): every request sent as soon as it can, no
# cache keys or breakpoints, as before issue 11) and on (the default). Prices are those of
# model_prizes applied to the usage the local fake provider reports, whose prompt cache behaves
# as each provider documents (golib/fakeprovider/cache.go); a real provider's cache may hit less
# often. Run with the package installed: Rscript bench/cost.R. Prints a markdown table.
library(tabscreen)

# A screening prompt of the usual kind: the review question and its criteria (about 700 tokens).
prompt <- paste(
  "We are screening titles and abstracts for a systematic review of Functional Family Therapy (FFT)",
  "for young people in treatment for non-opioid drug use.",
  "Population: young people aged 11 to 21 who use non-opioid drugs (cannabis, stimulants, alcohol",
  "together with other drugs) and are in treatment for it, in any setting, referred by any agency.",
  "Intervention: Functional Family Therapy as developed by Alexander and colleagues, delivered to the",
  "young person and the family, in any format and of any length, with or without adaptations.",
  "Comparison: any other treatment, treatment as usual, a waiting list or no treatment.",
  "Outcomes: drug use, family functioning, criminal behaviour, school attendance, mental health.",
  "Designs: randomised controlled trials, quasi-randomised trials and controlled studies with a",
  "comparison group; not case studies, reviews, commentaries or studies without a comparison.",
  "Include a record when it may meet all criteria; when the abstract is missing or unclear on a",
  "criterion, prefer to include, so that the full text can be checked.",
  "Exclude a record only when it clearly fails at least one criterion: a population that is not",
  "young people or does not use drugs, an intervention other than FFT or a family therapy that is",
  "not FFT (for example multisystemic therapy or brief strategic family therapy, unless FFT is one",
  "of the arms), or a design without any comparison group.",
  "Studies of the dissemination, training or fidelity of FFT are included only when they report",
  "outcomes of young people compared with another group.",
  "Conference abstracts and dissertations are judged like articles.",
  paste(rep("Answer by calling the function; do not explain outside it.", 4), collapse = " "),
  collapse = " "
)
prompt <- paste(rep(prompt, 2), collapse = " ") # criteria and their elaboration, as real prompts have

records <- filges2015_dat
per <- 1000 / nrow(records)
Sys.setenv(PROVIDER_A_API_KEY = "sk-bench-cost", PROVIDER_B_API_KEY = "sk-ant-bench-cost",
  PROVIDER_C_API_KEY = "c-bench-cost")
options(tabscreen.store = FALSE)

# Each provider's screening function and where the fake serves it.
screening <- list(
  A = list(fun = tabscreen_a.tools, url = function(fake) fake$url),
  B = list(fun = tabscreen_b, url = function(fake) fake$url_b),
  C = list(fun = tabscreen_c, url = function(fake) fake$url_c)
)
# One screening, synchronous or through the provider's batch API (screen_batch()).
screen <- function(provider, fake, reps, batch) {
  s <- screening[[provider]]
  args <- list(records, prompt, title = quote(title), abstract = quote(abstract), api_url = s$url(fake),
    reps = reps, progress = FALSE, messages = FALSE, force = TRUE)
  if (batch) do.call(screen_batch, c(list(s$fun), args)) else do.call(s$fun, args)
}
models <- c(A = "gpt-6-luna", B = "claude-haiku-5-5", C = "mistral-small-latest")

# One screening against a fresh fake (its cache empty), answering after 200 ms, so that requests
# sent together are in flight together, as with a real provider.
measure <- function(provider, reps, cache, batch = FALSE) {
  # The fake answers a batch's lines one after the other, so a batch is run without the latency.
  fake <- tabscreen:::fake_provider_start(latency_ms = if (batch) 0 else 200, seed = 11, prompt_cache = TRUE,
    batches = TRUE)
  on.exit(fake$stop())
  old <- options(tabscreen.cache = cache)
  on.exit(options(old), add = TRUE)
  res <- screen(provider, fake, reps, batch)
  stopifnot(is.null(res$error_data))
  cache_figures <- attr(res$price_data, "cache")
  list(price = res$price_dollar * per, prompt_tokens = sum(res$answer_data$prompt_tokens),
    cached = sum(cache_figures$cached_input_tokens), written = sum(cache_figures$cache_write_tokens))
}

cat(sprintf("%d records of filges2015_dat (mean abstract %.0f characters), prompt %d characters; %s\n\n",
  nrow(records), mean(nchar(records$abstract), na.rm = TRUE), nchar(prompt), format(Sys.time(), "%Y-%m-%d")))
cat("| Provider (model) | reps | synchronous today (cache off) | synchronous with caching | cut | cached share of input | batch | batch with caching |\n")
cat("|---|---|---|---|---|---|---|---|\n")
for (p in names(screening)) {
  for (reps in c(1, 10)) {
    off <- measure(p, reps, FALSE)
    on <- measure(p, reps, TRUE)
    batch_off <- measure(p, reps, FALSE, batch = TRUE)
    batch_on <- measure(p, reps, TRUE, batch = TRUE)
    cat(sprintf("| %s (%s) | %d | $%.3f | $%.3f | %.0f %% | %.0f %% | $%.3f | $%.3f |\n",
      p, models[[p]], reps, off$price, on$price, 100 * (1 - on$price / off$price),
      100 * (on$cached + on$written) / on$prompt_tokens, batch_off$price, batch_on$price))
  }
}
