# PRISMA 2020 flow counts: what the package knows of a review's records (read_refs(), dedup_refs(),
# the screening and the people's review of it), in the boxes of the PRISMA 2020 flow diagram.

#' PRISMA 2020 flow counts of a screening, and its diagram
#'
#' Counts the records of a review for the identification and screening part of the PRISMA 2020
#' flow diagram (Page et al. 2021, BMJ 372:n71), from what the package holds: the references read
#' with [read_refs()] and deduplicated with [dedup_refs()], the screening, and the decisions people
#' took in [screen_review()]. `plot()` draws the diagram (a ggplot2 figure), with the numbers
#' labelled as in the PRISMA 2020 template.
#'
#' @section Where each count comes from:
#' * **Records identified**, per source: the records of each file read, by the column
#'   `source_file` of [read_refs()]: the records `refs` kept plus the duplicates merged into them
#'   ([dedup_groups()]). Without `refs`, the counts are `NA`, or the ones given in `identified`.
#' * **Duplicate records removed**: the records [dedup_refs()] merged into others.
#' * **Records screened**: the screening's records.
#' * **Records excluded**: by the model, the records it excluded that no reviewer included;
#'   by the reviewers, the records they excluded (Include and Check verdicts they overturned, and
#'   Excludes of an audit sample they confirmed are counted with the model's).
#' * **Reports sought for retrieval**: the records screened and not excluded: the model's
#'   Includes that no reviewer excluded, and the records the reviewers included (Checks, or
#'   Excludes they found in an audit).
#' * **Awaiting a decision**: `Check` records nobody has decided yet (PRISMA has no box for them:
#'   a message says so; decide them in [screen_review()]).
#'
#' A reviewer's decision is the consensus [screen_review_merge()] gives: a record reviewers
#' disagree on, or one marked Unsure, counts as not decided by them.
#'
#' What the package cannot know is given as arguments and shown as given (`NA`, shown as
#' "n = ?", when not): records removed before screening for other reasons or by automation tools,
#' reports not retrieved, reports excluded at full text, studies and reports included.
#'
#' @param x A screening result (class `llm`) with one verdict per record: of one prompt, model and
#'   `top_p`, or a cascade ([screen_cascade()]).
#' @param refs The references as screened, the result of [dedup_refs()] (for the identification
#'   counts), or `NULL`.
#' @param reviewer,store As in [screen_review_merge()]: whose decisions count, and the answer
#'   store that holds them.
#' @param identified Records identified per source, a named vector of counts, when `refs` does
#'   not tell (e.g. `c(MEDLINE = 1520, Embase = 2210)`); it replaces what `refs` says.
#' @param automation_removed,other_removed Records removed before screening as marked ineligible
#'   by automation tools, or for other reasons.
#' @param not_retrieved,reports_excluded Reports not retrieved, and reports assessed at full text
#'   and excluded.
#' @param studies_included,reports_included Studies included in the review, and their reports.
#' @return A tibble of class `tabscreen_prisma`: one row per box of the diagram, with `stage`
#'   (`"Identification"`, `"Screening"`, `"Included"`), `box` (a key: `identified`,
#'   `identified_source`, `duplicates_removed`, `automation_removed`, `other_removed`,
#'   `screened`, `excluded`, `excluded_model`, `excluded_reviewers`, `awaiting`, `sought`,
#'   `not_retrieved`, `assessed`, `reports_excluded`, `studies_included`, `reports_included`),
#'   `label` (the template's words; the source's name for `identified_source`), `n` (integer;
#'   `NA` when not known) and `from` (where the count comes from: `"refs"`, `"screening"`,
#'   `"review"`, `"given"` or `"computed"`).
#' @seealso [screen_report()], which shows the diagram; [screen_review_audit()] for the bound on
#'   the relevant records among the Excludes.
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' files <- system.file("extdata", c("fft_include.ris", "fft_exclude.ris"), package = "tabscreen")
#' refs <- dedup_refs(read_refs(files), messages = FALSE)
#' res <- tabscreen_a.tools(refs, prompt = "Is this study about functional family therapy?",
#'   title = title, abstract = abstract, api_url = fake$url, api_key = "not-a-real-key",
#'   progress = FALSE, messages = FALSE)
#' counts <- screen_prisma(res, refs, not_retrieved = 0)
#' counts
#' if (requireNamespace("ggplot2", quietly = TRUE)) print(plot(counts))
#' fake$stop()
#' options(old)
screen_prisma <- function(x, refs = NULL, reviewer = NULL, store = NULL, identified = NULL,
                          automation_removed = 0, other_removed = 0, not_retrieved = NA,
                          reports_excluded = NA, studies_included = NA, reports_included = NA) {
  call <- rlang::current_env()
  if (!inherits(x, "llm")) {
    abort_arg("{.arg x} must be a screening result (class {.cls llm}), not {.obj_type_friendly {x}}.",
      class = c("tabscreen_error_prisma_args", "tabscreen_error_object"), arg = "x", call = call)
  }
  given <- list(automation_removed = automation_removed, other_removed = other_removed,
    not_retrieved = not_retrieved, reports_excluded = reports_excluded, studies_included = studies_included,
    reports_included = reports_included)
  for (arg in names(given)) given[[arg]] <- prisma_count(given[[arg]], arg, call)
  merged <- screen_review_merge(x, reviewer = reviewer, store = store)
  src <- report_source(merged, call)
  rows <- report_rows(src)
  if (anyDuplicated(rows$studyid)) {
    groups <- length(unique(paste(rows$promptid, rows$model, rows$top_p, sep = "\r")))
    abort_arg(c("{.arg x} screens its records with {groups} prompts, models or {.field top_p} values: PRISMA counts each record once.",
      "i" = "Give one screening per call, or combine them into one verdict per record first (a cascade has one)."),
      class = "tabscreen_error_prisma_args", arg = "x", call = call)
  }
  source_counts <- prisma_identified(refs, identified, call)
  reviewed <- src$table$human_review
  # A record without an answer is a Check: it is never dropped from view.
  verdict <- ifelse(rows$failed | rows$verdict %in% "Check", "Check", ifelse(rows$verdict %in% "Exclude", "Exclude", "Include"))
  people_in <- reviewed %in% 1
  people_out <- reviewed %in% 0
  excluded_model <- sum(verdict == "Exclude" & !people_in)
  excluded_reviewers <- sum(people_out & verdict != "Exclude")
  awaiting <- sum(verdict == "Check" & is.na(reviewed))
  if (awaiting > 0) {
    cli::cli_inform(c("!" = "{awaiting} Check record{?s} {?has/have} no reviewer's decision: PRISMA has no box for {?it/them}.",
      "i" = "{cli::qty(awaiting)}Decide {?it/them} with {.code screen_review(x)}; until then {?it is/they are} counted as {.val awaiting}."),
      class = "tabscreen_message")
  }
  screened <- nrow(rows)
  sought <- screened - excluded_model - excluded_reviewers - awaiting
  identified_total <- if (length(source_counts)) sum(source_counts) else NA_integer_
  duplicates <- if (is.null(refs)) NA_integer_ else prisma_duplicates(refs)
  from_ids <- if (is.null(identified)) "refs" else "given"
  row <- function(stage, box, label, n, from) tibble::tibble(stage = stage, box = box, label = label, n = as.integer(n), from = from)
  out <- rbind(
    row("Identification", "identified", "Records identified", identified_total, from_ids),
    row("Identification", "identified_source", names(source_counts), source_counts, from_ids),
    row("Identification", c("duplicates_removed", "automation_removed", "other_removed"),
      c("Duplicate records removed", "Records marked as ineligible by automation tools", "Records removed for other reasons"),
      c(duplicates, given$automation_removed, given$other_removed), c("refs", "given", "given")),
    row("Screening", c("screened", "excluded", "excluded_model", "excluded_reviewers", "awaiting", "sought",
      "not_retrieved", "assessed", "reports_excluded"),
      c("Records screened", "Records excluded", "Excluded by the model", "Excluded by reviewers",
        "Awaiting a reviewer's decision", "Reports sought for retrieval", "Reports not retrieved",
        "Reports assessed for eligibility", "Reports excluded"),
      c(screened, excluded_model + excluded_reviewers, excluded_model, excluded_reviewers, awaiting, sought,
        given$not_retrieved, sought - given$not_retrieved, given$reports_excluded),
      c("screening", "computed", "screening", "review", "review", "computed", "given", "computed", "given")),
    row("Included", c("studies_included", "reports_included"), c("Studies included in review", "Reports of included studies"),
      c(given$studies_included, given$reports_included), "given")
  )
  if (!is.null(refs) && !is.na(identified_total)) {
    before <- identified_total - duplicates - given$automation_removed - given$other_removed
    if (!is.na(before) && before != screened) {
      cli::cli_inform(c("!" = "{before} record{?s} remain{?s/} after the removals before screening, but {screened} {?was/were} screened.",
        "i" = "Give the removals ({.arg other_removed}, {.arg automation_removed}), or the deduplicated references that were screened as {.arg refs}."),
        class = "tabscreen_message")
    }
  }
  class(out) <- c("tabscreen_prisma", class(out))
  out
}

