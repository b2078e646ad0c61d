# The Arrow IPC codec (src/ipc_*.c, R/ipc.R), checked against itself, against arrow-go (through
# TsRoundTrip) and against the JS apache-arrow package (tests/node).

# ---- helpers ----------------------------------------------------------------------------------

ipc_words <- c("", "a", "Jørgensen", "Ã¥", "naïve café", "😀", "👩‍🔬 emoji", "中文字符", "日本語のテキスト",
               "한국어", "Ελληνικά", "кириллица", "tab\there", "line\nbreak", "quote \" and \\ backslash",
               "{braces} [brackets]", strrep("x", 1000))

# A random data frame with all four types, NA in each column, empty and non-ASCII strings.
random_df <- function(n, seed, na_rate = 0.1) {
  withr::with_seed(seed, {
    na <- function() runif(n) < na_rate
    s <- sample(ipc_words, n, replace = TRUE)
    s[na()] <- NA
    i <- sample(c(-.Machine$integer.max, -1L, 0L, 1L, .Machine$integer.max, sample.int(1e6, 20)), n, TRUE)
    i[na()] <- NA
    f <- sample(c(rnorm(20), 0, -0, 1e308, -1e-308, 5e-324, NaN, Inf, -Inf, pi), n, TRUE)
    f[na()] <- NA
    b <- sample(c(TRUE, FALSE), n, TRUE)
    b[na()] <- NA
    data.frame(s = s, i = i, f = f, b = b, stringsAsFactors = FALSE)
  })
}

expect_same_table <- function(got, want) {
  expect_s3_class(got, "tbl_df")
  want <- tibble::as_tibble(want, .name_repair = "minimal")
  expect_identical(names(got), names(want))
  expect_identical(nrow(got), nrow(want))
  for (j in seq_along(want)) {
    # identical() tells NA from NaN, and compares strings by their characters
    expect_identical(got[[j]], want[[j]], label = sprintf("column %d (%s)", j, names(want)[[j]]))
    if (is.character(want[[j]])) {
      enc <- Encoding(got[[j]][!is.na(got[[j]])])
      expect_true(all(enc %in% c("UTF-8", "unknown")))
    }
  }
}

le32 <- function(raw, at) readBin(raw[at + 1:4], "integer", size = 4, endian = "little")
put_le32 <- function(raw, at, value) {
  raw[at + 1:4] <- writeBin(as.integer(value), raw(), size = 4, endian = "little")
  raw
}

# Byte offset (0-based) of the record batch body in a stream written by df_to_ipc().
body_start <- function(raw) {
  schema_len <- le32(raw, 4)
  batch_len <- le32(raw, 8 + schema_len + 4)
  8 + schema_len + 8 + batch_len
}

corner_cases <- function() {
  big <- strrep("abcdé😀中", 100 * 1024 / 14)
  list(
    "zero rows" = random_df(0, 1),
    "zero columns" = data.frame(row.names = 1:3),
    "zero rows and columns" = data.frame(),
    "one row" = random_df(1, 2),
    "random, 10% NA" = random_df(257, 3),
    "random, 90% NA" = random_df(100, 4, na_rate = 0.9),
    "all NA" = data.frame(s = NA_character_, i = NA_integer_, f = NA_real_, b = NA)[rep(1, 9), ],
    "no NA" = random_df(64, 5, na_rate = 0),
    "empty strings" = data.frame(s = c("", "", NA, "")),
    "100 KB strings" = data.frame(abstract = c(big, "", NA, paste0(big, "tail")), n = 1:4),
    "odd names" = stats::setNames(data.frame(1L, "x", 2.5, TRUE), c("Jørgensen", "", "with space", "😀")),
    "duplicate names" = stats::setNames(data.frame(1L, 2L), c("a", "a")),
    "all words" = data.frame(w = ipc_words)
  )
}

# ---- R -> C -> R ------------------------------------------------------------------------------

