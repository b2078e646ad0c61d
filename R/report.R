#' Report the records where the model and the human screeners disagree
#'
#' Writes one self-contained HTML page (no scripts, fonts, images or style sheets fetched from
#' anywhere) that lists every record on which the model's decision differs from the human
#' screeners' decision, so that a reviewer can read each one and decide who was right. Open it in
#' any browser, mail it, or print it.
#'
#' The page starts with a summary (how many records were compared, how many disagree and how,
#' the model(s), the prompt(s), the run date and the inclusion cut-offs) and then has one card per
#' disagreement, in two sections:
#' * **Missed includes**: the humans included the record and the model excluded it. These come
#'   first: a missed include is the costly error of a screening.
#' * **False includes**: the humans excluded the record and the model included it.
#'
#' Each card shows the study id, title, abstract, the prompt, the model's explanation (the
#' `longest_answer` of the aggregated answers or the `detailed_description` of a single answer,
#' both present only when the screening ran with `decision_description = TRUE`), the inclusion
#' probability `incl_p` as a bar (the single decision when each record was asked once), the model's
#' verdict, the human decision and the model. Within a section the cards are sorted by how far
#' apart the two decisions are, `|incl_p - human decision|`, the largest first: a record the
#' model excluded in all repetitions comes before one it included in some of them.
#'
#' A record whose answers all failed has no model decision; such records are listed in a section
#' of their own (re-send them with [screen_errors()]). Records without a human decision (`NA`) are
#' counted but not compared.
#'
#' For a screening result (not a table), a last section holds what a review's report needs: the
#' PRISMA 2020 flow ([screen_prisma()], argument `prisma`), the audit of the model's Excludes and its
#' bound when the review app drew one ([screen_review_audit()]), and the methods text
#' ([screen_methods()], argument `methods`).
#'
#' The model's decision is `final_decision_llm_num` of the aggregated answers (1 for `"Include"`
#' and `"Check"`, 0 for `"Exclude"`) or `decision_binary` of single answers (1 for `"1"` and
#' `"1.1"`). A record screened with several prompts, models or `top_p` values is compared once
#' for each of them.
#'
#' @param x The result of a screening: an object of class `llm` from [tabscreen_a.tools()],
#'   [tabscreen_b()] or [tabscreen_c()], or one of its tables: `answer_data_aggregated` (class
#'   `llm_agg_tbl`) or, when each record was asked once, `answer_data` (class `llm_tbl`). A data
#'   frame with the columns of either table (e.g. read back from a CSV file) works too; the column
#'   names `final_decision_gpt`, `final_decision_gpt_num` and `decision_gpt` of results made with
#'   the package AIscreenR are understood.
#' @param human_decision The column of `x` with the human screeners' decisions, as a bare name or
#'   a string. Its values must be 1/0, `TRUE`/`FALSE` or `"include"`/`"exclude"` (any case); `NA`
#'   (or an empty string) means no human decision. The user's columns of the screened
#'   data are carried into the result, so the column of the data works here.
#' @param file The path of the HTML file to write. Its folder must exist.
#' @param open If `TRUE`, open the report in the browser ([utils::browseURL()]).
#' @param title The title of the report; `NULL` for a standard one.
#' @param prisma For a screening result (class `llm`): `TRUE` to show the PRISMA 2020 flow with the
#'   counts [screen_prisma()] gives from `x` alone, the result of [screen_prisma()] (e.g. with the
#'   references read, for the identification counts), or `FALSE` for none.
#' @param methods For a screening result: `TRUE` to show the methods text of [screen_methods()].
#' @return The path of the report (`file`, made absolute), invisibly.
#'
#'   Errors have class `tabscreen_error_arg` and one of: `tabscreen_error_object` (`x` is not a
#'   screening result), `tabscreen_error_human_decision` (`human_decision` does not name a column
#'   of `x` with 0/1 decisions), `tabscreen_error_file` (`file` cannot be written),
#'   `tabscreen_error_title` or `tabscreen_error_arg_flag` (`open`).
#' @seealso [screen_errors()] to re-send the requests that failed.
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' # Ten records the review's screeners excluded and ten they included, each asked three times.
#' res <- tabscreen_a.tools(
#'   filges2015_dat[c(1:10, 181:190), ],
#'   prompt = "Is this study about functional family therapy for young people who use drugs?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", reps = 3, decision_description = TRUE,
#'   progress = FALSE, messages = FALSE
#' )
#' path <- screen_report(res, human_decision = human_code, open = FALSE)
#' basename(path)
#' fake$stop()
#' options(old)
#'
#' # An aggregated table read back from a file: seven references that humans included and a
#' # model excluded (from the package AIscreenR).
#' dis <- read.csv(system.file("extdata", "disagreements.csv", package = "tabscreen"), encoding = "UTF-8")
#' path <- screen_report(dis, human_decision = human_code, open = FALSE,
#'   title = "Abortion and mental health: missed includes")
#' if (interactive()) utils::browseURL(path)
screen_report <- function(x, human_decision = human_code, file = tempfile(fileext = ".html"),
                          open = interactive(), title = NULL, prisma = TRUE, methods = TRUE) {
  call <- rlang::current_env()
  src <- report_source(x, call = call)
  human_col <- resolve_human_column(rlang::enquo(human_decision), src$table, call = call)
  check_report_file(file, call = call)
  check_flag(open, "open", call = call)
  check_flag(methods, "methods", call = call)
  if (!isTRUE(prisma) && !isFALSE(prisma) && !inherits(prisma, "tabscreen_prisma")) {
    abort_arg(c("{.arg prisma} must be {.code TRUE}, {.code FALSE} or the counts of {.fn screen_prisma}.",
      "i" = "Give {.code prisma = screen_prisma(x, refs)} for the identification counts of the files read."),
      class = "tabscreen_error_arg_prisma", arg = "prisma", call = call)
  }
  if (!is.null(title) && (!rlang::is_string(title) || is.na(title))) {
    abort_arg("{.arg title} must be {.code NULL} or a single string.",
      class = "tabscreen_error_title", arg = "title", call = call)
  }

  rows <- report_rows(src)
  rows$human <- human_values(src$table[[human_col]], human_col, call = call)
  if (!is.null(src$failed_rows)) {
    failed <- src$failed_rows
    failed$human <- human_values(attr(failed, "source")[[human_col]], human_col, call = call)
    rows <- rbind(rows, failed[names(rows)])
  }
  rows <- report_classify(rows)

  html <- report_html(rows, src, human_col, title %||% "Where the model and the human screeners disagree",
    review = report_review_section(x, prisma, methods))
  path <- write_report_file(html, file, call = call)
  if (isTRUE(open)) {
    utils::browseURL(path)
  }
  invisible(path)
}

