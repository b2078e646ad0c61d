# screen_audit_bound() and screen_audit_plan(): the exact (hypergeometric) bound for the relevant
# records among the Excludes covers the truth at its stated level, is never looser than
# Clopper-Pearson, and the plan's sample size supports its claim. The bound from the review app's
# audit sample is tested in test-review.R.

# The bound for every possible count found: upper[k + 1] is the bound after finding k of n.
bound_by_k <- function(N, n, conf_level) {
  screen_audit_bound(N, reviewed = n, found = 0:n, conf_level = conf_level)$missed_upper
}

# The exact coverage of a bound (one value per k) when D of the N Excludes are relevant (D may be
# a vector): the bound grows with k, so it covers D exactly when k is at least the number of
# bounds below D.
exact_coverage <- function(upper, N, D, n) {
  stopifnot(!is.unsorted(upper))
  below <- vapply(D, function(d) sum(upper < d), numeric(1))
  stats::phyper(below - 1, D, N - D, n, lower.tail = FALSE)
}

test_that("the bound is the largest D the hypergeometric tail does not reject", {
  # By brute force over every D, independent of the package's bisection.
  brute <- function(N, n, k, alpha) {
    D <- 0:N
    max(D[D >= k & D <= N - n + k & stats::phyper(k, D, N - D, n) > alpha])
  }
  for (N in c(1, 2, 9, 40, 137)) {
    for (n in unique(c(0, 1, floor(N / 3), N - 1, N))) {
      if (n < 0) next
      for (conf in c(0.8, 0.95)) {
        got <- bound_by_k(N, n, conf)
        want <- vapply(0:n, function(k) brute(N, n, k, 1 - conf), numeric(1))
        expect_equal(got, want, info = sprintf("N = %d, n = %d, conf = %.2f", N, n, conf))
      }
    }
  }
  # Nothing read: nothing is known. Everything read: the bound is what was found.
  expect_equal(screen_audit_bound(500, reviewed = 0, found = 0)$missed_upper, 500)
  expect_equal(screen_audit_bound(500, reviewed = 500, found = 7)$missed_upper, 7)
  expect_equal(screen_audit_bound(500, reviewed = 500, found = 7)$share_upper, 7 / 500)
})

test_that("the bound's exact coverage is at least conf_level for every number of relevant Excludes", {
  for (setting in list(c(60, 40), c(500, 120), c(1000, 50), c(10000, 300))) {
    N <- setting[1]
    n <- setting[2]
    for (conf in c(0.9, 0.95, 0.99)) {
      upper <- bound_by_k(N, n, conf)
      # Checked against the sum of the hypergeometric probabilities of the k that cover D.
      D <- c(0, 1, N %/% 3, N)
      expect_equal(exact_coverage(upper, N, D, n),
        vapply(D, function(d) sum(stats::dhyper(0:n, d, N - d, n)[upper >= d]), numeric(1)))
      expect_gte(min(exact_coverage(upper, N, 0:N, n)), conf - 1e-12)
      # One less is not a bound at that level: the test can fail, and the bound is not loose.
      expect_lt(min(exact_coverage(upper - 1, N, 0:N, n)), conf)
    }
  }
})

test_that("in 10,000 seeded simulated audits the bound covers the truth at its stated share", {
  sd_mc <- sqrt(0.95 * 0.05 / 10000)
  # For each pile and sample: the D where the bound's coverage is lowest, and the smallest D that
  # an audit finding 0 (or 1) rules out: there an exact bound's coverage sits just above 0.95.
  for (setting in list(c(10000, 300), c(2000, 300), c(500, 120), c(60, 40))) {
    N <- setting[1]
    n <- setting[2]
    upper <- bound_by_k(N, n, 0.95)
    cover <- exact_coverage(upper, N, 0:N, n)
    for (D in c(which.min(cover) - 1, upper[1] + 1, upper[2] + 1)) {
      withr::with_seed(D + N + n, {
        # The audit as the app draws it: n distinct Excludes at random; the first D are relevant.
        found <- vapply(seq_len(10000), function(i) sum(sample.int(N, n) <= D), numeric(1))
      })
      covered <- mean(upper[found + 1] >= D)
      exact <- cover[D + 1]
      info <- sprintf("N = %d, D = %d, n = %d: covered %.4f, exact %.4f", N, D, n, covered, exact)
      expect_gte(exact, 0.95)
      expect_gte(covered, 0.95 - 3 * sd_mc, label = info)
      # The simulation agrees with the exact figure: the draws are the audit the bound is about.
      expect_lt(abs(covered - exact), 4 * sqrt(max(exact * (1 - exact), 0) / 10000) + 1e-9, label = info)
      if (N == 10000 && D == upper[1] + 1) {
        # The same draws catch a bound that is not exact: the normal approximation's covers 98
        # missed includes in only about 80 % of these audits.
        k <- 0:n
        wald <- ceiling(N * pmin(1, k / n + stats::qnorm(0.95) * sqrt(k / n * (1 - k / n) / n)))
        expect_lt(mean(wald[found + 1] >= D), 0.9)
      }
    }
  }
})

