# Models: which names are known, their prices, and the rules of each model.
#
# Two tables, both data:
# * prices: the data set `model_prizes` (data-raw/model_prizes.csv), plus any rows the user adds or
#   overrides with options(tabscreen.model_prizes = data.frame(...));
# * rules: inst/extdata/model_rules.csv, one row per model of every provider: the reasoning_effort
#   values it takes, whether function tools need reasoning_effort "none", whether it takes the
#   reasoning_effort and verbosity fields and top_p, and its class for the `force` guards
#   (small_default, small_old, large: provider A's guards; standard: the guards of providers B and
#   C). Provider B's columns: whether thinking is on by default, whether it can be disabled and at
#   which efforts, whether a forced tool choice is accepted, whether non-default sampling
#   parameters are (other providers' rows hold FALSE, "" or TRUE there). Read once and cached.
# A model is known when it has a price row for the provider. A known model without a rules row (a
# user's price row) is sent what the user gave, like a custom model.

model_cache <- new.env(parent = emptyenv())

model_rules <- function() {
  if (is.null(model_cache$model_rules)) {
    path <- system.file("extdata", "model_rules.csv", package = "tabscreen", mustWork = TRUE)
    rules <- utils::read.csv(
      path,
      colClasses = c(
        provider = "character", model = "character", reasoning_values = "character",
        tools_need_none = "logical", accepts_reasoning_field = "logical", accepts_verbosity = "logical",
        top_p_ok = "logical", force_class = "character", thinking_default_on = "logical",
        can_disable_thinking = "logical", thinking_off_efforts = "character", forced_tool_ok = "logical",
        sampling_ok = "logical", notes = "character"
      ),
      na.strings = character(), encoding = "UTF-8"
    )
    model_cache$model_rules <- rules
  }
  model_cache$model_rules
}

# The price table in use: the bundled data set with the user's rows (option tabscreen.model_prizes)
# taking precedence. Rows of the option without a `provider` column apply to every provider.
price_table <- function(call = rlang::caller_env()) {
  bundled <- as.data.frame(tabscreen::model_prizes)[c(
    "provider", "model", "input_per_million", "cached_input_per_million", "output_per_million",
    "cache_write_5m_per_million"
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
  fix <- c("i" = "Give a data frame with columns {.field model}, {.field input_per_million} and {.field output_per_million} (USD per million tokens), optionally {.field cached_input_per_million}, {.field cache_write_per_million} (provider B) and {.field provider} ({.val a}, {.val b} or {.val c}).")
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
    cached_input_per_million = if (is.null(user$cached_input_per_million)) {
      rep(NA_real_, n)
    } else {
      suppressWarnings(as.numeric(user$cached_input_per_million))
    },
    output_per_million = suppressWarnings(as.numeric(user$output_per_million)),
    cache_write_5m_per_million = if (is.null(user$cache_write_per_million)) {
      rep(NA_real_, n)
    } else {
      suppressWarnings(as.numeric(user$cache_write_per_million))
    },
    user = rep(TRUE, n),
    stringsAsFactors = FALSE
  )
  bad <- is.na(out$model) | !nzchar(out$model) |
    !is_nonneg(out$input_per_million) | !is_nonneg(out$output_per_million) |
    !(is.na(out$cached_input_per_million) | is_nonneg(out$cached_input_per_million)) |
    !(is.na(out$cache_write_5m_per_million) | is_nonneg(out$cache_write_5m_per_million)) |
    !(is.na(out$provider) | out$provider %in% c("a", "b", "c"))
  if (any(bad)) {
    abort_arg(c("Row{?s} {which(bad)} of the option {.code tabscreen.model_prizes} {?is/are} not valid.",
      "i" = "Each row needs a model name and prices that are numbers of at least 0.", fix),
      class = "tabscreen_error_model_prizes", arg = "tabscreen.model_prizes", call = call)
  }
  out
}

is_nonneg <- function(x) !is.na(x) & x >= 0

# Look the models up for a provider. Unknown models are an error unless custom_model is TRUE.
# Returns a data frame, one row per model in the user's order: model, custom, price_in,
# price_cached_in, price_out, price_cache_write (provider B: the 5-minute cache write), and the rules
# columns (NA without a rules row).
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
    stringsAsFactors = FALSE
  )
  cbind(out, rules[rule_hit, c("reasoning_values", "tools_need_none", "accepts_reasoning_field",
    "accepts_verbosity", "top_p_ok", "force_class", "thinking_default_on", "can_disable_thinking",
    "thinking_off_efforts", "forced_tool_ok", "sampling_ok"), drop = FALSE], row.names = NULL)
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

