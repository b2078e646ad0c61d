# The key getters fall back on the providers' conventional variables (OPENAI_API_KEY, ...): the
# tests never read a real key from them, and a test of a missing key finds none there.
withr::local_envvar(OPENAI_API_KEY = NA, CHATGPT_KEY = NA, ANTHROPIC_API_KEY = NA, MISTRAL_API_KEY = NA,
  .local_envir = testthat::teardown_env())
