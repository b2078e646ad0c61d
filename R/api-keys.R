#' API keys
#'
#' The screening functions read their provider's API key from an environment variable, so that
#' the key never has to be written in a script: `PROVIDER_A_API_KEY` for [tabscreen_a.tools()]
#' ([get_api_key()]), `PROVIDER_B_API_KEY` for [tabscreen_b()] ([get_api_key_b()]) and
#' `PROVIDER_C_API_KEY` for [tabscreen_c()] ([get_api_key_c()]).
#'
#' When that variable is unset (and `env_var` is left at its default), the key is taken from the
#' variable the provider's own tools use: `OPENAI_API_KEY` (then `CHATGPT_KEY`, AIscreenR's other
#' name) for provider A, `ANTHROPIC_API_KEY` for B and `MISTRAL_API_KEY` for C. A message (class
#' `tabscreen_message_api_key`) names the variable used; it never shows the key.
#'
#' There are three ways to provide a key:
#' * For the current session only: `set_api_key()`. In an interactive session it asks for the key
#'   without showing what you type.
#' * For every session: add a line `PROVIDER_A_API_KEY=<your key>` to your user's `.Renviron` file
#'   (for example with `usethis::edit_r_environ()`), then restart R.
#' * Encrypted: keep an encrypted copy of the key in your project and decrypt it when you need it,
#'   with the helpers of the HTTP client httr2. Make an encryption key once with
#'   [httr2::secret_make_key()], store *that* in `.Renviron` (say as `MY_SECRET`), encrypt the API
#'   key with `httr2::secret_encrypt(api_key, "MY_SECRET")` and keep the result in your script; at
#'   run time `set_api_key(httr2::secret_decrypt(encrypted, "MY_SECRET"))`.
#'
#' The key is passed to the Go engine on its own: it is never stored in the result object, its
#' `arg_list`, the run options, messages or errors.
#'
#' @param key The API key. When missing, `set_api_key()` asks for it (interactive sessions only).
#' @param env_var The environment variable that holds the key.
#' @return `get_api_key()`, `get_api_key_b()` and `get_api_key_c()` return the key. They signal an
#'   error of class `tabscreen_error_api_key` when the variable is empty. `set_api_key()` returns
#'   `NULL`, invisibly; it never prints the key.
#' @name api_keys
#' @examples
#' # (The example puts back at its end what these three variables held before.)
#' old <- Sys.getenv(c("PROVIDER_A_API_KEY", "MY_SECRET", "OPENAI_API_KEY"), unset = NA)
#'
#' # Once: make an encryption key and keep it in .Renviron (here: MY_SECRET) ...
#' Sys.setenv(MY_SECRET = httr2::secret_make_key())
#' # ... and encrypt the API key with it; the encrypted text may live in your scripts.
#' encrypted <- httr2::secret_encrypt("sk-example-not-a-key", "MY_SECRET")
#'
#' # In each session:
#' set_api_key(httr2::secret_decrypt(encrypted, "MY_SECRET"))
#' nchar(get_api_key())
#'
#' # A key where AIscreenR and the provider's own tools keep it is found too, with a message
#' # naming the variable.
#' Sys.unsetenv("PROVIDER_A_API_KEY")
#' Sys.setenv(OPENAI_API_KEY = "sk-example-not-a-key")
#' nchar(get_api_key())
#'
#' for (v in names(old)) if (is.na(old[[v]])) Sys.unsetenv(v) else do.call(Sys.setenv, as.list(old[v]))
NULL

#' @rdname api_keys
#' @export
get_api_key <- function(env_var = "PROVIDER_A_API_KEY") {
  read_api_key(env_var, fallbacks = if (missing(env_var)) key_fallbacks("a"), call = rlang::caller_env())
}

#' @rdname api_keys
#' @export
get_api_key_b <- function(env_var = "PROVIDER_B_API_KEY") {
  read_api_key(env_var, fallbacks = if (missing(env_var)) key_fallbacks("b"), call = rlang::caller_env())
}