# The request settings of each model, from its rules and the user's arguments. `given` says which
# of reasoning_effort, verbosity and top_p the user passed (missing() in the screening function):
# a default the model cannot take is adapted (reasoning "none" when tools need it) or left out,
# while an explicit value the model cannot take is an error.
model_settings <- function(models, reasoning_effort, verbosity, top_p, given, call = rlang::caller_env()) {
  settings <- vector("list", nrow(models))
  for (i in seq_len(nrow(models))) {
    m <- models[i, ]
    if (is.na(m$force_class)) {
      # custom model, or a price row without rules: send what the user gave
      settings[[i]] <- list(
        reasoning_effort = if (given$reasoning_effort) reasoning_effort else NULL,
        verbosity = if (given$verbosity) verbosity else NULL,
        send_top_p = given$top_p,
        defaulted_none = FALSE
      )
      next
    }
    effort <- model_effort(m, reasoning_effort, given$reasoning_effort, call = call)
    if (m$accepts_verbosity) {
      verb <- verbosity
    } else if (given$verbosity) {
      abort_arg(
        c("Model {.val {m$model}} does not take {.arg verbosity}.",
          "i" = "Leave {.arg verbosity} out, or use a model of the GPT-5 or GPT-6 families."),
        class = c("tabscreen_error_model_verbosity", "tabscreen_error_model"), arg = "verbosity", call = call
      )
    } else {
      verb <- NULL
    }
    top_p_allowed <- m$top_p_ok && (is.null(effort) || identical(effort, "none"))
    if (!top_p_allowed && any(top_p != 1)) {
      with_effort <- if (is.null(effort)) "" else paste0(" with reasoning_effort \"", effort, "\"")
      abort_arg(
        c("Model {.val {m$model}} does not take a {.arg top_p} other than 1{with_effort}.",
          "i" = "Keep {.code top_p = 1} for this model, or screen it in a separate call."),
        class = c("tabscreen_error_model_top_p", "tabscreen_error_model"), arg = "top_p", call = call
      )
    }
    settings[[i]] <- list(
      reasoning_effort = effort, verbosity = verb, send_top_p = top_p_allowed,
      defaulted_none = m$tools_need_none && !given$reasoning_effort
    )
  }
  settings
}

model_effort <- function(m, reasoning_effort, given, call) {
  if (!m$accepts_reasoning_field) {
    if (given) {
      abort_arg(
        c("Model {.val {m$model}} is not a reasoning model and rejects the {.arg reasoning_effort} field.",
          "i" = "Leave {.arg reasoning_effort} out for this model, or screen it in a separate call."),
        class = c("tabscreen_error_model_reasoning", "tabscreen_error_model"), arg = "reasoning_effort", call = call
      )
    }
    return(NULL)
  }
  values <- strsplit(m$reasoning_values, "|", fixed = TRUE)[[1]]
  if (m$tools_need_none) {
    if (!"none" %in% values) {
      abort_arg(
        c("Model {.val {m$model}} cannot call function tools through the Chat Completions endpoint.",
          "x" = "With tools it needs {.code reasoning_effort = \"none\"}, which this model does not accept.",
          "i" = "Use a model that does, e.g. {.val gpt-6-luna} or {.val gpt-6.1-terra}."),
        class = c("tabscreen_error_model_tools", "tabscreen_error_model"), arg = "model", call = call
      )
    }
    if (given && !identical(reasoning_effort, "none")) {
      abort_arg(
        c("Model {.val {m$model}} calls function tools on this endpoint only with {.code reasoning_effort = \"none\"}, not {.val {reasoning_effort}}.",
          "i" = "Leave {.arg reasoning_effort} at its default or set it to {.val none}."),
        class = c("tabscreen_error_model_reasoning", "tabscreen_error_model"), arg = "reasoning_effort", call = call
      )
    }
    return("none")
  }
  if (!reasoning_effort %in% values) {
    abort_arg(
      c("Model {.val {m$model}} does not take {.code reasoning_effort = \"{reasoning_effort}\"}.",
        "i" = "It takes {.or {.val {values}}}."),
      class = c("tabscreen_error_model_reasoning", "tabscreen_error_model"), arg = "reasoning_effort", call = call
    )
  }
  reasoning_effort
}