test_that("tables round trip through the C codec", {
  for (name in names(corner_cases())) {
    df <- corner_cases()[[name]]
    rownames(df) <- NULL
    raw <- df_to_ipc(df)
    expect_type(raw, "raw")
    expect_equal(length(raw) %% 8, 0, label = name)
    expect_identical(raw[1:4], as.raw(c(0xff, 0xff, 0xff, 0xff)))
    expect_identical(utils::tail(raw, 8), as.raw(c(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0)))
    expect_same_table(ipc_to_df(raw), df)
  }
  for (seed in 1:20) {
    df <- random_df(sample.int(300, 1) - 1L, seed)
    expect_same_table(ipc_to_df(df_to_ipc(df)), df)
  }
})

test_that("the validity bitmap is written only for columns with NA", {
  n <- 1000
  bytes <- function(x) length(df_to_ipc(data.frame(x = x)))
  bitmap <- ceiling(ceiling(n / 8) / 8) * 8
  for (x in list(seq_len(n), as.double(seq_len(n)), rep(c(TRUE, FALSE), n / 2), rep("ab", n))) {
    with_na <- x
    with_na[7] <- NA
    # NA_character_ also drops its two bytes of text, rounded into the same 8-byte padding
    expect_equal(bytes(with_na) - bytes(x), bitmap)
  }
})

test_that("factors, dates and other classes are converted; other types are classed errors", {
  df <- data.frame(
    f = factor(c("b", NA, "a"), levels = c("a", "b")),
    d = as.Date(c("2024-02-29", NA, "1970-01-01")),
    t = as.POSIXct(c("2024-01-02 03:04:05", NA, "1999-12-31 23:59:59"), tz = "UTC"),
    lt = as.POSIXlt(as.POSIXct(c("2024-01-02 03:04:05", "2000-01-01 00:00:00", NA), tz = "UTC")),
    asis = I(c(1.5, 2, NA)),
    dt = as.difftime(c(1, 2, 3), units = "secs")
  )
  got <- ipc_to_df(df_to_ipc(df))
  expect_identical(got$f, c("b", NA, "a"))
  expect_identical(got$d, c("2024-02-29", NA, "1970-01-01"))
  expect_identical(got$t, c("2024-01-02 03:04:05", NA, "1999-12-31 23:59:59"))
  expect_identical(got$lt, c("2024-01-02 03:04:05", "2000-01-01 00:00:00", NA))
  expect_identical(got$asis, c(1.5, 2, NA))
  expect_identical(got$dt, c(1, 2, 3))

  bad <- list(
    lst = I(list(1, "a", NULL)),
    rw = as.raw(1:3),
    cx = complex(real = 1:3, imaginary = 0),
    mat = matrix(1:6, 3)
  )
  for (col in names(bad)) {
    df <- data.frame(ok = 1:3)
    df[[col]] <- bad[[col]]
    err <- expect_error(df_to_ipc(df), class = "tabscreen_error_ipc")
    expect_match(conditionMessage(err), paste0("`", col, "`"), fixed = TRUE)
    expect_identical(err$column, col)
  }
  err <- expect_error(df_to_ipc(list(a = 1)), class = "tabscreen_error_ipc")
  expect_s3_class(err, "tabscreen_error")
  expect_error(ipc_to_df("not raw"), class = "tabscreen_error_ipc")
})

test_that("text in other encodings is sent as UTF-8; invalid text is a classed error", {
  latin1 <- iconv(c("Jørgensen", "café", NA), "UTF-8", "latin1")
  expect_identical(Encoding(latin1[1:2]), c("latin1", "latin1"))
  got <- ipc_to_df(df_to_ipc(data.frame(s = latin1)))$s
  expect_identical(got, c("Jørgensen", "café", NA))
  expect_identical(Encoding(got[1:2]), c("UTF-8", "UTF-8"))
  expect_identical(charToRaw(got[[1]]), charToRaw("Jørgensen"))

  bytes <- "abc\xff"
  Encoding(bytes) <- "bytes"
  err <- expect_error(df_to_ipc(data.frame(s = c("ok", bytes))), class = "tabscreen_error_ipc")
  expect_match(conditionMessage(err), "row 2")

  invalid <- rawToChar(as.raw(c(0x61, 0xc3, 0x28))) # a truncated two-byte sequence
  Encoding(invalid) <- "UTF-8"
  err <- expect_error(df_to_ipc(data.frame(abstract = c("fine", "fine", invalid))), class = "tabscreen_error_ipc")
  expect_match(conditionMessage(err), "'abstract', row 3: the text is not valid UTF-8", fixed = TRUE)
})

