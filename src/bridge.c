/* .Call entry points into the Go core. Each checks the type and length of every argument before
 * Go is called. Every export returns a status code and a JSON document: C decides by the code
 * (0 ok, else an error whose class and message the document holds), never by reading the
 * document. Every buffer Go returns is freed with TsFree, also when an R allocation fails
 * (R_ExecWithCleanup), so no Go memory leaks across an R error. Each entry returns
 * list(table, json, table2, status, table3) (tables decoded, or NULL) and R (go_call()) raises
 * the classed error after this code has returned. */
#include <R.h>
#include <Rinternals.h>
#include <string.h>
#include "libtabscreen.h"
#include "bridge.h"
#include "signals.h"
#include "ipc.h"

#define TS_OK 0

typedef struct {
  int status;
  char *json;
  void *buf[3];
  size_t len[3];
} go_out;

static void go_out_free(void *data) {
  go_out *o = data;
  if (o->json) TsFree(o->json);
  o->json = NULL;
  for (int i = 0; i < 3; i++) {
    if (o->buf[i]) TsFree(o->buf[i]);
    o->buf[i] = NULL;
  }
}

/* Finalizer of a table's buffer that lazy text columns still read (ipc_lazy.c). */
static void owner_free(SEXP p) {
  void *a = R_ExternalPtrAddr(p);
  if (!a) return;
  R_ClearExternalPtr(p);
  TsFree(a);
}

/* options(tabscreen.lazy_text = FALSE) makes every text column an ordinary character vector. */
static int lazy_text(void) {
  SEXP v = Rf_GetOption1(Rf_install("tabscreen.lazy_text"));
  return v == R_NilValue || Rf_asLogical(v) != FALSE;
}

/* Builds list(table, json, table2, status, table3) from what Go returned, each table decoded
 * straight from Go's buffer as C_ipc_read returns it, and freed as soon as it is decoded unless a
 * lazy text column still reads it: then an external pointer owns the buffer (its finalizer frees
 * it, also after an R error here) and the columns keep that pointer; runs under
 * R_ExecWithCleanup. */
static SEXP wrap_out(void *data) {
  go_out *o = data;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 5));
  SEXP names = PROTECT(Rf_allocVector(STRSXP, 5));
  const char *nm[5] = {"table", "json", "table2", "status", "table3"};
  const int slot[3] = {0, 2, 4};
  for (int i = 0; i < 5; i++) SET_STRING_ELT(names, i, Rf_mkChar(nm[i]));
  Rf_setAttrib(out, R_NamesSymbol, names);
  SET_VECTOR_ELT(out, 1, Rf_ScalarString(Rf_mkCharCE(o->json ? o->json : "{}", CE_UTF8)));
  SET_VECTOR_ELT(out, 3, Rf_ScalarInteger(o->status));
  /* The last table first: each buffer is freed (unless a lazy column keeps it) before the next
   * table becomes R vectors. */
  int lazy = lazy_text();
  for (int i = 2; i >= 0; i--) {
    if (!o->buf[i]) continue;
    void *buf = o->buf[i];
    SEXP owner = R_NilValue;
    if (lazy) {
      owner = ts_owner_new(buf, owner_free);
      PROTECT(owner);
      R_RegisterCFinalizerEx(owner, owner_free, FALSE);
      o->buf[i] = NULL; /* the owner's now: nothing allocates between the two */
    } else {
      PROTECT(owner);
    }
    int kept = 0;
    SET_VECTOR_ELT(out, slot[i], ts_ipc_read_list(buf, o->len[i], owner, &kept));
    if (!kept) { /* no lazy column: the buffer goes at once, not at some later collection */
      if (owner != R_NilValue) {
        owner_free(owner);
      } else {
        TsFree(o->buf[i]);
        o->buf[i] = NULL;
      }
    }
    UNPROTECT(1);
  }
  UNPROTECT(2);
  return out;
}

static SEXP finish(go_out *o) {
  return R_ExecWithCleanup(wrap_out, o, go_out_free, o);
}

