# The methods paragraph of a review that screened with the package: every figure read from the
# screening result, its answer store and the review's decisions, never typed in.

#' The methods text of a screening, for a review's methods section
#'
#' Writes the paragraph a review's methods section needs to report how titles and abstracts were
#' screened with a language model: the provider's interface, the model and the exact model
#' versions that answered, the dates, the number of records, the repetitions and cut-offs, how
#' the doubtful records were handled (Check, the reviewers' decisions, a cascade of models,
#' adaptive repetitions), the audit of the model's Excludes and its bound, the requests, tokens
#' and price, and the package's version; the prompts follow in an appendix, word for word. Every
#' figure is read from the result, its answer store and the reviewers' decisions in
#' [screen_review()]. Edit the text as you see fit: it is a draft that gets the facts right.
#'
#' @param x A screening result (class `llm`), also a cascade ([screen_cascade()]).
#' @param reviewer,store As in [screen_review_decisions()]: whose decisions count, and the
#'   answer store that holds them (by default the result's own).
#' @param conf_level The confidence level of the audit's bound ([screen_review_audit()]).
#' @return An object of class `tabscreen_methods`: a list with `text` (plain text) and `markdown`
#'   (the same in Markdown), each one string whose paragraphs are separated by blank lines, the
#'   prompts in an appendix at the end. Printing it shows the Markdown; `format(x, "text")` gives
#'   the plain text.
#' @seealso [screen_prisma()] for the PRISMA counts, [screen_report()], which shows both.
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' res <- tabscreen_a.tools(filges2015_dat[1:20, ],
#'   prompt = "Is this study about functional family therapy for young people who use drugs?",
#'   studyid = studyid, title = title, abstract = abstract, api_url = fake$url,
#'   api_key = "not-a-real-key", reps = 3, incl_cutoff_upper = 0.5, incl_cutoff_lower = 0.3,
#'   progress = FALSE, messages = FALSE)
#' screen_methods(res)
#' cat(format(screen_methods(res), "text"))
#' fake$stop()
#' options(old)
screen_methods <- function(x, reviewer = NULL, store = NULL, conf_level = 0.95) {
  call <- rlang::current_env()
  if (!inherits(x, "llm")) {
    abort_arg("{.arg x} must be a screening result (class {.cls llm}), not {.obj_type_friendly {x}}.",
      class = c("tabscreen_error_methods_args", "tabscreen_error_object"), arg = "x", call = call)
  }
  if (!is.numeric(conf_level) || length(conf_level) != 1 || is.na(conf_level) || conf_level <= 0 || conf_level >= 1) {
    abort_arg("{.arg conf_level} must be one number above 0 and below 1, e.g. {.code 0.95}.",
      class = "tabscreen_error_methods_args", arg = "conf_level", call = call)
  }
  facts <- methods_facts(x, reviewer, store, conf_level)
  paragraphs <- c(methods_screening(facts), methods_doubtful(facts), methods_cost(facts))
  appendix <- vapply(seq_along(facts$prompts), function(i) {
    paste0("Prompt ", names(facts$prompts)[i], ":\n\n", facts$prompts[[i]])
  }, character(1))
  md_appendix <- vapply(seq_along(facts$prompts), function(i) {
    paste0("**Prompt ", names(facts$prompts)[i], "**\n\n", paste0("> ", strsplit(facts$prompts[[i]], "\n", fixed = TRUE)[[1]], collapse = "\n"))
  }, character(1))
  title <- if (length(facts$prompts) == 1) "Appendix: the prompt" else "Appendix: the prompts"
  structure(list(
    text = paste(c(paragraphs, title, appendix), collapse = "\n\n"),
    markdown = paste(c(paragraphs, paste("###", title), md_appendix), collapse = "\n\n")
  ), class = "tabscreen_methods")
}

