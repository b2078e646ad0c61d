# Ensembles: several screenings of the same records combined into one result. R only: each member is
# an ordinary result; the mean rule's verdicts come from the Go core's cut-off rule (the cutoffs part
# of TsPlan, screen.Cutoffs.Labels), the rule of every other verdict of the package
# (docs/decisions/0027-ensembles.md).

ensemble_rules <- c("any", "majority", "all", "mean")

# Verdicts in the order the rules compare them: "any" takes the highest, "all" the lowest.
verdict_levels <- c("Exclude", "Check", "Include")

#' Combine several screenings of the same records into one result
#'
#' `screen_ensemble()` combines screenings of the same records by different prompts, models or
#' providers (results of [tabscreen_a.tools()], [tabscreen_b()], [tabscreen_c()], also after
#' [screen_errors()], [screen_adaptive()] or [screen_batch()]) into one verdict per record. Two
#' models combined with "any includes" miss fewer of the studies the human screeners include than
#' either alone (published two-model "or" ensembles reach a recall near 99.7 %), at the price of
#' more records to read.
#'
#' @section Members:
#' Each prompt x model x `top_p` of each screening is a member: a screening of two models counts
#' as two members (named `a.1`, `a.2` when the screening is named `a`), so
#' `screen_ensemble(res)` combines the models of one screening. A result of [screen_cascade()] is
#' one member, its model `"<first> > <second>"`: its verdicts are one decision rule, whichever
#' stage gave them. A member's verdict on a record is
#' its `final_decision_llm` as its screening gave it, under that screening's cut-offs, and its
#' `incl_p`; a screening asked once per record (`reps = 1`) has no aggregated table, and its
#' member's `incl_p` is the answer's `decision_binary` (an uncertain `"1.1"` counts as include),
#' labelled by the package's usual rule (a failed request is `"Check"`).
#'
#' @section Rules:
#' Verdicts are ordered Exclude < Check < Include; a member without any answer for a record has
#' the verdict `"Check"`, so a failure never excludes a record silently.
#' * `"any"`: the highest verdict of the members. Include when any member includes the record,
#'   else Check when any flags it for checking, else Exclude. The rule of highest recall: nothing
#'   a member includes or doubts is excluded.
#' * `"majority"`: Include when more than half the members include the record, Exclude when more
#'   than half exclude it, else Check (a tie, or members that flag it, goes to a human).
#' * `"all"`: the lowest verdict. Include only when every member includes the record, Exclude when
#'   any member excludes it, else Check.
#' * `"mean"`: the members' mean `incl_p` (each member weighs the same, whatever its `reps`;
#'   members without an answer are left out) against `incl_cutoff_upper` and `incl_cutoff_lower`,
#'   as a screening applies them to its repetitions: Include when the mean is at least the upper
#'   cut-off (0.1 by default), Check when it is at least the lower one, else Exclude.
#'
#' @section The result:
#' An `llm` object (class `llm_ensemble`) that [screen_analyzer()], [screen_thresholds()],
#' [screen_report()], [write_refs()], [screen_review()], [screen_methods()] (one sentence per
#' screening, and the rule), [screen_prisma()], [plot.llm()], `print()` and `summary()` take as
#' they take a screening:
#' * `answer_data`, `error_data` and `price_data`: every member's rows, with a first column
#'   `member`; `price_dollar` is the members' total.
#' * `answer_data_aggregated`: one row per record (in the first screening's order), with its study
#'   id, text and the columns of the screened data (of every screening), and the spec's columns as
#'   the ensemble gives them: `promptid` 1, `prompt` (the members' prompt, or each member's when
#'   they differ), `model` (`"ensemble (<rule>: <members>)"`), `incl_p` (the members' mean
#'   `incl_p`, for every rule, so that [screen_thresholds()] sweeps it), `final_decision_llm` and
#'   `final_decision_llm_num` (the rule's verdict; 1 for Include and Check), `longest_answer` (the
#'   longest of the members' explanations, after the member's name; only when a member has one),
#'   `mean_confidence` (only when a member has one), `reps` and `n_mis_answers` (summed over the
#'   members), `submodel` (each member's), and `member_decisions`, each member's verdict and
#'   `incl_p` as text (`"a: Include (0.67); b: Exclude (0.00)"`). Its cut-off attributes are the
#'   mean rule's, and absent for the other rules.
#' * `member_data_aggregated`: one row per record and member: `member`, `studyid`, `promptid`,
#'   `prompt`, `model`, `top_p`, `incl_p`, `final_decision_llm`, `final_decision_llm_num`, `reps`,
#'   `n_mis_answers`, `submodel`.
#' * The attribute `"ensemble"`: the `rule`, the `cutoffs` of the mean rule, `args` (each
#'   screening's record of its arguments, as its attribute `"arg_list"`) and `members`, one row
#'   per member (`member`, `screening`, `provider`, `promptid`, `prompt`, `model`, `top_p`).
#'
#' `summary()` gives the [summary.llm()] table with a first column `member`: one row per member
#' and a last row for the ensemble (`member` `"ensemble"`: its final decisions, and the members'
#' requests, tokens, price and time added up).
#'
#' [screen_errors()] does not take an ensemble: re-send each screening's failed requests and
#' combine the repaired screenings again.
#'
#' @param ... Two or more screening results (class `llm`) of the same records, or one with several
#'   prompts, models or `top_p` values. Names name the members (`a = res_a`); unnamed ones are
#'   numbered by their position.
#' @param rule How the members' verdicts are combined: `"any"`, `"majority"`, `"all"` or `"mean"`
#'   (see Rules).
#' @param incl_cutoff_upper,incl_cutoff_lower The cut-offs of `rule = "mean"`, as in
#'   [tabscreen_a.tools()]: `NULL` for the default 0.1 and no Check band. The other rules take
#'   each member's verdict under its own cut-offs, and refuse these.
#' @return An object of class `llm_ensemble` and `llm` (see The result).
#'
#'   Errors have class `tabscreen_error_ensemble_args` (and `tabscreen_error_arg`): fewer than two
#'   members, an argument that is not a screening result, or an ensemble, members named twice, a
#'   bad `rule`, cut-offs with a rule other than `"mean"` (those have class
#'   `tabscreen_error_cutoff` when out of range). Screenings of different records also have class
#'   `tabscreen_error_ensemble_records`: the message names the study ids each member lacks, or
#'   those whose titles differ between members. Combine screenings of the same data (the same
#'   `studyid`), or screen the missing records with the members that lack them.
#' @seealso [screen_analyzer()] to compare the ensemble with its members on labelled records.
#' @export
#' @examples
#' # A local stand-in for the providers, whose answers lean the same way for each record.
#' fake <- fake_provider(tendency = TRUE)
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' pilot <- filges2015_dat[c(1:10, 181:190), ]
#' screen <- function(fun, url, ...) {
#'   fun(pilot, prompt = "Is this study about functional family therapy?",
#'     studyid = studyid, title = title, abstract = abstract, api_url = url,
#'     api_key = "not-a-real-key", reps = 3, progress = FALSE, messages = FALSE, ...)
#' }
#' res_a <- screen(tabscreen_a.tools, fake$url)
#' res_b <- screen(tabscreen_b, fake$url_b)
#' res_c <- screen(tabscreen_c, fake$url_c)
#'
#' ens <- screen_ensemble(a = res_a, b = res_b, c = res_c, rule = "any")
#' ens
#' ens$answer_data_aggregated[, c("studyid", "final_decision_llm", "member_decisions")]
#' screen_analyzer(ens, human_code)
#'
#' # The members' mean inclusion probability with a Check band
#' mean_ens <- screen_ensemble(a = res_a, b = res_b, c = res_c, rule = "mean",
#'   incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.2)
#' table(mean_ens$answer_data_aggregated$final_decision_llm)
#' fake$stop()
#' options(old)
screen_ensemble <- function(..., rule = c("any", "majority", "all", "mean"), incl_cutoff_upper = NULL,
                            incl_cutoff_lower = NULL) {
  call <- rlang::current_env()
  inputs <- rlang::list2(...)
  rule <- ensemble_rule_arg(rule, call)
  check_cutoffs(incl_cutoff_upper, incl_cutoff_lower, call = call)
  if (rule != "mean" && (!is.null(incl_cutoff_upper) || !is.null(incl_cutoff_lower))) {
    arg <- if (!is.null(incl_cutoff_upper)) "incl_cutoff_upper" else "incl_cutoff_lower"
    abort_arg(c("{.arg {arg}} applies only to {.code rule = \"mean\"}.",
      "i" = "Rule {.val {rule}} combines each member's verdict as its screening gave it, under its own cut-offs: drop {.arg {arg}}, or use {.code rule = \"mean\"}."),
      class = "tabscreen_error_ensemble_args", arg = arg, call = call)
  }
  names <- ensemble_names(inputs, call)
  members <- unlist(lapply(seq_along(inputs), function(i) ensemble_members(inputs[[i]], names[[i]], call)),
    recursive = FALSE)
  if (length(members) < 2) {
    abort_arg(c("{.fn screen_ensemble} needs at least two members (screenings, or the prompts and models of one screening); it was given {length(members)}.",
      "i" = "Pass two or more screenings of the same records, e.g. {.code screen_ensemble(a = res_a, b = res_b)}."),
      class = "tabscreen_error_ensemble_args", arg = "...", call = call)
  }
  pos <- ensemble_alignment(members, call)
  combined <- ensemble_combine(members, pos, rule, incl_cutoff_upper, incl_cutoff_lower, call)
  ensemble_object(inputs, names, members, pos, combined, rule)
}

