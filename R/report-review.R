# The part of screen_report() a review's paperwork needs: the PRISMA 2020 flow, the audit's bound
# on the relevant records among the Excludes, and the methods text, for a screening result.

# The section's HTML, or "" when `x` is a table (nothing but its rows is known) or when
# `prisma` and `methods` are FALSE. `prisma`: TRUE (the counts screen_prisma(x) gives), FALSE, or
# a screen_prisma() result.
report_review_section <- function(x, prisma, methods) {
  if (!inherits(x, "llm") || (isFALSE(prisma) && !methods)) return("")
  parts <- character()
  counts <- if (inherits(prisma, "tabscreen_prisma")) prisma else if (isTRUE(prisma)) {
    tryCatch(suppressMessages(screen_prisma(x)), tabscreen_error_prisma_args = function(e) NULL)
  }
  if (!is.null(counts)) parts <- c(parts, report_prisma_html(counts))
  audit <- tryCatch(screen_review_audit(x), tabscreen_error_review_audit = function(e) NULL)
  if (!is.null(audit) && nrow(audit) > 0) parts <- c(parts, report_audit_html(audit))
  if (methods) parts <- c(parts, report_methods_html(screen_methods(x)))
  if (length(parts) == 0) return("")
  html_tag("section", html_tag("h2", "For the review's report"), paste(parts, collapse = "\n"),
    attrs = list(id = "review-report", class = "group review-report"))
}

report_prisma_html <- function(counts) {
  text <- lapply(prisma_box_texts(counts), function(t) gsub("\n", "<br>", html_escape(t), fixed = TRUE))
  box <- function(name, side = FALSE) html_tag("div", text[[name]], attrs = list(class = if (side) "pbox side" else "pbox"))
  arrow <- function(ch) html_tag("div", ch, attrs = list(class = "parrow"))
  stage <- function(label) html_tag("div", label, attrs = list(class = "pstage"))
  blank <- html_tag("div", "")
  grid <- c(
    stage("Identification"), box("identified"), arrow("\u2192"), box("removed", TRUE),
    blank, arrow("\u2193"), blank, blank,
    stage("Screening"), box("screened"), arrow("\u2192"), box("excluded", TRUE),
    blank, arrow("\u2193"), blank, blank,
    blank, box("sought"), arrow("\u2192"), box("not_retrieved", TRUE),
    blank, arrow("\u2193"), blank, blank,
    blank, box("assessed"), arrow("\u2192"), box("reports_excluded", TRUE),
    blank, arrow("\u2193"), blank, blank,
    stage("Included"), box("included"), blank, blank
  )
  html_tag("div", html_tag("h3", "PRISMA 2020 flow"),
    html_tag("div", paste(grid, collapse = ""), attrs = list(class = "prisma")),
    html_tag("p", "Counts from screen_prisma(); n = ? where the package cannot know them.", attrs = list(class = "section-note")))
}

report_audit_html <- function(audit) {
  rows <- vapply(seq_len(nrow(audit)), function(i) {
    a <- audit[i, ]
    html_tag("tr", html_tag("td", html_escape(a$model)), html_tag("td", a$excludes), html_tag("td", a$reviewed),
      html_tag("td", a$found + a$unsure), html_tag("td", html_tag("strong", a$missed_upper)),
      html_tag("td", paste0(round(100 * a$conf_level), " %")))
  }, character(1))
  head <- html_tag("tr", paste0(vapply(c("Model", "Excludes", "Audited", "Relevant found", "At most missed", "Confidence"),
    function(h) html_tag("th", h), character(1)), collapse = ""))
  html_tag("div", html_tag("h3", "The audit of the Excludes"),
    html_tag("table", head, paste(rows, collapse = ""), attrs = list(class = "audit")),
    html_tag("p", "A random sample of the model's Excludes read by a reviewer (screen_review_audit()); an uncertain record counts as relevant.",
      attrs = list(class = "section-note")))
}

report_methods_html <- function(m) {
  paragraphs <- strsplit(format(m, "text"), "\n\n", fixed = TRUE)[[1]]
  appendix <- which(startsWith(paragraphs, "Appendix:"))[1]
  body <- if (is.na(appendix)) paragraphs else paragraphs[seq_len(appendix - 1)]
  prompts <- if (is.na(appendix)) character() else paragraphs[-seq_len(appendix)]
  html_tag("div", html_tag("h3", "Methods text"),
    paste(vapply(body, function(p) html_tag("p", html_escape(p)), character(1)), collapse = ""),
    if (length(prompts)) html_tag("h4", html_escape(paragraphs[appendix])),
    if (length(prompts)) paste(vapply(prompts, function(p) html_tag("pre", html_escape(p)), character(1)), collapse = ""),
    attrs = list(class = "methods"))
}