# The table the report reads and what is known about the screening.
# kind: "aggregated" (one row per record x prompt x model x top_p with incl_p) or "answers" (one
# answer per record x prompt x model x top_p). failed_rows: records with no answer at all, which
# only an llm object's error_data shows when it has no aggregated table.
report_source <- function(x, call) {
  meta <- list(run_date = NULL, provider = NULL, cutoffs = NULL, from = NULL)
  failed_rows <- NULL
  if (inherits(x, "llm")) {
    args <- attr(x, "arg_list")
    meta$run_date <- x$run_date
    meta$provider <- args$provider
    if (!is.null(x$answer_data_aggregated)) {
      table <- x$answer_data_aggregated
      meta$from <- "answer_data_aggregated"
    } else {
      table <- x$answer_data
      meta$from <- "answer_data"
      if (is.null(table)) {
        abort_arg("{.arg x} has no {.field answer_data}: it is not a complete screening result.",
          class = "tabscreen_error_object", arg = "x", call = call)
      }
    }
    if (is.null(attr(table, "incl_cutoff_upper")) && !is.null(args) && any(args$reps > 1)) {
      meta$cutoffs <- effective_cutoffs(args$incl_cutoff_upper, args$incl_cutoff_lower)
    }
  } else if (is.data.frame(x)) {
    table <- x
    meta$from <- if (inherits(x, "llm_agg_tbl")) "answer_data_aggregated" else if (inherits(x, "llm_tbl")) "answer_data" else "a data frame"
  } else {
    abort_arg(c("{.arg x} must be a screening result (class {.cls llm}) or one of its tables, not {.obj_type_friendly {x}}.",
      "i" = "Pass the value of {.fn tabscreen_a.tools}, {.fn tabscreen_b} or {.fn tabscreen_c}, or its {.field answer_data_aggregated}."),
      class = "tabscreen_error_object", arg = "x", call = call)
  }
  table <- report_aliases(table)
  if (!is.null(attr(table, "incl_cutoff_upper"))) {
    meta$cutoffs <- list(upper = attr(table, "incl_cutoff_upper"), lower = attr(table, "incl_cutoff_lower"))
  }

  kind <- if ("incl_p" %in% names(table)) "aggregated" else if ("decision_binary" %in% names(table)) "answers" else NULL
  if (is.null(kind)) {
    abort_arg(c("{.arg x} has neither {.field incl_p} nor {.field decision_binary}: it holds no model decisions.",
      "i" = "Pass a screening result, its {.field answer_data_aggregated} or its {.field answer_data}."),
      class = "tabscreen_error_object", arg = "x", call = call)
  }
  needed <- c("studyid", "title", if (kind == "aggregated" && !any(c("final_decision_llm_num", "final_decision_llm") %in% names(table))) "final_decision_llm_num")
  absent <- setdiff(needed, names(table))
  if (length(absent) > 0) {
    abort_arg("{.arg x} lacks the column{?s} {.field {absent}} of a screening result.",
      class = "tabscreen_error_object", arg = "x", call = call)
  }
  if (kind == "answers") {
    key <- report_key(table)
    if (anyDuplicated(key)) {
      abort_arg(c("{.arg x} holds several answers per record (the screening asked each question more than once).",
        "i" = "Pass the whole result or its {.field answer_data_aggregated}, where the answers are combined into {.field incl_p}."),
        class = "tabscreen_error_object", arg = "x", call = call)
    }
    if (inherits(x, "llm") && !is.null(x$error_data) && nrow(x$error_data) > 0) {
      failed_rows <- report_failed_answers(report_aliases(x$error_data), key)
    }
  }
  if (is.null(meta$run_date) && "run_date" %in% names(table)) {
    dates <- sort(unique(stats::na.omit(as.character(table$run_date))))
    if (length(dates) > 0) {
      meta$run_date <- if (length(dates) == 1) dates else paste(dates[1], "to", dates[length(dates)])
    }
  }
  list(table = table, kind = kind, meta = meta, failed_rows = failed_rows,
    has_explanation = if (kind == "aggregated") "longest_answer" %in% names(table) else "detailed_description" %in% names(table))
}

# Results of the package AIscreenR name the model's decisions "gpt"; the report reads them too.
report_aliases <- function(table) {
  aliases <- c(final_decision_gpt = "final_decision_llm", final_decision_gpt_num = "final_decision_llm_num",
    decision_gpt = "decision_llm")
  nm <- names(table)
  for (old in names(aliases)) {
    if (old %in% nm && !aliases[[old]] %in% nm) nm[nm == old] <- aliases[[old]]
  }
  names(table) <- nm
  table
}

