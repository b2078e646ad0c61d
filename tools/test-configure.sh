#!/bin/sh
# Tests ./configure and ./configure.win (the search for Go and the message when there is none, or
# only an old one). Each case runs the scripts in a scratch copy of the package's top level (so
# the checkout's src/go-path.mk is left alone) with a clean environment (env -i): PATH holds only
# the tools configure uses, HOME is an empty folder, and TABSCREEN_GO_SEARCH_ROOT (read by
# configure for this test only) moves the fixed locations (/usr/local/go/bin/go, C:/Program
# Files/Go/bin/go.exe, ...) under a scratch folder, to stand for a machine without Go, or to lay
# out a Windows one. Prints PASS/FAIL per case and "N passed, M failed"; exits 1 on any failure.
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
min=$(sed -n 's/^go[ 	]*\([0-9][0-9.]*\).*$/\1/p' go.mod | head -n 1)
real_go=$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)
if [ ! -x "$real_go" ]; then
  echo "test-configure: needs a Go >= $min (on PATH or /usr/local/go/bin/go)" >&2
  exit 1
fi
real_go=$(cd "$(dirname "$real_go")" && pwd)/$(basename "$real_go")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tabscreen-test-configure.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The tools configure needs, and nothing else (no go).
mkdir -p "$tmp/tools"
for t in sh sed awk head mkdir cat pwd cmp mv rm chmod; do
  p=$(command -v "$t") || { echo "test-configure: no $t" >&2; exit 1; }
  ln -s "$p" "$tmp/tools/$t"
done
TOOLS=$tmp/tools
shell=sh
command -v dash >/dev/null 2>&1 && shell=$(command -v dash)

# fake_go PATH VERSION: a script that answers like a go binary of that version (VERSION "go1.15"
# style with an empty GOVERSION stands for a Go older than 1.16, which lacks it).
fake_go() {
  mkdir -p "$(dirname "$1")"
  cat > "$1" <<EOF
#!/bin/sh
case "\$1 \${2:-}" in
  "env GOVERSION") case "$2" in go1.1[0-5]*) echo ;; *) echo "$2" ;; esac ;;
  "version "*) echo "go version $2 linux/amd64" ;;
  "env "*) echo "$tmp/fakecache" ;;
  *) echo "fake go: \$*" >&2; exit 2 ;;
esac
EOF
  chmod +x "$1"
}

passed=0
failed=0
n=0
# run NAME SCRIPT [VAR=VALUE...]: runs ./SCRIPT in a fresh copy, with a clean environment plus the
# given variables (PATH=$TOOLS and HOME=<empty folder> unless given); sets $rc, $out (stdout and
# stderr), $gopath (the GO line of src/go-path.mk, or empty), $work.
run() {
  n=$((n + 1))
  work=$tmp/case$n
  mkdir -p "$work/src" "$work/home" "$work/root"
  cp "$top/configure" "$top/configure.win" "$top/go.mod" "$work/"
  script=$2
  shift 2
  out=$(cd "$work" && env -i PATH="$TOOLS" HOME="$work/home" TABSCREEN_GO_SEARCH_ROOT="$work/root" \
        "$@" "$shell" "./$script" 2>&1)
  rc=$?
  gopath=$(sed -n 's/^GO = //p' "$work/src/go-path.mk" 2>/dev/null)
}
# check NAME CONDITION...: PASS when every condition (a shell test string) holds.
check() {
  name=$1
  shift
  for cond in "$@"; do
    if ! eval "$cond"; then
      echo "FAIL $name: $cond"
      echo "$out" | sed 's/^/    | /'
      failed=$((failed + 1))
      return
    fi
  done
  echo "PASS $name"
  passed=$((passed + 1))
}
has() { case $out in *"$1"*) return 0 ;; esac; return 1; }

# (a) an old go on PATH, nothing else: stops, names it, where, and the minimum.
fake_go "$tmp/old/go" go1.19.8
run a configure PATH="$tmp/old:$TOOLS"
check "old-go-on-path" '[ $rc -eq 1 ]' 'has "go1.19.8"' 'has "$tmp/old/go"' 'has "Go >= $min"' \
  'has "too old"' '[ ! -f "$work/src/go-path.mk" ]'

