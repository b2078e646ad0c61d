# The one way into the Go core. Every .Call entry into Go (src/bridge.c) returns
# list(table, json, table2, status, table3): Go's status code, its JSON document, and up to three
# tables decoded from Arrow IPC. go_call() makes the call, raises Go's error as a classed R error when
# the status says so (after C has freed Go's memory), and returns the decoded document and tables.

# `on_error(err)`, when given, may raise an error of its own wording from Go's error document first
# (a file that cannot be read); `decode = FALSE` leaves the tables as C decoded them, list(columns,
# nrow, error), for a caller that binds many chunks (a tibble per chunk costs more than its parsing).
go_call <- function(entry, ..., simplify = TRUE, decode = TRUE, on_error = NULL, call = rlang::caller_env()) {
  out <- .Call(entry, ...)
  if (!identical(out$status, 0L)) {
    err <- tryCatch(from_json(out$json, simplify = FALSE)$error, error = function(e) NULL)
    if (!is.null(on_error) && !is.null(err)) on_error(err)
    abort_go_error(err, call)
  }
  table <- function(t) {
    if (is.null(t)) return(NULL)
    if (!decode) {
      if (!is.null(t[[3]])) ipc_abort(t[[3]], call = call)
      return(t)
    }
    ipc_decoded_to_df(t, call = call)
  }
  list(meta = from_json(out$json, simplify = simplify), table = table(out$table),
       table2 = table(out$table2), table3 = table(out$table3))
}

# Go's error document as an R error of its classes (and "tabscreen_error"). An error about an
# argument (a model's policy refusing a value) carries the argument and message bullets, and is
# raised as the argument errors of R/check-args.R are.
abort_go_error <- function(err, call) {
  status <- http_status_class(err$status)
  # Go's own tabscreen_error_http goes after the status's class, which is the more specific.
  class <- c(setdiff(unlist(err$class) %||% "tabscreen_error_internal", status), status)
  if (!is.null(err$bullets)) {
    text <- vapply(err$bullets, function(b) b$text, character(1))
    names(text) <- vapply(err$bullets, function(b) b$kind, character(1))
    # Go's text is plain: its braces must not be read as cli markup.
    text[] <- gsub("}", "}}", gsub("{", "{{", text, fixed = TRUE), fixed = TRUE)
    abort_arg(text, class = class, arg = err$arg, call = call)
  }
  message <- err$message %||% "the Go core returned an error without a message"
  # Plain rlang::abort(): Go's text may hold braces that cli would read as markup.
  hint <- store_error_hint(class[[1]])
  # A damaged store, or one that cannot yet take the answers an earlier call kept, is a store that
  # cannot be used, as a handler of the wider class expects.
  if (any(c("tabscreen_error_store_damaged", "tabscreen_error_store_kept") %in% class)) {
    class <- c(class, "tabscreen_error_store")
  }
  rlang::abort(c(message, hint), class = unique(c(class, "tabscreen_error")), status = err$status, call = call)
}

to_json <- function(x) {
  jsonlite::toJSON(x, auto_unbox = TRUE, null = "null", na = "null", digits = NA)
}

from_json <- function(x, simplify = TRUE) {
  jsonlite::fromJSON(x, simplifyVector = simplify)
}