# One key per record x prompt x model x top_p: the unit a decision belongs to.
report_key <- function(table) {
  cols <- intersect(c("studyid", "promptid", "model", "top_p"), names(table))
  do.call(paste, c(lapply(as.list(table)[cols], as.character), sep = "\r"))
}

# Records of error_data that have no answer at all (with one answer per record, every failed
# request is such a record; the key check keeps a re-sent request that later succeeded out).
report_failed_answers <- function(errors, answered_keys) {
  key <- report_key(errors)
  keep <- !duplicated(key) & !key %in% answered_keys
  if (!any(keep)) {
    return(NULL)
  }
  n_failed <- as.integer(table(key)[key[keep]])
  e <- errors[keep, , drop = FALSE]
  out <- record_rows(e, incl_p = NA_real_, model_num = NA_integer_, verdict = NA_character_,
    explanation = NA_character_, reps = n_failed, n_mis = n_failed, failed = TRUE)
  attr(out, "source") <- e
  out
}

report_col <- function(table, name) {
  if (name %in% names(table)) as.character(table[[name]]) else rep(NA_character_, nrow(table))
}

# The rows of the report, one per decision, with the model's side in common columns.
report_rows <- function(src) {
  t <- src$table
  n <- nrow(t)
  if (src$kind == "aggregated") {
    incl_p <- suppressWarnings(as.numeric(t$incl_p))
    label <- if ("final_decision_llm" %in% names(t)) as.character(t$final_decision_llm) else rep(NA_character_, n)
    num <- if ("final_decision_llm_num" %in% names(t)) {
      suppressWarnings(as.integer(t$final_decision_llm_num))
    } else {
      ifelse(label %in% c("Include", "Check"), 1L, ifelse(label == "Exclude", 0L, NA_integer_))
    }
    label[is.na(label) & !is.na(num)] <- c("Exclude", "Include")[num[is.na(label) & !is.na(num)] + 1]
    reps <- if ("reps" %in% names(t)) as.integer(t$reps) else rep(NA_integer_, n)
    n_mis <- if ("n_mis_answers" %in% names(t)) as.integer(t$n_mis_answers) else rep(0L, n)
    explanation <- report_col(t, "longest_answer")
    # An aggregated row whose repetitions all failed has incl_p NA (its verdict is only a flag).
    failed <- is.na(incl_p) | is.na(num) | (!is.na(reps) & !is.na(n_mis) & n_mis >= reps)
  } else {
    num <- suppressWarnings(as.integer(t$decision_binary))
    incl_p <- as.numeric(num)
    raw <- report_col(t, "decision_llm")
    label <- ifelse(raw == "1.1" & !is.na(raw), "Uncertain (counted as include)",
      ifelse(is.na(num), NA_character_, c("Exclude", "Include")[num + 1]))
    reps <- rep(1L, n)
    n_mis <- rep(0L, n)
    explanation <- report_col(t, "detailed_description")
    failed <- is.na(num)
  }
  record_rows(t, incl_p = incl_p, model_num = num, verdict = label, explanation = explanation,
    reps = reps, n_mis = n_mis, failed = failed)
}

# Section of each row and the order within the sections: the largest distance between the model's
# inclusion probability and the human decision first, ties in the table's order.
report_classify <- function(rows) {
  rows$order <- seq_len(nrow(rows))
  rows$distance <- abs(rows$incl_p - rows$human)
  rows$section <- ifelse(rows$failed, "failed",
    ifelse(is.na(rows$human), "no-human",
      ifelse(rows$model_num == rows$human, "agree",
        ifelse(rows$human == 1, "missed", "false"))))
  rows[order(match(rows$section, c("missed", "false", "failed", "agree", "no-human")), -ifelse(is.na(rows$distance), 0, rows$distance), rows$order), , drop = FALSE]
}

# Checks `file` before anything is built: a writable path in an existing folder.
check_report_file <- function(file, call) {
  if (!rlang::is_string(file) || is.na(file) || !nzchar(file)) {
    abort_arg("{.arg file} must be a single path, e.g. {.code file = \"disagreements.html\"}.",
      class = "tabscreen_error_file", arg = "file", call = call)
  }
  if (dir.exists(file)) {
    abort_arg(c("{.arg file} is a folder: {.path {file}}.",
      "i" = "Give the path of the HTML file to write, e.g. {.code file.path(\"{file}\", \"report.html\")}."),
      class = "tabscreen_error_file", arg = "file", call = call)
  }
  folder <- dirname(file)
  if (!dir.exists(folder)) {
    abort_arg(c("{.arg file} cannot be written: its folder {.path {folder}} does not exist.",
      "i" = "Create the folder first ({.code dir.create()}) or choose another path."),
      class = "tabscreen_error_file", arg = "file", call = call)
  }
  invisible(file)
}

write_report_file <- function(html, file, call) {
  problem <- NULL
  ok <- tryCatch(
    withCallingHandlers({
      con <- file(file, open = "wb")
      on.exit(close(con), add = TRUE)
      writeBin(charToRaw(enc2utf8(html)), con)
      TRUE
    }, warning = function(w) {
      problem <<- conditionMessage(w)
      invokeRestart("muffleWarning")
    }),
    error = function(e) {
      problem <<- problem %||% conditionMessage(e)
      FALSE
    }
  )
  if (!ok) {
    abort_arg(c("{.arg file} cannot be written: {.path {file}}.", "x" = "{problem}",
      "i" = "Choose a path in a folder you can write to, e.g. {.code file = tempfile(fileext = \".html\")}."),
      class = "tabscreen_error_file", arg = "file", call = call)
  }
  normalizePath(file, mustWork = TRUE)
}

# ---- HTML -----------------------------------------------------------------------------------------

