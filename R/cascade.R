# Cascade screening: a cheap model screens every record, a strong one only the records whose first
# verdict is doubtful. Each stage is an ordinary screening call (its own run in the answer store,
# its own resume and screen_errors()); R combines the stages' results into one llm object
# (docs/decisions/0025-cascade-screening.md).

cascade_state <- new.env(parent = emptyenv())

# The columns a cascade adds to the result tables; a user column of the same name would clash.
cascade_columns <- c("stage", "incl_p_first", "final_decision_llm_first")

# The shared arguments a stage's list may not hold, and the positional order of the shared ones.
cascade_shared_only <- c("data", "prompt", "studyid", "title", "abstract")

#' Screen in two stages: a cheap model first, a strong model for the doubtful records
#'
#' Screens every record with a first model (usually a cheap one, asked several times), then sends
#' only the records whose first verdict is doubtful to a second model (usually a stronger and
#' dearer one), of the same provider or of another. The result is one `llm` object: each record's
#' final verdict is the second model's where the second model was asked, the first model's
#' otherwise.
#'
#' @section Which records are doubtful:
#' * `band = NULL` (the default): the records whose first verdict (`final_decision_llm`) is
#'   `"Check"`, that is whose inclusion probability lies between the first stage's
#'   `incl_cutoff_lower` and `incl_cutoff_upper`. The first stage must then be able to give
#'   `"Check"`: `reps` above 1 and a lower cut-off below the upper one with some share of
#'   repetitions between them (e.g. `reps = 5, incl_cutoff_upper = 0.8, incl_cutoff_lower = 0.2`).
#' * `band = c(lo, hi)`: the records whose first `incl_p` is within `lo` and `hi` (both included),
#'   whatever the cut-offs say. The first verdicts of the records outside the band stand as they
#'   are, `"Check"` included: give the first stage cut-offs that put no `"Check"` outside the band
#'   (the default cut-offs give none).
#'
#' A record whose first-stage requests all failed has no verdict and is not sent on;
#' [screen_errors()] re-sends its requests, and sends it to the second model if it then is doubtful.
#'
#' @section The stages:
#' `first` and `second` are lists: a screening function (`tabscreen_a.tools`, `tabscreen_b` or
#' `tabscreen_c`, not called) followed by that stage's own arguments, named (`model`, `reps`,
#' `api_url`, `api_key`, the cut-offs, `...` fields of the request body). The arguments in `...`
#' are given to both stages (`data`, `prompt`, `studyid`, `title`, `abstract`, `messages`, ...);
#' an argument is either shared or a stage's, not both. Each stage screens one prompt with one
#' model and one `top_p` value.
#'
#' Every argument of both stages is checked, and both keys are read, before any request is sent.
#' Each stage is then an ordinary screening call: it has its own run in the answer store (see
#' [screen_store()]), so the same `screen_cascade()` call again (after an interruption, say)
#' takes the stored answers of both stages and sends only what is missing. The second stage's run
#' holds only the records sent to it.
#'
#' @section The estimate:
#' Before the first stage a message gives what the second stage would cost if every record were
#' doubtful, and about what it costs if a fifth of them are; after the first stage, the share of
#' records actually doubtful and the second stage's estimate. Both are in the attribute `run_info`
#' (`cascade`). Through [screen_batch()], as `screen_batch(screen_cascade, first, second, ...)`,
#' both stages go through the providers' batch APIs (both providers must have one) and the
#' estimates are at batch prices.
#'
#' @section The result:
#' An object of classes `llm_cascade` and `llm` (see [tabscreen_a.tools()] for the components):
#' * `answer_data`, `error_data` and `price_data` hold both stages' rows, with a column `stage`
#'   (1 or 2); `price_dollar` is the price of both.
#' * `answer_data_aggregated` has one row per record: the second stage's row (its `model`,
#'   `incl_p`, `final_decision_llm`, ...) where the record was sent to it, the first stage's
#'   otherwise, with `stage` saying which, and the first stage's verdict kept in `incl_p_first`
#'   and `final_decision_llm_first`. A stage asked once per record (`reps = 1`) has an `incl_p` of
#'   0 or 1. The table's attribute `cascade` names the two models.
#' * The attribute `run_info` has a list `cascade`: `records`, `sent` (records sent to the second
#'   stage), `share`, `band`, `estimate_all` (the second stage's estimated price for every
#'   record), `estimate_second` (for the records sent), `price` (per stage) and `runs` (the run
#'   ids of the stages' calls in the answer store, for [screen_store_answers()] and the like).
#'
#' `print()` and `summary()` show both stages. [screen_analyzer()] evaluates the final verdicts as
#' one decision rule (its `model` is `"first > second"`, its `reps` `NA`); [screen_report()] shows
#' each disagreement with the model that gave the verdict. [screen_errors()] re-sends the failed
#' requests of each stage (`api_key`: one key, or `c(first, second)` for a cascade across
#' providers), then sends the records its answers make doubtful to the second stage.
#'
#' @param first,second The stages: a list whose first element is a screening function and whose
#'   other, named elements are that stage's arguments.
#' @param ... The arguments both stages share, as you would give them to a screening function.
#' @param band `NULL` to send the first stage's `"Check"` records on, or `c(lo, hi)`: send the
#'   records whose first-stage `incl_p` is within that band.
#' @return An object of classes `llm_cascade` and `llm`. Through `screen_batch(wait = FALSE)`,
#'   or with batches still running, what [screen_batch()] returns for the stage that is waiting.
#' @seealso [screen_adaptive()], the other way to ask fewer requests.
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' res <- screen_cascade(
#'   first = list(tabscreen_a.tools, model = "gpt-6-luna", reps = 5,
#'     incl_cutoff_upper = 0.8, incl_cutoff_lower = 0.2),
#'   second = list(tabscreen_a.tools, model = "gpt-6.1-terra", force = TRUE),
#'   filges2015_dat[1:10, ], prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", progress = FALSE
#' )
#' res
#' res$answer_data_aggregated[c("studyid", "stage", "final_decision_llm", "final_decision_llm_first")]
#' summary(res)
#' fake$stop()
#' options(old)
screen_cascade <- function(first, second, ..., band = NULL) {
  call <- rlang::current_env()
  if (missing(first) || missing(second)) {
    abort_arg(c("{.fn screen_cascade} needs both stages, {.arg first} and {.arg second}.",
      "i" = "E.g. {.code first = list(tabscreen_a.tools, model = \"gpt-6-luna\", reps = 5)}."),
      class = "tabscreen_error_cascade_args", arg = if (missing(first)) "first" else "second", call = call)
  }
  stages <- list(cascade_stage_spec(first, "first", call), cascade_stage_spec(second, "second", call))
  band <- check_band(band, call)
  shared <- cascade_shared(rlang::enquos(...), stages, call)
  data <- shared$data
  values <- shared$values
  # A key given to both stages is each stage's unless the stage has its own.
  for (i in 1:2) stages[[i]]$api_key <- stages[[i]]$api_key %||% values$api_key
  values$api_key <- NULL
  check_cascade_data(data, call)
  batch <- !is.null(batch_request())
  for (i in 1:2) check_cascade_stage(stages[[i]], values, batch, call)

  # Every argument of both stages, checked by the screening functions themselves, before any
  # request: the plans also give the second stage's price if every record were doubtful.
  plans <- lapply(1:2, function(i) cascade_plan(stages[[i]], data, shared$columns, values, i, call))
  if (is.null(band)) check_check_possible(stages[[1]], values, call)
  keys <- lapply(stages, cascade_key, messages = values$messages %||% TRUE, call = call)
  columns <- lapply(shared$columns, function(q) lookup_column(q, data)$column)
  messages <- values$messages %||% TRUE
  spec <- list(stages = lapply(stages, function(s) s[c("letter", "args")]), values = values, columns = columns,
    band = band, models = vapply(stages, function(s) as.character(stage_value(s, values, "model")), character(1)))

  inform_cascade_plan(stages, plans[[2]], nrow(data), band, messages)
  one <- cascade_run(stages[[1]], data, columns, values, keys[[1]], number = 1)
  if (inherits(one, "tabscreen_batch")) return(one)
  doubtful <- cascade_doubtful(one$answer_data_aggregated, band)
  rows <- cascade_rows(one, data, doubtful)
  estimate <- list(records = nrow(data), sent = length(rows), share = length(rows) / nrow(data),
    band = band, estimate_all = plans[[2]]$price, estimate_second = 0)
  parts <- list(one)
  if (length(rows) > 0) {
    data2 <- cascade_subset(data, rows, columns)
    plan2 <- cascade_plan(stages[[2]], data2$data, data2$columns, values, 2, call)
    estimate$estimate_second <- plan2$price
    inform_cascade_second(stages[[2]], estimate, plan2, messages)
    two <- cascade_run(stages[[2]], data2$data, data2$columns, values, keys[[2]], number = 2, estimate = FALSE)
    if (inherits(two, "tabscreen_batch")) return(two)
    parts <- c(parts, list(two))
  } else {
    tabscreen_inform(c("i" = "No record of the first stage is doubtful: the second stage sends nothing."), messages = messages)
  }
  cascade_combine(parts, spec, estimate)
}

