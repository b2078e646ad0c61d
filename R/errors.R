# Conditions signalled by tabscreen.
#
# Every error of the package inherits from "tabscreen_error". Argument errors add "tabscreen_error_arg"
# and a specific class per case (e.g. "tabscreen_error_model_unknown"), so callers and tests can tell
# them apart without matching message text:
#
#   tabscreen_error
#     tabscreen_error_arg            a bad argument, raised before any request is sent
#       tabscreen_error_data         `data` or its column mappings
#       tabscreen_error_prompt       `prompt`
#       tabscreen_error_model_*      `model` (unknown, duplicated, rules of the model)
#       tabscreen_error_force        a guard of spec section 8 (`force = TRUE` overrides)
#         tabscreen_error_price_cap  the estimate is above options(tabscreen.max_price)
#       tabscreen_error_encoding     text that is not valid UTF-8 (also in read_refs(), there
#                                    with tabscreen_error_refs_parse instead)
#       tabscreen_error_api_key      `api_key` that cannot be a key
#       ...
#     tabscreen_error_api_key        no API key in the environment variable
#     tabscreen_error_store          the answer store cannot be used or written (R/store.R)
#       tabscreen_error_store_damaged  the store's file is damaged (screen_store_recover() copies what can be read)
#       tabscreen_error_store_kept     answers an earlier call kept (a failed write) cannot be written in yet
#     tabscreen_error_store_busy     the same run is being screened by another live R session
#     tabscreen_error_store_run      no such run in the store
#     tabscreen_error_auth / _quota  the provider refused the key or the account has no credit
#     tabscreen_error_endpoint       before any answer, api_url could not be used (nothing listens,
#                                    unknown host, TLS, or a server without that path)
#     tabscreen_interrupted          the user interrupted a run (the partial result is attached)
#
# Warnings inherit from "tabscreen_warning"; deprecations add "tabscreen_warning_deprecated".
# Messages that `messages = FALSE` silences have the class "tabscreen_message".

# Signal a tabscreen error; `class` is the most specific class (or several, most specific first).
# `message` is cli markup, interpolated in the caller's frame.
tabscreen_abort <- function(message, class = NULL, ..., call = rlang::caller_env(), .envir = parent.frame()) {
  cli::cli_abort(message, class = unique(c(class, "tabscreen_error")), ..., call = call, .envir = .envir)
}

# An argument error: adds "tabscreen_error_arg" and records the argument's name in the condition.
abort_arg <- function(message, class = NULL, arg = NULL, ..., call = rlang::caller_env(), .envir = parent.frame()) {
  tabscreen_abort(message, class = c(class, "tabscreen_error_arg"), arg = arg, ..., call = call, .envir = .envir)
}

tabscreen_warn <- function(message, class = NULL, ..., .envir = parent.frame()) {
  cli::cli_warn(message, class = unique(c(class, "tabscreen_warning")), ..., .envir = .envir)
}

# A message that `messages = FALSE` silences.
tabscreen_inform <- function(message, messages = TRUE, ..., .envir = parent.frame()) {
  if (isTRUE(messages)) {
    cli::cli_inform(message, class = "tabscreen_message", ..., .envir = .envir)
  }
  invisible()
}