# Text for HTML: valid UTF-8, no control characters HTML forbids, the five special characters
# escaped (so a title holding markup shows as text, also inside attribute values).
html_escape <- function(x) {
  x <- as.character(x)
  x[is.na(x)] <- ""
  x <- enc2utf8(x)
  bad <- !validUTF8(x)
  if (any(bad)) {
    x[bad] <- iconv(x[bad], "UTF-8", "UTF-8", sub = "\uFFFD")
  }
  x <- gsub("[\\x{01}-\\x{08}\\x{0B}\\x{0C}\\x{0E}-\\x{1F}\\x{7F}]", "", x, perl = TRUE)
  x <- gsub("&", "&amp;", x, fixed = TRUE)
  x <- gsub("<", "&lt;", x, fixed = TRUE)
  x <- gsub(">", "&gt;", x, fixed = TRUE)
  x <- gsub("\"", "&quot;", x, fixed = TRUE)
  gsub("'", "&#39;", x, fixed = TRUE)
}

html_tag <- function(tag, ..., attrs = NULL) {
  a <- if (length(attrs) > 0) {
    attrs <- attrs[!vapply(attrs, is.null, logical(1))]
    paste0(" ", names(attrs), "=\"", vapply(attrs, html_escape, character(1)), "\"", collapse = "")
  } else {
    ""
  }
  paste0("<", tag, a, ">", paste0(..., collapse = ""), "</", tag, ">")
}

is_blank <- function(x) is.na(x) | !nzchar(trimws(x))

fmt_p <- function(p) formatC(p, format = "f", digits = 2)

human_label <- function(h) ifelse(is.na(h), "not given", ifelse(h == 1, "Include", "Exclude"))

report_html <- function(rows, src, human_col, title, review = "") {
  sections <- list(
    missed = list(id = "missed-includes", title = "Missed includes",
      note = "The human screeners included these records; the model excluded them. A missed include can drop a relevant study from the review, so read these first."),
    false = list(id = "false-includes", title = "False includes",
      note = "The human screeners excluded these records; the model included them. They cost reading time at the next stage, not studies.")
  )
  cutoffs <- src$meta$cutoffs
  body <- c(
    report_header(rows, src, human_col, title),
    "<main>",
    vapply(names(sections), function(s) {
      sec <- sections[[s]]
      r <- rows[rows$section == s, , drop = FALSE]
      cards <- if (nrow(r) == 0) {
        html_tag("p", "None.", attrs = list(class = "empty"))
      } else {
        paste(vapply(seq_len(nrow(r)), function(i) report_card(r[i, , drop = FALSE], s, src, cutoffs, i), character(1)), collapse = "\n")
      }
      html_tag("section", html_tag("h2", sec$title, " ", html_tag("span", nrow(r), attrs = list(class = "count"))),
        html_tag("p", sec$note, attrs = list(class = "section-note")), "\n", cards, attrs = list(id = sec$id, class = paste("group", s)))
    }, character(1)),
    report_failed_section(rows),
    review,
    "</main>",
    report_footnote(src, human_col),
    report_colophon()
  )
  paste0(
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    "<meta name=\"generator\" content=\"tabscreen ", html_escape(report_pkg_version()), "\">\n",
    "<title>", html_escape(title), "</title>\n<style>\n", report_css(), "</style>\n</head>\n<body>\n<div class=\"page\">\n",
    paste(body, collapse = "\n"), "\n</div>\n</body>\n</html>\n"
  )
}

report_pkg_version <- function() {
  tryCatch(as.character(utils::packageVersion("tabscreen")), error = function(e) "")
}