ensemble_rule_arg <- function(rule, call) {
  if (!is.character(rule) || length(rule) < 1 || anyNA(rule) || !rule[[1]] %in% ensemble_rules ||
    (length(rule) > 1 && !identical(rule, ensemble_rules))) {
    abort_arg(c("{.arg rule} must be one of {.or {.val {ensemble_rules}}}.",
      "i" = "{.val any} includes what any member includes (the highest recall); {.val mean} applies the cut-offs to the members' mean {.field incl_p}."),
      class = "tabscreen_error_ensemble_args", arg = "rule", call = call)
  }
  rule[[1]]
}

# The screenings' names: the user's, else their position. Each must be a screening result.
ensemble_names <- function(inputs, call) {
  given <- names(inputs) %||% rep("", length(inputs))
  given[is.na(given)] <- ""
  for (i in seq_along(inputs)) {
    what <- if (nzchar(given[i])) paste0("{.arg ", given[i], "}") else paste0("Argument ", i, " of {.arg ...}")
    x <- inputs[[i]]
    if (inherits(x, "llm_ensemble")) {
      abort_arg(c(paste(what, "is itself an ensemble."),
        "i" = "Pass the screenings it combines, each as its own argument."),
        class = "tabscreen_error_ensemble_args", arg = "...", call = call)
    }
    if (!inherits(x, "llm")) {
      abort_arg(c(paste(what, "must be a screening result of class {.cls llm}, not {.obj_type_friendly {x}}."),
        "i" = "Pass what {.fn tabscreen_a.tools}, {.fn tabscreen_b} or {.fn tabscreen_c} returned."),
        class = "tabscreen_error_ensemble_args", arg = "...", call = call)
    }
  }
  out <- ifelse(nzchar(given), given, as.character(seq_along(inputs)))
  twice <- unique(out[duplicated(out)])
  if (length(twice) > 0) {
    abort_arg(c("{.arg ...} names {cli::qty(length(twice))}member{?s} {.val {twice}} more than once.",
      "i" = "Give each screening its own name, e.g. {.code screen_ensemble(a = res_a, b = res_b)}."),
      class = "tabscreen_error_ensemble_args", arg = "...", call = call)
  }
  out
}