# A stage's list: the screening function, then its own named arguments.
cascade_stage_spec <- function(x, arg, call) {
  if (!is.list(x) || length(x) < 1 || !is.function(x[[1]])) {
    abort_arg(c("{.arg {arg}} must be a list whose first element is a screening function, not {.obj_type_friendly {x}}.",
      "i" = "E.g. {.code {arg} = list(tabscreen_a.tools, model = \"gpt-6-luna\", reps = 5)}."),
      class = "tabscreen_error_cascade_args", arg = arg, call = call)
  }
  letter <- tryCatch(screening_letter(x[[1]], "tabscreen_error_cascade_args", call), error = function(e) NULL)
  if (is.null(letter)) {
    abort_arg(c("The first element of {.arg {arg}} must be a screening function of this package.",
      "i" = "Use {.fn tabscreen_a.tools}, {.fn tabscreen_b} or {.fn tabscreen_c}, without calling it."),
      class = "tabscreen_error_cascade_args", arg = arg, call = call)
  }
  args <- x[-1]
  nms <- names(args) %||% rep("", length(args))
  if (any(is.na(nms) | nms == "") || anyDuplicated(nms)) {
    abort_arg(c("The arguments in {.arg {arg}} after the screening function must be named, each once.",
      "i" = "E.g. {.code list(tabscreen_a.tools, model = \"gpt-6-luna\", reps = 5)}."),
      class = "tabscreen_error_cascade_args", arg = arg, call = call)
  }
  reserved <- intersect(nms, cascade_shared_only)
  if (length(reserved) > 0) {
    abort_arg(c("{.arg {arg}} holds {.arg {reserved}}, which both stages share.",
      "i" = "Give {.arg {reserved}} in the arguments of {.fn screen_cascade} itself, after {.arg second}."),
      class = "tabscreen_error_cascade_args", arg = arg, call = call)
  }
  api_key <- args$api_key
  args$api_key <- NULL
  list(fn = x[[1]], letter = letter, args = args, api_key = api_key, arg = arg,
    label = if (arg == "first") "first stage" else "second stage")
}

