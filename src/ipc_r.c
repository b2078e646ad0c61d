/* .Call entry points of the Arrow IPC codec. They never raise for bad
 * data: each returns a list whose last element is NULL or an error message
 * (UTF-8), and R raises the classed error. The round trip through Go
 * (C_ipc_roundtrip_go) is in bridge.c with the other calls into Go. */
#include <string.h>
#include "ipc.h"

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

SEXP ts_ipc_read_list(const uint8_t *buf, size_t len, SEXP owner, int *kept) {
  ts_err e = {{0}};
  double nrow = 0;
  *kept = 0;
  SEXP cols = ts_ipc_read(buf, len, &nrow, owner, kept, &e);
  if (!cols) *kept = 0;
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
  /* Eager: the raw vector is the caller's, who may reuse or change it (C code can in place). */
  int kept;
  return ts_ipc_read_list(RAW(raw), (size_t)XLENGTH(raw), R_NilValue, &kept);
}
