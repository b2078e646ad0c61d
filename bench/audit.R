# The bound on what the model missed (screen_audit_bound(), screen_audit_plan()): the worked
# example of 10,000 Excludes with 300 read, the audit sizes for a few claims, and the coverage of
# the bound in 10,000 seeded simulated audits next to its exact coverage.
# Run: R_LIBS=$PWD/.rlib Rscript bench/audit.R
library(tabscreen)

cat("Worked example: 10,000 Excludes, 300 read at random, 0 or 1 include found (95 %)\n")
print(as.data.frame(screen_audit_bound(10000, reviewed = 300, found = 0:1)[,
  c("found", "missed_upper", "missed_upper_binomial", "share_upper", "share_upper_binomial")]))
cat("\nWith 180 relevant records confirmed among the screening's Includes\n")
print(as.data.frame(screen_audit_bound(10000, reviewed = 300, found = 0:1, relevant = 180)[,
  c("found", "missed_upper", "recall_lower")]))

cat("\nAudit sizes (95 %)\n")
plans <- rbind(
  screen_audit_plan(c(1000, 10000, 100000), max_share = 0.01),
  screen_audit_plan(c(1000, 10000, 100000), max_share = 0.01, expect_found = 1),
  screen_audit_plan(c(1000, 10000, 100000), max_missed = 20)
)
print(as.data.frame(plans[, c("excludes", "max_missed", "expect_found", "audit", "audit_binomial")]))

cat("\nCoverage in 10,000 seeded simulated audits (sample.int draws), and exact\n")
exact_coverage <- function(upper, N, D, n) {
  below <- vapply(D, function(d) sum(upper < d), numeric(1))
  stats::phyper(below - 1, D, N - D, n, lower.tail = FALSE)
}
for (setting in list(c(10000, 300), c(2000, 300), c(500, 120), c(60, 40))) {
  N <- setting[1]
  n <- setting[2]
  upper <- screen_audit_bound(N, reviewed = n, found = 0:n)$missed_upper
  cover <- exact_coverage(upper, N, 0:N, n)
  for (D in c(which.min(cover) - 1, upper[1] + 1, upper[2] + 1)) {
    found <- withr::with_seed(D + N + n, vapply(seq_len(10000), function(i) sum(sample.int(N, n) <= D), numeric(1)))
    cat(sprintf("N = %5d, n = %3d, D = %4d: covered in %.4f of the audits, exact %.4f\n",
      N, n, D, mean(upper[found + 1] >= D), cover[D + 1]))
  }
}