# ---- corrupt input ----------------------------------------------------------------------------

test_that("every truncation of a stream is an error, never a crash", {
  raw <- df_to_ipc(random_df(7, 11))
  # the C entry point directly (an R condition per truncation would make this slow)
  rejected <- vapply(0:(length(raw) - 1), function(n) is.character(.Call(C_ipc_read, raw[seq_len(n)])[[3]]),
                     logical(1))
  expect_true(all(rejected), label = sprintf("truncations rejected: %d of %d", sum(rejected), length(rejected)))
  for (n in c(0, 3, 8, 100, length(raw) - 8, length(raw) - 1)) {
    expect_error(ipc_to_df(raw[seq_len(n)]), class = "tabscreen_error_ipc")
  }
  expect_error(ipc_to_df(raw[seq_len(length(raw) - 8)]), "end-of-stream", class = "tabscreen_error_ipc")
})

test_that("corrupt lengths, offsets and text are errors", {
  raw <- df_to_ipc(data.frame(s = c("abc", "de")))
  body <- body_start(raw)
  # body: validity (empty), offsets [0, 3, 5] padded to 16 bytes, then "abcde"
  expect_identical(le32(raw, body + 4), 3L)
  expect_identical(rawToChar(raw[body + 16 + 1:5]), "abcde")

  expect_error(ipc_to_df(put_le32(raw, 4, 0x7ffffff0)), "metadata length", class = "tabscreen_error_ipc")
  expect_error(ipc_to_df(put_le32(raw, 4, -16)), "metadata length", class = "tabscreen_error_ipc")
  expect_error(ipc_to_df(put_le32(raw, body + 4, 100)), "offsets", class = "tabscreen_error_ipc")
  expect_error(ipc_to_df(put_le32(raw, body + 4, -1)), "offsets", class = "tabscreen_error_ipc")
  expect_error(ipc_to_df(put_le32(raw, body + 8, 2)), "offsets", class = "tabscreen_error_ipc")
  bad_utf8 <- raw
  bad_utf8[body + 17] <- as.raw(0xff)
  expect_error(ipc_to_df(bad_utf8), "row 1: the text is not valid UTF-8", class = "tabscreen_error_ipc")
  nul <- raw
  nul[body + 18] <- as.raw(0)
  expect_error(ipc_to_df(nul), "NUL", class = "tabscreen_error_ipc")
  expect_error(ipc_to_df(raw[-(length(raw) - 0:7)]), "end-of-stream", class = "tabscreen_error_ipc")
  expect_error(ipc_to_df(raw()), class = "tabscreen_error_ipc")
  expect_error(ipc_to_df(charToRaw("definitely not an Arrow stream")), class = "tabscreen_error_ipc")

  # the same corruptions are caught by Go
  local_test_only()
  roundtrip_raw <- function(r) .Call(C_ipc_roundtrip_go, r)
  expect_match(roundtrip_raw(put_le32(raw, body + 4, 100))[[2]], "tabscreen_error_ipc")
  expect_match(roundtrip_raw(bad_utf8)[[2]], "UTF-8")
  expect_null(roundtrip_raw(bad_utf8)[[1]])
  expect_identical(roundtrip_raw(raw)[[2]], "{}")
})

test_that("random byte flips give an error or a consistent table, never a crash", {
  local_test_only()
  raw <- df_to_ipc(random_df(20, 12))
  n <- 3000
  accepted <- consistent <- go_ok <- 0
  withr::with_seed(13, {
    for (k in seq_len(n)) {
      r <- raw
      at <- sample.int(length(r), sample.int(3, 1))
      r[at] <- as.raw(sample.int(256, length(at), replace = TRUE) - 1L)
      # the C entry point directly: no R condition per iteration
      got <- .Call(C_ipc_read, r)
      if (is.null(got[[3]])) {
        accepted <- accepted + 1
        consistent <- consistent + all(lengths(got[[1]]) == got[[2]])
      }
      go <- .Call(C_ipc_roundtrip_go, r)
      go_ok <- go_ok + (identical(go[[2]], "{}") || grepl('"error"', go[[2]], fixed = TRUE))
    }
  })
  expect_equal(consistent, accepted)
  expect_equal(go_ok, n)
  expect_lt(accepted, n)
})

