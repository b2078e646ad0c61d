# Arrow IPC streams: the tables that travel between R and Go (ARCHITECTURE.md, "Tables and run
# options").
#
# The codec is C (src/ipc_*.c, src/flatbuf.c); these functions prepare the columns, call it and
# raise its errors. Column types: character <-> utf8, integer <-> int32, double <-> float64,
# logical <-> bool; NA <-> null in each. Every error has the class "tabscreen_error_ipc".

ipc_abort <- function(message, class = NULL, ..., call = rlang::caller_env()) {
  rlang::abort(message, class = unique(c(class, "tabscreen_error_ipc", "tabscreen_error")), ...,
               call = call)
}

# One data frame column as a plain character, integer, double or logical vector. Factors become
# character; Date becomes "YYYY-MM-DD" and POSIXct/POSIXlt "YYYY-MM-DD HH:MM:SS" (UTC) text;
# other classes over those four types lose their attributes; anything else is an error.
ipc_column <- function(x, name, call) {
  bad <- function(what) {
    ipc_abort(
      sprintf("Column `%s` is %s; only character, integer, double, logical, factor, Date and POSIXct columns can be sent to the Go core.",
              name, what),
      column = name, call = call
    )
  }
  if (is.data.frame(x)) bad("a data frame")
  if (!is.null(dim(x))) bad("a matrix")
  if (is.factor(x)) return(as.character(x))
  if (inherits(x, "Date")) return(format(x, "%Y-%m-%d"))
  if (inherits(x, "POSIXlt")) x <- as.POSIXct(x)
  if (inherits(x, "POSIXct")) return(format(x, "%Y-%m-%d %H:%M:%S", tz = "UTC"))
  if (inherits(x, "integer64")) bad("an integer64 vector (convert it with as.double() or as.integer())")
  type <- typeof(x)
  if (!type %in% c("character", "integer", "double", "logical")) {
    bad(switch(type, list = "a list", raw = "a raw vector", complex = "a complex vector",
               paste("of type", type)))
  }
  if (!is.null(attributes(x))) attributes(x) <- NULL
  if (type == "character") {
    bytes <- which(Encoding(x) == "bytes")
    if (length(bytes)) {
      ipc_abort(sprintf("Column `%s` has a string in \"bytes\" encoding (row %d); convert it to UTF-8 first, e.g. with iconv().",
                        name, bytes[[1]]), column = name, call = call)
    }
  }
  x
}

# A data frame as an Arrow IPC stream (raw vector): one schema, one record batch.
df_to_ipc <- function(df, call = rlang::caller_env()) {
  if (!is.data.frame(df)) {
    ipc_abort(sprintf("Expected a data frame, not %s.", class(df)[[1]]), call = call)
  }
  nms <- names(df)
  if (is.null(nms)) nms <- rep("", length(df))
  nms <- enc2utf8(as.character(nms))
  nms[is.na(nms)] <- "NA"
  cols <- vector("list", length(df))
  for (j in seq_along(cols)) cols[[j]] <- ipc_column(.subset2(df, j), nms[[j]], call)
  res <- .Call(C_ipc_write, cols, nms, as.double(nrow(df)))
  if (!is.null(res[[2]])) ipc_abort(res[[2]], call = call)
  res[[1]]
}

# An Arrow IPC stream (raw vector; any number of record batches) as a tibble.
ipc_to_df <- function(raw, call = rlang::caller_env()) {
  if (!is.raw(raw)) {
    ipc_abort(sprintf("An Arrow IPC stream must be a raw vector, not %s.", class(raw)[[1]]), call = call)
  }
  ipc_decoded_to_df(.Call(C_ipc_read, raw), call = call)
}

# tibble is imported so that its namespace (and pillar's, vctrs', ...) is loaded with the package's:
# loaded on first use, it was a tenth of the CPU of a session's first 10,000-job screening, which
# needs it anyway for its result.
#' @importFrom tibble new_tibble
NULL

# What the C reader returns, list(columns | NULL, nrow, error | NULL), as a tibble.
ipc_decoded_to_df <- function(decoded, call = rlang::caller_env()) {
  if (!is.null(decoded[[3]])) ipc_abort(decoded[[3]], call = call)
  tibble::new_tibble(decoded[[1]], nrow = as.integer(decoded[[2]]))
}