# The members of one screening: one per prompt x model x top_p, each with its verdict on every
# record (from answer_data_aggregated, or from the single answers when each record was asked once).
ensemble_members <- function(x, name, call) {
  args <- attr(x, "arg_list")
  agg <- x$answer_data_aggregated
  if (!is.null(agg)) {
    t <- agg
    v <- list(incl_p = as.numeric(t$incl_p), final = as.character(t$final_decision_llm), reps = as.integer(t$reps),
      n_mis = as.integer(t$n_mis_answers), explanation = as.character(column_or_na(t, "longest_answer", NA_character_)),
      confidence = as.numeric(column_or_na(t, "mean_confidence", NA_real_)))
  } else {
    t <- rbind_rows(x$answer_data, x$error_data)
    incl_p <- as.numeric(t$decision_binary)
    v <- list(incl_p = incl_p, final = label_incl_p(incl_p, args$incl_cutoff_upper, args$incl_cutoff_lower, call)$final,
      reps = rep(1L, nrow(t)), n_mis = as.integer(is.na(incl_p)),
      explanation = as.character(column_or_na(t, "detailed_description", NA_character_)),
      confidence = as.numeric(column_or_na(t, "confidence", NA_real_)))
  }
  v$has_explanation <- any(c("longest_answer", "detailed_description") %in% names(t))
  v$has_confidence <- any(c("mean_confidence", "confidence") %in% names(t))
  key <- member_keys(x, t)
  keys <- unique(key)
  cascade <- attr(agg, "cascade")
  lapply(seq_along(keys), function(k) {
    rows <- which(key == keys[k])
    first <- rows[1]
    list(
      name = if (length(keys) == 1) name else paste0(name, ".", k), screening = name, key = keys[k],
      provider = args$provider %||% NA_character_, promptid = as.integer(t$promptid[first]),
      prompt = as.character(t$prompt[first]),
      model = if (!is.null(cascade)) paste(cascade$first, ">", cascade$second) else as.character(t$model[first]),
      top_p = if ("top_p" %in% names(t)) as.numeric(t$top_p[first]) else NA_real_,
      rows = t[rows, , drop = FALSE], studyid = as.character(t$studyid[rows]),
      submodel = as.character(t$submodel[rows]),
      v = c(lapply(v[c("incl_p", "final", "reps", "n_mis", "explanation", "confidence")], `[`, rows),
        v[c("has_explanation", "has_confidence")])
    )
  })
}