# ---- R -> Go -> R -----------------------------------------------------------------------------

test_that("tables round trip through Go (arrowio decode + encode)", {
  for (name in names(corner_cases())) {
    df <- corner_cases()[[name]]
    rownames(df) <- NULL
    expect_same_table(ipc_roundtrip_go(df), df)
  }
  for (seed in 101:130) {
    df <- random_df(sample.int(500, 1) - 1L, seed)
    expect_same_table(ipc_roundtrip_go(df), df)
  }
  err <- expect_error(ipc_roundtrip_go(data.frame(x = I(list(1)))), class = "tabscreen_error_ipc")
  expect_match(conditionMessage(err), "`x`")
})

test_that("100,000 rows of abstracts (over 100 MB of text) round trip intact", {
  abstracts <- c(
    "Background: We examined the effect of a family-focused prevention programme on substance use among adolescents. Methods: 256 participants were randomised; outcomes were measured at three waves.",
    "Objective: To review interventions for children in out-of-home care (Jørgensen et al.). Results: Twelve trials met the inclusion criteria; the pooled effect was small (g = 0.21, 95% CI 0.05 to 0.37).",
    "本研究探讨了社会网络对青少年行为的影响。 Conclusions: diffusion effects were not detected."
  )
  n <- 100000
  df <- data.frame(
    title = sprintf("Record %d: a study of friendship networks", seq_len(n)),
    abstract = paste(strrep(sample(abstracts, n, TRUE), 6), seq_len(n)),
    stringsAsFactors = FALSE
  )
  df$abstract[seq(1, n, by = 997)] <- NA
  mb <- sum(nchar(df$abstract, "bytes"), na.rm = TRUE) / 1e6
  expect_gt(mb, 100)
  # How fast is measured by bench/run.R, not here: a timing in a test can flake.
  expect_same_table(ipc_to_df(df_to_ipc(df)), df)
  expect_same_table(ipc_roundtrip_go(df), df)
})

# Large text columns that come from Go stay in Go's buffer as lazy character vectors (ALTREP,
# src/ipc_lazy.c) until R reads them.
is_lazy <- function(x) any(grepl("tabscreen lazy utf8", utils::capture.output(.Internal(inspect(x)))))
is_complete <- function(x) any(grepl("complete", utils::capture.output(.Internal(inspect(x)))))

lazy_df <- function(n = 20000) {
  # about 12 MB of text: more than one record batch of Go's encoder (8 MB each)
  words <- c("Jørgensen", "naïve café", "中文字符", "😀", "кириллица", "plain ascii text")
  text <- paste(rep(sprintf("Abstract %d:", seq_len(n)), each = 1), strrep(sample(words, n, TRUE), 40))
  text[seq(7, n, by = 97)] <- NA
  text[[3]] <- ""
  data.frame(id = seq_len(n), text = text, short = sprintf("m%d", seq_len(n) %% 5), stringsAsFactors = FALSE)
}

test_that("large text columns from Go are lazy and read as the eager ones", {
  withr::local_seed(11)
  df <- lazy_df()
  back <- ipc_roundtrip_go(df)
  expect_true(is_lazy(back$text))
  expect_false(is_lazy(back$short)) # short strings are made at once
  expect_false(is_lazy(df$text))
  x <- back$text
  expect_identical(length(x), nrow(df))
  # single elements, a subset, NA, the empty string and the encoding, before the rest is made
  expect_identical(x[[2]], df$text[[2]])
  expect_identical(x[c(nrow(df), 1, 9000, 7, 3)], df$text[c(nrow(df), 1, 9000, 7, 3)])
  expect_false(is_complete(x))
  expect_identical(is.na(x), is.na(df$text))
  utf8 <- which(grepl("[^ -~]", df$text))
  expect_gt(length(utf8), 1000)
  expect_true(all(Encoding(x[utf8]) == "UTF-8"))
  expect_identical(enc2native(x[utf8[1:5]]), enc2native(df$text[utf8[1:5]]))
  ascii <- which(!is.na(df$text) & !grepl("[^ -~]", df$text))
  expect_true(all(Encoding(x[ascii]) == "unknown"))
  # the whole vector (Dataptr), and functions that read it at once
  expect_identical(x, df$text)
  expect_true(is_complete(x))
  expect_identical(sort(back$text, na.last = TRUE), sort(df$text, na.last = TRUE))
  expect_identical(nchar(back$text, "bytes"), nchar(df$text, "bytes"))
  expect_same_table(back, df)
})