#' @rdname screen_methods
#' @param format `"markdown"` or `"text"`.
#' @param ... Not used.
#' @export
format.tabscreen_methods <- function(x, format = c("markdown", "text"), ...) {
  format <- match.arg(format)
  x[[format]]
}

#' @rdname screen_methods
#' @export
print.tabscreen_methods <- function(x, ...) {
  cat(x$markdown, "\n", sep = "")
  invisible(x)
}

# What the text says, from the result: one entry per stage (a cascade has two), the verdicts, the
# reviewers' decisions and audit, the requests and the price.
methods_facts <- function(x, reviewer, store, conf_level) {
  cascade <- attr(x, "cascade")
  parts <- if (is.null(cascade)) list(x) else cascade$parts
  answers <- x$answer_data
  errors <- x$error_data
  stage_of <- function(t, s) if (is.null(cascade) || is.null(t)) t else t[t$stage == s, , drop = FALSE]
  stages <- lapply(seq_along(parts), function(s) methods_stage(attr(parts[[s]], "arg_list"), stage_of(answers, s)))
  # An ensemble's screenings are its stages, each with the answers of its members.
  ensemble <- attr(x, "ensemble")
  if (!is.null(ensemble)) {
    stages <- lapply(names(ensemble$args), function(s) {
      methods_stage(ensemble$args[[s]], answers[answers$member %in% ensemble$members$member[ensemble$members$screening == s], ])
    })
  }
  agg <- x$answer_data_aggregated
  verdict <- if (!is.null(agg)) as.character(agg$final_decision_llm) else {
    ifelse(is.na(answers$decision_binary), "Check", ifelse(answers$decision_binary %in% 1L, "Include", "Exclude"))
  }
  dates <- as.Date(substr(c(as.character(answers$run_date), as.character(errors$run_date)), 1, 10))
  prompts <- unique(answers[c("promptid", "prompt")])
  reviewed <- suppressMessages(screen_review_merge(x, reviewer = reviewer, store = store))
  human <- (reviewed$answer_data_aggregated %||% reviewed$answer_data)$human_review
  decisions <- screen_review_decisions(x, reviewer = reviewer, store = store)
  audit <- tryCatch(screen_review_audit(x, reviewer = reviewer, conf_level = conf_level, store = store),
    tabscreen_error_review_audit = function(e) NULL)
  tokens <- function(col) sum(c(answers[[col]], errors[[col]]), na.rm = TRUE)
  list(
    stages = stages, cascade = attr(x, "run_info")$cascade, band = attr(x, "arg_list")$band, ensemble = ensemble,
    records = length(unique(answers$studyid %||% agg$studyid)) + length(setdiff(errors$studyid, answers$studyid)),
    verdicts = table(factor(verdict, levels = c("Include", "Exclude", "Check"))),
    dates = if (length(dates)) range(dates) else NULL,
    prompts = stats::setNames(as.character(prompts$prompt), prompts$promptid),
    human = human, verdict = verdict, reviewers = length(unique(decisions$reviewer)), audit = audit,
    saved = attr(x, "run_info")$saved_requests %||% 0L,
    requests = nrow(answers) + NROW(errors), failed = NROW(errors),
    input_tokens = tokens("prompt_tokens"), output_tokens = tokens("completion_tokens"),
    price = x$price_dollar %||% sum(x$price_data$total_price_dollar), version = as.character(utils::packageVersion("tabscreen"))
  )
}

# What the text says of one screening: its provider, models, repetitions, cut-offs and the versions
# that answered (`a`: its answers).
methods_stage <- function(args, a) {
  list(provider = args$provider, url = args$api_url, model = unique(c(args$model)), reps = args$reps,
    submodels = sort(unique(stats::na.omit(as.character(a$submodel)))),
    cutoffs = if (any(args$reps > 1)) effective_cutoffs(args$incl_cutoff_upper, args$incl_cutoff_lower),
    adaptive = args$run_options$adaptive, batch = !is.null(args$run_options$batch))
}