# The prompt x model x top_p of each row of a result's table.
ensemble_group_key <- function(t) {
  cols <- intersect(c("promptid", "model", "top_p"), names(t))
  do.call(paste, c(lapply(as.list(t)[cols], as.character), sep = "\r"))
}

# The final decisions of inclusion probabilities under cut-offs, by the Go core's rule (the one
# that labels every aggregated row): list(final, num, cutoffs).
label_incl_p <- function(incl_p, upper, lower, call) {
  ans <- plan_core(list(cutoffs = list(incl_cutoff_upper = upper, incl_cutoff_lower = lower,
    incl_p = I(as.numeric(incl_p)))), call = call)
  list(final = as.character(unlist(ans$labels$final_decision_llm)),
    num = as.integer(unlist(ans$labels$final_decision_llm_num)),
    cutoffs = list(upper = ans$cutoffs$upper, lower = ans$cutoffs$lower))
}

# Each member's rows in the order of the first member's records; refused unless every member has
# every record once, with the same title.
ensemble_alignment <- function(members, call) {
  ids <- lapply(members, `[[`, "studyid")
  names <- vapply(members, `[[`, character(1), "name")
  for (k in seq_along(members)) {
    if (anyDuplicated(ids[[k]])) {
      twice <- unique(ids[[k]][duplicated(ids[[k]])])
      abort_arg(c("Member {.val {names[k]}} holds study id{?s} {.val {utils::head(twice, 5)}} more than once.",
        "i" = "Pass the results of the screening functions as they returned them."),
        class = c("tabscreen_error_ensemble_records", "tabscreen_error_ensemble_args"), arg = "...", call = call)
    }
  }
  all_ids <- unique(unlist(ids))
  lacking <- lapply(ids, function(s) setdiff(all_ids, s))
  short <- which(lengths(lacking) > 0)
  if (length(short) > 0) {
    lines <- vapply(short, function(k) {
      escape_cli(cli::format_inline("{.val {names[k]}} lacks {length(lacking[[k]])} record{?s}: {.val {utils::head(lacking[[k]], 5)}}{if (length(lacking[[k]]) > 5) ', ...' else ''}."))
    }, character(1))
    abort_arg(c("The screenings of an ensemble must be of the same records, matched by study id.",
      stats::setNames(lines, rep("x", length(lines))),
      "i" = "Screen the missing records with those members, or combine screenings of the same data with the same {.arg studyid}."),
      class = c("tabscreen_error_ensemble_records", "tabscreen_error_ensemble_args"), arg = "...", call = call)
  }
  pos <- lapply(ids, function(s) match(ids[[1]], s))
  title1 <- as.character(members[[1]]$rows$title)
  for (k in seq_along(members)[-1]) {
    title <- as.character(members[[k]]$rows$title)[pos[[k]]]
    differ <- (title != title1) %in% TRUE | is.na(title) != is.na(title1)
    if (any(differ)) {
      shown <- utils::head(ids[[1]][differ], 5)
      abort_arg(c("{cli::qty(length(shown))}Study id{?s} {.val {shown}} {cli::qty(length(shown))}{?has/have} another title in {.val {names[k]}} than in {.val {names[1]}}.",
        "i" = "The screenings are of different data with the same study ids: combine screenings of the same records."),
        class = c("tabscreen_error_ensemble_records", "tabscreen_error_ensemble_args"), arg = "...", call = call)
    }
  }
  pos
}

# Text that cli interpolated once, to be interpolated again as it is.
escape_cli <- function(x) gsub("}", "}}", gsub("{", "{{", x, fixed = TRUE), fixed = TRUE)

