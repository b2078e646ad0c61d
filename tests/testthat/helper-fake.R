# A fake provider for the duration of the calling test (or of `.env`): started with the settings
# in `...` (see R/fake-provider.R) and stopped when `.env` ends.
# Each such test also gets an answer store of its own, so that no test resumes another's run.
local_fake_provider <- function(..., .env = parent.frame()) {
  withr::local_options(tabscreen.store = tempfile("store-", fileext = ".sqlite"), .local_envir = .env)
  fp <- fake_provider_start(...)
  withr::defer(fp$stop(), envir = .env)
  fp
}