# Spec section 8 guards of provider A, by the model's force class. A model without rules (a custom
# model, or a user's price row) has no class: it gets the rule of providers B and C, at most 10
# repetitions, so that no model of any provider escapes the guard.
check_force_a <- function(models, reps, force, call = rlang::caller_env()) {
  if (force) {
    return(invisible())
  }
  for (i in seq_len(nrow(models))) {
    class <- models$force_class[i]
    if (is.na(class)) class <- "unknown"
    limit <- switch(class, small_old = 10, large = 1, unknown = 10, Inf)
    if (reps[i] > limit) {
      what <- switch(class,
        large = "a larger model, which is screened once per record",
        small_old = "an older small model, which is screened at most 10 times per record",
        "a model without known rules (a custom model), which is screened at most 10 times per record"
      )
      model <- models$model[i]
      abort_arg(
        c("{.arg reps}: {reps[i]} repetitions of model {.val {model}} are refused: it is {what}.",
          "i" = "Set {.code force = TRUE} if you really mean it."),
        class = "tabscreen_error_force", arg = "reps", call = call
      )
    }
  }
  invisible()
}

# Provider B: per model, the request that yields exactly one tool call (providers.md 0.2):
# * effort: output_config.effort. "none" (thinking off) is sent as "low", the least effort; a model
#   without the field (Haiku 4.5) gets none, and an explicit effort other than "none" is an error;
#   an explicit effort the model does not take is an error, the default ("medium") is then left out.
# * thinking: "disabled" when the model can turn thinking off at that effort and either "none" was
#   asked or the built-in tool is forced; otherwise null (the model's default).
# * forced_tool: the built-in tool is forced when the model accepts a forced tool choice and thinking
#   is off (forced tool use and thinking do not mix). Otherwise the model gets tool_choice auto
#   and an instruction to call the tool (the Go adapter), and an answer without the call is retried.
# "none" for a model that cannot turn thinking off is an error. A custom model (or a price row
# without rules) gets only what was given: an effort other than "none" is sent, and then the tool
# is not forced (the model may think); "none" is sent as thinking "disabled".
model_settings_b <- function(models, reasoning_effort, given, builtin, call = rlang::caller_env()) {
  none <- identical(reasoning_effort, "none")
  lapply(seq_len(nrow(models)), function(i) {
    m <- models[i, ]
    if (is.na(m$force_class)) {
      effort <- if (given && !none) reasoning_effort else NULL
      thinking <- if (given && none) "disabled" else NULL
      return(list(
        reasoning_effort = effort, thinking = thinking, forced_tool = builtin && is.null(effort),
        allowance_effort = effort
      ))
    }
    values <- split_values(m$reasoning_values)
    if (!m$accepts_reasoning_field) {
      if (given && !none) {
        abort_arg(
          c("Model {.val {m$model}} does not take a reasoning effort ({.field output_config.effort}).",
            "i" = "Leave {.arg reasoning_effort} out or set it to {.val none} for this model, or screen it in a separate call."),
          class = c("tabscreen_error_model_reasoning", "tabscreen_error_model"), arg = "reasoning_effort", call = call
        )
      }
      effort <- NULL
    } else if (none) {
      effort <- "low"
    } else if (reasoning_effort %in% values) {
      effort <- reasoning_effort
    } else if (given) {
      takes <- c(if (m$can_disable_thinking) "none", values)
      abort_arg(
        c("Model {.val {m$model}} does not take {.code reasoning_effort = \"{reasoning_effort}\"}.",
          "i" = "It takes {.or {.val {takes}}}."),
        class = c("tabscreen_error_model_reasoning", "tabscreen_error_model"), arg = "reasoning_effort", call = call
      )
    } else {
      effort <- NULL
    }
    can_off <- m$can_disable_thinking && (is.null(effort) || effort %in% split_values(m$thinking_off_efforts))
    if (none && m$thinking_default_on && !can_off) {
      abort_arg(
        c("Model {.val {m$model}} cannot turn thinking off, so it does not take {.code reasoning_effort = \"none\"}.",
          "i" = "Use {.val low}, the least effort, or a model that can, e.g. {.val claude-haiku-5-5}."),
        class = c("tabscreen_error_model_reasoning", "tabscreen_error_model"), arg = "reasoning_effort", call = call
      )
    }
    want_forced <- builtin && m$forced_tool_ok
    thinking <- if (can_off && (none || want_forced)) "disabled" else NULL
    thinking_off <- identical(thinking, "disabled") || !m$thinking_default_on
    list(
      reasoning_effort = effort, thinking = thinking, forced_tool = want_forced && thinking_off,
      allowance_effort = if (thinking_off) NULL else effort %||% "high"
    )
  })
}

