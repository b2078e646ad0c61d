#!/usr/bin/env bash
# make test-windows: builds tabscreen for Windows (amd64) with Debian's mingw-w64 and runs it under
# Wine, on this Linux machine:
#   1. go vet of every package for windows/amd64;
#   2. the core DLL, cross-built as src/Makevars.win builds it, exports every Ts* function;
#   3. the Go tests of golib/engine, golib/store and golib/refs, cross-compiled, pass under Wine;
#   4. a mingw C program (driver.c) loads the DLL and screens 20 records x 2 reps through its
#      exports against the fake provider running natively on 127.0.0.1 (Wine shares the
#      loopback), then cancels a slow run; wincheck (Go, Linux side) checks what came back;
#   5. src/Makevars.win, run by make with a stand-in for R's Windows make (rshlib.mk), builds
#      tabscreen.dll linked against libtabscreen.dll, and Windows finds the one beside the other.
# Installs what is missing (mingw-w64, wine64, R's headers), keeps its Wine prefix in
# ${XDG_CACHE_HOME:-~/.cache}/tabscreen-wine so that a second run is fast, builds in a temporary
# folder, prints one PASS or FAIL line per check and exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
HERE=$ROOT/tools/windows
export PATH="$PATH:/usr/local/go/bin"
started=$SECONDS

RECORDS=20
REPS=2
failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# show LOG: the end of a step's log, after a FAIL line.
show() { sed -e 's/^/    | /' "$1" | tail -n "${2:-30}"; }