check_band <- function(band, call) {
  if (is.null(band)) return(NULL)
  if (!is.numeric(band) || length(band) != 2 || anyNA(band) || any(band < 0 | band > 1) || band[1] > band[2]) {
    abort_arg(c("{.arg band} must be {.code NULL} or two numbers {.code c(lo, hi)} between 0 and 1 with {.code lo <= hi}.",
      "i" = "E.g. {.code band = c(0.2, 0.8)} sends the records whose first-stage {.field incl_p} is within 0.2 and 0.8."),
      class = "tabscreen_error_cascade_args", arg = "band", call = call)
  }
  as.numeric(band)
}

# The shared arguments: `data` and the other values evaluated, the column arguments kept as
# quosures (a bare column name is no variable).
cascade_shared <- function(quos, stages, call) {
  nms <- names(quos) %||% rep("", length(quos))
  unnamed <- which(nms == "")
  free <- setdiff(cascade_shared_only, nms)
  if (length(unnamed) > length(free)) {
    abort_arg(c("Only {.arg {cascade_shared_only}} may be given by position in {.fn screen_cascade}.",
      "i" = "Name the other shared arguments, e.g. {.code api_url = ...}."),
      class = "tabscreen_error_cascade_args", arg = "...", call = call)
  }
  nms[unnamed] <- free[seq_along(unnamed)]
  names(quos) <- nms
  if (anyDuplicated(nms)) {
    abort_arg("The shared argument{?s} {.arg {unique(nms[duplicated(nms)])}} {?is/are} given twice.",
      class = "tabscreen_error_cascade_args", arg = "...", call = call)
  }
  for (s in stages) {
    both <- intersect(c(names(s$args), if (!is.null(s$api_key)) "api_key"), nms)
    if (length(both) > 0) {
      abort_arg(c("{.arg {both}} {?is/are} given both in {.arg {s$arg}} and to both stages.",
        "i" = "Give {cli::qty(length(both))}{?it/them} once: in a stage's list for that stage, or after {.arg second} for both."),
        class = "tabscreen_error_cascade_args", arg = s$arg, call = call)
    }
  }
  if (!"data" %in% nms) {
    abort_arg("{.arg data} is missing: give the records to screen after {.arg second}.",
      class = "tabscreen_error_cascade_args", arg = "data", call = call)
  }
  column_names <- c("studyid", "title", "abstract")
  columns <- quos[intersect(column_names, nms)]
  values <- lapply(quos[setdiff(nms, column_names)], rlang::eval_tidy)
  data <- values$data
  values$data <- NULL
  list(data = data, values = values, columns = columns)
}

check_cascade_data <- function(data, call) {
  clash <- if (is.data.frame(data)) intersect(names(data), cascade_columns) else character()
  if (length(clash) > 0) {
    abort_arg(c("{.arg data} has column{?s} {.field {clash}}, which a cascade's result adds.",
      "i" = "Rename {cli::qty(length(clash))}{?it/them} before screening."),
      class = "tabscreen_error_cascade_args", arg = "data", call = call)
  }
}

