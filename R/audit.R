# What a random audit of the model's Excludes supports: the exact (hypergeometric) upper bound for
# the relevant records among them, the Clopper-Pearson bound beside it, and how large an audit must
# be for a given claim. screen_review_audit() (R/review.R) applies the bound to the audit sample
# the review app draws and stores.

#' How many of the model's Excludes to audit, and what an audit supports
#'
#' @description
#' After a screening, the records the model excluded are not read by anyone. A simple random
#' sample of them, read by a human (the Audit queue of [screen_review()]), bounds how many
#' relevant records are among them all.
#'
#' * `screen_audit_plan()` says how many Excludes to read, drawn at random, so that finding at
#'   most `expect_found` relevant records among them supports the claim "at most `max_missed`
#'   relevant records (or at most a share `max_share`) are among the Excludes" with confidence
#'   `conf_level`.
#' * `screen_audit_bound()` makes the claim from an audit's figures: the exact upper confidence
#'   bound for the number of relevant records among the Excludes, the Clopper-Pearson bound on
#'   the same sample beside it, and, when the relevant records found elsewhere are known, a lower
#'   bound for recall. [screen_review_audit()] does the same from the review app's audit sample.
#'
#' @section The bound:
#' Of `N` Excludes, `D` are relevant (unknown). A simple random sample of `n` of them, drawn
#' without replacement, holds `X` relevant records: `X` is hypergeometric, and
#' `P(X <= k | D) = phyper(k, D, N - D, n)` falls as `D` grows. The upper bound after finding `k`
#' is the largest `D` that this tail does not reject at level `alpha = 1 - conf_level`:
#'
#' `missed_upper = max { D : phyper(k, D, N - D, n) > alpha }`
#'
#' (at least `k`, at most `N - n + k`). It covers the true `D` with probability at least
#' `conf_level` whatever `D` is: the bound falls below `D` only when `k` is at most the largest
#' `q` with `phyper(q, D, N - D, n) <= alpha`, and that happens with probability
#' `phyper(q, D, N - D, n) <= alpha`. This is the exact one-sided bound obtained by inverting the
#' hypergeometric test (Buonaccorsi 1987; Wang 2015 on exact one-sided bounds, and on how far below
#' their stated level approximate ones fall). The same test of a random sample of the records not
#' yet screened is the statistical stopping criterion of Callaghan and Müller-Hansen (2020) for
#' screening with active learning. The target method of Cormack and Grossman (2016), a random set
#' of relevant records the screening must find, is [screen_target_set()]: it needs relevant
#' records known beforehand, the audit needs none.
#'
#' The Clopper-Pearson bound (Clopper and Pearson 1934) treats the sample as drawn with
#' replacement from an infinite pile: `share_upper_binomial = qbeta(conf_level, k + 1, n - k)` (1
#' when `k = n`), `missed_upper_binomial = ceiling(share_upper_binomial * N)`. It is also valid,
#' but conservative, and more so the larger the sample is against the pile. The hypergeometric
#' bound is not above it for any `N`, `n` and `k` of a grid the tests check (piles of 1 to 10,000,
#' levels 0.8 to 0.99), and the two are close when `n` is a small part of `N`.
#'
#' A record a reviewer decided Unsure counts as found (in [screen_review_audit()]): the bound stays
#' on the safe side.
#'
#' @section The lower bound for recall:
#' With `relevant` relevant records known among the records the screening did not exclude, and
#' `found` relevant records rescued from the Excludes by the audit, the screening with its audit
#' finds `relevant + found` of the `relevant + D` relevant records, so with confidence
#' `conf_level` its recall is at least
#'
#' `recall_lower = (relevant + found) / (relevant + missed_upper)`
#'
#' (`missed_upper` counts the audit's finds too). A relevant record among the screening's
#' Includes that nobody confirmed only raises the true recall above this bound; but counting an
#' unconfirmed Include as relevant would raise the bound without reason, so give in `relevant`
#' only what a human confirmed (e.g. at full text). The model's own recall, before the audit's
#' rescue, is at least `relevant / (relevant + missed_upper)`.
#'
#' @section The size of the audit:
#' `screen_audit_plan()` gives the smallest `n` whose bound, with `expect_found` relevant records
#' found, is at most `max_missed` (the bound falls as `n` grows, so this `n` is found by
#' bisection). With nothing found, the claim needs `phyper(0, M + 1, N - M - 1, n) <= alpha`:
#' the chance that a sample of `n` misses all of `M + 1` relevant records is at most `alpha`. That
#' chance is at most `(1 - n / N)^(M + 1)`, so `n` is close to `N * (1 - alpha^(1 / (M + 1)))`:
#' * for a number of records `M`, the size grows in proportion to the Excludes (at 95 %, about
#'   13 % of them for `M = 20`, whether there are 1,000 or 100,000);
#' * for a share (`M = floor(max_share * N)`), it hardly depends on `N` once `N` is large, and is
#'   about `log(1 / alpha) / max_share` (the "rule of three" at 95 %: about 300 records for 1 %);
#'   a small pile needs fewer, since sampling without replacement exhausts it.
#'
#' Each relevant record the audit may find (`expect_found`) makes the sample larger: allowing
#' one raises it by about 60 % at 95 %. `audit_binomial` is the size the Clopper-Pearson bound
#' would need for the same claim (NA when even reading every Exclude does not bring it there).
#'
#' If the audit then finds more than `expect_found`, the claim is not supported: read more
#' records drawn at random (in the review app, the same `seed` with a larger `audit` keeps the
#' records already drawn), and see what [screen_review_audit()] supports.
#'
#' @references
#' Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in finite
#' populations. *The American Statistician*, 41(3), 215-218.
#'
#' Callaghan, M. W., & Müller-Hansen, F. (2020). Statistical stopping criteria for automated
#' screening in systematic reviews. *Systematic Reviews*, 9, 273.
#' \doi{10.1186/s13643-020-01521-4}
#'
#' Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated
#' in the case of the binomial. *Biometrika*, 26(4), 404-413.
#'
#' Cormack, G. V., & Grossman, M. R. (2016). Engineering quality and reliability in
#' technology-assisted review. *Proceedings of the 39th International ACM SIGIR Conference on
#' Research and Development in Information Retrieval*, 75-84.
#'
#' Wang, W. (2015). Exact optimal confidence intervals for hypergeometric parameters. *Journal of
#' the American Statistical Association*, 110(512), 1491-1499.
#' \doi{10.1080/01621459.2014.966191}
#'
#' @param excludes The number of the model's Excludes (one or more numbers), or a screening
#'   result (class `llm`, or its `answer_data_aggregated` or `answer_data`) whose Excludes are
#'   counted for each prompt, model and `top_p`.
#' @param max_missed The claim: at most this many relevant records among the Excludes (a whole
#'   number). Give this or `max_share`.
#' @param max_share The claim as a share of the Excludes, between 0 and 1: at most
#'   `floor(max_share * excludes)` relevant records among them.
#' @param conf_level The confidence level of the claim (one-sided), between 0 and 1.
#' @param expect_found How many relevant records the audit may find and still support the claim
#'   (a whole number, default 0). A larger value buys slack at the price of a larger sample.
#' @return `screen_audit_plan()`: a tibble with one row per number of Excludes (for a screening,
#'   the columns `promptid`, `model`, `top_p` first): `excludes`, `max_missed`, `expect_found`,
#'   `conf_level`, `audit` (the records to read, drawn at random), `audit_share` (`audit /
#'   excludes`) and `audit_binomial` (the size the Clopper-Pearson bound would need).
#'
#'   Errors for bad arguments have class `tabscreen_error_audit_args` (and `tabscreen_error_arg`,
#'   with the argument's name in the field `arg`).
#' @seealso [screen_review()] to draw and decide the audit sample, [screen_review_audit()] for the
#'   bound from it, [screen_target_set()] for a recall claim from known relevant records.
#' @export
#' @examples
#' # 10,000 Excludes: how many to read to claim at most 1 % (100) relevant among them?
#' screen_audit_plan(10000, max_share = 0.01)
#' # ... allowing one relevant record to be found, or claiming at most 20 records.
#' screen_audit_plan(10000, max_share = 0.01, expect_found = 1)
#' screen_audit_plan(c(1000, 10000, 100000), max_missed = 20)
#'
#' # 300 of 10,000 Excludes read, 0 or 1 relevant found: the exact bound and Clopper-Pearson's.
#' screen_audit_bound(10000, reviewed = 300, found = 0:1)
#' # With 180 relevant records confirmed among the screening's Includes: a bound for recall.
#' screen_audit_bound(10000, reviewed = 300, found = 1, relevant = 180)
#'
#' # The plan for a screening's own Excludes.
#' fake <- fake_provider()   # a local stand-in for the provider: random decisions
#' old <- options(tabscreen.store = tempfile(fileext = ".sqlite"))   # a scratch answer store
#' res <- tabscreen_a.tools(
#'   filges2015_dat[1:20, ],
#'   prompt = "Is this study about functional family therapy for young people who use drugs?",
#'   studyid = studyid, title = title, abstract = abstract,
#'   api_url = fake$url, api_key = "not-a-real-key", progress = FALSE, messages = FALSE
#' )
#' screen_audit_plan(res, max_missed = 2)
#' fake$stop()
#' options(old)
screen_audit_plan <- function(excludes, max_missed = NULL, max_share = NULL, conf_level = 0.95, expect_found = 0) {
  call <- rlang::current_env()
  groups <- audit_excludes(excludes, call)
  n_excl <- groups$excludes
  audit_conf_level(conf_level, call)
  audit_count(expect_found, "expect_found", call)
  if (is.null(max_missed) == is.null(max_share)) {
    abort_audit("Give the claim in one of {.arg max_missed} (a number of records) or {.arg max_share} (a share of the Excludes), not {if (is.null(max_missed)) 'neither' else 'both'}.",
      arg = if (is.null(max_missed)) "max_missed" else "max_share", call = call)
  }
  if (!is.null(max_share)) {
    if (!is.numeric(max_share) || length(max_share) != 1 || is.na(max_share) || max_share <= 0 || max_share >= 1) {
      abort_audit("{.arg max_share} must be a single number between 0 and 1 (exclusive), e.g. {.code 0.01}.",
        arg = "max_share", call = call)
    }
    # The tolerance keeps 0.01 * 10000 at 100 despite floating point.
    max_missed <- floor(max_share * n_excl + 1e-9)
  } else {
    audit_count(max_missed, "max_missed", call)
    max_missed <- rep_len(max_missed, length(n_excl))
  }
  if (any(max_missed < expect_found)) {
    abort_audit(c("{.arg max_missed} ({min(max_missed)}) is below {.arg expect_found} ({expect_found}): the relevant records an audit finds are among the Excludes, so no audit supports that claim.",
      "i" = "Claim more missed records, or expect fewer to be found."),
      arg = if (is.null(max_share)) "max_missed" else "max_share", call = call)
  }
  alpha <- 1 - conf_level
  audit <- mapply(function(N, M) audit_plan_size(N, M, expect_found, alpha, audit_hyper_upper), n_excl, max_missed)
  binomial <- mapply(function(N, M) audit_plan_size(N, M, expect_found, alpha, audit_binom_upper), n_excl, max_missed)
  tibble::new_tibble(c(groups$cols, list(
    excludes = n_excl, max_missed = as.numeric(max_missed), expect_found = rep(as.numeric(expect_found), length(n_excl)),
    conf_level = rep(conf_level, length(n_excl)), audit = as.numeric(audit),
    audit_share = ifelse(n_excl > 0, audit / n_excl, NA_real_),
    # NA: even reading every Exclude does not bring the binomial bound down to the claim.
    audit_binomial = as.numeric(binomial)
  )), nrow = length(n_excl))
}