# The ensemble's verdict and the spec's columns of each record (in the first member's order).
ensemble_combine <- function(members, pos, rule, upper, lower, call) {
  n <- length(pos[[1]])
  m <- length(members)
  names <- vapply(members, `[[`, character(1), "name")
  col <- function(field) lapply(seq_len(m), function(k) members[[k]]$v[[field]][pos[[k]]])
  p <- col("incl_p")
  verdicts <- col("final")
  rank <- lapply(verdicts, function(v) {
    r <- match(v, verdict_levels)
    r[is.na(r)] <- 2L
    r
  })
  mean_p <- Reduce(`+`, lapply(p, function(x) ifelse(is.na(x), 0, x))) / Reduce(`+`, lapply(p, function(x) !is.na(x)))
  mean_p[is.nan(mean_p)] <- NA_real_
  cutoffs <- NULL
  final <- switch(rule,
    any = verdict_levels[do.call(pmax, rank)],
    all = verdict_levels[do.call(pmin, rank)],
    majority = {
      include <- Reduce(`+`, lapply(rank, function(r) r == 3L))
      exclude <- Reduce(`+`, lapply(rank, function(r) r == 1L))
      ifelse(include > m / 2, "Include", ifelse(exclude > m / 2, "Exclude", "Check"))
    },
    mean = {
      lab <- label_incl_p(mean_p, upper, lower, call)
      cutoffs <- lab$cutoffs
      lab$final
    }
  )
  shown_p <- lapply(p, function(x) ifelse(is.na(x), "no answer", formatC(x, format = "f", digits = 2)))
  decisions <- do.call(paste, c(lapply(seq_len(m), function(k) paste0(names[k], ": ", verdicts[[k]], " (", shown_p[[k]], ")")),
    sep = "; "))
  submodel <- do.call(paste, c(lapply(seq_len(m), function(k) {
    s <- members[[k]]$submodel[pos[[k]]]
    paste0(names[k], ": ", ifelse(is.na(s), members[[k]]$model, s))
  }), sep = "; "))
  has_explanation <- any(vapply(members, function(mb) mb$v$has_explanation, logical(1)))
  has_confidence <- any(vapply(members, function(mb) mb$v$has_confidence, logical(1)))
  list(
    incl_p = mean_p, final = final, num = as.integer(final != "Exclude"),
    reps = as.integer(Reduce(`+`, col("reps"))), n_mis = as.integer(Reduce(`+`, col("n_mis"))),
    submodel = submodel, member_decisions = decisions,
    longest_answer = if (has_explanation) ensemble_longest(col("explanation"), names),
    mean_confidence = if (has_confidence) {
      conf <- col("confidence")
      out <- Reduce(`+`, lapply(conf, function(x) ifelse(is.na(x), 0, x))) / Reduce(`+`, lapply(conf, function(x) !is.na(x)))
      ifelse(is.nan(out), NA_real_, out)
    },
    verdicts = verdicts, incl_p_members = p, cutoffs = cutoffs
  )
}

# The members' longest explanation of each record (most words, as the aggregation counts them;
# ties to the first member), after the member's name.
ensemble_longest <- function(texts, names) {
  words <- lapply(texts, function(x) ifelse(is.na(x), -1L, lengths(gregexpr("\\w+", x)) - (regexpr("\\w", x) < 0)))
  best <- do.call(pmax, words)
  out <- rep(NA_character_, length(best))
  for (k in rev(seq_along(texts))) {
    take <- words[[k]] == best & best >= 0
    out[take] <- paste0(names[k], ": ", texts[[k]][take])
  }
  out
}

# Binds tables whose columns differ (providers add different columns), NA where a table lacks one,
# with `member` as the first column.
bind_members <- function(tables, member, class = character()) {
  out <- bind_fill(lapply(seq_along(tables), function(i) {
    t <- tables[[i]]
    if (!is.null(t)) tibble::new_tibble(c(list(member = member[[i]]), as.list(t)), nrow = nrow(t))
  }))
  if (is.null(out)) return(NULL)
  tibble::new_tibble(as.list(out), nrow = nrow(out), class = class)
}

# The member of each row of a screening's table, by its prompt x model x top_p.
row_members <- function(x, t, ms) {
  if (is.null(t)) return(NULL)
  keys <- vapply(ms, `[[`, character(1), "key")
  names <- vapply(ms, `[[`, character(1), "name")
  names[match(member_keys(x, t), keys)]
}

# The member key of each row of a screening's table: its prompt x model x top_p, except in a
# cascade, whose verdicts are one decision rule whichever stage (model) gave them.
member_keys <- function(x, t) {
  if (inherits(x, "llm_cascade")) rep("cascade", nrow(t)) else ensemble_group_key(t)
}

