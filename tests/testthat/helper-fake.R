# A fake provider for the duration of the calling test (or of `.env`): started with the settings
# in `...` (see R/fake-provider.R) and stopped when `.env` ends.
local_fake_provider <- function(..., .env = parent.frame()) {
  fp <- fake_provider_start(...)
  withr::defer(fp$stop(), envir = .env)
  fp
}
