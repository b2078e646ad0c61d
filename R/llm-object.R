# The result object (class "llm") and its tables, built from the tables the Go core builds from the
# run (ARCHITECTURE.md): the rows of every job in their final order (with, for screen_errors(), the
# rows of the result it repairs merged in), their aggregation, the fields its questions reworded and
# the run metadata.
#
# R adds what is R's: result_rows() turns the rows into user-facing rows, with the user's columns,
# study ids, text and questions (run_questions()) by record, carrying two internal columns
# (.record = the record's position in the user's data, .failed); assemble_llm() splits them into
# answer_data and error_data and joins the aggregation to the text of its records.

# The spec section 2.3 columns in their order; which apply depends on the provider and arguments.
# Custom tools add, after them, every argument of the model's call as JSON text.
answer_columns <- function(layout) {
  cols <- c("studyid", "title", "abstract", "promptid", "prompt", "model", "iterations", "question",
    if (layout$has_top_p) "top_p", "decision_llm",
    if (layout$decision_description) "detailed_description", "decision_binary",
    if (layout$confidence) "confidence",
    if (layout$token_info) c("prompt_tokens", "completion_tokens"), "submodel",
    if (layout$time_info) "run_time", "run_date", "n", if (layout$custom_tools) "tool_arguments")
  cols
}

# The spec section 2.4 columns in their order.
aggregated_columns <- function(layout) {
  c("studyid", "title", "abstract", "promptid", "prompt", "model", "question",
    if (layout$has_top_p) "top_p", "incl_p", "final_decision_llm", "final_decision_llm_num",
    if (layout$decision_description) "longest_answer", if (layout$confidence) "mean_confidence",
    "reps", if (isTRUE(layout$adaptive)) "reps_sent", "n_mis_answers", "submodel")
}

# Every column name the package writes; user columns with these names are left out of the result.
result_column_names <- function() {
  all <- list(has_top_p = TRUE, decision_description = TRUE, confidence = TRUE, token_info = TRUE, time_info = TRUE,
    custom_tools = TRUE, adaptive = TRUE)
  unique(c(answer_columns(all), aggregated_columns(all)))
}

# What the result looks like, from the stored arguments.
result_layout <- function(arg_list) {
  list(
    prompts = arg_list$prompt,
    models = arg_list$model,
    top_p = arg_list$top_p,
    has_top_p = !is.null(arg_list$top_p),
    decision_description = isTRUE(arg_list$decision_description),
    confidence = isTRUE(arg_list$confidence),
    token_info = isTRUE(arg_list$token_info),
    time_info = isTRUE(arg_list$time_info),
    custom_tools = !is.null(arg_list$tools),
    # A stage of screen_cascade() is aggregated also with reps = 1: its verdicts are per record.
    aggregate = any(arg_list$reps > 1) || !is.null(arg_list$cascade_stage),
    adaptive = !is.null(arg_list$run_options$adaptive)
  )
}

# The user-facing rows of a result, in the order of the engine's rows: this call's jobs from the
# engine's columns, and the rows merged from the result a call repairs (old_row) as they were.
result_rows <- function(answers, questions, records, layout, old_rows = NULL) {
  if (is.null(answers[["old_row"]])) {
    return(job_rows(answers, questions, records, layout))
  }
  new <- is.na(answers$old_row)
  fresh <- job_rows(answers[new, , drop = FALSE], questions, records, layout)
  old <- old_rows[answers$old_row[!new], , drop = FALSE]
  rows <- rbind_job_rows(old, fresh)
  rows[order(c(which(!new), which(new))), , drop = FALSE]
}

# The question of every record and prompt as the run sent it, prompt-major (record r of prompt p is
# element (p - 1) * records + r): the core's frame (a head per prompt, the middle, the tail) around
# each record's title and abstract, R's own text where the question holds it as R sent it, else the
# field as the core reworded it (`reworded`: record, title, abstract, NA where R's text stands).
run_questions <- function(records, frame, reworded) {
  title <- records$title
  abstract <- records$abstract
  if (!is.null(reworded) && nrow(reworded) > 0) {
    at <- as.integer(reworded$record)
    set <- !is.na(reworded$title)
    title[at[set]] <- reworded$title[set]
    set <- !is.na(reworded$abstract)
    abstract[at[set]] <- reworded$abstract[set]
  }
  unlist(lapply(frame$heads, function(head) paste0(head, title, frame$middle, abstract, frame$tail)), use.names = FALSE)
}