#' @rdname screen_audit_plan
#' @param reviewed The number of Excludes read, drawn at random without replacement.
#' @param found How many of them were relevant (count an undecided record as relevant).
#' @param relevant `NULL`, or the number of relevant records known among the records the
#'   screening did not exclude (confirmed by a human): adds the lower bound for recall.
#' @return `screen_audit_bound()`: a tibble with one row per set of figures (`excludes`,
#'   `reviewed`, `found` and `relevant` are recycled): `excludes`, `reviewed`, `found`, `share`
#'   (`found / reviewed`), `missed_upper` (the exact upper bound for the relevant records among
#'   the Excludes), `share_upper` (`missed_upper / excludes`), `missed_upper_binomial` and
#'   `share_upper_binomial` (Clopper-Pearson), with `relevant` and `recall_lower` when
#'   `relevant` is given, and `conf_level`.
#' @export
screen_audit_bound <- function(excludes, reviewed, found, conf_level = 0.95, relevant = NULL) {
  call <- rlang::current_env()
  audit_count(excludes, "excludes", call, several = TRUE)
  audit_count(reviewed, "reviewed", call, several = TRUE)
  audit_count(found, "found", call, several = TRUE)
  audit_conf_level(conf_level, call)
  if (!is.null(relevant)) audit_count(relevant, "relevant", call, several = TRUE)
  lens <- lengths(list(excludes, reviewed, found, relevant %||% 0))
  n <- max(lens)
  if (any(lens != 1 & lens != n)) {
    abort_audit("{.arg excludes}, {.arg reviewed}, {.arg found} and {.arg relevant} must have the same length, or length 1.",
      arg = "found", call = call)
  }
  excludes <- rep_len(as.numeric(excludes), n)
  reviewed <- rep_len(as.numeric(reviewed), n)
  found <- rep_len(as.numeric(found), n)
  if (any(reviewed > excludes)) {
    abort_audit("{.arg reviewed} ({max(reviewed)}) cannot exceed {.arg excludes}: the audit is drawn from the Excludes.",
      arg = "reviewed", call = call)
  }
  if (any(found > reviewed)) {
    abort_audit("{.arg found} ({max(found)}) cannot exceed {.arg reviewed}: the relevant records found are among those read.",
      arg = "found", call = call)
  }
  b <- audit_bounds(excludes, reviewed, found, conf_level)
  out <- list(excludes = excludes, reviewed = reviewed, found = found,
    share = ifelse(reviewed > 0, found / reviewed, NA_real_))
  out <- c(out, b)
  if (!is.null(relevant)) {
    relevant <- rep_len(as.numeric(relevant), n)
    out$relevant <- relevant
    out$recall_lower <- audit_recall_lower(relevant, found, b$missed_upper)
  }
  out$conf_level <- rep(conf_level, n)
  tibble::new_tibble(out, nrow = n)
}