static const char *string_arg(SEXP x, const char *what) {
  if (TYPEOF(x) != STRSXP || XLENGTH(x) != 1 || STRING_ELT(x, 0) == NA_STRING)
    Rf_error("%s must be a single non-missing string", what);
  return Rf_translateCharUTF8(STRING_ELT(x, 0));
}

static int64_t handle_arg(SEXP x) {
  if (TYPEOF(x) != REALSXP || XLENGTH(x) != 1 || ISNAN(REAL(x)[0]) || REAL(x)[0] < 1)
    Rf_error("the run handle must be a single positive number");
  return (int64_t)REAL(x)[0];
}

static void raw_arg(SEXP x, const char *what) {
  if (TYPEOF(x) != RAWSXP) Rf_error("%s must be a raw vector", what);
}

SEXP C_run_start(SEXP records, SEXP options, SEXP api_key) {
  raw_arg(records, "records");
  const char *opts = string_arg(options, "options");
  const char *key = string_arg(api_key, "api_key");
  go_out o = {0};
  ts_enter_go(); /* held while the run lives; released by C_run_result */
  o.status = TsRunStart(RAW(records), (size_t)XLENGTH(records), (char *)opts, (char *)key, &o.json);
  if (o.status != TS_OK) ts_leave_go();
  return finish(&o);
}

SEXP C_run_poll(SEXP handle, SEXP wait) {
  int64_t h = handle_arg(handle);
  if (TYPEOF(wait) != REALSXP || XLENGTH(wait) != 1 || !R_FINITE(REAL(wait)[0]) || REAL(wait)[0] < 0 || REAL(wait)[0] > 1)
    Rf_error("the poll's wait must be a number of seconds between 0 and 1");
  go_out o = {0};
  ts_protect_signal_handlers();
  o.status = TsRunPoll(h, REAL(wait)[0], &o.json);
  return finish(&o);
}

SEXP C_run_reply(SEXP handle, SEXP replies) {
  int64_t h = handle_arg(handle);
  const char *r = string_arg(replies, "replies");
  go_out o = {0};
  o.status = TsRunReply(h, (char *)r, &o.json);
  return finish(&o);
}

SEXP C_run_cancel(SEXP handle) {
  go_out o = {0};
  TsRunCancel(handle_arg(handle));
  return finish(&o);
}

/* merge: NULL, or an IPC stream of the rows of an earlier result to merge (screen_errors()). */
SEXP C_run_result(SEXP handle, SEXP merge) {
  int64_t h = handle_arg(handle);
  if (merge != R_NilValue) raw_arg(merge, "merge");
  go_out o = {0};
  o.status = TsRunResult(h, merge == R_NilValue ? NULL : RAW(merge), merge == R_NilValue ? 0 : (size_t)XLENGTH(merge),
                         &o.buf[0], &o.len[0], &o.buf[1], &o.len[1], &o.buf[2], &o.len[2], &o.json);
  if (o.status == TS_OK) ts_leave_go();
  return finish(&o);
}

/* Test-only in the core (TABSCREEN_TESTING, golib/cabi/testonly.go): the aggregation tests. */
SEXP C_aggregate(SEXP answers, SEXP options) {
  raw_arg(answers, "answers");
  const char *opts = string_arg(options, "options");
  go_out o = {0};
  ts_enter_go();
  o.status = TsAggregate(RAW(answers), (size_t)XLENGTH(answers), (char *)opts, &o.buf[0], &o.len[0], &o.json);
  ts_leave_go();
  return finish(&o);
}

SEXP C_is_transient(SEXP status, SEXP headers, SEXP body) {
  if (TYPEOF(status) != INTSXP || XLENGTH(status) != 1 || INTEGER(status)[0] == NA_INTEGER)
    Rf_error("status must be a single integer");
  const char *h = string_arg(headers, "headers");
  raw_arg(body, "body");
  go_out o = {0};
  ts_enter_go();
  o.status = TsIsTransient(INTEGER(status)[0], (char *)h, RAW(body), (size_t)XLENGTH(body), &o.json);
  ts_leave_go();
  return finish(&o);
}

