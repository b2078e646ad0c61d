#!/usr/bin/env bash
# Installs what tabscreen needs on a Debian machine, and nothing that is already there: R and the
# R packages from Debian (CRAN is not reachable here), the Go modules, and the npm packages of
# tests/node (the Arrow cross-check, and puppeteer-core for the browser test of screen_review()).
# Safe to run any number of times.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(r-base-dev r-cran-rlang r-cran-cli r-cran-tibble r-cran-jsonlite r-cran-httr2 r-cran-processx
      r-cran-testthat r-cran-withr r-cran-callr r-cran-roxygen2 r-cran-knitr r-cran-rmarkdown
      r-cran-askpass r-cran-dbi r-cran-rsqlite r-cran-ggplot2 r-cran-xml2 r-cran-pkgdown pandoc chromium)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "Go (>= 1.23) is required: https://go.dev/dl/" >&2; exit 1; }
go mod download

if [ -f tests/node/package-lock.json ] && command -v npm >/dev/null; then
  if [ ! -d tests/node/node_modules/apache-arrow ] || [ ! -d tests/node/node_modules/puppeteer-core ]; then
    (cd tests/node && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi
