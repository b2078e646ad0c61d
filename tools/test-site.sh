#!/usr/bin/env bash
# make test-site: builds the pkgdown site into a scratch folder (tools/build-site.R: every example
# and article run, no warning allowed), checks it (tools/check-site.R: no error or warning shown,
# no broken internal link), and has headless Chromium render the home page and a reference page
# to PNG screenshots, which must be real renderings (not an empty page).
#   tools/test-site.sh        SITE_SHOTS=DIR keeps the screenshots (and the site) in DIR
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || echo /usr/bin/chromium)}"
[ -x "$CHROMIUM" ] || { echo "Chromium is missing: run tools/install-deps.sh (Debian package chromium)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tabscreen-site.XXXXXX")
trap 'rm -rf "$work"' EXIT
shots="${SITE_SHOTS:-$work/shots}"
mkdir -p "$shots"

Rscript tools/build-site.R "$work/site"
Rscript tools/check-site.R "$work/site"

shoot() { # page (relative to the site), png name
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$work/chromium" --window-size=1280,1000 \
    --screenshot="$shots/$2" "file://$work/site/$1" >"$work/chromium.log" 2>&1 ||
    { cat "$work/chromium.log"; echo "FAIL: Chromium could not render $1" >&2; exit 1; }
  # A page that rendered is a picture of text, far larger than a blank one (a few kB).
  bytes=$(wc -c <"$shots/$2")
  if [ "$bytes" -lt 30000 ]; then
    echo "FAIL: the screenshot of $1 is $bytes bytes: a blank page?" >&2
    exit 1
  fi
  echo "screenshot of $1: $shots/$2 ($bytes bytes)"
}
shoot index.html home.png
shoot reference/tabscreen_a.tools.html reference.png
if [ -n "${SITE_SHOTS:-}" ]; then cp -r "$work/site" "$shots/site"; fi
echo "site test passed"