ensemble_object <- function(inputs, names, members, pos, combined, rule) {
  by_screening <- split(members, factor(vapply(members, `[[`, character(1), "screening"), levels = names))
  first <- members[[1]]$rows[pos[[1]], , drop = FALSE]
  n <- nrow(first)
  # The screened data's columns of every screening, the first one's where two have the same.
  user <- list()
  for (s in names) {
    mb <- by_screening[[s]][[1]]
    rows <- as.list(mb$rows)
    k <- match(s, vapply(members, `[[`, character(1), "screening"))
    for (name in setdiff(names(rows), c(result_column_names(), names(user)))) {
      user[[name]] <- rows[[name]][pos[[k]]]
    }
  }
  member_names <- vapply(members, `[[`, character(1), "name")
  prompts <- vapply(members, `[[`, character(1), "prompt")
  prompt <- if (length(unique(prompts)) == 1) prompts[1] else {
    paste(vapply(unique(prompts), function(pr) paste0(paste(member_names[prompts == pr], collapse = ", "), ": ", pr),
      character(1)), collapse = "\n\n")
  }
  label <- paste0("ensemble (", rule, ": ", paste(member_names, collapse = ", "), ")")
  cols <- list(
    studyid = first$studyid, title = first$title, abstract = first$abstract, promptid = rep(1L, n),
    prompt = rep(prompt, n), model = rep(label, n), question = rep(NA_character_, n),
    incl_p = combined$incl_p, final_decision_llm = combined$final, final_decision_llm_num = combined$num,
    longest_answer = combined$longest_answer, mean_confidence = combined$mean_confidence,
    reps = combined$reps, n_mis_answers = combined$n_mis, submodel = combined$submodel,
    member_decisions = combined$member_decisions
  )
  cols <- cols[!vapply(cols, is.null, logical(1))]
  agg <- tibble::new_tibble(c(cols, user), nrow = n, class = "llm_agg_tbl")
  if (!is.null(combined$cutoffs)) {
    attr(agg, "incl_cutoff_upper") <- combined$cutoffs$upper
    attr(agg, "incl_cutoff_lower") <- combined$cutoffs$lower
  }

  table_of <- function(part) {
    tables <- lapply(seq_along(inputs), function(i) inputs[[i]][[part]])
    member <- lapply(seq_along(inputs), function(i) row_members(inputs[[i]], tables[[i]], by_screening[[names[i]]]))
    bind_members(tables, member, class = if (part == "answer_data") "llm_tbl" else character())
  }
  answer_data <- table_of("answer_data")
  error_data <- table_of("error_data")
  if (!is.null(error_data) && nrow(error_data) == 0) error_data <- NULL
  price <- ensemble_prices(inputs, names, by_screening)
  members_agg <- tibble::tibble(
    member = rep(member_names, each = n),
    studyid = rep(first$studyid, length(members)),
    promptid = rep(vapply(members, `[[`, integer(1), "promptid"), each = n),
    prompt = rep(prompts, each = n),
    model = rep(vapply(members, `[[`, character(1), "model"), each = n),
    top_p = rep(vapply(members, `[[`, numeric(1), "top_p"), each = n),
    incl_p = unlist(combined$incl_p_members),
    final_decision_llm = unlist(combined$verdicts),
    final_decision_llm_num = as.integer(unlist(combined$verdicts) != "Exclude"),
    reps = unlist(lapply(seq_along(members), function(k) members[[k]]$v$reps[pos[[k]]])),
    n_mis_answers = unlist(lapply(seq_along(members), function(k) members[[k]]$v$n_mis[pos[[k]]])),
    submodel = unlist(lapply(seq_along(members), function(k) members[[k]]$submodel[pos[[k]]]))
  )
  dates <- sort(unique(unlist(lapply(inputs, function(x) x$run_date))))
  obj <- list(
    answer_data = answer_data,
    price_dollar = price$total,
    price_data = price$data,
    run_date = if (length(dates) <= 1) dates else paste(dates[1], "to", dates[length(dates)]),
    answer_data_aggregated = agg,
    error_data = error_data,
    member_data_aggregated = members_agg
  )
  obj <- obj[!vapply(obj, is.null, logical(1))]
  studyid_cols <- unique(unlist(lapply(inputs, function(x) attr(x, "arg_list")$studyid)))
  elapsed <- unlist(lapply(inputs, function(x) attr(x, "run_info")$elapsed_seconds))
  structure(obj, class = c("llm_ensemble", "llm", "list"),
    arg_list = list(studyid = if (length(studyid_cols) == 1) studyid_cols),
    run_info = list(answered = nrow(answer_data %||% data.frame()), failed = nrow(error_data %||% data.frame()),
      elapsed_seconds = if (length(elapsed) > 0) sum(elapsed)),
    record_ids = attr(inputs[[1]], "record_ids"),
    ensemble = list(rule = rule, cutoffs = combined$cutoffs,
      args = stats::setNames(lapply(inputs, function(x) attr(x, "arg_list")), names), members = tibble::tibble(
      member = member_names,
      screening = vapply(members, `[[`, character(1), "screening"),
      provider = vapply(members, `[[`, character(1), "provider"),
      promptid = vapply(members, `[[`, integer(1), "promptid"),
      prompt = prompts,
      model = vapply(members, `[[`, character(1), "model"),
      top_p = vapply(members, `[[`, numeric(1), "top_p")
    )))
}