test_that("a lazy column can be modified, copied and saved as a plain character vector", {
  withr::local_seed(12)
  df <- lazy_df(15000)
  back <- ipc_roundtrip_go(df)
  x <- back$text
  y <- x
  y[2] <- "changed é"
  expect_identical(y[2], "changed é")
  expect_identical(x[2], df$text[2]) # the copy was changed, not the vector it came from
  expect_identical(y[-2], df$text[-2])
  back$text[5] <- NA
  expect_true(is.na(back$text[5]))
  expect_identical(back$text[-5], df$text[-5])
  # modified in place (Set_elt): a fresh lazy vector that nothing else references
  z <- ipc_roundtrip_go(df)$text
  z[[1]] <- "first"
  expect_identical(z, c("first", df$text[-1]))

  f <- withr::local_tempfile(fileext = ".rds")
  fresh <- ipc_roundtrip_go(df)
  saveRDS(fresh, f)
  read <- readRDS(f)
  expect_false(is_lazy(read$text))
  expect_identical(read$text, df$text)
  expect_identical(unserialize(serialize(ipc_roundtrip_go(df)$text, NULL)), df$text)
})

test_that("a lazy column outlives its table and collections, read before and after", {
  withr::local_seed(13)
  df <- lazy_df(12000)
  x <- ipc_roundtrip_go(df)$text
  first <- x[1:10]
  gc()
  gc(full = TRUE)
  expect_identical(x[11:20], df$text[11:20])
  tab <- ipc_roundtrip_go(df)
  w <- tab$text
  rm(tab)
  gc(full = TRUE)
  for (i in seq(1, 12000, by = 1000)) expect_identical(w[[i]], df$text[[i]])
  expect_identical(first, df$text[1:10])
  expect_identical(x, df$text)
  gc(full = TRUE)
  expect_identical(w, df$text)
  # every row read one by one: the vector is complete and needs Go's buffer no more
  v <- ipc_roundtrip_go(df)$text
  for (i in seq_along(v)) v[[i]]
  expect_true(is_complete(v))
  gc(full = TRUE)
  expect_identical(v, df$text)
})

test_that("options(tabscreen.lazy_text = FALSE) gives plain character vectors", {
  withr::local_seed(14)
  df <- lazy_df(12000)
  withr::local_options(tabscreen.lazy_text = FALSE)
  back <- ipc_roundtrip_go(df)
  expect_false(is_lazy(back$text))
  expect_same_table(back, df)
})

# ---- JS apache-arrow (tests/node) -------------------------------------------------------------

node_dir <- function() normalizePath(test_path("..", "node"), mustWork = FALSE)

# Skips only when node is missing; otherwise installs apache-arrow from the lock file if needed
# (npm's cache makes that offline after `make test`) and fails if it cannot.
setup_node <- function() {
  node <- Sys.which("node")
  skip_if(!nzchar(node), "node is not on PATH")
  dir <- node_dir()
  if (!dir.exists(file.path(dir, "node_modules", "apache-arrow"))) {
    npm <- Sys.which("npm")
    if (nzchar(npm) && file.exists(file.path(dir, "package-lock.json"))) {
      withr::with_dir(dir, system2(npm, c("ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"),
                                   stdout = FALSE, stderr = FALSE))
    }
  }
  if (!dir.exists(file.path(dir, "node_modules", "apache-arrow"))) {
    fail(sprintf("apache-arrow is not installed in %s: run `npm ci` there", dir))
    skip("apache-arrow missing")
  }
  list(node = node, dir = dir)
}

# Runs a node script; returns the file holding its standard output.
run_node <- function(nd, script, args, env = parent.frame()) {
  out <- withr::local_tempfile(fileext = ".out", .local_envir = env)
  err <- withr::local_tempfile(fileext = ".err")
  status <- system2(nd$node, c(shQuote(file.path(nd$dir, script)), shQuote(args)), stdout = out, stderr = err)
  if (status != 0) {
    stop(sprintf("node %s failed (%d): %s", script, status, paste(readLines(err), collapse = "\n")))
  }
  out
}

