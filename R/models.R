# Models: which names are known, their prices, and the rules of each model.
#
# Two tables, both data:
# * prices: the data set `model_prizes` (data-raw/model_prizes.csv), plus any rows the user adds or
#   overrides with options(tabscreen.model_prizes = data.frame(...));
# * rules: inst/extdata/model_rules/<provider>.csv, one row per model of the provider: model,
#   min_cache_tokens (the shortest prompt prefix the provider caches for the model; provider B
#   marks cache breakpoints only where they reach it), notes, and the columns of the provider's own
#   request policy. R does not read those: each row travels to the Go core as it is (column names
#   and text values), where the provider's policy decodes it (golib/provider, next to its adapter).
#   Read once and cached.
# A model is known when it has a price row for the provider. A known model without a rules row (a
# user's price row) is sent what the user gave, like a custom model.

model_cache <- new.env(parent = emptyenv())

model_rules <- function() {
  if (is.null(model_cache$model_rules)) {
    dir <- system.file("extdata", "model_rules", package = "tabscreen", mustWork = TRUE)
    files <- list.files(dir, pattern = "[.]csv$", full.names = TRUE)
    tables <- lapply(files, utils::read.csv, colClasses = "character", na.strings = character(), encoding = "UTF-8")
    generic <- c("model", "min_cache_tokens", "notes")
    rules <- data.frame(
      provider = rep(sub("[.]csv$", "", basename(files)), vapply(tables, nrow, integer(1))),
      model = unlist(lapply(tables, function(t) t$model)),
      min_cache_tokens = as.integer(unlist(lapply(tables, function(t) t$min_cache_tokens))),
      notes = unlist(lapply(tables, function(t) t$notes)),
      stringsAsFactors = FALSE
    )
    rules$rules <- unlist(lapply(tables, function(t) {
      own <- t[setdiff(names(t), generic)]
      lapply(seq_len(nrow(own)), function(i) as.list(own[i, , drop = FALSE]))
    }), recursive = FALSE)
    model_cache$model_rules <- rules
  }
  model_cache$model_rules
}

# Each model's rules row as the policy reads it (NULL for a model without one: a custom model, or
# a user's price row).
rules_of <- function(model, provider, custom_model) {
  rules <- model_rules()
  rules <- rules[rules$provider == provider, , drop = FALSE]
  hit <- if (custom_model) rep(NA_integer_, length(model)) else match(model, rules$model)
  lapply(hit, function(i) if (is.na(i)) NULL else rules$rules[[i]])
}

# The price table in use: the bundled data set with the user's rows (option tabscreen.model_prizes)
# taking precedence. Rows of the option without a `provider` column apply to every provider.
price_table <- function(call = rlang::caller_env()) {
  bundled <- as.data.frame(tabscreen::model_prizes)[c(
    "provider", "model", "input_per_million", "cached_input_per_million", "output_per_million",
    "cache_write_5m_per_million", "flex_input_per_million", "flex_cached_input_per_million", "flex_output_per_million",
    "batch_input_per_million", "batch_cached_input_per_million", "batch_output_per_million"
  )]
  bundled$user <- FALSE
  user <- getOption("tabscreen.model_prizes")
  if (is.null(user)) {
    return(bundled)
  }
  user <- check_user_prices(user, call = call)
  keep <- !(bundled$model %in% user$model[is.na(user$provider)] |
    paste(bundled$provider, bundled$model) %in% paste(user$provider, user$model))
  rbind(user, bundled[keep, , drop = FALSE])
}

