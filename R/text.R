# Text encodings. Everything sent to the provider is UTF-8, and R strings carry an encoding mark:
# strings marked "latin1" (and native strings in a locale that is not UTF-8) are converted, strings
# marked "bytes" are read as UTF-8, and the others are UTF-8 already, unless their bytes say
# otherwise. A Windows-1252 export read without its encoding (read.csv() in a UTF-8 session) gives
# such strings. They are refused with an error that says how to read or convert them, never
# repaired here: the package cannot know the file's encoding, and a wrong guess would send, and
# store, mangled text without anyone noticing.

# `x` (character) as UTF-8, and `bad`: the positions of the strings whose bytes are not valid in
# their encoding.
as_utf8 <- function(x) {
  enc <- Encoding(x)
  utf8_session <- isTRUE(l10n_info()[["UTF-8"]])
  # Strings that are UTF-8 by their mark (or native in a UTF-8 session) are checked as they are:
  # enc2utf8() would turn their bad bytes into the text "<e9>" without a word.
  claimed <- enc == "UTF-8" | enc == "bytes" | (enc == "unknown" & utf8_session)
  bad <- claimed & !is.na(x) & !validUTF8(x)
  out <- x
  latin1 <- enc == "latin1"
  out[latin1] <- enc2utf8(x[latin1])
  native <- enc == "unknown" & !utf8_session
  if (any(native)) {
    out[native] <- iconv(x[native], "", "UTF-8")
    bad <- bad | (native & !is.na(x) & is.na(out))
  }
  bytes <- enc == "bytes" & !bad
  if (any(bytes)) {
    b <- x[bytes]
    Encoding(b) <- "UTF-8"
    out[bytes] <- b
  }
  list(text = out, bad = which(bad))
}

# Whether text that is not UTF-8 reads as Windows-1252 (of which Latin-1 is nearly a subset): the
# encoding of most exports made on Windows, and the one worth naming in a message.
reads_as_windows_1252 <- function(bad_text) {
  !anyNA(iconv(bad_text, "windows-1252", "UTF-8"))
}

# The encoding to suggest for text that is not UTF-8.
suggested_encoding <- function(bad_text) {
  if (reads_as_windows_1252(bad_text)) "windows-1252" else "latin1"
}

# Stops with an error of class tabscreen_error_encoding (plus `class`) when `x` holds text that is
# not valid in its encoding; else returns it as UTF-8. `problem` is the first line of the message,
# cli text interpolated in the caller's frame, where `bad` is also defined (the positions of the
# strings that are not valid); `target` is the R code that holds the text (e.g. "data$abstract"),
# for the repair shown.
utf8_or_abort <- function(x, problem, target, class, arg, call, .envir = parent.frame()) {
  res <- as_utf8(x)
  if (length(res$bad) == 0) {
    return(res$text)
  }
  bad_text <- x[res$bad]
  enc <- suggested_encoding(bad_text)
  env <- new.env(parent = .envir)
  env$bad <- res$bad
  env$.read_fix <- sprintf("read.csv(file, fileEncoding = \"%s\")", enc)
  env$.refs_fix <- sprintf("read_refs(file, encoding = \"%s\")", enc)
  env$.convert_fix <- if (enc == "windows-1252") {
    sprintf("%s <- iconv(%s, \"windows-1252\", \"UTF-8\")", target, target)
  } else {
    sprintf("%s <- iconv(%s, \"\", \"UTF-8\", sub = \"byte\")", target, target)
  }
  abort_arg(
    c(problem,
      "i" = "This is what a file in another encoding gives when it is read without its encoding.",
      "i" = "Read the file with its encoding, e.g. {.code {(.read_fix)}} or {.code {(.refs_fix)}}.",
      "i" = if (enc == "windows-1252") {
        "Or convert the text, which reads as Windows-1252: {.code {(.convert_fix)}}."
      } else {
        "Or, if the encoding is unknown, keep the text and show each bad byte as {.val <e9>}: {.code {(.convert_fix)}}."
      }),
    class = c(class, "tabscreen_error_encoding"), arg = arg, call = call, .envir = env
  )
}