# (a2) a Go older than 1.16 (no GOVERSION): its version still comes from `go version`.
fake_go "$tmp/older/go" go1.15
run a2 configure PATH="$tmp/older:$TOOLS"
check "go-without-goversion" '[ $rc -eq 1 ]' 'has "go1.15, too old"'

# (a3) a release candidate of the minimum's minor is older than its .0 release.
minor=$(echo "$min" | sed 's/^\([0-9]*\.[0-9]*\).*/\1/')
fake_go "$tmp/rc/go" "go${minor}rc1"
run a3 configure PATH="$tmp/rc:$TOOLS"
check "release-candidate" '[ $rc -eq 1 ]' 'has "go${minor}rc1, too old"'

# (b) no Go anywhere: stops, says where it looked, and how to install Go.
run b configure GOROOT="$tmp/emptygoroot"
check "no-go" '[ $rc -eq 1 ]' 'has "No Go was found"' 'has "Go >= $min"' \
  'has "root/usr/local/go/bin/go"' 'has "root/opt/homebrew/bin/go"' 'has "home/go/bin/go"' \
  'has "emptygoroot/bin/go (GOROOT)"' 'has "winget install GoLang.Go"' 'has "brew install go"' \
  'has "/usr/local/go"' 'has "Debian 12"' 'has "TABSCREEN_GO"' 'has "binary package"' \
  '[ $(printf "%s\n" "$out" | grep -c "configure: error") -eq 1 ]' '[ ! -f "$work/src/go-path.mk" ]'

# (c) TABSCREEN_GO names a good go (here through a link, so that the path is not a default one).
mkdir -p "$tmp/custom"
ln -s "$real_go" "$tmp/custom/go"
run c configure TABSCREEN_GO="$tmp/custom/go"
check "tabscreen-go" '[ $rc -eq 0 ]' '[ "$gopath" = "$tmp/custom/go" ]' 'has "Go >= $min"'

# (c2) TABSCREEN_GO names an old go: it is not passed over for another.
run c2 configure TABSCREEN_GO="$tmp/old/go" PATH="$(dirname "$real_go"):$TOOLS"
check "tabscreen-go-old" '[ $rc -eq 1 ]' 'has "$tmp/old/go: go1.19.8, too old"'

# (c3) TABSCREEN_GO names a missing file.
run c3 configure TABSCREEN_GO="$tmp/nowhere/go"
check "tabscreen-go-missing" '[ $rc -eq 1 ]' 'has "$tmp/nowhere/go: no such file (TABSCREEN_GO)"'

# (d) the default search (no go on PATH, the real fixed locations) finds this machine's Go.
run d configure TABSCREEN_GO_SEARCH_ROOT=
check "default-search" '[ $rc -eq 0 ]' '[ -n "$gopath" ] && [ -x "$gopath" ]' \
  'env GOTOOLCHAIN=local "$gopath" env GOVERSION >/dev/null'

# (d2) an old go on PATH and a good one in a fixed location (Debian's golang and the official
# tarball): the good one is used.
mkdir -p "$tmp/root-d2/usr/local/go/bin"
ln -s "$real_go" "$tmp/root-d2/usr/local/go/bin/go"
run d2 configure PATH="$tmp/old:$TOOLS" TABSCREEN_GO_SEARCH_ROOT="$tmp/root-d2"
check "old-on-path-good-in-usr-local" '[ $rc -eq 0 ]' \
  '[ "$gopath" = "$tmp/root-d2/usr/local/go/bin/go" ]' 'has "not used"' 'has "go1.19.8, too old"'

# (d3) $GOROOT/bin/go and a go under $HOME/sdk (golang.org/dl) are found.
run d3 configure GOROOT="$(dirname "$(dirname "$real_go")")"
check "goroot" '[ $rc -eq 0 ]' '[ "$gopath" = "$(dirname "$(dirname "$real_go")")/bin/go" ]'
mkdir -p "$tmp/sdkhome/sdk/go9.9.9/bin"
ln -s "$real_go" "$tmp/sdkhome/sdk/go9.9.9/bin/go"
run d4 configure HOME="$tmp/sdkhome"
check "home-sdk" '[ $rc -eq 0 ]' '[ "$gopath" = "$tmp/sdkhome/sdk/go9.9.9/bin/go" ]'

