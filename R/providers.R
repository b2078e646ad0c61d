# The providers. The Go core's registry (golib/provider, TsProviders) describes each one: its
# letter, protocol, default URL and model, key variable, tool format, closed request fields,
# rate-limit headers and the fields of its models in the run options. R reads it once per session
# and looks a provider up in it; shared R code never branches on a provider's letter.
#
# What is R's of a provider sits in R/provider-<letter>.R: the screening function with the spec's
# signature and its documentation, and provider_<letter>(), which lists its R parts:
#   name           the screening function's name
#   screen         the screening function
#   reserved_body  request fields the package sets, with where to set them instead (cli text)
#   dots_hints     hints for fields of other protocols that `...` may not set (closed schemas)

provider_cache <- new.env(parent = emptyenv())

# Every provider of the registry, named by letter.
providers <- function() {
  if (is.null(provider_cache$providers)) {
    all <- go_call(C_providers, simplify = FALSE)$meta$providers
    names(all) <- vapply(all, function(p) p$letter, character(1))
    provider_cache$providers <- all
  }
  provider_cache$providers
}

# One provider's description in the registry.
provider_info <- function(provider) {
  info <- providers()[[provider]]
  if (is.null(info)) {
    rlang::abort(sprintf("Unknown provider \"%s\".", provider), class = c("tabscreen_error_internal", "tabscreen_error"))
  }
  info
}

# One provider's R parts (R/provider-<letter>.R).
provider_r <- function(provider) {
  get(paste0("provider_", provider), envir = asNamespace("tabscreen"), mode = "function")()
}

# The fields of the request body the package sets for a provider, with where to set them instead.
reserved_body <- function(provider) {
  provider_r(provider)$reserved_body
}

# The environment variable of a provider's key, and the key read from it.
provider_env_var <- function(provider) provider_info(provider)$key_var

provider_key <- function(provider, call = rlang::caller_env()) {
  read_api_key(provider_env_var(provider), key_fallbacks(provider), call = call)
}
