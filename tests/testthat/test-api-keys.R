test_that("the getters read their provider's variable", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-a", PROVIDER_B_API_KEY = "sk-b", PROVIDER_C_API_KEY = "sk-c")
  expect_equal(get_api_key(), "sk-a")
  expect_equal(get_api_key_b(), "sk-b")
  expect_equal(get_api_key_c(), "sk-c")
  withr::local_envvar(MY_KEY = "sk-mine")
  expect_equal(get_api_key("MY_KEY"), "sk-mine")
})

test_that("a missing key is a classed error naming the variable", {
  withr::local_envvar(PROVIDER_A_API_KEY = NA, PROVIDER_B_API_KEY = "", PROVIDER_C_API_KEY = "   ")
  cnd <- expect_error(get_api_key(), class = "tabscreen_error_api_key")
  expect_match(conditionMessage(cnd), "PROVIDER_A_API_KEY", fixed = TRUE)
  expect_match(conditionMessage(cnd), "set_api_key()", fixed = TRUE)
  cnd <- expect_error(get_api_key_b(), class = "tabscreen_error_api_key")
  expect_match(conditionMessage(cnd), "PROVIDER_B_API_KEY", fixed = TRUE)
  expect_error(get_api_key_c(), class = "tabscreen_error_api_key")
  expect_error(get_api_key(env_var = c("A", "B")), class = "tabscreen_error_api_key")
  expect_error(get_api_key(env_var = "not a name"), class = "tabscreen_error_api_key")
})

test_that("set_api_key() sets the variable without printing the key", {
  withr::local_envvar(PROVIDER_A_API_KEY = NA, PROVIDER_C_API_KEY = NA)
  out <- capture.output(msg <- capture.output(set_api_key("sk-secret-value-123"), type = "message"))
  expect_equal(Sys.getenv("PROVIDER_A_API_KEY"), "sk-secret-value-123")
  expect_false(any(grepl("sk-secret-value-123", c(out, msg), fixed = TRUE)))
  expect_invisible(suppressMessages(set_api_key("sk-c", env_var = "PROVIDER_C_API_KEY")))
  expect_equal(get_api_key_c(), "sk-c")
  expect_error(set_api_key(""), class = "tabscreen_error_api_key")
  expect_error(set_api_key(NA_character_), class = "tabscreen_error_api_key")
  expect_error(set_api_key(c("a", "b")), class = "tabscreen_error_api_key")
})

test_that("set_api_key() asks only in interactive sessions", {
  withr::local_envvar(PROVIDER_A_API_KEY = NA)
  rlang::local_interactive(FALSE)
  expect_error(set_api_key(), class = "tabscreen_error_api_key")
  expect_equal(Sys.getenv("PROVIDER_A_API_KEY"), "")
})

test_that("an httr2-encrypted key round-trips", {
  withr::local_envvar(PROVIDER_A_API_KEY = NA, TABSCREEN_TEST_SECRET = httr2::secret_make_key())
  encrypted <- httr2::secret_encrypt("sk-encrypted-key", "TABSCREEN_TEST_SECRET")
  suppressMessages(set_api_key(httr2::secret_decrypt(encrypted, "TABSCREEN_TEST_SECRET")))
  expect_equal(get_api_key(), "sk-encrypted-key")
})
