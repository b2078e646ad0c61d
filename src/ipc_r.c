/* .Call entry points of the Arrow IPC codec. They never raise for bad
 * data: each returns a list whose last element is NULL or an error message
 * (UTF-8), and R raises the classed error. Go memory returned by
 * TsRoundTrip is freed by a cleanup that also runs if an R allocation
 * fails (R_ExecWithCleanup). */
#include <string.h>
#include "signals.h"
#include "ipc.h"
#include "libtabscreen.h"

static SEXP utf8_string(const char *s) { return Rf_ScalarString(Rf_mkCharCE(s, CE_UTF8)); }

/* list(value, error) */
static SEXP result2(SEXP value, const ts_err *e) {
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  if (value) {
    SET_VECTOR_ELT(out, 0, value);
  } else {
    SET_VECTOR_ELT(out, 1, utf8_string(e->msg[0] ? e->msg : "unknown error"));
  }
  UNPROTECT(1);
  return out;
}

/* cols: list of character/integer/double/logical vectors; names: character;
 * nrow: number. Returns list(raw | NULL, error | NULL). */
SEXP C_ipc_write(SEXP cols, SEXP names, SEXP nrow) {
  ts_err e = {{0}};
  SEXP raw = NULL;
  if ((TYPEOF(nrow) != REALSXP && TYPEOF(nrow) != INTSXP) || XLENGTH(nrow) != 1)
    ts_fail(&e, "the row count must be a single number");
  else
    raw = ts_ipc_write(cols, names, Rf_asReal(nrow), &e);
  if (raw) PROTECT(raw);
  SEXP out = result2(raw, &e);
  if (raw) UNPROTECT(1);
  return out;
}

SEXP ts_ipc_read_list(const uint8_t *buf, size_t len) {
  ts_err e = {{0}};
  double nrow = 0;
  SEXP cols = ts_ipc_read(buf, len, &nrow, &e);
  if (cols) PROTECT(cols);
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 3));
  if (cols) {
    SET_VECTOR_ELT(out, 0, cols);
    SET_VECTOR_ELT(out, 1, Rf_ScalarReal(nrow));
  } else {
    SET_VECTOR_ELT(out, 2, utf8_string(e.msg[0] ? e.msg : "unknown error"));
  }
  UNPROTECT(cols ? 2 : 1);
  return out;
}

/* raw: an IPC stream. Returns list(named list of columns | NULL, nrow,
 * error | NULL). */
SEXP C_ipc_read(SEXP raw) {
  if (TYPEOF(raw) != RAWSXP) {
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 3));
    SET_VECTOR_ELT(out, 2, utf8_string("an Arrow IPC stream must be a raw vector"));
    UNPROTECT(1);
    return out;
  }
  return ts_ipc_read_list(RAW(raw), (size_t)XLENGTH(raw));
}

typedef struct {
  char *json;
  void *buf;
  size_t len;
} go_reply;

static void go_reply_free(void *data) {
  go_reply *g = data;
  if (g->json) TsFree(g->json);
  if (g->buf) TsFree(g->buf);
  g->json = NULL;
  g->buf = NULL;
}

static SEXP go_reply_wrap(void *data) {
  go_reply *g = data;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  /* Decoded straight from Go's buffer: no intermediate raw vector. */
  if (g->buf) SET_VECTOR_ELT(out, 0, ts_ipc_read_list(g->buf, g->len));
  SET_VECTOR_ELT(out, 1, utf8_string(g->json ? g->json
                                             : "{\"error\":{\"class\":\"tabscreen_error_internal\","
                                               "\"message\":\"TsRoundTrip returned nothing\"}}"));
  UNPROTECT(1);
  return out;
}

/* raw: an IPC stream. Go decodes it with arrowio and encodes it again.
 * Returns list(decoded | NULL, json): decoded as C_ipc_read returns it, json "{}" or an error
 * document. */
SEXP C_ipc_roundtrip_go(SEXP raw) {
  go_reply g = {NULL, NULL, 0};
  if (TYPEOF(raw) != RAWSXP) {
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
    SET_VECTOR_ELT(out, 1, utf8_string("{\"error\":{\"class\":\"tabscreen_error_ipc\","
                                       "\"message\":\"an Arrow IPC stream must be a raw vector\"}}"));
    UNPROTECT(1);
    return out;
  }
  ts_enter_go();
  g.json = TsRoundTrip(RAW(raw), (size_t)XLENGTH(raw), &g.buf, &g.len);
  ts_leave_go();
  return R_ExecWithCleanup(go_reply_wrap, &g, go_reply_free, &g);
}
