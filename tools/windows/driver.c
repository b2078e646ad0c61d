/* The Windows side of tools/windows/test-windows.sh: loads the core DLL the way the package's DLL
 * uses it (LoadLibrary + GetProcAddress here, instead of an import library) and runs a screening
 * through its exports, as R's poll loop does: TsRunStart, TsRunPoll until "finished",
 * TsRunResult, then TsAggregate on the answers (a test-only export: test-windows.sh sets
 * TABSCREEN_TESTING=1) and TsStore on the answer store.
 *
 *   driver screen DLL RECORDS OPTIONS OUTDIR STORE    a screening that must answer every job
 *   driver cancel DLL RECORDS OPTIONS OUTDIR K        TsRunCancel once K jobs are answered
 *   driver package PKGDLL RDLL                        load the package's DLL as R does
 *
 * "package" checks the build of src/Makevars.win: with RDLL (a stub of R.dll) already loaded, as
 * it is in R, it loads tabscreen.dll by its full path with LOAD_WITH_ALTERED_SEARCH_PATH, as R
 * does, from a working directory and a PATH that do not hold it; Windows must then find
 * libtabscreen.dll beside it, and R_init_tabscreen must run.
 *
 * RECORDS is an Arrow IPC stream and OPTIONS the run options (JSON), both written on the Linux
 * side. OUTDIR receives result.json and answers.arrow (and for a screening aggregated.arrow and
 * runs.arrow), which tools/windows/wincheck checks there. The counters are checked here too: a
 * run that did not answer (or, cancelled, did not account for) every job fails at once. Built by
 * x86_64-w64-mingw32-gcc against the libtabscreen.h of the same build, so that every function
 * pointer has the type the DLL exports. */
#include <windows.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libtabscreen.h"

static HMODULE dll;
static __typeof__(TsRunStart) *ts_run_start;
static __typeof__(TsRunPoll) *ts_run_poll;
static __typeof__(TsRunCancel) *ts_run_cancel;
static __typeof__(TsRunResult) *ts_run_result;
static __typeof__(TsAggregate) *ts_aggregate;
static __typeof__(TsStore) *ts_store;
static __typeof__(TsFree) *ts_free;

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("driver: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void *symbol(const char *name) {
  void *p = (void *)GetProcAddress(dll, name);
  if (p == NULL) die("the DLL exports no %s (error %lu)", name, GetLastError());
  return p;
}

static void load(const char *path) {
  dll = LoadLibraryA(path);
  if (dll == NULL) die("LoadLibrary(%s) failed: error %lu", path, GetLastError());
  ts_run_start = symbol("TsRunStart");
  ts_run_poll = symbol("TsRunPoll");
  ts_run_cancel = symbol("TsRunCancel");
  ts_run_result = symbol("TsRunResult");
  ts_aggregate = symbol("TsAggregate");
  ts_store = symbol("TsStore");
  ts_free = symbol("TsFree");
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) die("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) die("cannot read %s", path);
  fclose(f);
  buf[n] = '\0';
  *len = (size_t)n;
  return buf;
}