# Provider C: reasoning_effort ("none" or "high") goes only to models whose rules take the field,
# since the others may answer 422; for them "none" is left out and "high" is an error. top_p goes to
# every known model (it is part of the protocol), to custom models only when given.
model_settings_c <- function(models, reasoning_effort, top_p, given, call = rlang::caller_env()) {
  lapply(seq_len(nrow(models)), function(i) {
    m <- models[i, ]
    if (is.na(m$force_class)) {
      return(list(
        reasoning_effort = if (given$reasoning_effort) reasoning_effort else NULL,
        send_top_p = given$top_p
      ))
    }
    if (m$accepts_reasoning_field) {
      values <- split_values(m$reasoning_values)
      if (!reasoning_effort %in% values) {
        abort_arg(
          c("Model {.val {m$model}} does not take {.code reasoning_effort = \"{reasoning_effort}\"}.",
            "i" = "It takes {.or {.val {values}}}."),
          class = c("tabscreen_error_model_reasoning", "tabscreen_error_model"), arg = "reasoning_effort", call = call
        )
      }
      effort <- reasoning_effort
    } else if (!identical(reasoning_effort, "none")) {
      abort_arg(
        c("Model {.val {m$model}} does not reason and is not sent {.arg reasoning_effort}, so it cannot take {.val {reasoning_effort}}.",
          "i" = "Leave {.arg reasoning_effort} at {.val none} for this model, or use a reasoning model such as {.val mistral-small-latest}."),
        class = c("tabscreen_error_model_reasoning", "tabscreen_error_model"), arg = "reasoning_effort", call = call
      )
    } else {
      effort <- NULL
    }
    if (!m$top_p_ok && any(top_p != 1)) {
      abort_arg(
        c("Model {.val {m$model}} does not take a {.arg top_p} other than 1.",
          "i" = "Keep {.code top_p = 1} for this model, or screen it in a separate call."),
        class = c("tabscreen_error_model_top_p", "tabscreen_error_model"), arg = "top_p", call = call
      )
    }
    list(reasoning_effort = effort, send_top_p = m$top_p_ok)
  })
}