# User-facing rows of the jobs in an engine answers table.
# records: list(index = position in the user's data, studyid, title, abstract, user = data frame of
# the user's other columns), each indexed by the engine's record number.
job_rows <- function(answers, questions, records, layout) {
  rec <- as.integer(answers$record)
  n <- length(rec)
  q <- questions[(as.integer(answers$promptid) - 1L) * length(records$title) + rec]
  user <- if (ncol(records$user) > 0) as.list(records$user[rec, , drop = FALSE]) else list()
  failed <- as.logical(answers$failed)
  failed[is.na(failed)] <- TRUE
  binary <- as.integer(answers$decision_binary)
  binary[failed] <- NA_integer_
  cols <- list(
    studyid = records$studyid[rec],
    title = records$title[rec],
    abstract = records$abstract[rec],
    promptid = as.integer(answers$promptid),
    prompt = layout$prompts[answers$promptid],
    model = as.character(answers$model),
    iterations = as.numeric(answers$iterations),
    question = as.character(q),
    top_p = as.numeric(answers$top_p),
    decision_llm = as.character(answers$decision_llm),
    detailed_description = as.character(column_or_na(answers, "detailed_description", NA_character_)),
    decision_binary = binary,
    confidence = as.numeric(column_or_na(answers, "confidence", NA_real_)),
    prompt_tokens = as.integer(answers$prompt_tokens),
    completion_tokens = as.integer(answers$completion_tokens),
    submodel = as.character(answers$submodel),
    run_time = as.numeric(answers$run_time),
    run_date = as.character(answers$run_date),
    n = as.integer(answers$n),
    tool_arguments = as.character(column_or_na(answers, "tool_arguments", NA_character_))
  )
  cols <- cols[answer_columns(layout)]
  internal <- list(.record = as.integer(records$index[rec]), .failed = failed)
  # The spec's columns first, the user's after them: a wide export would otherwise push the
  # decisions past the last column a console shows.
  tibble::new_tibble(c(cols, user, internal), nrow = n)
}

column_or_na <- function(df, name, na) {
  if (name %in% names(df)) df[[name]] else rep(na, nrow(df))
}

# Split rows into answer_data / error_data, join the aggregation, price: the components of an llm
# object. `aggregated` is the engine's aggregation of the rows, `cutoffs` its effective cut-offs.
assemble_llm <- function(rows, price_data, run_date, layout, arg_list, run_info, record_ids, aggregated = NULL,
                         cutoffs = NULL) {
  failed <- rows$.failed
  # Without failures the rows are answer_data as they are: no copy of a large result.
  answer_data <- strip_internal(if (any(failed)) rows[!failed, , drop = FALSE] else rows, class = "llm_tbl")
  error_data <- if (any(failed)) strip_internal(rows[failed, , drop = FALSE]) else NULL
  aggregated <- if (layout$aggregate) aggregated_rows(rows, layout, aggregated, cutoffs) else NULL
  price <- if (layout$token_info) price_data else NULL
  obj <- list(
    answer_data = answer_data,
    price_dollar = if (!is.null(price)) sum(price$total_price_dollar) else NULL,
    price_data = price,
    run_date = run_date,
    answer_data_aggregated = aggregated,
    error_data = error_data
  )
  obj <- obj[!vapply(obj, is.null, logical(1))]
  run_info$answered <- sum(!failed)
  run_info$failed <- sum(failed)
  structure(obj, class = c("llm", "list"), arg_list = arg_list, run_info = run_info, record_ids = record_ids)
}

strip_internal <- function(rows, class = character()) {
  keep <- setdiff(names(rows), c(".record", ".failed"))
  out <- as.list(rows)[keep]
  tibble::new_tibble(out, nrow = nrow(rows), class = class)
}

