#!/usr/bin/env bash
# Builds the source package with the Go modules it imports inside it, so that
# `R CMD INSTALL tabscreen_*.tar.gz` needs no network. The modules travel as one archive,
# src/go-vendor.tar.xz (as CRAN's Rust packages carry their crates): a vendor/ folder in the
# tarball would hold hidden files and paths longer than the 100 bytes a tarball is required to
# store, both flagged by R CMD check. configure unpacks it into vendor/, and src/Makevars builds with
# -mod=vendor and GOPROXY=off. The checkout itself never holds either: the package is built from
# a staging copy of the files git knows.
#   tools/build-tarball.sh [OUT_DIR]     (default: the checkout; prints the tarball's path last)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-$root}
export PATH="$PATH:/usr/local/go/bin"
max_mb=10

stage=$(mktemp -d "${TMPDIR:-/tmp}/tabscreen-build.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/tabscreen"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf - | tar -xf - -C "$stage/tabscreen"

# Dot files and Makefiles in the modules (CI, editor and developer settings) are not build
# inputs, and R CMD check would read the Makefiles as the package's own.
(cd "$stage/tabscreen" && go mod vendor && tar --exclude='.*' --exclude=Makefile -cJf src/go-vendor.tar.xz vendor && rm -rf vendor)
(cd "$stage" && R CMD build --no-manual tabscreen >"$stage/build.log" 2>&1) || { cat "$stage/build.log"; exit 1; }
tarball=$(ls "$stage"/tabscreen_*.tar.gz)
mv "$tarball" "$out/"
tarball="$out/$(basename "$tarball")"
bytes=$(wc -c <"$tarball")
echo "source package: $tarball ($(awk -v b="$bytes" 'BEGIN { printf "%.1f MB", b / 1e6 }'), Go modules vendored)"
if [ "$bytes" -gt $((max_mb * 1000 * 1000)) ]; then
  echo "FAIL: the source package is larger than $max_mb MB" >&2
  exit 1
fi