# Every screening's price rows with their member (a row of a prompt and model that several members
# share, as top_p values do, names them all), and the total: NA when a screening ran without
# token_info, which leaves its price unknown.
ensemble_prices <- function(inputs, names, by_screening) {
  tables <- lapply(inputs, function(x) x$price_data)
  member <- lapply(seq_along(inputs), function(i) {
    t <- tables[[i]]
    if (is.null(t)) return(NULL)
    ms <- by_screening[[names[i]]]
    if (inherits(inputs[[i]], "llm_cascade")) return(rep(ms[[1]]$name, nrow(t)))
    of <- vapply(ms, function(mb) paste(mb$promptid, mb$model, sep = "\r"), character(1))
    key <- paste(t$prompt, t$model, sep = "\r")
    vapply(key, function(k) paste(vapply(ms[of == k], `[[`, character(1), "name"), collapse = ", "), character(1),
      USE.NAMES = FALSE)
  })
  data <- bind_members(tables, member)
  cache <- bind_members(lapply(tables, function(t) attr(t, "cache")), lapply(seq_along(tables), function(i) {
    cache <- attr(tables[[i]], "cache")
    if (!is.null(cache)) member[[i]][match(paste(cache$prompt, cache$model), paste(tables[[i]]$prompt, tables[[i]]$model))]
  }))
  if (!is.null(data) && !is.null(cache)) attr(data, "cache") <- cache
  known <- !vapply(tables, is.null, logical(1))
  list(data = data, total = if (all(known)) sum(data$total_price_dollar) else NA_real_)
}

#' @rdname screen_ensemble
#' @param x An `llm_ensemble` object, for `print()`.
#' @export
print.llm_ensemble <- function(x, ...) {
  ens <- attr(x, "ensemble")
  mem <- ens$members
  agg <- x$answer_data_aggregated
  rows <- rbind_rows(x$answer_data, x$error_data)
  m <- x$member_data_aggregated
  agree <- tapply(m$final_decision_llm, m$studyid, function(v) length(unique(v)) == 1)
  member_lines <- vapply(seq_len(nrow(mem)), function(k) {
    r <- m[m$member == mem$member[k], , drop = FALSE]
    cli::format_inline("{.strong {mem$member[k]}}: provider {toupper(mem$provider[k])}, model {.val {mem$model[k]}}, prompt {mem$promptid[k]}{if (!is.na(mem$top_p[k])) paste0(', top_p ', mem$top_p[k]) else ''}: ",
      "{sum(r$final_decision_llm == 'Include')} Include, {sum(r$final_decision_llm == 'Check')} Check, {sum(r$final_decision_llm == 'Exclude')} Exclude.")
  }, character(1))
  n_failed <- nrow(x$error_data %||% data.frame())
  cli::cli_text("{.strong Ensemble} ({.cls llm_ensemble}) of {nrow(mem)} screenings, rule {.val {ens$rule}}: {ensemble_rule_text(ens)}.")
  cli::cli_bullets(c(
    stats::setNames(escape_cli(member_lines), rep("*", length(member_lines))),
    "*" = "{nrow(agg)} record{?s}; {nrow(rows)} request{?s} in all, {n_failed} failed{if (n_failed > 0) ' (see error_data; re-send them with screen_errors() on each screening and combine again)' else ''}.",
    "*" = aggregated_summary(agg),
    "*" = "The members agree on {sum(agree)} of the {length(agree)} record{?s}.",
    if (all(c("prompt_tokens", "completion_tokens") %in% names(rows))) {
      c("*" = "Tokens: {format_tokens(sum(rows$prompt_tokens, na.rm = TRUE))} prompt, {format_tokens(sum(rows$completion_tokens, na.rm = TRUE))} completion.")
    },
    "*" = escape_cli(ensemble_price_text(x)),
    "*" = "Run {x$run_date %||% '?'}."
  ))
  cli::cli_text("Components: {.field {names(x)}}.")
  invisible(x)
}