# A count the user gives: one whole number >= 0, or NA.
prisma_count <- function(v, arg, call) {
  if (length(v) == 1 && is.na(v) && !is.nan(v)) return(NA_integer_)
  if (!is.numeric(v) || length(v) != 1 || v < 0 || v != round(v)) {
    abort_arg(c("{.arg {arg}} must be one whole number, 0 or more, or {.code NA} when not known, not {.obj_type_friendly {v}}.",
      "i" = "E.g. {.code {arg} = 12}."), class = "tabscreen_error_prisma_args", arg = arg, call = call)
  }
  as.integer(v)
}

# Records identified per source: `identified` when given, else the deduplicated references'
# source_file column together with the duplicates merged into them.
prisma_identified <- function(refs, identified, call) {
  if (!is.null(identified)) {
    if (!is.numeric(identified) || length(identified) < 1 || anyNA(identified) || any(identified < 0) ||
      any(identified != round(identified)) || is.null(names(identified)) || any(!nzchar(names(identified)))) {
      abort_arg(c("{.arg identified} must be named whole numbers: the records identified in each source.",
        "i" = "E.g. {.code identified = c(MEDLINE = 1520, Embase = 2210)}."),
        class = "tabscreen_error_prisma_args", arg = "identified", call = call)
    }
    return(stats::setNames(as.integer(identified), names(identified)))
  }
  if (is.null(refs)) return(integer())
  if (!is.data.frame(refs) || is.null(attr(refs, "dedup_groups", exact = TRUE))) {
    abort_arg(c("{.arg refs} must be the references as {.fn dedup_refs} returned them (with their duplicate groups).",
      "i" = "Give {.code dedup_refs(read_refs(files))}, or the counts per source as {.arg identified}."),
      class = "tabscreen_error_prisma_args", arg = "refs", call = call)
  }
  if (!"source_file" %in% names(refs)) {
    abort_arg(c("{.arg refs} has no {.field source_file} column: which file each record came from is not known.",
      "i" = "Read the files with {.code read_refs(files)} (which adds it), or give the counts per source as {.arg identified}."),
      class = "tabscreen_error_prisma_args", arg = "refs", call = call)
  }
  groups <- dedup_groups(refs)
  merged <- groups[!groups$kept, , drop = FALSE]
  sources <- c(as.character(refs$source_file), as.character(merged$source_file))
  counts <- table(factor(sources, levels = unique(sources)))
  stats::setNames(as.integer(counts), names(counts))
}