# ---- the bounds ---------------------------------------------------------------------------------

# The largest D with phyper(k, D, N - D, n) > alpha. The tail falls as D grows, and D = k always
# passes (the tail is 1), so bisection on [k, N - n + k] finds it.
audit_hyper_upper <- function(N, n, k, alpha) {
  lo <- k
  hi <- N - n + k
  while (lo < hi) {
    mid <- ceiling((lo + hi) / 2)
    if (stats::phyper(k, mid, N - mid, n) > alpha) lo <- mid else hi <- mid - 1
  }
  lo
}

# Clopper-Pearson's bound on the count: its share of N, rounded up (the tolerance keeps an exact
# product from being rounded up once more).
audit_binom_upper <- function(N, n, k, alpha) {
  ceiling(audit_binom_share(n, k, alpha) * N - 1e-9)
}

# k = n (nothing reviewed included) leaves every share possible.
audit_binom_share <- function(n, k, alpha) {
  if (k >= n) 1 else stats::qbeta(1 - alpha, k + 1, n - k)
}

# Both bounds for vectors of figures.
audit_bounds <- function(excludes, reviewed, k, conf_level) {
  alpha <- 1 - conf_level
  missed <- mapply(audit_hyper_upper, excludes, reviewed, k, MoreArgs = list(alpha = alpha))
  share_b <- mapply(audit_binom_share, reviewed, k, MoreArgs = list(alpha = alpha))
  list(missed_upper = as.numeric(missed), share_upper = ifelse(excludes > 0, missed / excludes, 0),
    missed_upper_binomial = ceiling(share_b * excludes - 1e-9), share_upper_binomial = share_b)
}