report_header <- function(rows, src, human_col, title) {
  n <- function(s) sum(rows$section %in% s)
  compared <- n(c("missed", "false", "agree"))
  tiles <- list(
    list("Compared", compared, "compared"),
    list("Agree", n("agree"), "agree"),
    list("Missed includes", n("missed"), "missed"),
    list("False includes", n("false"), "false"),
    list("All answers failed", n("failed"), "failed")
  )
  if (n("no-human") > 0) tiles <- c(tiles, list(list("No human decision", n("no-human"), "no-human")))
  tiles_html <- html_tag("dl", paste(vapply(tiles, function(t) {
    html_tag("div", html_tag("dt", t[[1]]), html_tag("dd", t[[2]]), attrs = list(class = paste("tile", t[[3]])))
  }, character(1)), collapse = ""), attrs = list(class = "tiles"))

  models <- unique(rows[!is.na(rows$model), c("model", "submodel")])
  model_text <- if (nrow(models) == 0) {
    "not recorded"
  } else {
    by_model <- split(models$submodel, models$model)
    by_model <- by_model[unique(models$model)]
    paste(vapply(names(by_model), function(m) {
      subs <- setdiff(stats::na.omit(by_model[[m]]), c(m, ""))
      paste0(html_tag("code", html_escape(m)), if (length(subs)) paste0(" (", html_escape(paste(subs, collapse = ", ")), ")") else "")
    }, character(1)), collapse = ", ")
  }
  prompts <- unique(rows[!is_blank(rows$prompt), c("promptid", "prompt")])
  prompts <- prompts[!duplicated(prompts$promptid), , drop = FALSE]
  prompt_html <- if (nrow(prompts) == 0) {
    "not recorded"
  } else if (nrow(prompts) == 1) {
    html_tag("div", html_escape(prompts$prompt), attrs = list(class = "prompt-text", id = paste0("prompt-", prompts$promptid %|NA|% 1)))
  } else {
    paste0("<ol class=\"prompts\">", paste(vapply(seq_len(nrow(prompts)), function(i) {
      html_tag("li", html_escape(prompts$prompt[i]), attrs = list(value = prompts$promptid[i] %|NA|% i, id = paste0("prompt-", prompts$promptid[i] %|NA|% i)))
    }, character(1)), collapse = ""), "</ol>")
  }
  cut <- src$meta$cutoffs
  reps <- sort(unique(stats::na.omit(rows$reps[!rows$failed])))
  cut_text <- if (src$kind == "answers") {
    "not used: each record was asked once"
  } else if (is.null(cut)) {
    "not recorded with this table"
  } else if (is.null(cut$lower) || isTRUE(all.equal(cut$lower, cut$upper))) {
    paste0("Include when incl_p &ge; ", html_escape(cut$upper), " (no Check band)")
  } else {
    paste0("Include when incl_p &ge; ", html_escape(cut$upper), "; Check when ", html_escape(cut$lower),
      " &le; incl_p &lt; ", html_escape(cut$upper), " (Check counts as include)")
  }
  provider <- src$meta$provider
  facts <- list(
    "Model" = model_text,
    "Provider" = if (!is.null(provider)) paste("provider", html_escape(toupper(provider))),
    "Prompt" = prompt_html,
    "Repetitions" = if (length(reps)) paste(reps, collapse = ", ") else "not recorded",
    "Cut-offs" = cut_text,
    "Run date" = html_escape(src$meta$run_date %||% "not recorded"),
    "Human decisions" = paste0("column ", html_tag("code", html_escape(human_col))),
    "Read from" = if (src$meta$from == "a data frame") src$meta$from else html_tag("code", html_escape(src$meta$from))
  )
  if (nrow(prompts) > 1) names(facts)[names(facts) == "Prompt"] <- "Prompts"
  if (length(unique(models$model)) > 1) names(facts)[names(facts) == "Model"] <- "Models"
  facts <- facts[!vapply(facts, is.null, logical(1))]
  facts_html <- html_tag("dl", paste(vapply(names(facts), function(k) {
    html_tag("div", html_tag("dt", k), html_tag("dd", facts[[k]]))
  }, character(1)), collapse = ""), attrs = list(class = "facts"))

  several <- length(unique(paste(rows$promptid, rows$model, rows$top_p))) > 1
  unit_note <- if (several) {
    html_tag("p", "Each record is counted once per prompt, model and top_p it was screened with.", attrs = list(class = "unit-note"))
  }
  nav <- html_tag("nav", paste0(
    html_tag("a", "Missed includes (", n("missed"), ")", attrs = list(href = "#missed-includes")),
    html_tag("a", "False includes (", n("false"), ")", attrs = list(href = "#false-includes")),
    if (n("failed") > 0) html_tag("a", "Failed (", n("failed"), ")", attrs = list(href = "#failed")),
    html_tag("a", "How to read this report", attrs = list(href = "#how-to-read"))
  ), attrs = list(class = "toc", "aria-label" = "Sections"))
  html_tag("header",
    html_tag("p", "Screening disagreement report", attrs = list(class = "kicker")),
    html_tag("h1", html_escape(title)),
    tiles_html, unit_note, facts_html, nav,
    attrs = list(class = "report-head"))
}

`%|NA|%` <- function(x, y) if (is.null(x) || length(x) == 0 || is.na(x)) y else x