prisma_duplicates <- function(refs) {
  groups <- attr(refs, "dedup_groups", exact = TRUE)
  if (is.null(groups)) return(NA_integer_)
  sum(!groups$kept)
}

#' @rdname screen_prisma
#' @param ... Not used.
#' @export
print.tabscreen_prisma <- function(x, ...) {
  cli::cli_text("{.strong PRISMA 2020 flow counts} (identification and screening)")
  shown <- x
  class(shown) <- setdiff(class(shown), "tabscreen_prisma")
  print(shown, n = nrow(shown))
  invisible(x)
}

#' @rdname screen_prisma
#' @export
plot.tabscreen_prisma <- function(x, ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    tabscreen_abort(c("Drawing the PRISMA diagram needs the package {.pkg ggplot2}.",
      "i" = "Install it, e.g. {.code install.packages(\"ggplot2\")}."), class = "tabscreen_error_plot")
  }
  boxes <- data.frame(x = c(0, 1, 0, 1, 0, 1, 0, 1, 0), y = c(4, 4, 3, 3, 2, 2, 1, 1, 0), text = unlist(prisma_box_texts(x)))
  down <- data.frame(x = 0, y = c(4, 3, 2, 1) - 0.32, yend = c(3, 2, 1, 0) + 0.32)
  right <- data.frame(y = c(4, 3, 2, 1), x = 0.42, xend = 0.58)
  stages <- data.frame(y = c(4, 2, 0), label = c("Identification", "Screening", "Included"))
  ggplot2::ggplot() +
    ggplot2::geom_tile(ggplot2::aes(x = .data$x, y = .data$y), data = boxes, width = 0.82, height = 0.64,
      fill = "white", colour = "grey20") +
    ggplot2::geom_text(ggplot2::aes(x = .data$x, y = .data$y, label = .data$text), data = boxes, size = 3,
      lineheight = 0.9) +
    ggplot2::geom_segment(ggplot2::aes(x = .data$x, xend = .data$x, y = .data$y, yend = .data$yend), data = down,
      arrow = ggplot2::arrow(length = ggplot2::unit(2, "mm"))) +
    ggplot2::geom_segment(ggplot2::aes(x = .data$x, xend = .data$xend, y = .data$y, yend = .data$y), data = right,
      arrow = ggplot2::arrow(length = ggplot2::unit(2, "mm"))) +
    ggplot2::geom_label(ggplot2::aes(x = -0.62, y = .data$y, label = .data$label), data = stages, angle = 90,
      fill = "#cfe2f3", label.size = 0, size = 3.2) +
    ggplot2::scale_x_continuous(limits = c(-0.7, 1.45)) +
    ggplot2::scale_y_continuous(limits = c(-0.4, 4.4)) +
    ggplot2::labs(title = "PRISMA 2020 flow diagram", caption = "Counts from screen_prisma(); n = ? where not known.") +
    ggplot2::theme_void()
}

