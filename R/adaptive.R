# Adaptive repetitions: a screening function's call whose repetitions stop once each record's
# verdict is settled. The run is the same engine run, with the run option `adaptive`; Go decides
# which repetitions to send (golib/engine/adaptive.go, docs/decisions/0023-adaptive-repetitions.md;
# through screen_batch(), in rounds: golib/engine/adaptive_batch.go, docs/decisions/0024-adaptive-batches.md).

adaptive_state <- new.env(parent = emptyenv())

#' Screen with adaptive repetitions: stop asking once a record's verdict is settled
#'
#' Runs a screening function (`tabscreen_a.tools()`, `tabscreen_b()` or `tabscreen_c()`) with
#' `reps` as the most each record is asked. The repetitions of a record (for each prompt, model and
#' `top_p`) are sent one after another, each once the one before it has been answered (through
#' [screen_batch()], in rounds of batches: see the section below), and no more are sent once the
#' record's verdict (`final_decision_llm`) is settled. Every argument in `...`
#' means what it means to the screening function, and the result is the same `llm` object.
#'
#' @section Rules:
#' * `"exact"`: a record is settled when no answers of its remaining repetitions could change its
#'   `final_decision_llm` under the cut-offs in force (`incl_cutoff_upper`, `incl_cutoff_lower`).
#'   The verdict is then the one the full run would give with the same answers: with the default
#'   cut-off (0.1), the first include settles a record, and an exclusion needs every repetition.
#'   A failed repetition counts as one that may still be answered (by [screen_errors()] or a
#'   resumed run), so a settled verdict also holds once it is.
#' * `"statistical"`: a record is also settled when the probability that its remaining repetitions
#'   change its verdict is below `level`. The model: a record's answers are independent draws with
#'   the record's own include probability, and those probabilities spread over the records of the
#'   same prompt and model in a way the run learns from every record's answers so far (the
#'   maximum-likelihood spread over 200 values between 0 and 1, refitted as answers come in, with a
#'   little of an even spread mixed in so that no kind of record is taken to be impossible); until
#'   30 records have two answers or more the exact rule applies. Given a record's answers, its
#'   remaining includes follow from that spread narrowed by them. The model does not hold when
#'   records are not exchangeable (the records screened first differ from the later ones) or when a
#'   model's answers to the same question are not independent (a provider that caches or repeats
#'   answers): the verdict may then differ from the full run's more often than `level` says.
#'   `level` bounds each stopped record's chance of another verdict, so the share of records whose
#'   verdict differs from a full run is in general well below it. How much it saves depends on the
#'   cut-offs: under the default (the first include includes a record) an exclusion stays open as
#'   long as one more include is likely enough, and at `level = 0.01` the rule sends about what the
#'   exact rule sends; with a majority cut-off (`incl_cutoff_upper = 0.5`) it sends far fewer
#'   requests (the article "Cost, prompt caching and batch screening", section "Fewer requests: adaptive
#'   repetitions", has the figures).
#' @section The result:
#' Requests not sent because their record was settled are in neither `answer_data` nor
#' `error_data`: they were never requests. `answer_data_aggregated`'s `reps` is the number of
#' repetitions asked; its column `reps_sent` (only in adaptive results) is the number sent. The
#' attribute `run_info` holds `saved_requests`, the number of requests not sent, and printing the
#' result says it. With `reps = 1` there is nothing to save: the call is an ordinary screening.
#'
#' An adaptive run and a full run of the same call are different runs in the answer store: the
#' same adaptive call again (after an interruption, say) settles records from the answers the store
#' holds and sends only what is still needed; [screen_errors()] re-sends the failed requests with
#' the same rule.
#'
#' @section Through a batch API:
#' `screen_batch(screen_adaptive, tabscreen_b, ..., rule = "exact")` sends the repetitions through
#' the provider's batch API, at the batch price, in rounds: the first round is a batch of every
#' record's first repetition; once all of a round's batches are collected, the records not settled
#' (by the same rules) get as many more repetitions as they have had, in the next round's batches
#' (1, 1, 2, 4, ... repetitions). A record that is never settled is asked all of its `reps` within
#' `1 + ceiling(log2(reps))` rounds (4 rounds for `reps = 6`, 5 for `reps = 10`), as long as none
#' of its requests fails for good; a batch may take up to a day, so the rounds are a trade of time
#' for requests. Failed and expired lines are sent again within their round, as in any batch
#' screening. With `wait = FALSE`, or on Ctrl-C, the call returns with the round's batches waiting
#' at the provider; the same call again collects them and goes on with the next rounds. The result
#' is the object of a synchronous adaptive run, priced at the batch rate.
#' `screen_adaptive(screen_batch, ...)` is an error: [screen_batch()] goes outside.
#'
#' @param screening The screening function: `tabscreen_a.tools`, `tabscreen_b` or `tabscreen_c`.
#' @param ... The arguments of `screening`, as you would give them to it.
#' @param rule `"exact"` (the default) or `"statistical"`; see the section Rules.
#' @param level For `rule = "statistical"`: the largest probability, between 0 and 1, that the
#'   repetitions not sent would have changed a record's verdict.
#' @return The screening's `llm` object (see the screening function).
#' @export
#' @examples
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' res <- screen_adaptive(tabscreen_a.tools,
#'   filges2015_dat[1:6, ], prompt = "Is this study about functional family therapy?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", reps = 6, progress = FALSE, messages = FALSE
#' )
#' res
#' res$answer_data_aggregated[c("studyid", "final_decision_llm", "reps", "reps_sent")]
#' attr(res, "run_info")$saved_requests
#' fake$stop()
#' options(old)
screen_adaptive <- function(screening, ..., rule = c("exact", "statistical"), level = 0.01) {
  call <- rlang::current_env()
  if (identical(screening, screen_batch)) {
    abort_arg(c("{.fn screen_batch} goes outside {.fn screen_adaptive}, not inside it.",
      "i" = "Write {.code screen_batch(screen_adaptive, tabscreen_b, ..., rule = \"exact\")} for adaptive repetitions through a batch API."),
      class = "tabscreen_error_adaptive_args", arg = "screening", call = call)
  }
  screening_letter(screening, "tabscreen_error_adaptive_args", call)
  if (!is.character(rule) || length(rule) < 1 || anyNA(rule) || !rule[[1]] %in% c("exact", "statistical") ||
    (length(rule) > 1 && !identical(rule, c("exact", "statistical")))) {
    abort_arg(c("{.arg rule} must be {.val exact} or {.val statistical}, not {.obj_type_friendly {rule}}.",
      "i" = "Give {.code rule = \"exact\"} (the verdict of the full run) or {.code rule = \"statistical\"}."),
      class = "tabscreen_error_adaptive_args", arg = "rule", call = call)
  }
  rule <- rule[[1]]
  if (!is.numeric(level) || length(level) != 1 || is.na(level) || level <= 0 || level >= 1) {
    abort_arg(c("{.arg level} must be one number above 0 and below 1, not {.obj_type_friendly {level}}.",
      "i" = "It is the largest probability that the repetitions not sent would change a verdict, e.g. {.code level = 0.01}."),
      class = "tabscreen_error_adaptive_args", arg = "level", call = call)
  }
  old <- adaptive_state$request
  adaptive_state$request <- list(rule = rule, level = if (identical(rule, "statistical")) level)
  on.exit(adaptive_state$request <- old, add = TRUE)
  screening(...)
}

# The run option `adaptive` of the call being screened: NULL for an ordinary call, and when no
# model is asked more than once (`models`: the run options' models), as there is nothing to save.
adaptive_request <- function(models) {
  request <- adaptive_state$request
  if (is.null(request) || !any(vapply(models, function(m) m$reps > 1, logical(1)))) return(NULL)
  request[!vapply(request, is.null, logical(1))]
}