test_that("the bound is never looser than Clopper-Pearson on the same sample", {
  tighter <- 0
  looser <- character()
  wrong_cp <- character()
  for (N in c(1:30, 47, 100, 333, 1000, 10000)) {
    for (n in unique(pmin(N, c(0, 1, 2, 5, 10, 29, 60, 300, if (N <= 1000) N)))) {
      for (conf in c(0.8, 0.9, 0.95, 0.99)) {
        b <- screen_audit_bound(N, reviewed = n, found = 0:n, conf_level = conf)
        where <- sprintf("N = %d, n = %d, conf = %.2f", N, n, conf)
        if (any(b$missed_upper > b$missed_upper_binomial)) looser <- c(looser, where)
        k <- 0:n
        cp <- ifelse(k >= n, 1, stats::qbeta(conf, k + 1, n - k))
        if (!isTRUE(all.equal(b$share_upper_binomial, cp))) wrong_cp <- c(wrong_cp, where)
        tighter <- tighter + sum(b$missed_upper < b$missed_upper_binomial)
      }
    }
  }
  expect_equal(looser, character())
  expect_equal(wrong_cp, character())
  expect_gt(tighter, 0)
})

test_that("the worked example: 10,000 Excludes, 300 read, 0 or 1 found", {
  b <- screen_audit_bound(10000, reviewed = 300, found = 0:1)
  expect_equal(b$missed_upper, c(97, 155))
  expect_equal(b$missed_upper_binomial, c(100, 158))
  expect_equal(b$share_upper_binomial, stats::qbeta(0.95, 1:2, 300:299))
  # 97 is the bound: 97 relevant Excludes escape a sample of 300 with chance above 5 %, 98 do not.
  expect_gt(stats::phyper(0, 97, 10000 - 97, 300), 0.05)
  expect_lte(stats::phyper(0, 98, 10000 - 98, 300), 0.05)
  r <- screen_audit_bound(10000, reviewed = 300, found = 1, relevant = 180)
  expect_equal(r$recall_lower, (180 + 1) / (180 + 155))
  expect_false("recall_lower" %in% names(b))
})

test_that("the plan's sample is the smallest that supports its claim", {
  for (N in c(50, 400, 10000)) {
    for (found in 0:2) {
      for (conf in c(0.9, 0.95)) {
        for (M in unique(pmax(found, c(found + 1, ceiling(N / 100), ceiling(N / 10))))) {
          p <- screen_audit_plan(N, max_missed = M, conf_level = conf, expect_found = found)
          info <- sprintf("N = %d, M = %d, found = %d", N, M, found)
          bound <- function(n) screen_audit_bound(N, reviewed = n, found = found, conf_level = conf)$missed_upper
          expect_lte(bound(p$audit), M, label = info)
          if (p$audit > found) expect_gt(bound(p$audit - 1), M, label = info)
          # The binomial bound needs at least as many, when it gets there at all.
          if (!is.na(p$audit_binomial)) expect_gte(p$audit_binomial, p$audit, label = info)
        }
      }
    }
  }
  # At most 1 % of 10,000: the rule of three, a little below it without replacement.
  p <- screen_audit_plan(10000, max_share = 0.01)
  expect_equal(p$max_missed, 100)
  expect_equal(p$audit, 291)
  expect_equal(p$audit_binomial, 299)
  expect_equal(p$audit_share, 291 / 10000)
  # A share needs about the same sample for any large pile; a number of records, one in proportion.
  share <- screen_audit_plan(c(1e4, 1e5, 1e6), max_share = 0.01)$audit
  expect_true(all(share >= 290 & share <= 299))
  count <- screen_audit_plan(c(1e3, 1e4, 1e5), max_missed = 20)$audit
  expect_equal(count / c(1e3, 1e4, 1e5), rep(1 - 0.05^(1 / 21), 3), tolerance = 0.01)
  # A claim that holds before anything is read.
  expect_equal(screen_audit_plan(10, max_missed = 10)$audit, 0)
})

test_that("bad arguments are classed errors that name the argument", {
  arg_of <- function(expr) {
    cnd <- expect_error(expr, class = "tabscreen_error_audit_args")
    expect_s3_class(cnd, "tabscreen_error_arg")
    cnd$arg
  }
  expect_equal(arg_of(screen_audit_plan(10000)), "max_missed")
  expect_equal(arg_of(screen_audit_plan(10000, max_missed = 5, max_share = 0.01)), "max_share")
  expect_equal(arg_of(screen_audit_plan(10000, max_share = 1)), "max_share")
  expect_equal(arg_of(screen_audit_plan(10000, max_missed = 2.5)), "max_missed")
  expect_equal(arg_of(screen_audit_plan(10000, max_missed = 1, expect_found = 2)), "max_missed")
  expect_equal(arg_of(screen_audit_plan(-1, max_missed = 1)), "excludes")
  expect_equal(arg_of(screen_audit_plan("many", max_missed = 1)), "excludes")
  expect_equal(arg_of(screen_audit_plan(100, max_missed = 1, conf_level = 95)), "conf_level")
  expect_equal(arg_of(screen_audit_plan(100, max_missed = 1, expect_found = NA)), "expect_found")
  expect_equal(arg_of(screen_audit_bound(100, reviewed = 101, found = 0)), "reviewed")
  expect_equal(arg_of(screen_audit_bound(100, reviewed = 10, found = 11)), "found")
  expect_equal(arg_of(screen_audit_bound(100, reviewed = 1:3, found = 0:1)), "found")
  expect_equal(arg_of(screen_audit_bound(100, reviewed = 10, found = 0, relevant = -2)), "relevant")
  expect_error(screen_audit_plan(10000, max_missed = 1, expect_found = 2), "expect fewer")
})