ensemble_rule_text <- function(ens) {
  switch(ens$rule,
    any = "Include when any member includes a record, Check when none does and one flags it, else Exclude",
    majority = "Include when more than half the members include a record, Exclude when more than half exclude it, else Check",
    all = "Include when every member includes a record, Exclude when any excludes it, else Check",
    mean = paste0("the members' mean incl_p: Include at ", ens$cutoffs$upper, " or above",
      if (!isTRUE(all.equal(ens$cutoffs$lower, ens$cutoffs$upper))) paste0(", Check from ", ens$cutoffs$lower) else "",
      ", else Exclude")
  )
}

# The total price and each member's part of it.
ensemble_price_text <- function(x) {
  p <- x$price_data
  if (is.null(p) || is.na(x$price_dollar)) {
    return("Price: unknown (a screening ran with token_info = FALSE).")
  }
  by <- tapply(p$total_price_dollar, factor(p$member, levels = unique(p$member)), sum)
  parts <- paste0(names(by), " ", vapply(by, format_dollars, character(1)), collapse = ", ")
  paste0("Price: ", format_dollars(x$price_dollar), " (", parts, ").")
}

#' @rdname screen_ensemble
#' @param object An `llm_ensemble` object, for `summary()`.
#' @export
summary.llm_ensemble <- function(object, ...) {
  ens <- attr(object, "ensemble")
  mem <- ens$members
  rows <- lapply(mem$member, function(name) {
    pick <- function(t) if (is.null(t)) NULL else t[t$member == name, , drop = FALSE]
    # A price row of a prompt and model that several members share names them all.
    price <- object$price_data
    if (!is.null(price)) {
      price <- price[vapply(strsplit(price$member, ", ", fixed = TRUE), function(v) name %in% v, logical(1)), , drop = FALSE]
    }
    one <- structure(list(answer_data = pick(object$answer_data), error_data = pick(object$error_data),
      price_data = price, answer_data_aggregated = pick(object$member_data_aggregated)),
      class = c("llm", "list"))
    tibble::tibble(member = name, summary.llm(one))
  })
  members <- do.call(rbind, rows)
  agg <- object$answer_data_aggregated
  total <- function(col) sum(members[[col]])
  ensemble <- tibble::tibble(member = "ensemble", promptid = 1L, model = agg$model[1], records = nrow(agg),
    requests = total("requests"), answers = total("answers"), failures = total("failures"),
    include = total("include"), exclude = total("exclude"), uncertain = total("uncertain"),
    final_include = sum(agg$final_decision_llm == "Include"), final_check = sum(agg$final_decision_llm == "Check"),
    final_exclude = sum(agg$final_decision_llm == "Exclude"), prompt_tokens = total("prompt_tokens"),
    completion_tokens = total("completion_tokens"), price_dollar = object$price_dollar %||% NA_real_,
    run_time = total("run_time"))
  out <- rbind(members[names(ensemble)], ensemble)
  structure(out, class = c("llm_ensemble_summary", "llm_summary", setdiff(class(out), "llm_summary")),
    elapsed_seconds = attr(object, "run_info")$elapsed_seconds, ensemble = ens,
    cutoffs = if (!is.null(ens$cutoffs)) c(upper = ens$cutoffs$upper, lower = ens$cutoffs$lower))
}

#' @export
print.llm_ensemble_summary <- function(x, ...) {
  ens <- attr(x, "ensemble")
  cli::cli_text("{.strong Ensemble summary} ({.cls llm_ensemble_summary}) of {nrow(ens$members)} members, rule {.val {ens$rule}}: {ensemble_rule_text(ens)}.")
  lines <- vapply(seq_len(nrow(x)), function(i) {
    g <- x[i, , drop = FALSE]
    top_p <- ens$members$top_p[match(g$member, ens$members$member)]
    what <- if (g$member == "ensemble") "{.strong The ensemble}" else {
      "{.strong {g$member}} (prompt {g$promptid}, model {.val {g$model}}{if (!is.na(top_p)) paste0(', top_p ', top_p) else ''})"
    }
    escape_cli(cli::format_inline(what, ": {g$records} record{?s}, {g$requests} request{?s} ({g$failures} failed): ",
      "{g$final_include} Include, {g$final_check} Check, {g$final_exclude} Exclude; price {format_dollars(g$price_dollar)}."))
  }, character(1))
  cli::cli_bullets(stats::setNames(lines, rep("*", length(lines))))
  elapsed <- attr(x, "elapsed_seconds")
  if (!is.null(elapsed)) cli::cli_text("The screenings took {format(round(elapsed, 1), nsmall = 1)} s, added up.")
  invisible(x)
}
