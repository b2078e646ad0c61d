# Habits an AIscreenR user brings: keys in the providers' conventional variables, and a model name
# where tabscreen's sixth argument, api_url, stands.

test_that("each getter falls back on its provider's conventional variable and names it, never the key", {
  cases <- list(
    list(get = get_api_key, own = "PROVIDER_A_API_KEY", vars = c("OPENAI_API_KEY", "CHATGPT_KEY")),
    list(get = get_api_key_b, own = "PROVIDER_B_API_KEY", vars = "ANTHROPIC_API_KEY"),
    list(get = get_api_key_c, own = "PROVIDER_C_API_KEY", vars = "MISTRAL_API_KEY")
  )
  for (case in cases) {
    for (var in case$vars) {
      key <- paste0("sk-fallback-", tolower(var), "-7q")
      withr::local_envvar(c(stats::setNames(NA, case$own), stats::setNames(key, var)))
      cnd <- expect_message(value <- case$get(), class = "tabscreen_message_api_key")
      expect_equal(value, key)
      expect_match(conditionMessage(cnd), var, fixed = TRUE)
      expect_match(conditionMessage(cnd), case$own, fixed = TRUE)
      expect_false(grepl(key, conditionMessage(cnd), fixed = TRUE))
      withr::local_envvar(stats::setNames(NA, var))
    }
    # the package's own variable comes first, silently
    withr::local_envvar(c(stats::setNames("sk-own-key", case$own), stats::setNames("sk-other", case$vars[1])))
    expect_silent(expect_equal(case$get(), "sk-own-key"))
    # a variable named by the caller has no fallback
    withr::local_envvar(stats::setNames(NA, case$own))
    expect_error(case$get(env_var = case$own), class = "tabscreen_error_api_key")
    expect_error(case$get(env_var = "MY_UNSET_KEY_VAR"), class = "tabscreen_error_api_key")
    # with none set, the error names every variable looked at
    withr::local_envvar(stats::setNames(NA, case$vars[1]))
    cnd <- expect_error(case$get(), class = "tabscreen_error_api_key")
    for (v in c(case$own, case$vars)) expect_match(conditionMessage(cnd), v, fixed = TRUE)
  }
  # OPENAI_API_KEY before AIscreenR's CHATGPT_KEY
  withr::local_envvar(PROVIDER_A_API_KEY = NA, OPENAI_API_KEY = "sk-openai-first", CHATGPT_KEY = "sk-chatgpt-second")
  expect_equal(suppressMessages(get_api_key()), "sk-openai-first")
})

test_that("a screening sends the key of the conventional variable, and messages = FALSE hides the note", {
  key <- "sk-from-openai-variable-91"
  withr::local_envvar(PROVIDER_A_API_KEY = NA, OPENAI_API_KEY = key)
  fake <- local_fake_provider(seed = 71)
  withr::local_options(tabscreen.store_reuse = FALSE) # the same call again must send, with the key
  out <- collect_messages(screen_a(fake, messages = TRUE))
  expect_equal(nrow(out$value$answer_data), nrow(test_records()))
  expect_true(any(grepl("Using the API key in `OPENAI_API_KEY`", out$messages, fixed = TRUE)))
  expect_false(any(grepl(key, out$messages, fixed = TRUE)))
  quiet <- collect_messages(screen_a(fake, messages = FALSE))
  expect_length(quiet$messages, 0)
  # the key read is the one sent: the provider refusing it stops the run
  fake$configure(invalid_keys = key)
  expect_error(screen_a(fake, messages = FALSE), class = "tabscreen_error_auth")
  # screen_errors() reads it the same way
  fake$configure(invalid_keys = list())
  fail_record(fake, 1)
  res <- screen_a(fake, messages = FALSE, max_tries = 1, seed_par = 3)
  fake$configure(fail_matching = list())
  withr::local_envvar(PROVIDER_C_API_KEY = NA, MISTRAL_API_KEY = "mistral-key-from-env")
  res_c <- screen_c(fake, messages = FALSE)
  expect_equal(nrow(res_c$answer_data), nrow(test_records()))
  expect_null(screen_errors(res, messages = FALSE)$error_data)
})

test_that("a model given as the sixth argument is an error that says api_url is 6th and model 7th", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-habits", PROVIDER_B_API_KEY = "sk-ant-habits", PROVIDER_C_API_KEY = "c-habits")
  fake <- local_fake_provider(seed = 72)
  recs <- test_records()
  cases <- list(
    list(fun = "tabscreen_a.tools", model = "gpt-4o-mini"),
    list(fun = "tabscreen_a.tools", model = "gpt-4.1-mini"),
    list(fun = "tabscreen_a.tools", model = "my-finetune-2"),
    list(fun = "tabscreen_b", model = "claude-haiku-5-5"),
    list(fun = "tabscreen_c", model = "mistral-small-latest")
  )
  for (case in cases) {
    cnd <- expect_arg_error(do.call(case$fun, list(recs, test_prompt, "studyid", "title", "abstract", case$model)),
      "tabscreen_error_api_url_model", fun = case$fun)
    expect_s3_class(cnd, "tabscreen_error_api_url")
    expect_equal(cnd$arg, "api_url")
    msg <- conditionMessage(cnd)
    expect_match(msg, "looks like a model name, not a URL", fixed = TRUE)
    expect_match(msg, "`api_url` is the 6th argument and `model` the 7th", fixed = TRUE)
    expect_match(msg, sprintf("model = \"%s\"", case$model), fixed = TRUE)
  }
  # a URL without its scheme, or a host, is a URL error, not taken for a model
  for (url in c("localhost:11434/v1/chat/completions", "api.openai.com", "localhost:8080")) {
    cnd <- expect_arg_error(screen_a(fake, api_url = url), "tabscreen_error_api_url")
    expect_false(inherits(cnd, "tabscreen_error_api_url_model"), label = url)
  }
  expect_equal(fake$stats()$requests_total, 0)
})
