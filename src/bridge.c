/* .Call entry points of the run API. Each checks the type and length of every argument before
 * Go is called; every buffer Go returns is freed with TsFree, also when an R allocation fails
 * (R_ExecWithCleanup), so no Go memory leaks across an R error. Errors travel as JSON values and
 * are raised by R after this code has returned. */
#include <R.h>
#include <Rinternals.h>
#include <string.h>
#include "libtabscreen.h"
#include "bridge.h"
#include "signals.h"
#include "ipc.h"

typedef struct {
  char *json;
  void *buf[2];
  size_t len[2];
} go_out;

static void go_out_free(void *data) {
  go_out *o = data;
  if (o->json) TsFree(o->json);
  for (int i = 0; i < 2; i++)
    if (o->buf[i]) TsFree(o->buf[i]);
  memset(o, 0, sizeof *o);
}

static SEXP json_string(const char *s) {
  return Rf_ScalarString(Rf_mkCharCE(s, CE_UTF8));
}

/* Builds list(json, table, table) from what Go returned, each table decoded straight from Go's
 * buffer as C_ipc_read returns it; runs under R_ExecWithCleanup. */
static SEXP wrap_out(void *data) {
  go_out *o = data;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 3));
  SET_VECTOR_ELT(out, 0, json_string(o->json ? o->json : "{}"));
  for (int i = 0; i < 2; i++)
    if (o->buf[i]) SET_VECTOR_ELT(out, i + 1, ts_ipc_read_list(o->buf[i], o->len[i]));
  UNPROTECT(1);
  return out;
}

static SEXP finish(go_out *o) {
  return R_ExecWithCleanup(wrap_out, o, go_out_free, o);
}

static SEXP wrap_json(void *data) {
  return json_string(((go_out *)data)->json ? ((go_out *)data)->json : "{}");
}

static SEXP finish_json(go_out *o) {
  return R_ExecWithCleanup(wrap_json, o, go_out_free, o);
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
  o.json = TsRunStart(RAW(records), (size_t)XLENGTH(records), (char *)opts, (char *)key);
  if (o.json == NULL || strncmp(o.json, "{\"handle\"", 9) != 0) ts_leave_go();
  return finish_json(&o);
}

SEXP C_run_poll(SEXP handle) {
  int64_t h = handle_arg(handle);
  go_out o = {0};
  ts_protect_signal_handlers();
  o.json = TsRunPoll(h);
  return finish_json(&o);
}

SEXP C_run_reply(SEXP handle, SEXP replies) {
  int64_t h = handle_arg(handle);
  const char *r = string_arg(replies, "replies");
  go_out o = {0};
  o.json = TsRunReply(h, (char *)r);
  return finish_json(&o);
}

SEXP C_run_cancel(SEXP handle) {
  TsRunCancel(handle_arg(handle));
  return R_NilValue;
}

SEXP C_run_result(SEXP handle) {
  int64_t h = handle_arg(handle);
  go_out o = {0};
  o.json = TsRunResult(h, &o.buf[0], &o.len[0], &o.buf[1], &o.len[1]);
  if (o.json != NULL && strncmp(o.json, "{\"error\"", 8) != 0) ts_leave_go();
  return finish(&o);
}

SEXP C_aggregate(SEXP answers, SEXP options) {
  raw_arg(answers, "answers");
  const char *opts = string_arg(options, "options");
  go_out o = {0};
  ts_enter_go();
  o.json = TsAggregate(RAW(answers), (size_t)XLENGTH(answers), (char *)opts, &o.buf[0], &o.len[0]);
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
  o.json = TsIsTransient(INTEGER(status)[0], (char *)h, RAW(body), (size_t)XLENGTH(body));
  ts_leave_go();
  return finish_json(&o);
}

/* Serves the fake provider until this process's stdin closes: only ever called in a child R
 * process started by fake_provider_start(), never in a user's session. */
SEXP C_fake_serve(SEXP options) {
  const char *opts = string_arg(options, "options");
  go_out o = {0};
  ts_enter_go();
  o.json = TsFakeServe((char *)opts);
  ts_leave_go();
  return finish_json(&o);
}

SEXP C_store(SEXP request) {
  const char *r = string_arg(request, "request");
  go_out o = {0};
  ts_enter_go();
  o.json = TsStore((char *)r, &o.buf[0], &o.len[0]);
  ts_leave_go();
  return finish(&o);
}

/* The review app of screen_review(): like C_fake_serve, called only in a child R process. */
SEXP C_review_serve(SEXP options) {
  const char *opts = string_arg(options, "options");
  go_out o = {0};
  ts_enter_go();
  o.json = TsReviewServe((char *)opts);
  ts_leave_go();
  return finish_json(&o);
}

SEXP C_review(SEXP request) {
  const char *r = string_arg(request, "request");
  go_out o = {0};
  ts_enter_go();
  o.json = TsReview((char *)r, &o.buf[0], &o.len[0]);
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
  o.json = TsRefs((char *)r, RAW(table), (size_t)XLENGTH(table), &o.buf[0], &o.len[0]);
  ts_leave_go();
  return finish(&o);
}
