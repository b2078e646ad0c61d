# The text that reaches the provider: encodings, blank records, and text that must go through as
# it is.

# A condition's message on one line, so that matches do not depend on where cli wraps it.
flat_message <- function(cnd) gsub("\\s+", " ", conditionMessage(cnd))

# What read.csv() gives for a Windows-1252 export read without its encoding in a UTF-8 session:
# the file's bytes, with no encoding mark.
windows_1252 <- function(...) {
  x <- c(...)
  Encoding(x) <- "unknown"
  x
}

test_that("text that is not UTF-8 is an error naming the column, the records and the fix", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-text", PROVIDER_B_API_KEY = "sk-test-text",
    PROVIDER_C_API_KEY = "sk-test-text")
  fake <- local_fake_provider()
  recs <- test_records()
  recs$abstract[c(2, 5)] <- windows_1252("Caf\xe9 study", "\x93Quoted\x94 family therapy")
  expect_false(all(validUTF8(recs$abstract)))

  cnd <- expect_arg_error(screen_a(fake, data = recs), "tabscreen_error_encoding")
  expect_s3_class(cnd, "tabscreen_error_data")
  expect_equal(cnd$arg, "abstract")
  msg <- flat_message(cnd)
  expect_match(msg, "Column abstract (`abstract`)", fixed = TRUE)
  expect_match(msg, "not valid UTF-8 in 2 records, study ids 2 and 181", fixed = TRUE)
  expect_match(msg, "read.csv(file, fileEncoding = \"windows-1252\")", fixed = TRUE)
  expect_match(msg, "data$abstract <- iconv(data$abstract, \"windows-1252\", \"UTF-8\")", fixed = TRUE)

  # Bytes that are not Windows-1252 either: the repair that keeps them visible.
  recs$abstract[2] <- windows_1252("Caf\xe9\x81")
  msg <- flat_message(expect_arg_error(screen_a(fake, data = recs), "tabscreen_error_encoding"))
  expect_match(msg, "iconv(data$abstract, \"\", \"UTF-8\", sub = \"byte\")", fixed = TRUE)

  # The same check in every provider, and for the other text columns and the prompts.
  expect_arg_error(screen_b(fake, data = recs), "tabscreen_error_encoding", fun = "tabscreen_b")
  expect_arg_error(screen_c(fake, data = recs), "tabscreen_error_encoding", fun = "tabscreen_c")
  bad_title <- test_records()
  bad_title$title[8] <- windows_1252("Th\xe9rapie familiale")
  cnd <- expect_arg_error(screen_a(fake, data = bad_title), "tabscreen_error_encoding")
  expect_equal(cnd$arg, "title")
  expect_match(flat_message(cnd), "1 record, study id 184", fixed = TRUE)
  bad_id <- test_records()
  bad_id$studyid <- as.character(bad_id$studyid)
  bad_id$studyid[3] <- windows_1252("id-\xe9")
  cnd <- expect_arg_error(screen_a(fake, data = bad_id), "tabscreen_error_encoding")
  expect_equal(cnd$arg, "studyid")
  expect_match(flat_message(cnd), "1 row: 3", fixed = TRUE)
  cnd <- expect_arg_error(screen_a(fake, prompt = c(test_prompt, windows_1252("Is it about th\xe9rapie?"))),
    "tabscreen_error_encoding")
  expect_s3_class(cnd, "tabscreen_error_prompt")
  expect_match(flat_message(cnd), "1 prompt (number 2)", fixed = TRUE)

  expect_equal(fake$stats()$requests_total, 0)
})

test_that("a column marked as bytes is read as UTF-8, and refused when it is not", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-text")
  fake <- local_fake_provider()
  recs <- test_records()[1:3, ]
  recs$title[3] <- "Caf\u00e9 and th\u00e9rapie"
  Encoding(recs$title) <- "bytes"
  res <- screen_a(fake, data = recs)
  expect_equal(res$answer_data$title[3], "Caf\u00e9 and th\u00e9rapie")
  questions <- vapply(request_bodies(fake), function(b) b$messages[[1]]$content, character(1))
  expect_true(any(grepl("<title>Caf\u00e9 and th\u00e9rapie</title>", questions, fixed = TRUE)))

  fake$reset()
  recs$title[3] <- windows_1252("Caf\xe9")
  Encoding(recs$title) <- "bytes"
  cnd <- expect_arg_error(screen_a(fake, data = recs), "tabscreen_error_encoding")
  expect_equal(cnd$arg, "title")
  expect_equal(fake$stats()$requests_total, 0)
})