# The engine's answers columns of user-facing rows: what the engine merges and aggregates of the
# rows of a result that screen_errors() repairs.
engine_answers <- function(rows) {
  tibble::tibble(
    record = rows$.record,
    promptid = rows$promptid,
    model = rows$model,
    top_p = if ("top_p" %in% names(rows)) rows$top_p else rep(NA_real_, nrow(rows)),
    iterations = as.integer(rows$iterations),
    n = rows$n,
    decision_binary = rows$decision_binary,
    detailed_description = as.character(column_or_na(rows, "detailed_description", NA_character_)),
    confidence = as.numeric(column_or_na(rows, "confidence", NA_real_)),
    submodel = rows$submodel,
    failed = rows$.failed
  )
}

# answer_data_aggregated: one row per record x prompt x model x top_p, as the engine aggregated
# them, with the study id, text and user columns of the row each takes its record from.
aggregated_rows <- function(rows, layout, agg, cutoffs) {
  base <- as.list(rows[agg$first_row, , drop = FALSE])
  user <- base[setdiff(names(base), c(result_column_names(), ".record", ".failed"))]
  cols <- list(
    studyid = base$studyid,
    title = base$title,
    abstract = base$abstract,
    promptid = as.integer(agg$promptid),
    prompt = layout$prompts[agg$promptid],
    model = as.character(agg$model),
    question = base$question,
    top_p = as.numeric(agg$top_p),
    incl_p = as.numeric(agg$incl_p),
    final_decision_llm = as.character(agg$final_decision_llm),
    final_decision_llm_num = as.integer(agg$final_decision_llm_num),
    longest_answer = as.character(column_or_na(agg, "longest_answer", NA_character_)),
    mean_confidence = as.numeric(column_or_na(agg, "mean_confidence", NA_real_)),
    reps = as.integer(agg$reps),
    reps_sent = if (!is.null(agg[["reps_sent"]])) as.integer(agg[["reps_sent"]]),
    n_mis_answers = as.integer(agg$n_mis_answers),
    submodel = as.character(agg$submodel)
  )
  out <- tibble::new_tibble(c(cols[aggregated_columns(layout)], user), nrow = nrow(agg), class = "llm_agg_tbl")
  attr(out, "incl_cutoff_upper") <- cutoffs$upper
  attr(out, "incl_cutoff_lower") <- cutoffs$lower
  out
}

# price_data of spec section 2.5 from the run metadata's price table: the whole run's price, or
# with `spent = TRUE` the part of it this call spent. The spec fixes price_data's columns, so the
# prompt cache's figures (per prompt and model: input tokens read from and written to the cache, and
# what the cache saved) are its attribute "cache".
price_data_rows <- function(price, spent = FALSE) {
  if (is.null(price) || nrow(price) == 0) {
    return(tibble::tibble(
      prompt = character(), model = character(), iterations = integer(),
      input_price_dollar = numeric(), output_price_dollar = numeric(), total_price_dollar = numeric()
    ))
  }
  prefix <- if (spent) "spent_" else ""
  input <- as.numeric(price[[paste0(prefix, "input_price_dollar")]])
  output <- as.numeric(price[[paste0(prefix, "output_price_dollar")]])
  out <- tibble::tibble(
    prompt = as.character(price$promptid),
    model = as.character(price$model),
    iterations = as.integer(price$iterations),
    input_price_dollar = input,
    output_price_dollar = output,
    total_price_dollar = input + output
  )
  if (!spent) {
    attr(out, "cache") <- cache_rows(price)
  }
  out
}

# The prompt cache's figures of a price table (see price_data_rows()).
cache_rows <- function(price) {
  num <- function(col) if (is.null(price[[col]])) rep(0, nrow(price)) else as.numeric(price[[col]])
  tibble::tibble(
    prompt = as.character(price$promptid),
    model = as.character(price$model),
    cached_input_tokens = num("cached_input_tokens"),
    cache_write_tokens = num("cache_write_tokens"),
    cache_saving_dollar = if (is.null(price$cache_saving_dollar)) NA_real_ else as.numeric(price$cache_saving_dollar)
  )
}