# A stage's value of an argument: its own, else the shared one, else the screening function's
# default (evaluated: the defaults that matter here are constants).
stage_value <- function(stage, values, name) {
  if (name %in% names(stage$args)) return(stage$args[[name]])
  if (name %in% names(values)) return(values[[name]])
  f <- formals(stage$fn)
  if (name %in% names(f)) eval(f[[name]], envir = baseenv()) else NULL
}

# A cascade's verdicts are per record: one prompt, and one model and one top_p value per stage.
check_cascade_stage <- function(stage, values, batch, call) {
  if (length(values$prompt) > 1) {
    abort_arg(c("A cascade screens one prompt; {.arg prompt} has {length(values$prompt)}.",
      "i" = "Run one {.fn screen_cascade} per prompt."),
      class = "tabscreen_error_cascade_args", arg = "prompt", call = call)
  }
  for (name in c("model", "top_p")) {
    v <- if (name == "top_p" && !"top_p" %in% names(formals(stage$fn))) NULL else stage_value(stage, values, name)
    if (length(v) > 1) {
      abort_arg(c("Each stage of a cascade has one {.arg {name}}; the {stage$label} has {length(v)}.",
        "i" = "Give one value in {.arg {stage$arg}}, e.g. {.code {name} = {deparse(v[[1]])}}."),
        class = "tabscreen_error_cascade_args", arg = stage$arg, call = call)
    }
  }
  if (batch && !isTRUE(provider_info(stage$letter)$batch)) {
    abort_arg("The {stage$label} is screened by {provider_info(stage$letter)$label}, which has no batch API in this version of tabscreen.",
      class = c("tabscreen_error_batch_args", "tabscreen_error_cascade_args"), arg = stage$arg, call = call)
  }
  invisible()
}

# The plan of a stage on `data` (screen_plan(): every argument checked, nothing sent). An error
# says which stage it is about.
cascade_plan <- function(stage, data, columns, values, i, call) {
  args <- c(list(stage$fn, data = data), columns, values, stage$args)
  withCallingHandlers(
    suppressMessages(do.call(screen_plan, args)),
    tabscreen_error = function(e) {
      rlang::abort(cli::format_inline("The {stage$label} ({.arg {stage$arg}}) cannot be screened."),
        class = c(setdiff(class(e), c("rlang_error", "error", "condition")), "tabscreen_error_cascade_stage"),
        parent = e, call = call)
    }
  )
}

# Whether the first stage's cut-offs can give Check: some share k / reps of includes lies at or
# above the lower cut-off and below the upper one (the core's rule, screen.Cutoffs.Label).
check_check_possible <- function(stage, values, call) {
  reps <- stage_value(stage, values, "reps")
  cut <- effective_cutoffs(stage_value(stage, values, "incl_cutoff_upper"), stage_value(stage, values, "incl_cutoff_lower"))
  shares <- (0:reps) / reps
  tol <- 1e-9
  if (reps > 1 && any(shares >= cut$lower - tol & shares < cut$upper - tol)) return(invisible())
  abort_arg(c("With {.code band = NULL} the second stage screens the first stage's {.val Check} records, but the first stage's settings give none.",
    "i" = "It asks each record {reps} time{?s} with cut-offs upper {cut$upper} and lower {cut$lower}: no share of includes lies between them.",
    "i" = "Give the first stage {.code reps} above 1 and cut-offs with a share between them, e.g. {.code reps = 5, incl_cutoff_upper = 0.8, incl_cutoff_lower = 0.2}, or give {.arg band}, e.g. {.code band = c(0.2, 0.8)}."),
    class = "tabscreen_error_cascade_args", arg = "band", call = call)
}

# A stage's key: its own `api_key`, else its provider's environment variable; read before any
# request, so that a missing second key does not show after the first stage was paid for.
cascade_key <- function(stage, messages, call) {
  key <- stage$api_key %||% provider_key(stage$letter, call = call)
  check_api_key(key, provider_env_var(stage$letter), messages = messages, call = call)
}

# One stage: an ordinary screening call, whose result is aggregated even with reps = 1 (the
# cascade's verdicts are per record). `estimate = FALSE` leaves the estimate to the cascade's
# message (the second stage's).
cascade_run <- function(stage, data, columns, values, api_key, number, estimate = TRUE) {
  old <- cascade_state$stage
  cascade_state$stage <- number
  on.exit(cascade_state$stage <- old, add = TRUE)
  if (!estimate) {
    old_opt <- options(tabscreen.estimate = FALSE)
    on.exit(options(old_opt), add = TRUE)
  }
  tabscreen_inform(c("i" = "Stage {number} of 2: {provider_info(stage$letter)$label}, model {.val {stage_value(stage, values, 'model')}}, {nrow(data)} record{?s}."),
    messages = values$messages %||% TRUE)
  out <- do.call(stage$fn, c(list(data = data), columns, values, stage$args, list(api_key = api_key)))
  if (inherits(out, "llm")) attr(out, "cascade_stage") <- number
  out
}