static void write_file(const char *dir, const char *name, const void *data, size_t len) {
  char path[MAX_PATH];
  snprintf(path, sizeof path, "%s\\%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) die("cannot write %s", path);
}

/* The integer after the first "key": of a compact JSON document (Go's encoding/json), or -1. */
static long long json_int(const char *doc, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(doc, pat);
  return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

static int json_has(const char *doc, const char *text) { return strstr(doc, text) != NULL; }

/* Takes the JSON document of a call that returned `status`: a copy in C memory of ours, the DLL's
 * freed with TsFree. A non-zero status is an error, whose document says what failed. */
static char *take(int status, char *json, const char *what) {
  if (json == NULL) die("%s returned no document (status %d)", what, status);
  char *copy = _strdup(json);
  ts_free(json);
  if (status != 0) die("%s (status %d): %s", what, status, copy);
  return copy;
}

static int package_dll(const char *pkg, const char *rdll) {
  if (LoadLibraryA(rdll) == NULL) die("LoadLibrary(%s) failed: error %lu", rdll, GetLastError());
  HMODULE h = LoadLibraryExA(pkg, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
  if (h == NULL) die("LoadLibraryEx(%s, LOAD_WITH_ALTERED_SEARCH_PATH) failed: error %lu", pkg, GetLastError());
  HMODULE core = GetModuleHandleA("libtabscreen.dll");
  if (core == NULL) die("tabscreen.dll loaded without libtabscreen.dll");
  char pkg_path[MAX_PATH], core_path[MAX_PATH];
  GetModuleFileNameA(h, pkg_path, MAX_PATH);
  GetModuleFileNameA(core, core_path, MAX_PATH);
  char *slash = strrchr(pkg_path, '\\');
  size_t dir_len = slash ? (size_t)(slash - pkg_path) : 0;
  if (_strnicmp(pkg_path, core_path, dir_len + 1) != 0 || strchr(core_path + dir_len + 1, '\\') != NULL)
    die("libtabscreen.dll came from %s, not from beside %s", core_path, pkg_path);
  void (*init)(void *) = (void (*)(void *))(void *)GetProcAddress(h, "R_init_tabscreen");
  if (init == NULL) die("tabscreen.dll exports no R_init_tabscreen");
  init(NULL); /* the stub R_registerRoutines and friends ignore the DllInfo */
  printf("%s loaded, with %s beside it; R_init_tabscreen ran\n", pkg_path, core_path);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "package") == 0) return package_dll(argv[2], argv[3]);
  if (argc != 7 || (strcmp(argv[1], "screen") != 0 && strcmp(argv[1], "cancel") != 0))
    die("usage: driver screen|cancel DLL RECORDS OPTIONS OUTDIR STORE|K, or driver package PKGDLL RDLL");
  int cancel = strcmp(argv[1], "cancel") == 0;
  const char *outdir = argv[5];
  long long cancel_after = cancel ? atoll(argv[6]) : -1;
  load(argv[2]);

  size_t records_len, options_len;
  char *records = read_file(argv[3], &records_len);
  char *options = read_file(argv[4], &options_len);

  char *doc = NULL;
  int status = ts_run_start(records, records_len, options, "sk-fake-windows-test", &doc);
  char *started = take(status, doc, "TsRunStart");
  long long handle = json_int(started, "handle");
  if (handle < 1) die("TsRunStart: no handle in %s", started);
  free(records); /* Go copied the input before TsRunStart returned */

  /* Poll as R does, bounded: the fake answers 40 jobs in well under a minute. */
  DWORD t0 = GetTickCount();
  int cancelled = 0, polls = 0;
  for (;;) {
    status = ts_run_poll((int64_t)handle, 0.05, &doc); /* Go waits up to 50 ms, as for R */
    char *progress = take(status, doc, "TsRunPoll");
    polls++;
    long long answered = json_int(progress, "answered");
    int finished = json_has(progress, "\"state\":\"finished\"");
    free(progress);
    if (finished) break;
    if (cancel && !cancelled && answered >= cancel_after) {
      ts_run_cancel((int64_t)handle);
      cancelled = 1;
      printf("TsRunCancel after %lld answered, %.1f s\n", answered, (GetTickCount() - t0) / 1000.0);
    }
    if (GetTickCount() - t0 > 120000) {
      ts_run_cancel((int64_t)handle);
      die("the run was not finished after 120 s (%lld answered)", answered);
    }
  }

  void *answers = NULL, *reworded = NULL, *aggregated = NULL;
  size_t answers_len = 0, reworded_len = 0, aggregated_len = 0;
  status = ts_run_result((int64_t)handle, NULL, 0, &answers, &answers_len, &aggregated, &aggregated_len, &reworded,
                         &reworded_len, &doc);
  char *result = take(status, doc, "TsRunResult");
  if (answers == NULL || answers_len == 0 || reworded == NULL || reworded_len == 0)
    die("TsRunResult returned no tables: %s", result);
  write_file(outdir, "result.json", result, strlen(result));
  write_file(outdir, "answers.arrow", answers, answers_len);
  long long total = json_int(result, "total"), answered = json_int(result, "answered"), failed = json_int(result, "failed");
  printf("TsRunResult after %.1f s and %d polls: total %lld, answered %lld, failed %lld; answers %zu bytes, reworded fields %zu bytes\n",
         (GetTickCount() - t0) / 1000.0, polls, total, answered, failed, answers_len, reworded_len);
  if (total < 1 || answered + failed != total) die("not every job is accounted for: %s", result);

  if (cancel) {
    if (!cancelled) die("the run finished before it could be cancelled: %s", result);
    if (!json_has(result, "\"state\":\"cancelled\"")) die("a cancelled run ended as %s", result);
  } else {
    if (!json_has(result, "\"state\":\"done\"") || failed != 0) die("the screening did not answer every job: %s", result);

    void *agg = NULL;
    size_t agg_len = 0;
    status = ts_aggregate(answers, answers_len, "{}", &agg, &agg_len, &doc);
    free(take(status, doc, "TsAggregate"));
    if (agg == NULL) die("TsAggregate returned no table");
    write_file(outdir, "aggregated.arrow", agg, agg_len);
    ts_free(agg);

    char request[2 * MAX_PATH];
    snprintf(request, sizeof request, "{\"op\":\"runs\",\"path\":\"%s\"}", argv[6]);
    void *runs = NULL;
    size_t runs_len = 0;
    status = ts_store(request, &runs, &runs_len, &doc);
    free(take(status, doc, "TsStore"));
    if (runs == NULL) die("TsStore returned no table");
    write_file(outdir, "runs.arrow", runs, runs_len);
    ts_free(runs);
  }
  ts_free(answers);
  ts_free(reworded);
  if (aggregated) ts_free(aggregated);
  free(result);
  free(started);
  free(options);
  return 0;
}