#' Print screening results
#'
#' A screening returns an object of class `llm` (see [tabscreen_a.tools()]); its tables have classes
#' `llm_tbl` (`answer_data`) and `llm_agg_tbl` (`answer_data_aggregated`). Their print methods
#' summarise them at a glance: records, requests, decisions, failures, tokens, price and time.
#'
#' @param x An `llm` object, or one of its tables.
#' @param ... Passed on to the tibble print method.
#' @return `x`, invisibly.
#' @name print.llm
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' res <- tabscreen_a.tools(
#'   filges2015_dat[1:5, ], prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", reps = 2, progress = FALSE, messages = FALSE
#' )
#' res
#' res$answer_data
#' res$answer_data_aggregated
#' fake$stop()
#' options(old)
NULL

#' @rdname print.llm
#' @export
print.llm <- function(x, ...) {
  info <- attr(x, "run_info")
  args <- attr(x, "arg_list")
  rows <- rbind_rows(x$answer_data, x$error_data)
  n_records <- length(unique(rows$studyid))
  cli::cli_text("{.strong Screening result} ({.cls llm}, provider {toupper(args$provider %||% '?')})")
  models <- args$model %||% unique(rows$model)
  prompts <- length(args$prompt %||% unique(rows$promptid))
  n_jobs <- nrow(rows)
  n_failed <- nrow(x$error_data %||% data.frame())
  cli::cli_bullets(c(
    "*" = "{n_records} record{?s} x {prompts} prompt{?s} x {length(models)} model{?s} ({.val {models}}): {n_jobs} request{?s}.",
    "*" = "Answered: {n_jobs - n_failed}; failed: {n_failed}.",
    if (n_failed > 0) c(" " = "See {.field error_data}; re-send the failed requests with {.code screen_errors()}."),
    "*" = decision_summary(x$answer_data),
    if (!is.null(x$answer_data_aggregated)) c("*" = aggregated_summary(x$answer_data_aggregated)),
    if (all(c("prompt_tokens", "completion_tokens") %in% names(rows))) {
      c("*" = "Tokens: {format_tokens(sum(rows$prompt_tokens, na.rm = TRUE))} prompt, {format_tokens(sum(rows$completion_tokens, na.rm = TRUE))} completion.")
    },
    if (!is.null(x$price_dollar)) c("*" = price_summary(x$price_dollar, info$call_price_dollar)),
    cache_summary(attr(x$price_data, "cache")),
    if (!is.null(info$saved_requests)) {
      c("*" = adaptive_summary(info$saved_requests, saved_price(x$price_dollar, n_jobs, info$saved_requests)))
    },
    run_lines(x, info, n_jobs)
  ))
  cli::cli_text("Components: {.field {names(x)}}.")
  invisible(x)
}

# The last lines of a printed result: the answers the store gave, when, and how long it took.
run_lines <- function(x, info, n_jobs) {
  c(
    if (isTRUE(info$stored_answers > 0)) {
      c("*" = cli::format_inline("{info$stored_answers} of the {n_jobs} answer{?s} {cli::qty(info$stored_answers)}{?was/were} taken from the answer store, not sent by this call."))
    },
    "*" = cli::format_inline("Run {x$run_date %||% '?'}{if (!is.null(info$elapsed_seconds)) paste0(', ', format(round(info$elapsed_seconds, 1), nsmall = 1), ' s') else ''}.")
  )
}

#' @rdname print.llm
#' @export
print.llm_tbl <- function(x, ...) {
  cli::cli_text("{.cls llm_tbl}: {nrow(x)} answer{?s}. {decision_summary(x)}")
  print_decisions_first(x, c("studyid", "decision_llm", "decision_binary", "confidence", "model", "promptid", "n", "title"), ...)
  invisible(x)
}

#' @rdname print.llm
#' @export
print.llm_agg_tbl <- function(x, ...) {
  cli::cli_text("{.cls llm_agg_tbl}: {aggregated_summary(x)}")
  print_decisions_first(x, c("studyid", "final_decision_llm", "incl_p", "mean_confidence", "n_mis_answers", "model",
    "promptid", "title"), ...)
  invisible(x)
}

