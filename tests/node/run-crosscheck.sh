#!/usr/bin/env bash
# Cross-checks tabscreen's C Arrow IPC codec against the JS apache-arrow package (and arrow-go):
# installs apache-arrow from package-lock.json when missing, then runs tests/testthat/test-ipc.R
# against the installed tabscreen (R_LIBS selects the library, as `make test` does).
# Usage: tests/node/run-crosscheck.sh            (from anywhere)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v node >/dev/null || { echo "node is not on PATH" >&2; exit 1; }
if [ ! -d "$here/node_modules/apache-arrow" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
cd "$here/../testthat"
Rscript -e '
  res <- as.data.frame(testthat::test_file("test-ipc.R", package = "tabscreen", load_package = "installed",
                                           reporter = "summary"))
  bad <- sum(res$failed) + sum(res$error)
  node <- grepl("node", res$test)
  cat(sprintf("\nnode cross-check: %d expectations passed in %d tests, %d skipped\n",
              sum(res$nb[node]) - sum(res$failed[node]), sum(node), sum(res$skipped[node])))
  cat(sprintf("test-ipc.R: %d tests, %d failed\n", nrow(res), bad))
  quit(status = if (bad > 0 || any(res$skipped[node])) 1 else 0)
'