# A cascade of two providers (an ensemble's member) names both.
methods_protocol <- function(provider) {
  paste(unname(c(a = "the OpenAI Chat Completions interface", b = "the Anthropic Messages interface",
    c = "the Mistral chat completions interface")[provider]), collapse = " and ")
}

methods_number <- function(n) format(n, big.mark = ",", scientific = FALSE, trim = TRUE)

methods_percent <- function(p) paste0(format(round(100 * p, 1), nsmall = 0, trim = TRUE), " %")

# The model of a stage: its name, the versions that answered, the interface and the host.
methods_model <- function(st) {
  host <- sub("^[a-z]+://([^/:]+).*$", "\\1", st$url %||% "")
  versions <- setdiff(st$submodels, st$model)
  paste0(paste(st$model, collapse = " and "),
    if (length(versions)) paste0(" (answering as ", paste(versions, collapse = ", "), ")") else "",
    " through ", methods_protocol(st$provider), if (nzchar(host)) paste0(" at ", host) else "",
    if (isTRUE(st$batch)) ", as batch requests" else "")
}

# How often a record was asked: "3 times", or per model when the models differ
# ("by gpt-6-luna 3 times and by gpt-6.1-terra once").
methods_asked <- function(st) {
  if (is.null(st$reps)) return("in a cascade, the second model only for the records the first left doubtful")
  reps <- rep_len(st$reps, length(st$model))
  times <- ifelse(reps == 1, "once", paste(reps, "times"))
  if (length(unique(times)) == 1) times[1] else paste("by", st$model, times, collapse = " and ")
}

methods_rule <- function(st) {
  if (is.null(st$cutoffs) || all(st$reps <= 1)) {
    return("a record was included when the model included it (an answer marked uncertain counted as an include)")
  }
  up <- st$cutoffs$upper
  lo <- st$cutoffs$lower
  paste0("each record's answers were combined into its inclusion probability, the share of answers that ",
    "included it (an answer marked uncertain counting as an include); a record was included when that share ",
    "was at least ", up, if (lo < up) paste0(", flagged for a reviewer's check when it was at least ", lo,
      " and below ", up, ",") else "", " and excluded otherwise")
}

# When the answers came: " on <date>" or " between <date> and <date>" ("" when unknown).
methods_when <- function(dates) {
  if (is.null(dates)) "" else if (dates[1] == dates[2]) paste0(" on ", dates[1]) else
    paste0(" between ", dates[1], " and ", dates[2])
}

methods_screening <- function(f) {
  if (!is.null(f$ensemble)) return(methods_ensemble(f))
  first <- f$stages[[1]]
  when <- methods_when(f$dates)
  asked <- methods_asked(first)
  prompts <- if (length(f$prompts) == 1) "the prompt in the appendix" else paste("each of the", length(f$prompts), "prompts in the appendix")
  s <- paste0("Titles and abstracts of ", methods_number(f$records), " records were screened", when, " with the large language model ",
    methods_model(first), ", using the R package tabscreen (version ", f$version, "). Each record was screened ", asked,
    " with ", prompts, ", and ", methods_rule(first), ".")
  if (!is.null(first$adaptive)) {
    rule <- if (identical(first$adaptive$rule, "exact")) {
      "no answer still to come could change its verdict"
    } else {
      paste0("the chance that the answers still to come would change its verdict was below ", first$adaptive$level)
    }
    s <- paste0(s, " Repetitions were adaptive: a record was asked again only until ", rule, " (",
      methods_number(f$saved), " requests were not sent).")
  }
  s
}