# Prints a result table with the columns of `front` (those it has) first: a console shows the
# first columns that fit, and those should be the record and its decision (front[2]), not the
# texts that come before it in the spec's order. A table whose decision already comes before any
# text (a selection of columns the user ordered) prints as it is. The table itself keeps its order.
print_decisions_first <- function(x, front, ...) {
  text_at <- match(c("title", "abstract", "prompt", "question"), names(x))
  decision_at <- match(front[2], names(x))
  front <- if (!is.na(decision_at) && any(text_at < decision_at, na.rm = TRUE)) intersect(front, names(x)) else character()
  cols <- c(front, setdiff(names(x), front))
  view <- tibble::new_tibble(as.list(x)[cols], nrow = nrow(x))
  print(view, ...)
  if (!identical(cols, names(x)) && length(front) > 0) {
    cli::cli_text(cli::col_grey("Shown with {.field {front}} first; {.code names()} gives the table's order."))
  }
}

# Both summaries read their column with [[: a column subset of a tibble may have dropped it, and
# tibble's `$` warns about a missing column.
# The price, and what this call spent of it when that differs (a resumed or repaired run).
price_summary <- function(total, call_price) {
  if (is.null(call_price) || isTRUE(all.equal(total, call_price))) {
    return(paste0("Price: ", format_dollars(total), "."))
  }
  paste0("Price: ", format_dollars(total), " for the whole run, of which this call spent ", format_dollars(call_price), ".")
}

# The prompt cache's line of the printed summary: tokens read from and written to the cache and
# what it saved; nothing when the run used no cache.
cache_summary <- function(cache) {
  if (is.null(cache) || nrow(cache) == 0) return(NULL)
  read <- sum(cache$cached_input_tokens)
  written <- sum(cache$cache_write_tokens)
  if (read + written == 0) return(NULL)
  saving <- sum(cache$cache_saving_dollar)
  c("*" = paste0("Prompt cache: ", format_tokens(read), " input tokens read, ", format_tokens(written), " written",
    if (!is.na(saving)) paste0("; saved ", if (saving < 0) "-" else "", format_dollars(abs(saving))), "."))
}

decision_summary <- function(answers) {
  d <- answers[["decision_llm"]]
  if (is.null(d)) {
    return("")
  }
  if (length(d) == 0) {
    return("Decisions: none.")
  }
  counts <- c(include = sum(d == "1", na.rm = TRUE), exclude = sum(d == "0", na.rm = TRUE),
    uncertain = sum(d == "1.1", na.rm = TRUE))
  other <- length(d) - sum(counts)
  text <- paste0("Decisions: ", counts[["include"]], " include, ", counts[["exclude"]], " exclude")
  if (counts[["uncertain"]] > 0) {
    text <- paste0(text, ", ", counts[["uncertain"]], " uncertain (1.1, counted as include)")
  }
  if (other > 0) {
    text <- paste0(text, ", ", other, " other")
  }
  paste0(text, ".")
}

aggregated_summary <- function(agg) {
  f <- agg[["final_decision_llm"]]
  if (is.null(f)) {
    return(paste0(nrow(agg), if (nrow(agg) == 1) " row." else " rows."))
  }
  upper <- attr(agg, "incl_cutoff_upper")
  lower <- attr(agg, "incl_cutoff_lower")
  cut <- if (!is.null(upper)) paste0(" (cut-offs: upper ", upper, ", lower ", lower, ")") else ""
  paste0("Aggregated decisions: ", sum(f == "Include", na.rm = TRUE), " Include, ",
    sum(f == "Check", na.rm = TRUE), " Check, ", sum(f == "Exclude", na.rm = TRUE), " Exclude", cut, ".")
}

rbind_rows <- function(a, b) {
  if (is.null(b) || nrow(b) == 0) {
    return(a)
  }
  if (is.null(a) || nrow(a) == 0) {
    return(b)
  }
  tibble::as_tibble(rbind(as.data.frame(a), as.data.frame(b)))
}

