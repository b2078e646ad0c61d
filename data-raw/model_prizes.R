# Builds data/model_prizes.rda from data-raw/model_prizes.csv.
# Run from the package root: Rscript data-raw/model_prizes.R
#
# Every row is a published list price (USD per million tokens, standard tier, short prompts) with its
# date and source; nothing is estimated. The batch_* columns are half the standard prices (batch
# processing at all three providers), the flex_* columns half for provider A's GPT-5 and GPT-6
# models (flex processing, priced as batch). To update a price, edit the CSV (price_date = the day the
# source was read) and run this script again.

model_prizes <- utils::read.csv(
  "data-raw/model_prizes.csv",
  colClasses = c(
    provider = "character", model = "character",
    input_per_million = "numeric", cached_input_per_million = "numeric", output_per_million = "numeric",
    cache_write_5m_per_million = "numeric", cache_write_1h_per_million = "numeric",
    long_prompt_above_tokens = "numeric", long_input_per_million = "numeric",
    long_cached_input_per_million = "numeric", long_output_per_million = "numeric",
    batch_input_per_million = "numeric", batch_cached_input_per_million = "numeric",
    batch_output_per_million = "numeric", flex_input_per_million = "numeric",
    flex_cached_input_per_million = "numeric", flex_output_per_million = "numeric",
    price_date = "character", source = "character", notes = "character"
  ),
  na.strings = "",
  encoding = "UTF-8"
)
model_prizes$price_date <- as.Date(model_prizes$price_date)

stopifnot(
  !anyDuplicated(model_prizes[c("provider", "model")]),
  model_prizes$provider %in% c("a", "b", "c"),
  !is.na(model_prizes$input_per_million), !is.na(model_prizes$output_per_million),
  !is.na(model_prizes$price_date), !is.na(model_prizes$source),
  # a long-prompt tier has its threshold and its input and output prices
  is.na(model_prizes$long_prompt_above_tokens) == is.na(model_prizes$long_input_per_million),
  is.na(model_prizes$long_prompt_above_tokens) == is.na(model_prizes$long_output_per_million),
  # batch (all three providers) and flex (provider A) cost half the standard prices
  isTRUE(all.equal(model_prizes$batch_input_per_million, model_prizes$input_per_million / 2)),
  isTRUE(all.equal(model_prizes$batch_output_per_million, model_prizes$output_per_million / 2)),
  is.na(model_prizes$flex_input_per_million) | model_prizes$provider == "a"
)

model_prizes <- tibble::as_tibble(model_prizes)
save(model_prizes, file = "data/model_prizes.rda", compress = "xz", version = 3)