arrow_type <- function(x) {
  switch(typeof(x), character = "utf8", integer = "int32", double = "float64", logical = "bool")
}

# JSON values as write.cjs takes them: null for NA; doubles as strings ("NaN", "Inf", "-Inf" or 17
# significant digits, since jsonlite writes at most 15).
json_values <- function(x) {
  lapply(seq_along(x), function(i) {
    v <- x[[i]]
    if (is.double(v) && is.nan(v)) return("NaN")
    if (is.na(v)) return(NULL)
    if (is.double(v)) return(if (is.infinite(v)) (if (v > 0) "Inf" else "-Inf") else sprintf("%.17g", v))
    v
  })
}

from_json_values <- function(values, type) {
  na <- switch(type, utf8 = , large_utf8 = NA_character_, int32 = NA_integer_, float64 = NA_real_, bool = NA)
  conv <- switch(type, utf8 = , large_utf8 = as.character, int32 = as.integer, bool = as.logical,
                 float64 = function(v) if (is.character(v)) c("NaN" = NaN, "Inf" = Inf, "-Inf" = -Inf)[[v]] else as.double(v))
  out <- rep(na, length(values))
  for (i in seq_along(values)) if (!is.null(values[[i]])) out[[i]] <- conv(values[[i]])
  out
}

test_that("node's apache-arrow reads what R writes", {
  nd <- setup_node()
  frames <- c(corner_cases()[c("zero rows", "all NA", "100 KB strings", "odd names", "all words")],
              list(random = random_df(300, 21)))
  for (name in names(frames)) {
    df <- frames[[name]]
    rownames(df) <- NULL
    file <- withr::local_tempfile(fileext = ".arrows")
    writeBin(df_to_ipc(df), file)
    desc <- jsonlite::fromJSON(run_node(nd, "describe.cjs", file), simplifyVector = FALSE)
    expect_identical(desc$num_rows, nrow(df), label = name)
    expect_identical(desc$num_batches, 1L)
    expect_identical(vapply(desc$columns, `[[`, "", "name"), names(df))
    for (j in seq_along(df)) {
      col <- desc$columns[[j]]
      expect_identical(col$type, arrow_type(df[[j]]), label = paste(name, j))
      expect_identical(from_json_values(col$values, col$type), df[[j]], label = paste(name, names(df)[[j]]))
    }
  }
})

test_that("R reads what node's apache-arrow writes, also in several batches", {
  nd <- setup_node()
  df <- random_df(200, 31)
  df$ls <- sample(c(ipc_words, NA), nrow(df), TRUE)
  cases <- list(
    list(df = df, sizes = c(50, 0, 1, 149), large = "ls"),
    list(df = df[0, ], sizes = NULL, large = NULL),
    list(df = corner_cases()[["100 KB strings"]], sizes = c(1, 3), large = NULL),
    list(df = df[1:10, ], sizes = rep(1, 10), large = "s")
  )
  for (k in seq_along(cases)) {
    cs <- cases[[k]]
    want <- cs$df
    rownames(want) <- NULL
    spec <- list(
      batch_sizes = cs$sizes,
      columns = lapply(names(want), function(nm) {
        list(name = nm, type = if (nm %in% cs$large) "large_utf8" else arrow_type(want[[nm]]),
             values = json_values(want[[nm]]))
      })
    )
    json <- withr::local_tempfile(fileext = ".json")
    file <- withr::local_tempfile(fileext = ".arrows")
    writeLines(jsonlite::toJSON(spec, auto_unbox = TRUE, null = "null"), json, useBytes = TRUE)
    run_node(nd, "write.cjs", c(json, file))
    raw <- readBin(file, "raw", file.size(file))
    expect_same_table(ipc_to_df(raw), want)
    # and through Go: JS -> arrow-go -> C
    local_test_only()
    go <- .Call(C_ipc_roundtrip_go, raw)
    expect_identical(go[[2]], "{}")
    expect_same_table(ipc_decoded_to_df(go[[1]]), want)
  }
})