# An ensemble's screenings, one sentence each, and how their verdicts were combined.
methods_ensemble <- function(f) {
  when <- methods_when(f$dates)
  each <- vapply(f$stages, function(st) {
    paste0("With ", methods_model(st), ", each record was screened ", methods_asked(st), ", and ", methods_rule(st), ".")
  }, character(1))
  members <- nrow(f$ensemble$members)
  prompts <- if (length(f$prompts) == 1) "the prompt in the appendix" else paste("the", length(f$prompts), "prompts in the appendix")
  paste0("Titles and abstracts of ", methods_number(f$records), " records were screened", when, " by an ensemble of ", members,
    " screenings (each a model with a prompt), using the R package tabscreen (version ", f$version, ") with ", prompts, ". ",
    paste(each, collapse = " "), " The ", members, " verdicts of each record were combined into one (rule \"",
    f$ensemble$rule, "\": ", ensemble_rule_text(f$ensemble), ").")
}

methods_doubtful <- function(f) {
  v <- f$verdicts
  out <- paste0("The ", if (!is.null(f$ensemble)) "ensemble" else if (is.null(f$cascade)) "model" else "screening", " included ", methods_number(v[["Include"]]),
    " records, excluded ", methods_number(v[["Exclude"]]), " and flagged ", methods_number(v[["Check"]]), " for checking",
    if (f$failed > 0) paste0(" (", methods_number(f$failed), " requests failed for good)") else "", ".")
  if (!is.null(f$cascade)) {
    second <- f$stages[[2]]
    which <- if (is.null(f$band)) "flagged for checking" else paste0("with an inclusion probability from ", f$band[1], " to ", f$band[2])
    out <- paste0("The records the first model left doubtful (", which, "; ", methods_number(f$cascade$sent), " of ",
      methods_number(f$records), ", ", methods_percent(f$cascade$share), ") were screened again with ",
      methods_model(second), ", ", if (all(second$reps == 1)) "once" else paste(unique(second$reps), "times"),
      ", and its verdict replaced the first model's. ", out)
  }
  decided <- sum(!is.na(f$human))
  if (decided > 0) {
    checks <- f$verdict == "Check"
    out <- paste0(out, " ", if (f$reviewers == 1) "One reviewer" else paste(f$reviewers, "reviewers"), " decided ",
      methods_number(decided), " records: ", methods_number(sum(checks & !is.na(f$human))), " of the ",
      methods_number(sum(checks)), " flagged for checking (", methods_number(sum(checks & f$human %in% 1)),
      " included), and ", methods_number(sum(!checks & !is.na(f$human))), " others.")
  }
  if (!is.null(f$audit) && nrow(f$audit) > 0) {
    a <- f$audit[1, ]
    if (a$reviewed > 0) {
      out <- paste0(out, " To bound the relevant records among the model's Excludes, ", methods_number(a$reviewed),
        " of the ", methods_number(a$excludes), " excluded records, drawn at random, were read by a reviewer; ",
        methods_number(a$found), " of them ", if (a$found == 1) "was" else "were", " relevant",
        if (a$unsure > 0) paste0(" and ", methods_number(a$unsure), " uncertain (counted as relevant)") else "",
        ". With ", round(100 * a$conf_level), " % confidence at most ", methods_number(a$missed_upper),
        " relevant records remain among the ", methods_number(a$excludes),
        " Excludes (the exact upper confidence bound of the hypergeometric distribution, for a sample drawn without replacement).",
        if (isTRUE(a$relevant > 0) && !is.na(a$recall_lower)) paste0(" With the ", methods_number(a$relevant),
          if (a$relevant == 1) " relevant record" else " relevant records", " the reviewers confirmed among those the screening kept, its recall is at least ",
          format(round(a$recall_lower, 3), nsmall = 3), " at the same confidence.") else "")
    }
  }
  out
}

methods_cost <- function(f) {
  paste0("The screening made ", methods_number(f$requests), " requests, with ", methods_number(f$input_tokens),
    " input and ", methods_number(f$output_tokens), " output tokens, at a price of US$ ",
    format(round(f$price, 2), nsmall = 2), " at the providers' list prices.")
}