# The stage of the screening being run (NULL outside a cascade): its result is always aggregated.
cascade_stage <- function() cascade_state$stage

# Which rows of a stage's aggregation are doubtful.
cascade_doubtful <- function(agg, band) {
  p <- agg$incl_p
  known <- !is.na(p)
  if (is.null(band)) return(known & agg$final_decision_llm == "Check")
  tol <- 1e-9
  known & p >= band[1] - tol & p <= band[2] + tol
}

# The positions in `data` of the doubtful records of a stage's result.
cascade_rows <- function(res, data, doubtful) {
  ids <- res$answer_data_aggregated$studyid[doubtful]
  col <- attr(res, "arg_list")$studyid
  if (is.null(col)) return(as.integer(ids))
  match(ids, data[[col]])
}

# The records of the second stage: rows of the user's data. Generated study ids are positions in
# the whole data, kept in a column of their own so that the second stage's ids are the first's.
cascade_subset <- function(data, rows, columns) {
  sub <- data[rows, , drop = FALSE]
  if (is.null(columns$studyid)) {
    sub[[".cascade_id"]] <- rows
    columns$studyid <- ".cascade_id"
  }
  list(data = sub, columns = columns)
}

inform_cascade_plan <- function(stages, plan, records, band, messages) {
  if (!show_estimate(messages)) return(invisible())
  which <- if (is.null(band)) "its {.val Check} records" else "the records whose {.field incl_p} is within {band[1]} and {band[2]}"
  price <- plan$price
  cli::cli_inform(c(
    "i" = paste0("Cascade: the first stage screens {records} record{?s}; the second stage (model {.val {plan$models$model}}) screens ", which, "."),
    "i" = if (is.na(price)) {
      "No price is known for the second stage's model."
    } else {
      "Second stage: about {format_dollars(price)} if every record were doubtful; about {format_dollars(price * 0.2)} if 20 % are ({format_dollars(price / 100)} per percent of the records)."
    }
  ), class = c("tabscreen_estimate", "tabscreen_message"))
}

inform_cascade_second <- function(stage, estimate, plan, messages) {
  if (!show_estimate(messages)) return(invisible())
  cli::cli_inform(c(
    "i" = "The first stage found {estimate$sent} of {estimate$records} record{?s} doubtful ({format(round(100 * estimate$share, 1), nsmall = 1)} %).",
    "i" = if (plan$remaining == 0) {
      "Second stage: the answer store holds all its answers; nothing is sent."
    } else {
      "Second stage: {format_tokens(plan$remaining)} {cli::qty(plan$remaining)}request{?s}{if (plan$stored > 0) ' left' else ''}, estimated at {format_dollars(plan$price)}."
    }
  ), class = c("tabscreen_estimate", "tabscreen_message"))
}

# ---------------------------------------------------------------------------------------------
# The combined result

# Tables with the union of their columns, a column a table lacks as NA of the type it has
# elsewhere.
bind_fill <- function(tables) {
  tables <- Filter(Negate(is.null), tables)
  if (length(tables) == 0) return(NULL)
  cols <- unique(unlist(lapply(tables, names)))
  out <- lapply(cols, function(col) {
    template <- Find(function(t) col %in% names(t), tables)[[col]]
    parts <- lapply(tables, function(t) if (col %in% names(t)) t[[col]] else template[rep(NA_integer_, nrow(t))])
    do.call(c, unname(parts))
  })
  names(out) <- cols
  tibble::new_tibble(out, nrow = sum(vapply(tables, nrow, integer(1))))
}

# A stage's table with its `stage` column, placed after the specification's columns.
with_stage <- function(table, stage) {
  if (is.null(table)) return(NULL)
  table$stage <- rep(as.integer(stage), nrow(table))
  table
}

# The columns of a combined table in order: the specification's, the cascade's, the user's.
order_columns <- function(table, spec_cols, extra) {
  spec <- intersect(spec_cols, names(table))
  extra <- intersect(extra, names(table))
  user <- setdiff(names(table), c(spec, extra))
  tibble::new_tibble(as.list(table)[c(spec, extra, user)], nrow = nrow(table))
}