check_user_prices <- function(user, call) {
  letters <- names(providers())
  fix <- c("i" = "Give a data frame with columns {.field model}, {.field input_per_million} and {.field output_per_million} (USD per million tokens), optionally {.field cached_input_per_million}, {.field cache_write_per_million} (provider B), the batch prices {.field batch_input_per_million}, {.field batch_cached_input_per_million}, {.field batch_output_per_million} and {.field provider} ({.or {.val {letters}}}).")
  if (!is.data.frame(user)) {
    abort_arg(c("The option {.code tabscreen.model_prizes} must be a data frame, not {.obj_type_friendly {user}}.", fix),
      class = "tabscreen_error_model_prizes", arg = "tabscreen.model_prizes", call = call)
  }
  missing_cols <- setdiff(c("model", "input_per_million", "output_per_million"), names(user))
  if (length(missing_cols) > 0) {
    abort_arg(c("The option {.code tabscreen.model_prizes} lacks the column{?s} {.field {missing_cols}}.", fix),
      class = "tabscreen_error_model_prizes", arg = "tabscreen.model_prizes", call = call)
  }
  n <- nrow(user)
  out <- data.frame(
    provider = if (is.null(user$provider)) rep(NA_character_, n) else tolower(as.character(user$provider)),
    model = as.character(user$model),
    input_per_million = suppressWarnings(as.numeric(user$input_per_million)),
    cached_input_per_million = optional_price(user$cached_input_per_million, n),
    output_per_million = suppressWarnings(as.numeric(user$output_per_million)),
    cache_write_5m_per_million = optional_price(user$cache_write_per_million, n),
    flex_input_per_million = rep(NA_real_, n),
    flex_cached_input_per_million = rep(NA_real_, n),
    flex_output_per_million = rep(NA_real_, n),
    # A user's batch prices, when given; else the engine prices batch lines at half the standard.
    batch_input_per_million = optional_price(user$batch_input_per_million, n),
    batch_cached_input_per_million = optional_price(user$batch_cached_input_per_million, n),
    batch_output_per_million = optional_price(user$batch_output_per_million, n),
    user = rep(TRUE, n),
    stringsAsFactors = FALSE
  )
  bad <- is.na(out$model) | !nzchar(out$model) |
    !is_nonneg(out$input_per_million) | !is_nonneg(out$output_per_million) |
    !(is.na(out$cached_input_per_million) | is_nonneg(out$cached_input_per_million)) |
    !(is.na(out$cache_write_5m_per_million) | is_nonneg(out$cache_write_5m_per_million)) |
    !(is.na(out$batch_input_per_million) | is_nonneg(out$batch_input_per_million)) |
    !(is.na(out$batch_cached_input_per_million) | is_nonneg(out$batch_cached_input_per_million)) |
    !(is.na(out$batch_output_per_million) | is_nonneg(out$batch_output_per_million)) |
    !(is.na(out$provider) | out$provider %in% letters)
  if (any(bad)) {
    abort_arg(c("{cli::qty(sum(bad))}Row{?s} {which(bad)} of the option {.code tabscreen.model_prizes} {cli::qty(sum(bad))}{?is/are} not valid.",
      "i" = "Each row needs a model name and prices that are numbers of at least 0.", fix),
      class = "tabscreen_error_model_prizes", arg = "tabscreen.model_prizes", call = call)
  }
  out
}

is_nonneg <- function(x) !is.na(x) & x >= 0

# An optional price column of a user's price table: numbers, or NA where it has none.
optional_price <- function(x, n) if (is.null(x)) rep(NA_real_, n) else suppressWarnings(as.numeric(x))

