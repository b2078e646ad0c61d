#!/usr/bin/env bash
# Proves that the source package installs and screens with no network: builds the tarball with its
# Go modules inside (tools/build-tarball.sh), then, in a network namespace that has only a loopback
# interface (unshare -n), installs it with an empty Go module cache and GOPROXY=off and screens 20
# records x 2 reps against the fake provider on 127.0.0.1. Where unshare is not allowed, the same
# runs with GOPROXY=off and the empty module cache alone, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
work=$(mktemp -d "${TMPDIR:-/tmp}/tabscreen-offline.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# tools/test-offline-install.sh [TARBALL]: the source package to test (default: one built now).
if [ $# -ge 1 ]; then
  tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
else
  tools/build-tarball.sh "$work" | tail -n 1
  tarball=$(ls "$work"/tabscreen_*.tar.gz)
fi
mkdir "$work/lib" "$work/gomodcache"

cat >"$work/screen.R" <<'RSCRIPT'
suppressPackageStartupMessages(library(tabscreen))
options(tabscreen.store = tempfile(fileext = ".sqlite"))
fake <- tabscreen:::fake_provider_start()
Sys.setenv(PROVIDER_A_API_KEY = "sk-offline-test")
res <- tabscreen_a.tools(filges2015_dat[1:20, ], prompt = "Include studies of family therapy.",
                         studyid = "studyid", title = "title", abstract = "abstract",
                         api_url = fake$url, reps = 2, messages = FALSE, progress = FALSE)
answers <- res$answer_data
stopifnot(nrow(answers) == 40L, all(!is.na(answers$decision_binary)), nrow(res$error_data) == 0L,
          all(answers$prompt_tokens > 0L), fake$stats()$requests_total == 40L)
cat("offline screening: 40 of 40 jobs answered, price", format(res$price_dollar), "USD\n")
RSCRIPT

cat >"$work/offline.sh" <<OFFLINE
set -euo pipefail
export GOMODCACHE="$work/gomodcache" GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local
R CMD INSTALL --library="$work/lib" "$tarball" >"$work/install.log" 2>&1 || { tail -n 40 "$work/install.log"; exit 1; }
echo "installed offline: \$(grep -c . "$work/install.log") lines of log, Go module cache \$(find "$work/gomodcache" -type f | wc -l) files"
R_LIBS="$work/lib" Rscript "$work/screen.R"
OFFLINE

if unshare -n true 2>/dev/null && command -v ip >/dev/null; then
  echo "network namespace with loopback only (unshare -n)"
  unshare -n bash -c "ip link set lo up && bash '$work/offline.sh'"
else
  echo "unshare -n is not allowed here: GOPROXY=off and an empty Go module cache only"
  bash "$work/offline.sh"
fi
echo "PASS offline install"