# The llm object of a cascade from its stages' results (`parts`: llm objects with the attribute
# cascade_stage; stage 1 first, then the second stage's calls). `spec` is what screen_errors()
# needs to send further records to the second stage; `estimate` the figures of run_info$cascade.
cascade_combine <- function(parts, spec, estimate) {
  stage_of <- vapply(parts, function(p) attr(p, "cascade_stage"), numeric(1))
  all <- list(has_top_p = TRUE, decision_description = TRUE, confidence = TRUE, token_info = TRUE, time_info = TRUE,
    custom_tools = TRUE, adaptive = TRUE)
  table_of <- function(name) bind_fill(Map(function(p, s) with_stage(p[[name]], s), parts, stage_of))
  answers <- table_of("answer_data")
  answers <- order_columns(answers, answer_columns(all), "stage")
  class(answers) <- c("llm_tbl", class(answers))
  errors <- table_of("error_data")
  if (!is.null(errors)) errors <- order_columns(errors, answer_columns(all), "stage")
  price <- table_of("price_data")
  if (!is.null(price)) {
    attr(price, "cache") <- bind_fill(Map(function(p, s) with_stage(attr(p$price_data, "cache"), s), parts, stage_of))
  }
  agg <- cascade_aggregated(parts, stage_of, aggregated_columns(all), spec$models)
  infos <- lapply(parts, attr, "run_info")
  sum_of <- function(field) sum(vapply(infos, function(i) as.numeric(i[[field]] %||% 0), numeric(1)))
  stage_price <- vapply(1:2, function(s) sum(price$total_price_dollar[price$stage == s]), numeric(1))
  estimate$price <- c(first = stage_price[1], second = stage_price[2])
  estimate$runs <- unlist(lapply(parts, function(p) attr(p, "store")$run_id))
  estimate$sent <- sum(agg$stage == 2L)
  estimate$share <- estimate$sent / nrow(agg)
  last <- infos[[length(infos)]]
  run_info <- list(state = if (all(vapply(infos, function(i) identical(i$state, "completed"), logical(1)))) "completed" else last$state,
    total = sum_of("total"), elapsed_seconds = sum_of("elapsed_seconds"), answered = nrow(answers),
    failed = nrow(errors %||% data.frame()), stored_answers = as.integer(sum_of("stored_answers")),
    call_price_dollar = if (!is.null(price)) sum_of("call_price_dollar"), cascade = estimate)
  first_args <- attr(parts[[1]], "arg_list")
  arg_list <- list(provider = unique(c(first_args$provider, spec$stages[[2]]$letter)), function_name = "screen_cascade",
    prompt = first_args$prompt, model = unique(spec$models),
    messages = first_args$messages, progress = first_args$progress, token_info = first_args$token_info,
    time_info = first_args$time_info, band = spec$band)
  dates <- unlist(lapply(parts, function(p) p$run_date))
  obj <- list(
    answer_data = answers,
    price_dollar = if (!is.null(price)) sum(price$total_price_dollar) else NULL,
    price_data = price,
    run_date = if (length(dates) > 0) max(dates) else NULL,
    answer_data_aggregated = agg,
    error_data = errors
  )
  obj <- obj[!vapply(obj, is.null, logical(1))]
  # What each stage's call needs to be repaired by screen_errors(): its result without the rows
  # (they are in the combined tables), with the study ids it screened.
  kept <- lapply(parts, function(p) {
    ids <- unique(c(p$answer_data$studyid, p$error_data$studyid))
    structure(list(price_data = p$price_data, run_date = p$run_date, answer_data_aggregated = p$answer_data_aggregated),
      arg_list = attr(p, "arg_list"), run_info = attr(p, "run_info"), record_ids = attr(p, "record_ids"),
      store = attr(p, "store"), cascade_stage = attr(p, "cascade_stage"), ids = ids,
      answer_names = names(p$answer_data), error_names = names(p$error_data %||% p$answer_data))
  })
  structure(obj, class = c("llm_cascade", "llm", "list"), arg_list = arg_list, run_info = run_info,
    record_ids = attr(parts[[1]], "record_ids"), cascade = list(spec = spec, parts = kept))
}

# One row per record: the second stage's aggregated row where the record was sent to it, else the
# first stage's, with the first stage's verdict beside it.
cascade_aggregated <- function(parts, stage_of, spec_cols, models) {
  first <- parts[[1]]$answer_data_aggregated
  rows <- Map(function(p, s) with_stage(p$answer_data_aggregated, s), parts, stage_of)
  seconds <- unlist(lapply(parts[stage_of == 2], function(p) p$answer_data_aggregated$studyid))
  rows[[1]] <- rows[[1]][!first$studyid %in% seconds, , drop = FALSE]
  agg <- bind_fill(rows)
  agg <- agg[order(match(agg$studyid, first$studyid)), , drop = FALSE]
  at <- match(agg$studyid, first$studyid)
  agg$incl_p_first <- first$incl_p[at]
  agg$final_decision_llm_first <- first$final_decision_llm[at]
  agg <- order_columns(agg, spec_cols, cascade_columns)
  structure(agg, class = c("llm_agg_tbl", class(agg)), cascade = list(first = models[[1]], second = models[[2]]))
}