# --- what this needs ---------------------------------------------------------------------------
command -v go >/dev/null || { echo "FAIL: Go is needed (not on PATH nor in /usr/local/go/bin)"; exit 1; }
missing=()
command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64)
dpkg-query -W -f='${Status}' wine64 2>/dev/null | grep -q "install ok installed" || missing+=(wine64)
[ -f /usr/share/R/include/Rinternals.h ] || missing+=(r-base-dev)
if ((${#missing[@]})); then
  echo "installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { echo "FAIL: could not install ${missing[*]}"; exit 1; }
fi
# Debian installs wine64 outside PATH (/usr/lib/wine/wine64), with its wineserver beside it.
WINE=
for f in $(dpkg -L wine64 2>/dev/null | grep '/wine64$'); do
  [ -f "$f" ] && [ -x "$f" ] && { WINE=$f; break; }
done
[ -n "$WINE" ] || WINE=$(command -v wine64 || true)
[ -x "${WINE:-}" ] || { echo "FAIL: no wine64 binary (dpkg -L wine64)"; exit 1; }
WINESERVER=$(dirname "$WINE")/wineserver
[ -x "$WINESERVER" ] || WINESERVER=$(command -v wineserver || echo wineserver)

export WINEPREFIX="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/tabscreen-wine"
export WINEARCH=win64 WINEDEBUG=-all
# Our bcryptprimitives.dll (ProcessPrng) wins over any builtin of that name.
export WINEDLLOVERRIDES="bcryptprimitives=n"

work=$(mktemp -d "${TMPDIR:-/tmp}/tabscreen-windows.XXXXXX")
fake_pids=()
cleanup() {
  for pid in "${fake_pids[@]}"; do kill "$pid" 2>/dev/null; done
  "$WINESERVER" -k 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# Paths as a Windows program sees them: Wine maps / to drive Z:.
# shellcheck disable=SC1003 # a backslash, not a quote
winpath() { printf 'Z:%s' "$1" | tr / '\\'; }
# go for windows/amd64 with cgo through mingw.
wgo() { GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc GOTOOLCHAIN=local GOWORK=off go "$@"; }
MINGW_CFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror)

echo "Windows build of tabscreen ($(go version | cut -d' ' -f3), $(x86_64-w64-mingw32-gcc -dumpversion) mingw-w64, $("$WINE" --version))"

# --- 1. vet ---------------------------------------------------------------------------------------
if wgo vet ./... >"$work/vet.log" 2>&1; then
  pass "go vet ./... for windows/amd64"
else
  fail "go vet ./... for windows/amd64"; show "$work/vet.log"
fi

# --- 2. the core DLL ------------------------------------------------------------------------------
dll=$work/dll/libtabscreen.dll
mkdir -p "$work/dll"
t0=$SECONDS
if wgo build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o "$dll" ./golib/cabi >"$work/dll.log" 2>&1; then
  want=$(grep -ho '^//export Ts[A-Za-z0-9_]*' golib/cabi/*.go | sed 's|^//export ||' | sort -u)
  have=$(x86_64-w64-mingw32-objdump -p "$dll" | sed -n 's/^\s*\[ *[0-9]*\] \(Ts[A-Za-z0-9_]*\)$/\1/p' | sort -u)
  lacking=$(comm -23 <(echo "$want") <(echo "$have"))
  if [ -z "$lacking" ] && [ -n "$want" ]; then
    pass "core DLL cross-built in $((SECONDS - t0)) s: libtabscreen.dll, $(($(stat -c %s "$dll") / 1024)) KiB, exports all $(echo "$want" | wc -l) Ts* functions ($(echo "$want" | tr '\n' ' ' | sed 's/ $//'))"
  else
    fail "libtabscreen.dll lacks exports: ${lacking:-no //export Ts* found in golib/cabi}"
  fi
else
  fail "go build -buildmode=c-shared ./golib/cabi for windows/amd64"; show "$work/dll.log"
fi

# --- the Wine prefix ------------------------------------------------------------------------------
# ProcessPrng (bcryptprimitives.dll) is what the Go runtime (>= 1.24) takes its random numbers
# from at start-up; Wine 8 lacks it, so a DLL of ours that has it goes into the prefix.
mkdir -p "$work/shim"
if ! x86_64-w64-mingw32-gcc -O2 -s -shared -o "$work/shim/bcryptprimitives.dll" "$HERE/processprng.c" -ladvapi32 >"$work/shim.log" 2>&1; then
  fail "the ProcessPrng shim does not build"; show "$work/shim.log"; exit 1
fi
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "creating the Wine prefix $WINEPREFIX (once)"
  mkdir -p "$(dirname "$WINEPREFIX")"
  # No Mono or Gecko: their installers would ask; nothing here needs them.
  WINEDLLOVERRIDES="mscoree,mshtml=" timeout 300 "$WINE" wineboot --init >"$work/wineboot.log" 2>&1
  "$WINESERVER" -w 2>/dev/null
  [ -d "$WINEPREFIX/drive_c/windows/system32" ] || { fail "wineboot did not create $WINEPREFIX"; show "$work/wineboot.log"; exit 1; }
fi
sys32=$WINEPREFIX/drive_c/windows/system32
cmp -s "$work/shim/bcryptprimitives.dll" "$sys32/bcryptprimitives.dll" || cp "$work/shim/bcryptprimitives.dll" "$sys32/"

# --- 3. the Go tests under Wine -------------------------------------------------------------------
# Go 1.26's os.RemoveAll deletes with FileDispositionInformationEx (Windows 10 1607 and later),
# for which Wine 8 returns STATUS_NOT_IMPLEMENTED, a status Go's fallback does not expect: every
# t.TempDir() cleanup would then fail. The test binaries (not the DLL) are built with an overlay
# of that one standard-library file that takes the fallback for this status too.
std=$(go env GOROOT)/src/internal/syscall/windows/at_windows.go
mkdir -p "$work/overlay"
sed 's|^\(\t*\)STATUS_NOT_SUPPORTED: *\(// .*\)$|\1STATUS_NOT_SUPPORTED, \2\n\1NTStatus(0xC0000002): // STATUS_NOT_IMPLEMENTED (Wine 8)|' "$std" >"$work/overlay/at_windows.go"
overlay=()
if cmp -s "$std" "$work/overlay/at_windows.go"; then
  echo "note: $std has changed; the Wine delete fallback is not applied"
else
  printf '{"Replace":{"%s":"%s"}}\n' "$std" "$work/overlay/at_windows.go" >"$work/overlay/overlay.json"
  overlay=(-overlay "$work/overlay/overlay.json")
fi
# Skipped on Windows, with reason: Go's Mkdir ignores the permission bits there, so a folder made
# 0500 is writable and no error can be provoked this way.
skip_store='^TestUnusableFilesFailBeforeAnything$/^folder_not_writable$'
for pkg in engine store refs; do
  exe=$work/$pkg.test.exe
  skip=()
  [ "$pkg" = store ] && skip=(-test.skip "$skip_store")
  if ! wgo test -c "${overlay[@]}" -o "$exe" "./golib/$pkg" >"$work/$pkg-build.log" 2>&1; then
    fail "go test -c ./golib/$pkg for windows/amd64"; show "$work/$pkg-build.log"; continue
  fi
  t0=$SECONDS
  # Tests run in their package's folder, as go test runs them.
  (cd "golib/$pkg" && timeout 300 "$WINE" "$exe" -test.v -test.count=1 -test.timeout=4m "${skip[@]}") >"$work/$pkg.log" 2>&1
  rc=$?
  npass=$(grep -c -- '--- PASS' "$work/$pkg.log")
  nskip=$(grep -c -- '--- SKIP' "$work/$pkg.log")
  if [ $rc -eq 0 ] && grep -q '^PASS$' "$work/$pkg.log"; then
    pass "golib/$pkg tests under Wine: $npass passed, $nskip skipped, in $((SECONDS - t0)) s"
    # A skipped test prints its reason just before its --- SKIP line.
    grep -B1 -- '--- SKIP' "$work/$pkg.log" | grep -v '^--$' | sed 's/^ */    /'
    [ "$pkg" = store ] && echo "    not run (-test.skip): TestUnusableFilesFailBeforeAnything/folder_not_writable (Windows has no folder permission bits)"
  else
    fail "golib/$pkg tests under Wine (exit $rc)"
    grep -E -B2 -A12 -- '--- FAIL|^panic|^FAIL' "$work/$pkg.log" | head -n 60 | sed 's/^/    | /'
    grep -q -- '--- FAIL' "$work/$pkg.log" || show "$work/$pkg.log"
  fi
done

# --- 4. a screening through the DLL's exports -----------------------------------------------------
start_fake() { # start_fake NAME ARGS...: runs a fake provider natively; sets PORT
  local name=$1
  shift
  local pf=$work/$name.port
  "$work/tabscreen-fake" --host 127.0.0.1 --port 0 --port-file "$pf" --watch-stdin=false "$@" >"$work/$name.log" 2>&1 &
  fake_pids+=($!)
  for _ in $(seq 100); do
    [ -s "$pf" ] && { PORT=$(tr -d '\n' <"$pf"); return 0; }
    sleep 0.1
  done
  return 1
}
options() { # options PORT EXTRA: run options for provider A on the fake
  cat <<EOF
{"provider": "a", "api_url": "http://127.0.0.1:$1/v1/chat/completions",
 "prompts": ["Include randomised trials in adults; exclude everything else."],
 "models": [{"name": "gpt-4o-mini", "reps": $REPS, "rpm": 60000,
             "price_in": 0.15, "price_cached_in": 0.075, "price_out": 0.6}],
 "top_p": [1], "role": "user",
 "builtin": {"overinclusive": true, "decision_description": false, "confidence": false},
 "max_tries": 4, "timeout_seconds": 30, $2}
EOF
}
if [ -f "$dll" ] &&
  go build -o "$work/tabscreen-fake" ./cmd/tabscreen-fake >"$work/tools.log" 2>&1 &&
  go build -o "$work/wincheck" ./tools/windows/wincheck >>"$work/tools.log" 2>&1 &&
  x86_64-w64-mingw32-gcc "${MINGW_CFLAGS[@]}" -I"$work/dll" -o "$work/driver.exe" "$HERE/driver.c" >>"$work/tools.log" 2>&1 &&
  "$work/wincheck" records "$RECORDS" "$work/records.arrow" >>"$work/tools.log" 2>&1; then

  mkdir -p "$work/screen" "$work/cancel"
  # shellcheck disable=SC1003 # a backslash, not a quote
  store="$(winpath "$work/screen/answers.sqlite" | tr '\\' /)"
  if start_fake fast; then
    options "$PORT" "\"max_active\": 0, \"store\": {\"path\": \"$store\"}" >"$work/screen.json"
    # The driver checks TsAggregate too, a test-only export of the core (golib/cabi/testonly.go).
    if TABSCREEN_TESTING=1 timeout 180 "$WINE" "$work/driver.exe" screen "$(winpath "$dll")" "$(winpath "$work/records.arrow")" \
      "$(winpath "$work/screen.json")" "$(winpath "$work/screen")" "$store" >"$work/screen.log" 2>&1 &&
      "$work/wincheck" screen "$work/screen" "$RECORDS" "$REPS" >>"$work/screen.log" 2>&1; then
      pass "screening of $RECORDS records x $REPS reps through the DLL under Wine, fake provider on 127.0.0.1"
      sed 's/^/    /' "$work/screen.log"
    else
      fail "screening through the DLL under Wine"; show "$work/screen.log"
    fi
  else
    fail "the fake provider did not start"; show "$work/fast.log"
  fi

  # 300 ms a request, 4 at a time: 40 jobs take 3 s; the cancel comes once 4 are answered.
  if start_fake slow --latency-ms 300; then
    options "$PORT" '"max_active": 4' >"$work/cancel.json"
    if timeout 180 "$WINE" "$work/driver.exe" cancel "$(winpath "$dll")" "$(winpath "$work/records.arrow")" \
      "$(winpath "$work/cancel.json")" "$(winpath "$work/cancel")" 4 >"$work/cancel.log" 2>&1 &&
      "$work/wincheck" cancel "$work/cancel" "$RECORDS" "$REPS" >>"$work/cancel.log" 2>&1; then
      pass "TsRunCancel of a slow run under Wine: state cancelled, every job accounted for"
      sed 's/^/    /' "$work/cancel.log"
    else
      fail "cancel through the DLL under Wine"; show "$work/cancel.log"
    fi
  else
    fail "the slow fake provider did not start"; show "$work/slow.log"
  fi
else
  fail "the screening test's programs (fake provider, wincheck, driver.exe) did not build"; show "$work/tools.log"
fi

# --- 5. src/Makevars.win --------------------------------------------------------------------------
# A copy of the package's build inputs, so that nothing is written into the checkout's src/.
pkg=$work/pkg
mkdir -p "$pkg"
cp -r go.mod go.sum golib "$pkg/"
mkdir -p "$pkg/src"
cp src/*.c src/*.h src/Makevars.win "$pkg/src/"
rm -f "$pkg/src/libtabscreen.h"
echo "GO = $(command -v go)" >"$pkg/src/go-path.mk" # as configure.win writes it
objs=()
for f in "$pkg"/src/*.c; do
  f=${f##*/}
  objs+=("${f%.c}.o")
done
objects="${objs[*]}"
rmake() { # make as R CMD INSTALL runs it in src/, with rshlib.mk standing in for R's Makeconf
  (cd "$pkg/src" && GOOS=windows GOARCH=amd64 make -f Makevars.win -f "$HERE/rshlib.mk" SHLIB=tabscreen.dll \
    OBJECTS="$objects" R_INCLUDE=/usr/share/R/include RSTUB="$work/rstub" "$@")
}
t0=$SECONDS
if rmake libtabscreen.dll "${objs[@]}" >"$work/makevars.log" 2>&1; then
  # The stub R.dll exports what the objects take from R: a first link without it names them.
  mkdir -p "$work/rstub"
  syms=$(cd "$pkg/src" && x86_64-w64-mingw32-gcc -shared -o "$work/rstub/probe.dll" "${objs[@]}" -L. -ltabscreen 2>&1 |
    grep -o "undefined reference to \`[^']*'" | sed "s/^undefined reference to \`//; s/'$//" | sort -u)
  {
    echo "/* A stub of R.dll with the symbols tabscreen.dll imports (test-windows.sh). */"
    for s in $syms; do
      case $s in
        __imp_*) echo "__declspec(dllexport) void *${s#__imp_};" ;;
        *) echo "__declspec(dllexport) void *$s(void) { return 0; }" ;;
      esac
    done
  } >"$work/rstub/R.c"
  if x86_64-w64-mingw32-gcc -shared -o "$work/rstub/R.dll" "$work/rstub/R.c" -Wl,--out-implib,"$work/rstub/libR.dll.a" >>"$work/makevars.log" 2>&1 &&
    rmake >>"$work/makevars.log" 2>&1; then
    imports=$(x86_64-w64-mingw32-objdump -p "$pkg/src/tabscreen.dll" | sed -n 's/^\s*DLL Name: //p' | tr "\n" " " | sed "s/ $//")
    # Installed as R CMD INSTALL installs them: every DLL of src/ into libs/x64. Loaded from
    # elsewhere (the working directory is the checkout, PATH has no libs/x64).
    mkdir -p "$work/lib/tabscreen/libs/x64"
    cp "$pkg/src/"*.dll "$work/lib/tabscreen/libs/x64/"
    if [[ " $imports " == *" libtabscreen.dll "* ]] &&
      timeout 120 "$WINE" "$work/driver.exe" package "$(winpath "$work/lib/tabscreen/libs/x64/tabscreen.dll")" \
        "$(winpath "$work/rstub/R.dll")" >"$work/package.log" 2>&1; then
      pass "src/Makevars.win builds libtabscreen.dll and tabscreen.dll (imports: $imports) in $((SECONDS - t0)) s; loaded from libs/x64 with LOAD_WITH_ALTERED_SEARCH_PATH under Wine"
      sed 's/^/    /' "$work/package.log"
    else
      fail "tabscreen.dll from src/Makevars.win (imports: $imports)"; show "$work/package.log"
    fi
  else
    fail "tabscreen.dll does not link with src/Makevars.win"; show "$work/makevars.log"
  fi
else
  fail "src/Makevars.win does not build"; show "$work/makevars.log"
fi

echo "test-windows: $((SECONDS - started)) s"
if ((failures)); then
  echo "test-windows: $failures check(s) FAILED"
  exit 1
fi
echo "test-windows: every check passed"