/* Serves the fake provider until this process's stdin closes: only ever called in a child R
 * process started by fake_provider_start(), never in a user's session. */
SEXP C_fake_serve(SEXP options) {
  const char *opts = string_arg(options, "options");
  go_out o = {0};
  ts_enter_go();
  o.status = TsFakeServe((char *)opts, &o.json);
  ts_leave_go();
  return finish(&o);
}

SEXP C_store(SEXP request) {
  const char *r = string_arg(request, "request");
  go_out o = {0};
  ts_enter_go();
  o.status = TsStore((char *)r, &o.buf[0], &o.len[0], &o.json);
  ts_leave_go();
  return finish(&o);
}

/* raw: an IPC stream, which Go decodes with arrowio and encodes again (codec tests, bench); test-only
 * in the core (TABSCREEN_TESTING, golib/cabi/testonly.go). */
SEXP C_ipc_roundtrip_go(SEXP raw) {
  raw_arg(raw, "an Arrow IPC stream");
  go_out o = {0};
  ts_enter_go();
  o.status = TsRoundTrip(RAW(raw), (size_t)XLENGTH(raw), &o.buf[0], &o.len[0], &o.json);
  ts_leave_go();
  return finish(&o);
}

SEXP C_providers(void) {
  go_out o = {0};
  ts_enter_go();
  o.status = TsProviders(&o.json);
  ts_leave_go();
  return finish(&o);
}

/* What R needs before a run, in one call: request is JSON; records an IPC stream (raw) or NULL. */
SEXP C_plan(SEXP request, SEXP records) {
  const char *r = string_arg(request, "request");
  if (records != R_NilValue) raw_arg(records, "records");
  go_out o = {0};
  ts_enter_go();
  o.status = TsPlan((char *)r, records == R_NilValue ? NULL : RAW(records),
                    records == R_NilValue ? 0 : (size_t)XLENGTH(records), &o.json);
  ts_leave_go();
  return finish(&o);
}

/* A call that sends requests to the provider: a JSON request and the key, apart from it. */
static SEXP keyed_call(int (*fn)(char *, char *, char **), SEXP request, SEXP api_key) {
  const char *r = string_arg(request, "request");
  const char *key = string_arg(api_key, "api_key");
  go_out o = {0};
  ts_enter_go();
  o.status = fn((char *)r, (char *)key, &o.json);
  ts_leave_go();
  return finish(&o);
}

SEXP C_probe(SEXP request, SEXP api_key) { return keyed_call(TsProbe, request, api_key); }

SEXP C_batch(SEXP request, SEXP api_key) { return keyed_call(TsBatch, request, api_key); }

/* The review app of screen_review(): like C_fake_serve, called only in a child R process. */
SEXP C_review_serve(SEXP options) {
  const char *opts = string_arg(options, "options");
  go_out o = {0};
  ts_enter_go();
  o.status = TsReviewServe((char *)opts, &o.json);
  ts_leave_go();
  return finish(&o);
}

SEXP C_review(SEXP request) {
  const char *r = string_arg(request, "request");
  go_out o = {0};
  ts_enter_go();
  o.status = TsReview((char *)r, &o.buf[0], &o.len[0], &o.json);
  ts_leave_go();
  return finish(&o);
}

/* read_refs(), dedup_refs() and write_refs()'s column names: request is JSON, table an IPC stream
 * (empty but for dedup). */
SEXP C_refs(SEXP request, SEXP table) {
  const char *r = string_arg(request, "request");
  raw_arg(table, "table");
  go_out o = {0};
  ts_enter_go();
  o.status = TsRefs((char *)r, RAW(table), (size_t)XLENGTH(table), &o.buf[0], &o.len[0], &o.json);
  ts_leave_go();
  return finish(&o);
}