# One disagreement.
report_card <- function(r, section, src, cutoffs, index) {
  tag <- if (section == "missed") "Missed include" else "False include"
  aggregated <- src$kind == "aggregated"
  answered <- r$reps - r$n_mis
  incl <- if (aggregated && !is.na(answered)) round(r$incl_p * answered) else NA
  p_text <- if (!aggregated || identical(r$reps, 1L)) {
    "one answer: incl_p is its decision"
  } else if (!is.na(answered)) {
    paste0(incl, " of ", answered, " answer", if (answered == 1) "" else "s", " include",
      if (r$n_mis > 0) paste0("; ", r$n_mis, " failed") else "")
  } else {
    ""
  }
  width <- paste0(round(100 * max(0, min(1, r$incl_p)), 1), "%")
  ticks <- if (aggregated && !is.null(cutoffs) && !identical(r$reps, 1L)) {
    p_text <- paste0(p_text, " \u00b7 marks: cut-off", if (length(unique(c(cutoffs$upper, cutoffs$lower))) > 1) "s " else " ",
      paste(unique(c(cutoffs$lower, cutoffs$upper)), collapse = " and "))
    cuts <- unique(c(cutoffs$upper, cutoffs$lower))
    paste0(vapply(cuts, function(cv) {
      html_tag("span", "", attrs = list(class = "tick", style = paste0("left:", round(100 * cv, 1), "%"),
        title = paste("cut-off", cv)))
    }, character(1)), collapse = "")
  } else {
    ""
  }
  single <- !aggregated || identical(r$reps, 1L)
  bar <- if (single) "" else html_tag("div",
    html_tag("span", "", attrs = list(class = "fill", style = paste0("width:", width))), ticks,
    attrs = list(class = "bar", role = "img", "aria-label" = paste0("Inclusion probability ", fmt_p(r$incl_p))))
  verdict_class <- if (r$model_num == 1) "inc" else "exc"
  human_class <- if (r$human == 1) "inc" else "exc"
  decisions <- html_tag("div",
    html_tag("div", html_tag("span", "Human", attrs = list(class = "label")),
      html_tag("span", human_label(r$human), attrs = list(class = paste("pill", human_class)))),
    html_tag("div", html_tag("span", "Model", attrs = list(class = "label")),
      html_tag("span", html_escape(r$verdict), attrs = list(class = paste("pill", verdict_class)))),
    html_tag("div", attrs = list(class = "prob"),
      html_tag("span", "incl_p", attrs = list(class = "label")),
      html_tag("span", fmt_p(r$incl_p), attrs = list(class = "pval")), bar,
      html_tag("span", html_escape(p_text), attrs = list(class = "pnote"))),
    html_tag("div", html_tag("span", "Distance", attrs = list(class = "label")),
      html_tag("span", fmt_p(r$distance), attrs = list(class = "dist"))),
    attrs = list(class = "decisions"))

  model_bits <- c(
    paste0("Model ", html_tag("code", html_escape(r$model %|NA|% "not recorded")),
      if (!is_blank(r$submodel) && !identical(r$submodel, r$model)) paste0(" (", html_escape(r$submodel), ")") else ""),
    if (!is_blank(r$promptid)) paste0("prompt ", html_escape(r$promptid)),
    if (!is_blank(r$top_p)) paste0("top_p ", html_escape(r$top_p))
  )
  explanation <- if (!src$has_explanation) {
    html_tag("p", "No explanation recorded: the screening ran without ", html_tag("code", "decision_description = TRUE"), ".",
      attrs = list(class = "missing"))
  } else if (is_blank(r$explanation)) {
    html_tag("p", "The model gave no explanation for this record.", attrs = list(class = "missing"))
  } else {
    html_tag("p", html_escape(r$explanation), attrs = list(class = "text"))
  }
  abstract <- if (is_blank(r$abstract)) {
    html_tag("p", "No abstract.", attrs = list(class = "missing"))
  } else {
    html_tag("p", html_escape(r$abstract), attrs = list(class = "text"))
  }
  prompt <- if (!is_blank(r$prompt)) {
    html_tag("details", html_tag("summary", "Prompt", if (!is_blank(r$promptid)) paste0(" ", html_escape(r$promptid))),
      html_tag("p", html_escape(r$prompt), attrs = list(class = "text")), attrs = list(class = "prompt"))
  }
  html_tag("article",
    html_tag("header",
      html_tag("p", html_tag("span", tag, attrs = list(class = "tag")),
        html_tag("span", "Study ", html_escape(r$studyid), attrs = list(class = "studyid")),
        attrs = list(class = "card-top")),
      html_tag("h3", if (is_blank(r$title)) "(no title)" else html_escape(r$title)),
      if (!is_blank(r$author)) html_tag("p", html_escape(r$author), attrs = list(class = "author")),
      html_tag("p", paste(model_bits, collapse = " &middot; "), attrs = list(class = "meta"))),
    decisions,
    html_tag("section", html_tag("h4", "Model&rsquo;s explanation"), explanation, attrs = list(class = "explanation")),
    html_tag("section", html_tag("h4", "Abstract"), abstract, attrs = list(class = "abstract")),
    prompt,
    attrs = list(class = paste("card", section), id = paste0(section, "-", index),
      "data-section" = section, "data-studyid" = r$studyid, "data-promptid" = r$promptid %|NA|% NULL,
      "data-model" = r$model %|NA|% NULL, "data-top-p" = r$top_p %|NA|% NULL)
  )
}

report_failed_section <- function(rows) {
  r <- rows[rows$section == "failed", , drop = FALSE]
  if (nrow(r) == 0) {
    return("")
  }
  items <- vapply(seq_len(nrow(r)), function(i) {
    x <- r[i, , drop = FALSE]
    what <- if (!is.na(x$reps) && x$reps > 1) paste0("all ", x$reps, " answers failed") else "the answer failed"
    html_tag("article",
      html_tag("p", html_tag("span", "Study ", html_escape(x$studyid), attrs = list(class = "studyid")),
        attrs = list(class = "card-top")),
      html_tag("h3", if (is_blank(x$title)) "(no title)" else html_escape(x$title)),
      html_tag("p", paste(c(
        paste0("Model ", html_tag("code", html_escape(x$model %|NA|% "not recorded"))),
        if (!is_blank(x$promptid)) paste0("prompt ", html_escape(x$promptid)),
        if (!is_blank(x$top_p)) paste0("top_p ", html_escape(x$top_p)),
        what, paste0("human decision: ", human_label(x$human))
      ), collapse = " &middot; "), attrs = list(class = "meta")),
      attrs = list(class = "card failed compact", id = paste0("failed-", i), "data-section" = "failed",
        "data-studyid" = x$studyid, "data-promptid" = x$promptid %|NA|% NULL, "data-model" = x$model %|NA|% NULL,
        "data-top-p" = x$top_p %|NA|% NULL))
  }, character(1))
  html_tag("section",
    html_tag("h2", "All answers failed ", html_tag("span", nrow(r), attrs = list(class = "count"))),
    html_tag("p", "The model gave no decision for these records: every request failed. They are not compared above. ",
      "Re-send them with ", html_tag("code", "screen_errors()"), " or screen them by hand.", attrs = list(class = "section-note")),
    paste(items, collapse = "\n"),
    attrs = list(id = "failed", class = "group failed"))
}

report_footnote <- function(src, human_col) {
  aggregated <- src$kind == "aggregated"
  items <- c(
    if (aggregated) {
      paste0(html_tag("strong", "incl_p"), " is the share of the model&rsquo;s answered repetitions that included the record ",
        "(an uncertain answer counts as include). The bar shows it from 0 (left) to 1 (right); thin marks are the cut-offs.")
    } else {
      paste0("Each record was asked once: ", html_tag("strong", "incl_p"), " is that single decision, 1 for include (an uncertain answer counts as include) and 0 for exclude.")
    },
    paste0("The model&rsquo;s ", html_tag("strong", "verdict"), if (aggregated) " (Include, Check or Exclude) follows from incl_p and the cut-offs; Check counts as include, so a Check is a disagreement only with a human exclude." else " is its answer."),
    paste0("The ", html_tag("strong", "human"), " decision is column ", html_tag("code", html_escape(human_col)), " (1 include, 0 exclude)."),
    paste0(html_tag("strong", "Distance"), " is |incl_p &minus; human decision|: 1 when the model was unanimous against the humans, smaller when some repetitions agreed with them. Within each section the largest distance comes first."),
    "The explanation is the model&rsquo;s own text (the longest one among the repetitions); it can be wrong and is no evidence on its own. Decide from the abstract and the review&rsquo;s criteria."
  )
  html_tag("footer",
    html_tag("h2", "How to read this report"),
    html_tag("ul", paste(vapply(items, function(i) html_tag("li", i), character(1)), collapse = "")),
    attrs = list(id = "how-to-read", class = "how-to-read"))
}

