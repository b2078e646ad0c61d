# make demo [PROVIDER=a]: screens the bundled example references end to end.
# With PROVIDER_A_API_KEY set it uses the real endpoint (and costs a few cents); otherwise it
# starts the local fake provider, which answers in the same protocol with made-up decisions.
suppressPackageStartupMessages(library(tabscreen))
provider <- commandArgs(TRUE)[1]
if (is.na(provider)) provider <- "a"
if (provider != "a") stop("this version of the demo screens with provider A only", call. = FALSE)

prompt <- paste(
  "We are screening studies for a systematic review of Functional Family Therapy (FFT) for young",
  "people in treatment for non-opioid drug use. Include studies that evaluate FFT or a close variant",
  "with young people (11-21 years) who use drugs other than opioids. Exclude everything else."
)
data <- filges2015_dat

key <- Sys.getenv("PROVIDER_A_API_KEY")
if (nzchar(key)) {
  cli::cli_alert_info("{.envvar PROVIDER_A_API_KEY} is set: screening with the real provider A endpoint.")
  api_url <- "https://api.openai.com/v1/chat/completions"
} else {
  fake <- tabscreen:::fake_provider_start(latency_ms = 150)
  on.exit(fake$stop(), add = TRUE)
  Sys.setenv(PROVIDER_A_API_KEY = "sk-demo-fake-provider")
  cli::cli_alert_warning(c(
    "{.envvar PROVIDER_A_API_KEY} is not set: screening against the LOCAL FAKE provider at ",
    "{.url {fake$base_url}}. Its decisions are random, not a model's."
  ))
  api_url <- fake$url
}

result <- tabscreen_a.tools(
  data, prompt = prompt, title = title, abstract = abstract, studyid = studyid,
  api_url = api_url, reps = 3, rpm = 5000
)
print(result)
cat("\nAggregated decisions against the human decisions (human_code: 1 = included):\n")
agg <- result$answer_data_aggregated
print(table(llm = agg$final_decision_llm, human = agg$human_code))
cat("\nFirst aggregated rows:\n")
print(agg[, c("studyid", "incl_p", "final_decision_llm", "reps", "n_mis_answers", "submodel")], n = 8)