# A stage's call of a cascade result as the llm object that call returned: its rows taken back
# from the combined tables (`part`: an element of attr(x, "cascade")$parts).
cascade_part_object <- function(x, part) {
  stage <- attr(part, "cascade_stage")
  ids <- attr(part, "ids")
  pick <- function(table, cols) {
    if (is.null(table)) return(NULL)
    keep <- table$stage == stage & table$studyid %in% ids
    if (!any(keep)) return(NULL)
    tibble::new_tibble(as.list(table[keep, , drop = FALSE])[intersect(cols, names(table))], nrow = sum(keep))
  }
  answers <- pick(x$answer_data, attr(part, "answer_names"))
  if (is.null(answers)) answers <- tibble::new_tibble(as.list(x$answer_data[0, , drop = FALSE])[attr(part, "answer_names")], nrow = 0)
  class(answers) <- c("llm_tbl", setdiff(class(answers), "llm_tbl"))
  obj <- list(answer_data = answers, price_dollar = if (!is.null(part$price_data)) sum(part$price_data$total_price_dollar),
    price_data = part$price_data, run_date = part$run_date, answer_data_aggregated = part$answer_data_aggregated,
    error_data = pick(x$error_data, attr(part, "error_names")))
  obj <- obj[!vapply(obj, is.null, logical(1))]
  structure(obj, class = c("llm", "list"), arg_list = attr(part, "arg_list"), run_info = attr(part, "run_info"),
    record_ids = attr(part, "record_ids"), store = attr(part, "store"), cascade_stage = stage)
}

# screen_errors() on a cascade: each stage's call re-sends its failures; records that the first
# stage's repaired answers make doubtful, and that no second-stage call has screened, go to the
# second stage as a call of their own.
cascade_errors <- function(object, api_key, repair_args, call) {
  cascade <- attr(object, "cascade")
  spec <- cascade$spec
  if (!is.null(api_key) && (!is.character(api_key) || !length(api_key) %in% 1:2)) {
    abort_arg(c("For a cascade's result {.arg api_key} is {.code NULL}, one key, or two: {.code c(first, second)}.",
      "i" = "Leave it out to read each stage's key from its provider's environment variable."),
      class = "tabscreen_error_api_key", arg = "api_key", call = call)
  }
  key_of <- function(stage) if (is.null(api_key)) NULL else api_key[[min(stage, length(api_key))]]
  messages <- repair_args$messages %||% spec$values$messages %||% TRUE
  # What this call spends is only what its repairs and new requests spend.
  parts <- lapply(cascade$parts, function(p) {
    obj <- cascade_part_object(object, p)
    attr(obj, "run_info")$call_price_dollar <- if (!is.null(attr(obj, "run_info")$call_price_dollar)) 0
    attr(obj, "run_info")$stored_answers <- 0L
    obj
  })
  changed <- FALSE
  for (i in seq_along(parts)) {
    p <- parts[[i]]
    if (is.null(p$error_data) || nrow(p$error_data) == 0) next
    changed <- TRUE
    stage <- attr(p, "cascade_stage")
    tabscreen_inform(c("i" = "Stage {stage} of the cascade:"), messages = messages)
    repaired <- do.call(screen_errors, c(list(p, api_key = key_of(stage)), repair_args))
    attr(repaired, "cascade_stage") <- stage
    parts[[i]] <- repaired
  }
  first <- parts[[1]]
  doubtful <- cascade_doubtful(first$answer_data_aggregated, spec$band)
  screened <- unlist(lapply(parts[-1], function(p) unique(c(p$answer_data$studyid, p$error_data$studyid))))
  new <- first$answer_data_aggregated$studyid[doubtful & !first$answer_data_aggregated$studyid %in% screened]
  estimate <- attr(object, "run_info")$cascade
  if (!changed && length(new) == 0) {
    tabscreen_inform(c("i" = "{.arg object} has no failed requests to re-send."), messages = messages)
    return(object)
  }
  if (length(new) > 0) {
    stage2 <- spec$stages[[2]]
    stage2$fn <- provider_r(stage2$letter)$screen
    stage2$label <- "second stage"
    data <- cascade_records_of(object, new, spec$columns)
    # This call's retry settings, progress and messages apply to the new records too, in the stage's
    # list where the stage has its own.
    settings <- repair_args[intersect(names(repair_args),
      c("max_tries", "max_seconds", "is_transient", "backoff", "after", "progress", "messages"))]
    own <- intersect(names(settings), names(stage2$args))
    stage2$args[own] <- settings[own]
    values <- spec$values
    values[setdiff(names(settings), own)] <- settings[setdiff(names(settings), own)]
    key <- cascade_key(list(api_key = key_of(2), letter = stage2$letter), messages = messages, call = call)
    tabscreen_inform(c("i" = "{length(new)} record{?s} {?is/are} doubtful once the first stage's failed requests are answered: the second stage screens {?it/them}."),
      messages = messages)
    two <- cascade_run(stage2, data$data, data$columns, values, key, number = 2)
    if (inherits(two, "tabscreen_batch")) return(two)
    parts <- c(parts, list(two))
  }
  cascade_combine(parts, spec, estimate)
}