split_values <- function(x) {
  if (is.na(x) || !nzchar(x)) character() else strsplit(x, "|", fixed = TRUE)[[1]]
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
  if (price > 15) {
    abort_arg(
      c("The screening is refused: its estimated price, {format_dollars(price)}, is above $15.",
        "i" = "{format_tokens(sum(estimate$requests))} requests, about {format_tokens(sum(estimate$input_tokens))} input and {format_tokens(sum(estimate$output_tokens))} output tokens.",
        "i" = "Screen fewer records, prompts, models or repetitions, or set {.code force = TRUE} if you really mean it."),
      class = "tabscreen_error_force", arg = "force", call = call
    )
  }
  invisible()
}

# Rough completion tokens per answer: about 10 for the decision, more with a description, plus the
# reasoning the effort buys (0 for "none" or a model without reasoning).
completion_allowance <- function(effort, decision_description) {
  reasoning <- if (is.null(effort)) {
    0
  } else {
    c(none = 0, minimal = 20, low = 60, medium = 200, high = 480, xhigh = 1000, max = 2000)[[effort]]
  }
  10 + (if (decision_description) 120 else 0) + reasoning
}

# The effort that sizes the reasoning of a model's answers: its own setting where the model's
# settings say (provider B, whose thinking may be off whatever the effort), else reasoning_effort.
allowance_effort <- function(s) {
  if ("allowance_effort" %in% names(s)) s$allowance_effort else s$reasoning_effort
}

# Pre-run price estimate: input tokens ~ characters / 4 of the prompt and the record, plus about
# 150 tokens of tool schema and framing per request; output tokens from completion_allowance().
# Returns a data frame per model: requests, input and output tokens and the price (NA when unknown).
estimate_price <- function(records, prompts, models, settings, reps, n_top_p, decision_description) {
  record_chars <- sum(field_chars(records$title) + field_chars(records$abstract))
  n <- nrow(records)
  per_prompt_chars <- sum(nchar(prompts)) * n + length(prompts) * record_chars
  requests <- length(prompts) * n * n_top_p * reps
  input <- (per_prompt_chars / 4 + 150 * length(prompts) * n) * n_top_p * reps
  output <- requests * vapply(settings, function(s) completion_allowance(allowance_effort(s), decision_description), numeric(1))
  data.frame(
    model = models$model,
    requests = requests,
    input_tokens = input,
    output_tokens = output,
    price = (input * models$price_in + output * models$price_out) / 1e6,
    stringsAsFactors = FALSE
  )
}

inform_estimate <- function(estimate, n_records, messages) {
  if (!isTRUE(messages)) {
    return(invisible())
  }
  total <- sum(estimate$requests)
  unknown <- estimate$model[is.na(estimate$price)]
  price <- sum(estimate$price, na.rm = TRUE)
  tabscreen_inform(c(
    "i" = "Screening {n_records} record{?s}: {total} request{?s}, about {format_tokens(sum(estimate$input_tokens))} input and {format_tokens(sum(estimate$output_tokens))} output tokens.",
    if (length(unknown) < nrow(estimate)) {
      c("i" = "Estimated price: about {format_dollars(price)}{if (length(unknown) > 0) ' for the models with a known price' else ''} (the actual price is reported after the run).")
    },
    if (length(unknown) > 0) c("!" = "No price is known for {.val {unknown}}.")
  ))
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

# Title or abstract as the model sees it: blank values become "No information" (the same rule as
# Field() in golib/screen/question.go: missing, only white space, or the literal "NA").
# The Go core's rule (screen.Field): missing, nothing but white space, or the text "NA". Long
# texts are only searched for one character that is not white space: rewriting every abstract with
# a regular expression took most of the time of a large run. Only short ones can read "NA".
is_blank_field <- function(x) {
  blank <- is.na(x) | !grepl("[^\\s\\p{Z}]", x, perl = TRUE)
  short <- which(!blank & nchar(x, type = "bytes") <= 32)
  blank[short] <- trimws(gsub("[\\s\\p{Z}]+", " ", x[short], perl = TRUE)) == "NA"
  blank
}

# Characters of a field as the model sees it, for the price estimate: a blank field is sent as
# "No information"; white space is counted as it is (an estimate needs no exact count).
field_chars <- function(x) {
  ifelse(is_blank_field(x), nchar("No information"), nchar(x))
}