#' @rdname api_keys
#' @export
get_api_key_c <- function(env_var = "PROVIDER_C_API_KEY") {
  read_api_key(env_var, fallbacks = if (missing(env_var)) key_fallbacks("c"), call = rlang::caller_env())
}

#' @rdname api_keys
#' @export
set_api_key <- function(key, env_var = "PROVIDER_A_API_KEY") {
  check_env_var(env_var)
  if (missing(key) || is.null(key)) {
    if (!rlang::is_interactive()) {
      abort_arg(
        c("{.arg key} is missing and this session is not interactive, so it cannot be asked for.",
          "i" = "Pass the key, e.g. {.code set_api_key(httr2::secret_decrypt(encrypted, \"MY_SECRET\"))}, or set {.envvar {env_var}} in {.file .Renviron}."),
        class = "tabscreen_error_api_key", arg = "key"
      )
    }
    key <- askpass::askpass(sprintf("Please enter your API key (it will be stored in %s for this session)", env_var))
  }
  if (!is_api_key(key)) {
    abort_arg(
      "{.arg key} must be a single non-empty string.",
      class = "tabscreen_error_api_key", arg = "key"
    )
  }
  do.call(Sys.setenv, stats::setNames(list(key), env_var))
  cli::cli_inform(c(
    "v" = "The API key is set in {.envvar {env_var}} for this session.",
    "i" = "To keep it for every session, add a line {.code {env_var}=<your key>} to {.file ~/.Renviron} and restart R."
  ), class = "tabscreen_message")
  invisible(NULL)
}

# The key in `env_var`, else in the first of `fallbacks` that holds one, with a message naming
# that variable (never the key).
read_api_key <- function(env_var, fallbacks = character(), call) {
  check_env_var(env_var, call = call)
  for (var in c(env_var, fallbacks)) {
    key <- Sys.getenv(var, unset = "")
    if (nzchar(trimws(key))) {
      if (var != env_var) {
        cli::cli_inform(c("i" = "Using the API key in {.envvar {var}}, as {.envvar {env_var}} is not set."),
          class = c("tabscreen_message_api_key", "tabscreen_message"))
      }
      return(key)
    }
  }
  abort_api_key(env_var, fallbacks, call = call)
}

# The variables a provider's key is read from when its own is unset (the Go registry's
# key_fallbacks).
key_fallbacks <- function(provider) {
  as.character(unlist(provider_info(provider)$key_fallbacks))
}

abort_api_key <- function(env_var, fallbacks = character(), call = rlang::caller_env()) {
  setter <- if (identical(env_var, "PROVIDER_A_API_KEY")) {
    "set_api_key()"
  } else {
    sprintf("set_api_key(env_var = \"%s\")", env_var)
  }
  tabscreen_abort(
    c(if (length(fallbacks) == 0) "No API key found in the environment variable {.envvar {env_var}}."
      else "No API key found in the environment variable {.envvar {env_var}}, nor in {.or {.envvar {fallbacks}}}.",
      "i" = "Set it for this session with {.code {setter}}, or add a line {.code {env_var}=<your key>} to {.file ~/.Renviron} and restart R.",
      "i" = "Or pass the key itself in {.arg api_key}."),
    class = "tabscreen_error_api_key", env_var = env_var, call = call
  )
}

is_api_key <- function(key) {
  is.character(key) && length(key) == 1 && !is.na(key) && nzchar(trimws(key))
}

check_env_var <- function(env_var, call = rlang::caller_env()) {
  if (!is.character(env_var) || length(env_var) != 1 || is.na(env_var) ||
    !grepl("^[A-Za-z_][A-Za-z0-9_]*$", env_var)) {
    abort_arg("{.arg env_var} must be the name of an environment variable, e.g. {.val PROVIDER_A_API_KEY}.",
      class = "tabscreen_error_api_key", arg = "env_var", call = call)
  }
  invisible(env_var)
}