report_colophon <- function() {
  html_tag("p", "Written by the R package tabscreen ", html_escape(report_pkg_version()), " on ",
    html_escape(format(Sys.time(), "%Y-%m-%d %H:%M")), ". This file is self-contained: it loads nothing from the network.",
    attrs = list(class = "colophon"))
}

report_css <- function() {
  "
:root {
  --ink: #1d232b; --muted: #56606b; --faint: #7a848f; --line: #d9dee4; --bg: #f3f5f7; --card: #ffffff;
  --accent: #1f5fa8;
  --missed: #b3261e; --missed-soft: #fbeae9;
  --false: #8a5a00; --false-soft: #fdf3dc;
  --failed: #4f5b66; --failed-soft: #eceff2;
  --inc: #17663a; --inc-soft: #e3f3e8; --exc: #8f1d16; --exc-soft: #f9e4e2;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 17px/1.6 system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'Liberation Sans', 'DejaVu Sans', sans-serif;
}
.page { max-width: 52rem; margin: 0 auto; padding: 2.5rem 1.25rem 4rem; }
code { font-family: ui-monospace, 'SFMono-Regular', Menlo, Consolas, 'Liberation Mono', 'DejaVu Sans Mono', monospace; font-size: 0.88em; }
h1, h2, h3, h4 { line-height: 1.25; }
a { color: var(--accent); }

.report-head { margin-bottom: 2.5rem; }
.kicker { margin: 0; text-transform: uppercase; letter-spacing: 0.08em; font-size: 0.78rem; font-weight: 600; color: var(--muted); }
h1 { font-size: 2rem; margin: 0.3rem 0 1.5rem; }

.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(7.5rem, 1fr)); gap: 0.6rem; margin: 0 0 1.5rem; }
.tile { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 0.7rem 0.9rem; border-top: 4px solid var(--line); }
.tile dt { font-size: 0.8rem; color: var(--muted); font-weight: 600; }
.tile dd { margin: 0.1rem 0 0; font-size: 1.7rem; font-weight: 700; font-variant-numeric: tabular-nums; }
.tile.agree { border-top-color: var(--inc); }
.tile.missed { border-top-color: var(--missed); }
.tile.missed dd { color: var(--missed); }
.tile.false { border-top-color: #c9900f; }
.tile.false dd { color: var(--false); }
.tile.failed, .tile.no-human { border-top-color: var(--failed); }
.unit-note { color: var(--muted); font-size: 0.9rem; margin: -0.8rem 0 1.2rem; }

.facts { margin: 0 0 1.5rem; background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 0.6rem 1.2rem; font-size: 0.95rem; }
.facts > div { display: grid; grid-template-columns: 9.5rem 1fr; gap: 1rem; padding: 0.45rem 0; border-bottom: 1px solid #eceff2; }
.facts > div:last-child { border-bottom: 0; }
.facts dt { font-weight: 600; color: var(--muted); }
.facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
.prompts { margin: 0; padding-left: 1.4rem; }
.prompts li, .prompt-text { white-space: pre-line; }
.prompts li { margin-bottom: 0.4rem; }
.prompts li:last-child { margin-bottom: 0; }

.toc { display: flex; flex-wrap: wrap; gap: 0.5rem; }
.toc a { text-decoration: none; font-size: 0.9rem; font-weight: 600; padding: 0.35rem 0.8rem; border-radius: 999px;
  background: var(--card); border: 1px solid var(--line); color: var(--ink); }
.toc a:hover, .toc a:focus { border-color: var(--accent); color: var(--accent); }

.group { margin-top: 2.8rem; }
.group > h2 { font-size: 1.5rem; margin: 0 0 0.3rem; display: flex; align-items: center; gap: 0.6rem; }
.count { font-size: 0.95rem; font-weight: 700; border-radius: 999px; padding: 0.1rem 0.65rem; background: var(--failed-soft); color: var(--failed); }
.group.missed .count { background: var(--missed-soft); color: var(--missed); }
.group.false .count { background: var(--false-soft); color: var(--false); }
.section-note { color: var(--muted); margin: 0 0 1.2rem; max-width: 44rem; }
.prisma { display: grid; grid-template-columns: 7rem minmax(12rem, 1fr) 2rem minmax(12rem, 1fr); gap: 0.2rem 0;
  align-items: center; max-width: 46rem; margin: 0.6rem 0; font-size: 0.9rem; }
.pbox { background: var(--card); border: 1px solid var(--ink); padding: 0.5rem 0.7rem; line-height: 1.35; }
.pbox.side { border-color: var(--muted); }
.parrow { text-align: center; color: var(--muted); }
.pstage { background: #cfe2f3; padding: 0.3rem; text-align: center; font-weight: 600; margin-right: 0.6rem; }
table.audit { border-collapse: collapse; margin: 0.6rem 0; }
table.audit th, table.audit td { border-bottom: 1px solid var(--line); padding: 0.3rem 0.8rem; text-align: left; }
.methods p { max-width: 46rem; }
.methods pre { white-space: pre-wrap; background: var(--card); border: 1px solid var(--line); padding: 0.6rem; max-width: 46rem; }
.empty { color: var(--muted); font-style: italic; }

.card { background: var(--card); border: 1px solid var(--line); border-left: 6px solid var(--failed); border-radius: 10px;
  padding: 1.25rem 1.5rem 1.1rem; margin: 0 0 1.25rem; box-shadow: 0 1px 2px rgba(20, 30, 40, 0.06); }
.card.missed { border-left-color: var(--missed); }
.card.false { border-left-color: #c9900f; }
.card-top { margin: 0; display: flex; gap: 0.7rem; align-items: center; font-size: 0.82rem; }
.tag { font-weight: 700; text-transform: uppercase; letter-spacing: 0.06em; color: var(--failed); }
.card.missed .tag { color: var(--missed); }
.card.false .tag { color: var(--false); }
.studyid { color: var(--muted); font-variant-numeric: tabular-nums; }
.card h3 { font-size: 1.2rem; margin: 0.3rem 0 0.3rem; overflow-wrap: anywhere; }
.author { margin: 0 0 0.2rem; color: var(--muted); font-size: 0.9rem; }
.meta { margin: 0.2rem 0 0; color: var(--muted); font-size: 0.88rem; }

.decisions { display: grid; grid-template-columns: auto auto 1fr auto; gap: 0.6rem 1.4rem; align-items: center;
  margin: 1rem 0 0.6rem; padding: 0.8rem 1rem; background: var(--bg); border-radius: 8px; }
.decisions > div { display: flex; flex-direction: column; gap: 0.2rem; min-width: 0; }
.label { font-size: 0.72rem; text-transform: uppercase; letter-spacing: 0.07em; font-weight: 600; color: var(--muted); }
.pill { display: inline-block; align-self: flex-start; font-weight: 700; font-size: 0.9rem; padding: 0.12rem 0.6rem; border-radius: 6px; }
.pill.inc { background: var(--inc-soft); color: var(--inc); }
.pill.exc { background: var(--exc-soft); color: var(--exc); }
.prob { display: grid !important; grid-template-columns: auto 1fr; grid-template-rows: auto auto auto; column-gap: 0.6rem; }
.prob .label { grid-column: 1 / 3; }
.pval { font-weight: 700; font-variant-numeric: tabular-nums; }
.bar { position: relative; height: 0.6rem; align-self: center; background: #dde2e8; border-radius: 999px; overflow: visible; }
.fill { position: absolute; left: 0; top: 0; bottom: 0; background: var(--accent); border-radius: 999px; min-width: 2px; }
.tick { position: absolute; top: -0.2rem; bottom: -0.2rem; width: 2px; margin-left: -1px; background: var(--ink); opacity: 0.55; }
.pnote { grid-column: 1 / 3; font-size: 0.8rem; color: var(--muted); }
.dist { font-weight: 700; font-variant-numeric: tabular-nums; }

.card h4 { margin: 1rem 0 0.3rem; font-size: 0.78rem; text-transform: uppercase; letter-spacing: 0.07em; color: var(--muted); }
.text { margin: 0; white-space: pre-line; overflow-wrap: anywhere; }
.explanation .text { border-left: 3px solid #b8c2cc; padding: 0.1rem 0 0.1rem 0.9rem; color: #2d3640; }
.abstract .text { max-width: 44rem; }
.missing { margin: 0; color: var(--faint); font-style: italic; }
details.prompt { margin-top: 1rem; font-size: 0.92rem; }
details.prompt summary { cursor: pointer; color: var(--accent); font-weight: 600; }
details.prompt .text { margin-top: 0.5rem; padding: 0.7rem 0.9rem; background: var(--bg); border-radius: 6px; }

.card.compact { padding: 0.8rem 1.2rem; margin-bottom: 0.7rem; }
.card.compact h3 { font-size: 1.02rem; }

.how-to-read { margin-top: 3rem; padding-top: 1.2rem; border-top: 1px solid var(--line); color: #333c46; font-size: 0.95rem; }
.how-to-read h2 { font-size: 1.15rem; }
.how-to-read li { margin-bottom: 0.4rem; }
.colophon { color: var(--faint); font-size: 0.8rem; margin-top: 2rem; }

@media (max-width: 40rem) {
  body { font-size: 16px; }
  .decisions { grid-template-columns: 1fr 1fr; }
  .facts > div { grid-template-columns: 6.5rem 1fr; gap: 0.7rem; }
  .card { padding: 1rem 1rem 0.9rem; }
  .prob { grid-column: 1 / 3; }
}

@media print {
  @page { margin: 1.6cm 1.5cm; }
  html { font-size: 10pt; }
  body { background: #fff; font-size: 1rem; line-height: 1.45; }
  .page { max-width: none; padding: 0; }
  .toc, details.prompt { display: none; }
  .tile, .facts, .card { box-shadow: none; border-color: #999; }
  .card { break-inside: avoid-page; }
  .group > h2 { break-after: avoid-page; }
  .card, .tile, .pill, .bar, .fill, .count, .decisions { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .group { margin-top: 1.5rem; }
}
"
}

# The report's rows: a record's own columns from `t`, and what the model said of it.
record_rows <- function(t, incl_p, model_num, verdict, explanation, reps, n_mis, failed) {
  data.frame(
    studyid = as.character(t$studyid),
    title = as.character(t$title),
    abstract = report_col(t, "abstract"),
    author = report_col(t, "author"),
    promptid = report_col(t, "promptid"),
    prompt = report_col(t, "prompt"),
    model = report_col(t, "model"),
    submodel = report_col(t, "submodel"),
    top_p = report_col(t, "top_p"),
    incl_p = incl_p,
    model_num = model_num,
    verdict = verdict,
    explanation = explanation,
    reps = reps,
    n_mis = n_mis,
    failed = failed,
    stringsAsFactors = FALSE
  )
}