# Look the models up for a provider. Unknown models are an error unless custom_model is TRUE.
# Returns a data frame, one row per model in the user's order: model, custom, price_in,
# price_cached_in, price_out, price_cache_write (provider B: the 5-minute cache write), the flex
# prices (provider A: price_flex_in, price_flex_cached_in, price_flex_out), min_cache_tokens and
# rules (NA and NULL without a rules row).
lookup_models <- function(model, provider, custom_model, call = rlang::caller_env()) {
  prices <- price_table(call = call)
  prices <- prices[is.na(prices$provider) | prices$provider == provider, , drop = FALSE]
  hit <- match(model, prices$model)
  if (!custom_model && anyNA(hit)) {
    abort_unknown_model(model[is.na(hit)], prices$model, provider, call = call)
  }
  if (custom_model) {
    hit <- rep(NA_integer_, length(model))
  }
  rules <- model_rules()
  rules <- rules[rules$provider == provider, , drop = FALSE]
  rule_hit <- if (custom_model) rep(NA_integer_, length(model)) else match(model, rules$model)
  out <- data.frame(
    model = model,
    custom = custom_model,
    price_in = prices$input_per_million[hit],
    price_cached_in = prices$cached_input_per_million[hit],
    price_out = prices$output_per_million[hit],
    price_cache_write = prices$cache_write_5m_per_million[hit],
    price_flex_in = prices$flex_input_per_million[hit],
    price_flex_cached_in = prices$flex_cached_input_per_million[hit],
    price_flex_out = prices$flex_output_per_million[hit],
    price_batch_in = prices$batch_input_per_million[hit],
    price_batch_cached_in = prices$batch_cached_input_per_million[hit],
    price_batch_out = prices$batch_output_per_million[hit],
    stringsAsFactors = FALSE
  )
  out$min_cache_tokens <- rules$min_cache_tokens[rule_hit]
  out$rules <- rules_of(model, provider, custom_model)
  out
}

abort_unknown_model <- function(unknown, known, provider, call) {
  suggest <- unique(unlist(lapply(unknown, closest_names, candidates = known)))
  label <- toupper(provider)
  tabscreen_abort(
    c("{.arg model}: unknown {cli::qty(unknown)}model{?s} for provider {label}: {.val {unknown}}.",
      if (length(suggest) > 0) c("i" = "Did you mean {.or {.val {suggest}}}?"),
      "i" = "For a fine-tuned, new or local model set {.code custom_model = TRUE}: it is then sent as named, without the model rules, and its price is {.code NA}.",
      "i" = "Or add its prices (USD per million tokens) first: {.code options(tabscreen.model_prizes = data.frame(model = \"{unknown[1]}\", input_per_million = 0.1, output_per_million = 0.5))}.",
      "i" = "The known models and their prices are in {.code tabscreen::model_prizes}."),
    class = c("tabscreen_error_model_unknown", "tabscreen_error_model", "tabscreen_error_arg"),
    arg = "model", call = call
  )
}

# Up to three known names closest to `x` (generalised Levenshtein distance), if they are close.
closest_names <- function(x, candidates, n = 3) {
  if (length(candidates) == 0) {
    return(character())
  }
  d <- drop(utils::adist(x, candidates, ignore.case = TRUE))
  limit <- max(3, ceiling(nchar(x) / 3))
  ok <- which(d <= limit)
  candidates[ok[order(d[ok])]][seq_len(min(n, length(ok)))]
}

# The models of the provider's request policy (golib/provider, next to its adapter), which decides
# each model's request fields (reasoning effort, verbosity, top_p, thinking, a forced or an asked
# tool) in the Go core from the model's rules and the user's arguments (policy_args()), and
# applies the provider's guards on `reps`. A custom model, or a price row without rules, has none.
policy_models <- function(models, reps = rep(1L, length(models$model))) {
  lapply(seq_along(models$model), function(i) {
    list(name = models$model[i], reps = as.integer(reps[i]), rules = models$rules[[i]])
  })
}

# The user's arguments the policy reads. `given` says which of reasoning_effort, verbosity and
# top_p the user passed: a default the model cannot take is adapted or left out, an explicit value
# it cannot take is an argument error. `force` lifts the policy's guards on repetitions.
policy_args <- function(reasoning_effort, verbosity = NULL, top_p = numeric(), given = list(), builtin = TRUE,
                        force = FALSE) {
  list(
    reasoning_effort = reasoning_effort, verbosity = verbosity %||% "", top_p = I(as.numeric(top_p)),
    given = list(reasoning_effort = isTRUE(given$reasoning_effort), verbosity = isTRUE(given$verbosity),
      top_p = isTRUE(given$top_p)),
    builtin = builtin, force = force
  )
}