# The words of the diagram's boxes, as the PRISMA 2020 template has them, with the counts: the
# main column (identified, screened, sought, assessed, included) and beside each of the first four
# what left it.
prisma_box_texts <- function(x) {
  n <- function(box) {
    v <- x$n[x$box == box]
    if (length(v) == 0 || is.na(v[[1]])) "?" else format(v[[1]], big.mark = ",")
  }
  sources <- x[x$box == "identified_source", , drop = FALSE]
  list(
    identified = paste0("Records identified from:\n",
      if (nrow(sources)) paste0("  ", sources$label, " (n = ", format(sources$n, big.mark = ","), ")", collapse = "\n") else
        paste0("  Databases (n = ", n("identified"), ")")),
    removed = paste0("Records removed before screening:\n  Duplicate records removed (n = ", n("duplicates_removed"),
      ")\n  Records marked as ineligible\n  by automation tools (n = ", n("automation_removed"),
      ")\n  Records removed for other\n  reasons (n = ", n("other_removed"), ")"),
    screened = paste0("Records screened\n(n = ", n("screened"), ")"),
    excluded = paste0("Records excluded (n = ", n("excluded"), ")\n  by the model (n = ", n("excluded_model"),
      ")\n  by reviewers (n = ", n("excluded_reviewers"), ")",
      if (!identical(n("awaiting"), "0")) paste0("\nAwaiting a decision (n = ", n("awaiting"), ")") else ""),
    sought = paste0("Reports sought for retrieval\n(n = ", n("sought"), ")"),
    not_retrieved = paste0("Reports not retrieved\n(n = ", n("not_retrieved"), ")"),
    assessed = paste0("Reports assessed for eligibility\n(n = ", n("assessed"), ")"),
    reports_excluded = paste0("Reports excluded\n(n = ", n("reports_excluded"), ")"),
    included = paste0("Studies included in review\n(n = ", n("studies_included"), ")\nReports of included studies\n(n = ",
      n("reports_included"), ")")
  )
}