# No relevant record known anywhere leaves recall undefined when the bound also allows none.
audit_recall_lower <- function(relevant, found, missed_upper) {
  total <- relevant + missed_upper
  ifelse(total > 0, (relevant + found) / total, NA_real_)
}

# The smallest audit whose bound, with `k` found, is at most M. The bound falls as the sample
# grows and is k when every Exclude is read; a bound that never gets there (the binomial's, whose
# share stays above 0) gives NA.
audit_plan_size <- function(N, M, k, alpha, upper) {
  # The claim holds before anything is read.
  if (M >= N) return(0)
  if (upper(N, N, k, alpha) > M) return(NA_real_)
  lo <- k
  hi <- N
  while (lo < hi) {
    mid <- floor((lo + hi) / 2)
    if (upper(N, mid, k, alpha) <= M) hi <- mid else lo <- mid + 1
  }
  lo
}

# ---- arguments ----------------------------------------------------------------------------------

abort_audit <- function(message, arg, call, .envir = parent.frame()) {
  abort_arg(message, class = "tabscreen_error_audit_args", arg = arg, call = call, .envir = .envir)
}

audit_count <- function(x, arg, call, several = FALSE) {
  ok <- is.numeric(x) && length(x) >= 1 && (several || length(x) == 1) && !anyNA(x) && all(is.finite(x)) &&
    all(x >= 0) && all(x == round(x))
  if (!ok) {
    abort_audit("{.arg {arg}} must be {if (several) 'whole numbers' else 'a single whole number'} of at least 0, e.g. {.code {if (arg == 'excludes') 10000 else 0}}.",
      arg = arg, call = call)
  }
  invisible(x)
}