# The one call into the Go core before a run (TsPlan). `request` has any of: settings (provider,
# models, args), estimate (estimate_request()), cutoffs (incl_cutoff_upper, incl_cutoff_lower) and
# holding (store, options); `ipc` is the records table the estimate and the holding read. Returns
# the core's answer: fields (counts of blank titles and abstracts, their characters), settings or
# settings_error, estimate (sync, no_cache, batch), cutoffs, holding.
plan_core <- function(request, ipc = NULL, call = rlang::caller_env()) {
  go_call(C_plan, as.character(to_json(request)), ipc, simplify = FALSE, call = call)$meta
}

# The price estimate's part of a plan request (screen.Estimate in the Go core): input tokens ~
# characters / 4 of the prompt and the record, plus about 150 tokens of tool schema and framing
# per request; output tokens from the effort that sizes each model's reasoning (from `settings`,
# or from the settings the core decides in the same call). The records and their characters are
# those of the records table sent with it.
estimate_request <- function(prompts, models, reps, n_top_p, decision_description, settings = NULL,
                             cache = engine_cache()) {
  estimate_models <- lapply(seq_len(nrow(models)), function(i) {
    list(name = models$model[i], reps = reps[i], price_in = models$price_in[i], price_out = models$price_out[i],
      price_cached_in = models$price_cached_in[i] %||% NA_real_, price_cache_write = models$price_cache_write[i] %||% NA_real_,
      cache_min_tokens = models$min_cache_tokens[i] %||% NA_integer_, settings = if (!is.null(settings)) settings[[i]],
      price_batch_in = models$price_batch_in[i] %||% NA_real_, price_batch_cached_in = models$price_batch_cached_in[i] %||% NA_real_,
      price_batch_out = models$price_batch_out[i] %||% NA_real_)
  })
  list(prompts = I(prompts), top_p_values = n_top_p, decision_description = decision_description,
    models = estimate_models, cache = cache)
}

# One estimate of a plan's answer as a data frame per model: requests, input and output tokens,
# the price (NA when unknown) and the prompt cache's tokens.
estimate_rows <- function(rows, models) {
  data.frame(
    model = models$model,
    requests = vapply(rows, function(r) r$requests, numeric(1)),
    input_tokens = vapply(rows, function(r) r$input_tokens, numeric(1)),
    output_tokens = vapply(rows, function(r) r$output_tokens, numeric(1)),
    price = vapply(rows, function(r) r$price %||% NA_real_, numeric(1)),
    cached_tokens = vapply(rows, function(r) r$cached_tokens %||% 0, numeric(1)),
    cache_write_tokens = vapply(rows, function(r) r$cache_write_tokens %||% 0, numeric(1)),
    stringsAsFactors = FALSE
  )
}

# Spec section 8 guards of providers B and C: more than 10 repetitions of a model, or an estimated
# price above 15 USD (the models with a known price), are refused unless force = TRUE.
check_force_bc <- function(models, reps, estimate, force, call = rlang::caller_env()) {
  if (force) {
    return(invisible())
  }
  over <- which(reps > 10)
  if (length(over) > 0) {
    model <- models$model[over]
    abort_arg(
      c("{.arg reps}: {reps[over[1]]} repetitions of model {.val {model[1]}} are refused: at most 10 per record without {.code force = TRUE}.",
        "i" = "Set {.code force = TRUE} if you really mean it."),
      class = "tabscreen_error_force", arg = "reps", call = call
    )
  }
  price <- sum(estimate$price, na.rm = TRUE)
  # screen_plan() shows the price rather than refusing it.
  if (price > 15 && !plan_requested()) {
    abort_arg(
      c("The screening is refused: its estimated price, {format_dollars(price)}, is above $15.",
        "i" = "{format_tokens(sum(estimate$requests))} requests, about {format_tokens(sum(estimate$input_tokens))} input and {format_tokens(sum(estimate$output_tokens))} output tokens.",
        "i" = "Screen fewer records, prompts, models or repetitions, or set {.code force = TRUE} if you really mean it."),
      class = "tabscreen_error_force", arg = "force", call = call
    )
  }
  invisible()
}