# The user's records of some study ids, rebuilt from the first stage's rows (the text as the user
# gave it, the user's columns), with the column names of the call.
cascade_records_of <- function(object, ids, columns) {
  rows <- bind_fill(list(object$answer_data, object$error_data))
  rows <- rows[rows$stage == 1L, , drop = FALSE]
  rows <- rows[match(ids, rows$studyid), , drop = FALSE]
  user <- setdiff(names(rows), c(result_column_names(), cascade_columns))
  data <- tibble::new_tibble(as.list(rows)[user], nrow = nrow(rows))
  data[[columns$title]] <- rows$title
  data[[columns$abstract]] <- rows$abstract
  if (is.null(columns$studyid)) {
    data[[".cascade_id"]] <- rows$studyid
    columns$studyid <- ".cascade_id"
  } else {
    data[[columns$studyid]] <- rows$studyid
  }
  list(data = data, columns = columns)
}

# ---------------------------------------------------------------------------------------------
# Printing and summary

#' @export
print.llm_cascade <- function(x, ...) {
  info <- attr(x, "run_info")
  cas <- info$cascade
  agg <- x$answer_data_aggregated
  rows <- bind_fill(list(x$answer_data, x$error_data))
  models <- attr(agg, "cascade")
  stage_line <- function(s) {
    r <- rows[rows$stage == s, , drop = FALSE]
    failed <- sum(x$error_data$stage == s)
    records <- length(unique(r$studyid))
    price <- if (!is.null(x$price_dollar)) paste0("; price ", format_dollars(cas$price[[s]])) else ""
    cli::format_inline("Stage {s} ({.val {models[[s]]}}): {records} record{?s}, {nrow(r)} request{?s}, {failed} failed{price}.")
  }
  f <- agg$final_decision_llm
  which <- if (is.null(cas$band)) "the first stage's Check records" else paste0("first-stage incl_p within ", cas$band[1], " and ", cas$band[2])
  cli::cli_text("{.strong Cascade screening result} ({.cls llm_cascade})")
  cli::cli_bullets(c(
    "*" = stage_line(1),
    "*" = cli::format_inline("Sent to stage 2: {cas$sent} of {cas$records} record{?s} ({format(round(100 * cas$share, 1), nsmall = 1)} %): {which}."),
    if (cas$sent > 0) c("*" = stage_line(2)),
    "*" = paste0("Final decisions: ", sum(f == "Include", na.rm = TRUE), " Include, ", sum(f == "Check", na.rm = TRUE),
      " Check, ", sum(f == "Exclude", na.rm = TRUE), " Exclude (", sum(agg$stage == 2L), " from stage 2)."),
    if (nrow(x$error_data %||% data.frame()) > 0) c(" " = "See {.field error_data}; re-send the failed requests with {.code screen_errors()}."),
    if (!is.null(x$price_dollar)) c("*" = price_summary(x$price_dollar, info$call_price_dollar)),
    run_lines(x, info, nrow(rows))
  ))
  cli::cli_text("Components: {.field {names(x)}}.")
  invisible(x)
}

#' @export
summary.llm_cascade <- function(object, ...) {
  agg <- object$answer_data_aggregated
  stages <- lapply(1:2, function(s) {
    pick <- function(table) if (!is.null(table)) table[table$stage == s, , drop = FALSE]
    stage_agg <- if (s == 1) {
      first <- agg
      first$model <- attr(agg, "cascade")$first
      first$final_decision_llm <- agg$final_decision_llm_first
      first
    } else {
      pick(agg)
    }
    price <- pick(object$price_data)
    part <- structure(list(answer_data = pick(object$answer_data), error_data = pick(object$error_data),
      price_data = price, answer_data_aggregated = stage_agg), class = c("llm", "list"))
    if (nrow(part$answer_data) + nrow(part$error_data %||% data.frame()) == 0) return(NULL)
    out <- summary.llm(part)
    out <- tibble::tibble(stage = rep(as.integer(s), nrow(out)), tibble::as_tibble(unclass(out)))
    out
  })
  out <- do.call(rbind, Filter(Negate(is.null), stages))
  info <- attr(object, "run_info")
  structure(out, class = c("llm_cascade_summary", "llm_summary", class(out)), elapsed_seconds = info$elapsed_seconds,
    cascade = info$cascade)
}

#' @export
print.llm_cascade_summary <- function(x, ...) {
  cas <- attr(x, "cascade")
  cli::cli_text("{.strong Cascade screening}: {cas$sent} of {cas$records} record{?s} ({format(round(100 * cas$share, 1), nsmall = 1)} %) went to stage 2.")
  if (!all(is.na(x$price_dollar))) {
    cli::cli_text("Price per stage: {paste0('stage ', x$stage, ' ', vapply(x$price_dollar, format_dollars, character(1)), collapse = ', ')}.")
  }
  NextMethod()
}
