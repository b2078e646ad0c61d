#' Prices of the models of providers A, B and C
#'
#' List prices in US dollars per million tokens (standard tier, short prompts) of the current
#' models of the three providers, with the date each price was read and its source. The screening
#' functions take a model's prices from here to estimate the price before a run and to report it
#' after; a model that is not listed needs `custom_model = TRUE` (its price is then `NA`) or a
#' price row of your own:
#'
#' ```
#' options(tabscreen.model_prizes = data.frame(
#'   model = "my-model", input_per_million = 0.1, output_per_million = 0.5
#' ))
#' ```
#'
#' Rows of that option (columns `model`, `input_per_million`, `output_per_million`, optionally
#' `cached_input_per_million`, `cache_write_per_million` and `provider`) come before the rows of
#' this table, so they also correct a price that has changed. Prices move often: check the
#' providers' price pages.
#'
#' Batch processing costs 50% of these prices at all three providers. Some models have a
#' long-prompt tier: provider A charges twice the input price and 1.5 times the output price for
#' whole requests over 272K input tokens (GPT-6 and GPT-5.6 models), and provider B's
#' `claude-haiku-5-5` prices hold for prompts up to 100K tokens (above: input 0.50, cache read
#' 0.05, output 2.50). The `long_*` columns hold these tiers; the screening functions, whose
#' prompts are far shorter, use the standard prices.
#'
#' @format A tibble with one row per model and 20 columns:
#' \describe{
#'   \item{provider}{`"a"` (the OpenAI Chat Completions API), `"b"` (Anthropic Messages) or
#'     `"c"` (Mistral chat completions).}
#'   \item{model}{The model name, as sent in requests.}
#'   \item{input_per_million}{Price of one million input (prompt) tokens.}
#'   \item{cached_input_per_million}{Price of one million input tokens read from the provider's
#'     prompt cache (provider B: cache reads); `NA` when not recorded. Provider C's is a tenth of
#'     the input price, as its prompt cache is billed (see `notes`).}
#'   \item{output_per_million}{Price of one million output (completion) tokens, reasoning
#'     included.}
#'   \item{cache_write_5m_per_million, cache_write_1h_per_million}{Provider B: price of one
#'     million tokens written to the prompt cache for 5 minutes or 1 hour. The screening price
#'     counts cache writes at the 5-minute price (the protocol's default). Provider A's GPT-5.6 and
#'     GPT-6 models bill the cache writes they report (`cache_write_tokens`) at 1.25 times the input
#'     price, in `cache_write_5m_per_million`.}
#'   \item{long_prompt_above_tokens}{Where the model has a long-prompt tier: the input tokens of a
#'     request above which the whole request is priced at the `long_*` prices; `NA` otherwise.}
#'   \item{long_input_per_million, long_cached_input_per_million, long_output_per_million}{The
#'     long-prompt tier's prices (`NA` when the model has no tier or the price is not published).}
#'   \item{batch_input_per_million, batch_cached_input_per_million, batch_output_per_million}{The
#'     batch prices: half the standard prices at all three providers.}
#'   \item{flex_input_per_million, flex_cached_input_per_million, flex_output_per_million}{Provider
#'     A's flex processing prices (`service_tier = "flex"`, priced as batch) for the GPT-5 and GPT-6
#'     models; `NA` where flex is not offered. A screening with `service_tier = "flex"` in `...` is
#'     priced at these.}
#'   \item{price_date}{The date the price was read (`Date`).}
#'   \item{source}{Where the price was read.}
#'   \item{notes}{Aliases, long-prompt tiers and surcharges.}
#' }
#' @source The providers' price and model pages (developers.openai.com, platform.claude.com,
#'   the model cards of `mistralai/platform-docs-public`) as read on `price_date`; older
#'   provider A models from the price table of the R package AIscreenR (M. H. Vembye & T. Olsen,
#'   prices of 18 March 2026). Built by `data-raw/model_prizes.R` from `data-raw/model_prizes.csv`.
#' @examples
#' model_prizes[model_prizes$provider == "a", c("model", "input_per_million", "output_per_million")]
"model_prizes"

#' Titles and abstracts screened for a Campbell review of Functional Family Therapy
#'
#' 270 references from the searches of Filges, Andersen & Jørgensen (2015), *Functional Family
#' Therapy (FFT) for Young People in Treatment for Non-opioid Drug Use: A Systematic Review*: all
#' 90 references the review's screeners included at the title and abstract stage, and 180
#' randomly sampled excluded references (seed 20092023). Real bibliographic records with the
#' human screening decisions, for trying and benchmarking screenings.
#'
#' @format A tibble with 270 rows and 6 columns:
#' \describe{
#'   \item{author}{Authors.}
#'   \item{eppi_id}{The record's id in EPPI-Reviewer (character).}
#'   \item{studyid}{1 to 270: 1-180 are the excluded references, 181-270 the included ones.}
#'   \item{title}{Title.}
#'   \item{abstract}{Abstract; missing for 28 references.}
#'   \item{human_code}{The human decision: 1 included, 0 excluded.}
#' }
#' @source The data set `filges2015_dat` of the R package AIscreenR by Mikkel H. Vembye and
#'   Thomas Olsen (GPL (>= 3), \url{https://github.com/MikkelVembye/AIscreenR}), redistributed
#'   under that licence. The review: Filges, T., Andersen, D., & Jørgensen, A.-M. K. (2015).
#'   Campbell Systematic Reviews, 11(1), 1-75. \doi{10.4073/csr.2015.14}.
#' @examples
#' table(filges2015_dat$human_code)
#' sum(is.na(filges2015_dat$abstract))
"filges2015_dat"