# Flex processing (provider A, `service_tier = "flex"` through `...`): the models are priced at
# their flex rates; a known model without one is refused before any request.
flex_prices <- function(models, dots, call = rlang::caller_env()) {
  if (!identical(dots$service_tier, "flex")) {
    return(models)
  }
  missing_flex <- models$model[!models$custom & is.na(models$price_flex_in)]
  if (length(missing_flex) > 0) {
    abort_arg(
      c("{.code service_tier = \"flex\"} in {.arg ...}: no flex price is known for {.val {missing_flex}}.",
        "i" = "Flex processing is offered for the GPT-5 and GPT-6 models; leave {.field service_tier} out for the others, or screen them in a separate call."),
      class = c("tabscreen_error_flex", "tabscreen_error_dots"), arg = "...", call = call
    )
  }
  flex <- !is.na(models$price_flex_in)
  models$price_in[flex] <- models$price_flex_in[flex]
  models$price_cached_in[flex] <- models$price_flex_cached_in[flex]
  models$price_out[flex] <- models$price_flex_out[flex]
  models
}

# The estimate of what the call sends (screening_plan(): on a resume, what remains), before the
# first request; shown as show_estimate() says.
inform_estimate <- function(plan, messages) {
  if (!show_estimate(messages)) {
    return(invisible())
  }
  m <- plan$models
  unknown <- m$model[is.na(m$price)]
  price <- sum(if (plan$batch) m$price_batch else m$price, na.rm = TRUE)
  head <- if (!is.na(plan$run_id)) {
    "Screening {plan$records} record{?s}: the answer store holds {format_tokens(plan$stored)} of the {format_tokens(plan$requests)} requests; {format_tokens(plan$remaining)} remain, about {format_tokens(plan$input_tokens)} input and {format_tokens(plan$output_tokens)} output tokens."
  } else {
    "Screening {plan$records} record{?s}: {format_tokens(plan$requests)} {cli::qty(plan$requests)}request{?s}, about {format_tokens(plan$input_tokens)} input and {format_tokens(plan$output_tokens)} output tokens."
  }
  if (plan$remaining == 0) {
    return(invisible())
  }
  cli::cli_inform(c(
    "i" = head,
    if (sum(m$cached_tokens) > 0) {
      c("i" = "Of the input, about {format_tokens(sum(m$cached_tokens))} tokens are expected to be read from the provider's prompt cache and {format_tokens(sum(m$cache_write_tokens))} written to it.")
    },
    if (length(unknown) < nrow(m)) {
      c("i" = "Estimated price: about {format_dollars(price)}{if (length(unknown) > 0) ' for the models with a known price' else ''} (the actual price is reported after the run).")
    },
    if (length(unknown) > 0) c("!" = "No price is known for {.val {unknown}}."),
    if (isTRUE(plan$adaptive)) c("i" = adaptive_estimate_note())
  ), class = c("tabscreen_estimate", "tabscreen_message"))
}

format_dollars <- function(x) {
  if (is.na(x)) {
    return("unknown")
  }
  if (x >= 1) {
    return(paste0("$", formatC(x, format = "f", digits = 2, big.mark = ",")))
  }
  paste0("$", format(signif(x, 2), scientific = FALSE, drop0trailing = TRUE))
}

format_tokens <- function(x) {
  format(round(x), big.mark = ",", scientific = FALSE, trim = TRUE)
}