audit_conf_level <- function(conf_level, call) {
  if (!is.numeric(conf_level) || length(conf_level) != 1 || is.na(conf_level) || conf_level <= 0 || conf_level >= 1) {
    abort_audit("{.arg conf_level} must be a single number between 0 and 1 (exclusive), e.g. {.code 0.95}.",
      arg = "conf_level", call = call)
  }
  invisible(conf_level)
}

# The numbers of Excludes, with the prompt/model/top_p columns when they come from a screening.
audit_excludes <- function(excludes, call) {
  if (is.numeric(excludes)) {
    audit_count(excludes, "excludes", call, several = TRUE)
    return(list(cols = list(), excludes = as.numeric(excludes)))
  }
  if (!inherits(excludes, "llm") && !is.data.frame(excludes)) {
    abort_audit("{.arg excludes} must be the number of Excludes or a screening result (class {.cls llm}), not {.obj_type_friendly {excludes}}.",
      arg = "excludes", call = call)
  }
  rows <- report_rows(report_source(excludes, call = call))
  group <- review_group(rows$promptid, rows$model, rows$top_p)
  excl <- rows$model_num %in% 0L & !rows$failed
  first <- !duplicated(group)
  cols <- list(promptid = suppressWarnings(as.integer(rows$promptid[first])), model = rows$model[first],
    top_p = suppressWarnings(as.numeric(rows$top_p[first])))
  if (all(is.na(cols$top_p))) cols$top_p <- NULL
  list(cols = cols, excludes = as.numeric(vapply(group[first], function(g) sum(excl & group == g), integer(1))))
}
