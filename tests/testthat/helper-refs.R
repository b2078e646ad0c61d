# The real exports and labelled duplicate sets of ../shared/data (next to the repository's folder;
# not part of the package: tests that need them skip when it is absent).
shared_data <- function(...) {
  root <- normalizePath(test_path("..", ".."), mustWork = FALSE)
  path <- file.path(dirname(root), "shared", "data", ...)
  if (!file.exists(path)) {
    skip(paste("no", file.path("../shared/data", ...)))
  }
  path
}

# The columns a RIS file carries: read_refs()'s named columns, the tags, and the trailing ones.
ris_columns <- function(names) {
  names[names %in% c(tabscreen:::ris_core_columns, tabscreen:::ris_more_columns, "repeated_tags", "merged_ids",
    "tabscreen_decision", "tabscreen_note") | grepl("^[A-Z][A-Z0-9]$", names)]
}

# Text as RIS holds it: one line, white space runs as one space.
one_line_text <- function(x) {
  if (!is.character(x)) {
    return(x)
  }
  out <- trimws(gsub("\\s+", " ", x))
  out[!is.na(out) & !nzchar(out)] <- NA_character_
  out
}
