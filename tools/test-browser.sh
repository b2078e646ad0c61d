#!/usr/bin/env bash
# The browser test of screen_review() (tests/node/review-browser.test.cjs): headless Chromium,
# driven through the DevTools protocol by puppeteer-core, against the installed tabscreen
# (R_LIBS selects the library, as `make test` does). Installs puppeteer-core from
# tests/node/package-lock.json when missing; Chromium comes from tools/install-deps.sh.
#   tools/test-browser.sh          REVIEW_SHOTS=DIR keeps the screenshots in DIR
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
command -v node >/dev/null || { echo "node is not on PATH" >&2; exit 1; }
export CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || echo /usr/bin/chromium)}"
[ -x "$CHROMIUM" ] || { echo "Chromium is missing: run tools/install-deps.sh (Debian package chromium)" >&2; exit 1; }
if [ ! -d "$here/tests/node/node_modules/puppeteer-core" ]; then
  (cd "$here/tests/node" && npm ci --no-audit --no-fund --loglevel=error)
fi
cd "$here/tests/node"
node --test --test-reporter=spec review-browser.test.cjs