# (e) configure.win: the Windows locations, laid out under the search root.
run e configure.win
check "win-no-go" '[ $rc -eq 1 ]' 'has "C:/Program Files/Go/bin/go.exe"' 'has "C:/Go/bin/go.exe"' \
  'has "winget install GoLang.Go"'
fake_go "$tmp/winroot/C:/Program Files/Go/bin/go.exe" "go$min"
run e2 configure.win TABSCREEN_GO_SEARCH_ROOT="$tmp/winroot"
check "win-program-files" '[ $rc -eq 0 ]' '[ "$gopath" = "$tmp/winroot/C:/Program Files/Go/bin/go.exe" ]'
fake_go "$tmp/lad/Programs/Go/bin/go.exe" go1.99.0
run e3 configure.win 'LOCALAPPDATA=C:\fake' USERPROFILE="$tmp/up"
check "win-list-localappdata-userprofile" '[ $rc -eq 1 ]' 'has "C:/fake/Programs/Go/bin/go.exe"' \
  'has "$tmp/up/go/bin/go.exe"' 'has "$tmp/up/sdk/go*/bin/go.exe"' \
  'has "$tmp/up/scoop/apps/go/current/bin/go.exe"'
run e4 configure.win LOCALAPPDATA="$tmp/lad"
check "win-localappdata" '[ $rc -eq 0 ]' '[ "$gopath" = "$tmp/lad/Programs/Go/bin/go.exe" ]'
fake_go "$tmp/up2/sdk/go1.99.1/bin/go.exe" go1.99.1
run e5 configure.win USERPROFILE="$tmp/up2"
check "win-userprofile-sdk" '[ $rc -eq 0 ]' '[ "$gopath" = "$tmp/up2/sdk/go1.99.1/bin/go.exe" ]'

# (f) an unusable build cache (no HOME): a folder under src/ is used instead.
run f configure TABSCREEN_GO="$real_go" HOME=
check "no-home-cache" '[ $rc -eq 0 ]' 'grep -q "^export GOCACHE = $work/src/.gocache\$" "$work/src/go-path.mk"'

# (g) the source package's Go modules (src/go-vendor.tar.xz) are unpacked into vendor/ with R's
# untar, and the module cache is then not needed. Skipped (reported) without R or tar/xz here.
r_home=$(R RHOME 2>/dev/null)
mkdir -p "$tmp/vend/vendor/example.com/m"
echo "# example.com/m v1.0.0" > "$tmp/vend/vendor/modules.txt"
echo "package m" > "$tmp/vend/vendor/example.com/m/m.go"
if [ -n "$r_home" ] && (cd "$tmp/vend" && tar -cJf ../go-vendor.tar.xz vendor) 2>/dev/null; then
  n_g=$((n + 1))
  mkdir -p "$tmp/case$n_g/src"
  cp "$tmp/go-vendor.tar.xz" "$tmp/case$n_g/src/"
  run g configure TABSCREEN_GO="$real_go" R_HOME="$r_home" HOME=
  check "vendor-archive" '[ $rc -eq 0 ]' '[ "$work" = "$tmp/case$n_g" ]' \
    'cmp -s "$work/vendor/modules.txt" "$tmp/vend/vendor/modules.txt"' '[ -f "$work/vendor/example.com/m/m.go" ]' \
    '! grep -q GOMODCACHE "$work/src/go-path.mk"'
  cp "$top/cleanup" "$work/" && (cd "$work" && env -i PATH="$TOOLS" "$shell" ./cleanup)
  check "cleanup" '[ ! -e "$work/vendor" ] && [ ! -e "$work/src/go-path.mk" ] && [ ! -e "$work/src/.gocache" ]' \
    '[ -f "$work/src/go-vendor.tar.xz" ]'
else
  echo "SKIP vendor-archive (needs R and tar with xz)"
fi

# (h) one minimum Go version: go.mod's go line, DESCRIPTION and the README say the same.
gomod_min=$(sed -n 's/^go \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' "$top/go.mod")
check "one-minimum-go" '[ -n "$gomod_min" ]' \
  'grep -q "^SystemRequirements: Go (>= $gomod_min)," "$top/DESCRIPTION"' \
  'grep -q "Go >= $gomod_min" "$top/README.md"' \
  '! grep -n "Go (>= [0-9.]*)\|Go >= [0-9.]*" "$top/README.md" "$top/DESCRIPTION" "$top/tools/install-deps.sh" | grep -v "$gomod_min"'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