test_that("Latin-1 text is converted, and hostile text goes through intact", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-text")
  fake <- local_fake_provider()
  recs <- test_records()[1:6, ]
  recs$title[1] <- iconv("J\u00f8rgensen's caf\u00e9, na\u00efve", "UTF-8", "latin1")
  expect_equal(Encoding(recs$title[1]), "latin1")
  recs$abstract[2] <- "<script>alert(\"x\")</script> <b>bold</b> &amp; 'single' \"double\" back\\slash {braces} {.code x} </abstract>"
  recs$abstract[3] <- "Emoji \U0001F600 \U0001F469\u200D\U0001F52C and a flag \U0001F1E9\U0001F1F0"
  recs$abstract[4] <- "\u0627\u0644\u0639\u0644\u0627\u062c \u0627\u0644\u0623\u0633\u0631\u064a \u2014 \u05d8\u05d9\u05e4\u05d5\u05dc \u05de\u05e9\u05e4\u05d7\u05ea\u05d9"
  big <- paste(rep("Functional family therapy for adolescents who use drugs.", 18000), collapse = " ")
  expect_gt(nchar(big, "bytes"), 1e6)
  recs$abstract[5] <- big
  prompt <- iconv("Is this study about th\u00e9rapie familiale?", "UTF-8", "latin1")

  res <- screen_a(fake, data = recs, prompt = prompt)
  expect_equal(nrow(res$answer_data), 6)
  expect_null(res$error_data)
  expect_equal(res$answer_data$abstract, recs$abstract)
  expect_equal(res$answer_data$title[1], "J\u00f8rgensen's caf\u00e9, na\u00efve")
  questions <- vapply(request_bodies(fake), function(b) b$messages[[1]]$content, character(1))
  expect_true(all(startsWith(questions, "Is this study about th\u00e9rapie familiale?")))
  for (text in c("<title>J\u00f8rgensen's caf\u00e9, na\u00efve</title>", paste0("<abstract>", recs$abstract[2:5], "</abstract>"))) {
    expect_true(any(grepl(text, questions, fixed = TRUE)), label = substr(text, 1, 40))
  }
})

test_that("a data set whose every record is blank is refused before any request", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-text", PROVIDER_B_API_KEY = "sk-test-text",
    PROVIDER_C_API_KEY = "sk-test-text")
  fake <- local_fake_provider()
  blank <- test_records()[1:4, ]
  blank$title <- c(NA, "", "  ", "NA")
  blank$abstract <- c("", NA, "\n\t", NA)
  cnd <- expect_arg_error(screen_a(fake, data = blank), "tabscreen_error_data_blank")
  expect_s3_class(cnd, "tabscreen_error_data")
  expect_equal(cnd$arg, "data")
  expect_match(flat_message(cnd), "in all 4 records", fixed = TRUE)
  expect_arg_error(screen_b(fake, data = blank), "tabscreen_error_data_blank", fun = "tabscreen_b")
  expect_arg_error(screen_c(fake, data = blank), "tabscreen_error_data_blank", fun = "tabscreen_c")
  # all-NA columns, as a wrong mapping gives them
  na_cols <- test_records()[1:2, ]
  na_cols$title <- NA
  na_cols$abstract <- NA
  expect_arg_error(screen_a(fake, data = na_cols), "tabscreen_error_data_blank")
  expect_equal(fake$stats()$requests_total, 0)

  # Blank records among others are screened, the model told "No information", with a message.
  some <- test_records()[1:3, ]
  some$title[2] <- NA
  some$abstract[2] <- ""
  out <- collect_messages(screen_a(fake, data = some, messages = TRUE))
  expect_match(paste(out$messages, collapse = " "), "1 record has a missing or blank title or abstract", fixed = TRUE)
  expect_equal(nrow(out$value$answer_data), 3)
  questions <- vapply(request_bodies(fake), function(b) b$messages[[1]]$content, character(1))
  expect_true(any(grepl("<title>No information</title>\n<abstract>No information</abstract>", questions, fixed = TRUE)))
})

test_that("the question column is the text each request sent, also for re-sent requests", {
  withr::local_envvar(PROVIDER_A_API_KEY = "sk-test-text")
  fake <- local_fake_provider()
  recs <- test_records()[1:5, ]
  recs$title[1] <- "  Spaced \t title\n"
  recs$abstract[2] <- NA
  recs$title[3] <- "NA"
  recs$abstract[3] <- "Line one.\n\nLine\u00a0two.  "
  recs$abstract[4] <- "Selective Mutism and plain text."
  prompts <- c("First  prompt?", "Second\nprompt?")
  fake$configure(fail_matching = list(list(substring = "Selective Mutism", kind = "500")))
  res <- screen_a(fake, data = recs, prompt = prompts, max_tries = 1)
  sent <- function() vapply(request_bodies(fake), function(b) b$messages[[1]]$content, character(1))
  rows <- rbind(res$answer_data[c("question", "title", "abstract")], res$error_data[c("question", "title", "abstract")])
  expect_equal(nrow(rows), 10)
  expect_setequal(rows$question, unique(sent()))
  expect_equal(rows$title[rows$title %in% recs$title[1]][1], recs$title[1]) # the user's text stays as it was
  expect_match(res$answer_data$question[res$answer_data$studyid == recs$studyid[3]], "<title>No information</title>",
    fixed = TRUE, all = TRUE)
  expect_equal(nrow(res$error_data), 2)

  fake$configure(fail_matching = list())
  again <- screen_errors(res, api_key = "sk-test-text")
  expect_null(again$error_data)
  expect_equal(sort(again$answer_data$question), sort(rows$question))
})
