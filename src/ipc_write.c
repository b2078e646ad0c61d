/* R columns -> Arrow IPC stream: a Schema message, one RecordBatch message
 * and the end-of-stream marker, with continuation markers, metadata version
 * V5, little-endian, every buffer 8-byte aligned and padded.
 *
 * Two passes: the first checks every column and measures (string bytes,
 * null counts, metadata sizes), the second writes straight into the raw
 * vector that is returned. Scratch memory is R_alloc'ed; no malloc. */
#include <string.h>
#include "ipc.h"

#define PAD8(n) (((n) + 7) & ~(int64_t)7)

typedef struct {
  SEXP x;
  int kind;
  const char *name;
  size_t name_len;
  R_xlen_t nulls;
  int64_t data_bytes;   /* utf8: bytes of text */
  int64_t boff[3], blen[3]; /* body buffers: validity, (offsets), data */
  int nbuf;
} wcol;

/* The UTF-8 bytes of a CHARSXP: CHAR itself when it already is UTF-8 (or
 * ASCII); otherwise a translation in R_alloc memory, which the caller
 * releases with vmaxset. */
static const char *utf8_of(SEXP s, size_t *n) {
  const char *p = Rf_translateCharUTF8(s);
  *n = (p == CHAR(s)) ? (size_t)LENGTH(s) : strlen(p);
  return p;
}

static int check_string(const wcol *c, R_xlen_t i, const char *p, size_t n, ts_err *e) {
  int st = ts_utf8_check((const uint8_t *)p, n);
  if (st)
    return ts_fail(e, "column '%.*s', row %.0f: the text is not valid UTF-8", ts_quote_len(c->name, c->name_len, 100),
                   c->name, (double)i + 1);
  return 0;
}

/* Pass 1 for one column: type, length, nulls, text size and validity. */
static int scan_column(wcol *c, R_xlen_t n, ts_err *e) {
  R_xlen_t nulls = 0;
  int q = ts_quote_len(c->name, c->name_len, 100);
  if (XLENGTH(c->x) != n)
    return ts_fail(e, "column '%.*s' has %.0f values, the table has %.0f rows", q, c->name,
                   (double)XLENGTH(c->x), (double)n);
  switch (TYPEOF(c->x)) {
    case STRSXP: {
      c->kind = TS_UTF8;
      int64_t bytes = 0;
      for (R_xlen_t i = 0; i < n; i++) {
        SEXP s = STRING_ELT(c->x, i);
        if (s == NA_STRING) {
          nulls++;
          continue;
        }
        if (Rf_getCharCE(s) == CE_BYTES)
          return ts_fail(e, "column '%.*s', row %.0f: strings in \"bytes\" encoding cannot be sent", q, c->name,
                         (double)i + 1);
        const void *vmax = vmaxget();
        size_t len;
        utf8_of(s, &len); /* no copy for UTF-8 and ASCII: only translations allocate */
        vmaxset(vmax);
        bytes += (int64_t)len;
        if (bytes > INT32_MAX)
          return ts_fail(e, "column '%.*s' holds more than 2 GB of text, the limit of an Arrow utf8 column", q,
                         c->name);
      }
      c->data_bytes = bytes;
      break;
    }
    case INTSXP: {
      c->kind = TS_INT32;
      const int *v = INTEGER(c->x);
      for (R_xlen_t i = 0; i < n; i++) nulls += v[i] == NA_INTEGER;
      break;
    }
    case REALSXP: {
      c->kind = TS_FLOAT64;
      const double *v = REAL(c->x);
      for (R_xlen_t i = 0; i < n; i++) nulls += R_IsNA(v[i]);
      break;
    }
    case LGLSXP: {
      c->kind = TS_BOOL;
      const int *v = LOGICAL(c->x);
      for (R_xlen_t i = 0; i < n; i++) nulls += v[i] == NA_LOGICAL;
      break;
    }
    default:
      return ts_fail(e, "column '%.*s' has R type %s; only character, integer, double and logical can be sent", q,
                     c->name, Rf_type2char(TYPEOF(c->x)));
  }
  c->nulls = nulls;
  return 0;
}

/* Body layout of one column, starting at *off (8-aligned). */
static void layout_column(wcol *c, int64_t n, int64_t *off) {
  int64_t bitmap = (n + 7) / 8;
  c->nbuf = 0;
  /* validity: only when the column has a null */
  c->boff[c->nbuf] = *off;
  c->blen[c->nbuf] = c->nulls ? bitmap : 0;
  *off += PAD8(c->blen[c->nbuf]);
  c->nbuf++;
  if (c->kind == TS_UTF8) {
    c->boff[c->nbuf] = *off;
    c->blen[c->nbuf] = 4 * (n + 1);
    *off += PAD8(c->blen[c->nbuf]);
    c->nbuf++;
  }
  int64_t data = 0;
  switch (c->kind) {
    case TS_UTF8: data = c->data_bytes; break;
    case TS_INT32: data = 4 * n; break;
    case TS_FLOAT64: data = 8 * n; break;
    case TS_BOOL: data = bitmap; break;
  }
  c->boff[c->nbuf] = *off;
  c->blen[c->nbuf] = data;
  *off += PAD8(data);
  c->nbuf++;
}

enum { MSG_SCHEMA = 1, MSG_RECORD_BATCH = 3 };
enum { TYPE_INT = 2, TYPE_FLOAT = 3, TYPE_UTF8 = 5, TYPE_BOOL = 6 };
#define METADATA_V5 4

/* Message table; returns the position of its header offset field. */
static size_t write_message(ts_fbw *w, int header_type, int64_t body_len) {
  size_t root = ts_fbw_u32(w, 0);
  ts_fbfield f[4] = {{0, 2, 0, METADATA_V5, 0},
                     {1, 1, 0, (uint64_t)header_type, 0},
                     {2, 4, 1, 0, 0},
                     {3, 8, 0, (uint64_t)body_len, 0}};
  size_t msg = ts_fbw_table(w, f, 4);
  ts_fbw_link(w, root, msg);
  return f[2].pos;
}

static void write_schema(ts_fbw *w, const wcol *cols, int ncol) {
  size_t hdr = write_message(w, MSG_SCHEMA, 0);
  ts_fbfield sf[2] = {{0, 2, 0, 0 /* little-endian */, 0}, {1, 4, 1, 0, 0}};
  size_t schema = ts_fbw_table(w, sf, 2);
  ts_fbw_link(w, hdr, schema);

  size_t vec = ts_fbw_vector(w, (uint32_t)ncol, 4);
  ts_fbw_link(w, sf[1].pos, vec);
  size_t slots = w->pos;
  for (int j = 0; j < ncol; j++) ts_fbw_u32(w, 0);

  for (int j = 0; j < ncol; j++) {
    int type = cols[j].kind == TS_UTF8 ? TYPE_UTF8
               : cols[j].kind == TS_INT32 ? TYPE_INT
               : cols[j].kind == TS_FLOAT64 ? TYPE_FLOAT
                                            : TYPE_BOOL;
    /* name, nullable, type_type, type, children (Arrow C++ requires it) */
    ts_fbfield ff[5] = {{0, 4, 1, 0, 0},
                        {1, 1, 0, 1, 0},
                        {2, 1, 0, (uint64_t)type, 0},
                        {3, 4, 1, 0, 0},
                        {5, 4, 1, 0, 0}};
    size_t field = ts_fbw_table(w, ff, 5);
    ts_fbw_link(w, slots + 4 * (size_t)j, field);
    ts_fbw_link(w, ff[0].pos, ts_fbw_string(w, cols[j].name, cols[j].name_len));
    size_t t;
    if (type == TYPE_INT) {
      ts_fbfield tf[2] = {{0, 4, 0, 32, 0}, {1, 1, 0, 1, 0}};
      t = ts_fbw_table(w, tf, 2);
    } else if (type == TYPE_FLOAT) {
      ts_fbfield tf[1] = {{0, 2, 0, 2 /* DOUBLE */, 0}};
      t = ts_fbw_table(w, tf, 1);
    } else {
      t = ts_fbw_table(w, NULL, 0);
    }
    ts_fbw_link(w, ff[3].pos, t);
    ts_fbw_link(w, ff[4].pos, ts_fbw_vector(w, 0, 4));
  }
}

static void write_batch(ts_fbw *w, const wcol *cols, int ncol, int64_t nrow, int64_t body_len) {
  size_t hdr = write_message(w, MSG_RECORD_BATCH, body_len);
  ts_fbfield bf[3] = {{0, 8, 0, (uint64_t)nrow, 0}, {1, 4, 1, 0, 0}, {2, 4, 1, 0, 0}};
  size_t batch = ts_fbw_table(w, bf, 3);
  ts_fbw_link(w, hdr, batch);

  ts_fbw_link(w, bf[1].pos, ts_fbw_vector(w, (uint32_t)ncol, 8));
  for (int j = 0; j < ncol; j++) { /* FieldNode {length, null_count} */
    ts_fbw_u64(w, (uint64_t)nrow);
    ts_fbw_u64(w, (uint64_t)cols[j].nulls);
  }
  uint32_t nbuf = 0;
  for (int j = 0; j < ncol; j++) nbuf += (uint32_t)cols[j].nbuf;
  ts_fbw_link(w, bf[2].pos, ts_fbw_vector(w, nbuf, 8));
  for (int j = 0; j < ncol; j++)
    for (int b = 0; b < cols[j].nbuf; b++) { /* Buffer {offset, length} */
      ts_fbw_u64(w, (uint64_t)cols[j].boff[b]);
      ts_fbw_u64(w, (uint64_t)cols[j].blen[b]);
    }
}

/* Zeroes what pass 2 does not write of column c: validity bitmaps and bool data (bits are or'ed
 * in) and the padding after each buffer. Zeroing the whole body first wrote the text twice. */
static void zero_column(const wcol *c, uint8_t *body) {
  for (int b = 0; b < c->nbuf; b++) {
    uint8_t *p = body + c->boff[b];
    int64_t len = c->blen[b];
    int bits = b == 0 || c->kind == TS_BOOL;
    if (bits) {
      memset(p, 0, (size_t)PAD8(len));
    } else {
      memset(p + len, 0, (size_t)(PAD8(len) - len));
    }
  }
}

/* Pass 2 for one column: its buffers, at body + boff (zero_column first).
 * Fails only if the text changed since pass 1 (an ALTREP vector could), so
 * the measured buffer is never overrun. */
static int fill_column(const wcol *c, uint8_t *body, R_xlen_t n, ts_err *e) {
  uint8_t *valid = c->nulls ? body + c->boff[0] : NULL;
  uint8_t *data = body + c->boff[c->nbuf - 1];
  int le = ts_host_le();
  switch (c->kind) {
    case TS_UTF8: {
      uint8_t *offs = body + c->boff[1];
      uint32_t pos = 0;
      ts_wr32(offs, 0);
      for (R_xlen_t i = 0; i < n; i++) {
        SEXP s = STRING_ELT(c->x, i);
        if (s != NA_STRING) {
          const void *vmax = vmaxget();
          size_t len;
          const char *p = utf8_of(s, &len);
          if ((int64_t)len > c->data_bytes - (int64_t)pos) {
            vmaxset(vmax);
            return ts_fail(e, "column '%.*s' changed while it was being encoded",
                           ts_quote_len(c->name, c->name_len, 100), c->name);
          }
          memcpy(data + pos, p, len);
          vmaxset(vmax);
          /* checked here rather than in pass 1, where the text would be read once more: the copy
           * is still in the cache */
          if (check_string(c, i, (const char *)data + pos, len, e)) return -1;
          pos += (uint32_t)len;
          if (valid) valid[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
        ts_wr32(offs + 4 * (i + 1), pos);
      }
      if ((int64_t)pos < c->data_bytes) memset(data + pos, 0, (size_t)(c->data_bytes - (int64_t)pos));
      break;
    }
    case TS_INT32: {
      const int *v = INTEGER(c->x);
      if (le) memcpy(data, v, (size_t)n * 4);
      for (R_xlen_t i = 0; i < n; i++) {
        if (v[i] == NA_INTEGER) {
          memset(data + 4 * i, 0, 4);
        } else {
          if (!le) ts_wr32(data + 4 * i, (uint32_t)v[i]);
          if (valid) valid[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
      }
      break;
    }
    case TS_FLOAT64: {
      const double *v = REAL(c->x);
      if (le) memcpy(data, v, (size_t)n * 8);
      for (R_xlen_t i = 0; i < n; i++) {
        if (R_IsNA(v[i])) {
          memset(data + 8 * i, 0, 8);
        } else {
          if (!le) {
            uint64_t u;
            memcpy(&u, v + i, 8);
            ts_wr64(data + 8 * i, u);
          }
          if (valid) valid[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
      }
      break;
    }
    case TS_BOOL: {
      const int *v = LOGICAL(c->x);
      for (R_xlen_t i = 0; i < n; i++) {
        if (v[i] == NA_LOGICAL) continue;
        if (v[i]) data[i >> 3] |= (uint8_t)(1u << (i & 7));
        if (valid) valid[i >> 3] |= (uint8_t)(1u << (i & 7));
      }
      break;
    }
  }
  return 0;
}

/* Continuation marker, metadata length, flatbuffer, padding to 8. */
static size_t put_message(uint8_t *out, size_t at, int64_t meta_len, void (*fn)(ts_fbw *, const void *),
                          const void *arg) {
  ts_wr32(out + at, 0xFFFFFFFFu);
  ts_wr32(out + at + 4, (uint32_t)meta_len);
  ts_fbw w = {out + at + 8, 0};
  fn(&w, arg);
  return at + 8 + (size_t)meta_len;
}

typedef struct {
  const wcol *cols;
  int ncol;
  int64_t nrow, body_len;
} msgs;

static void schema_fn(ts_fbw *w, const void *a) {
  const msgs *m = a;
  write_schema(w, m->cols, m->ncol);
}

static void batch_fn(ts_fbw *w, const void *a) {
  const msgs *m = a;
  write_batch(w, m->cols, m->ncol, m->nrow, m->body_len);
}

SEXP ts_ipc_write(SEXP cols, SEXP names, double rows, ts_err *e) {
  if (TYPEOF(cols) != VECSXP) {
    ts_fail(e, "the columns must be a list");
    return NULL;
  }
  if (TYPEOF(names) != STRSXP || XLENGTH(names) != XLENGTH(cols)) {
    ts_fail(e, "the column names must be a character vector as long as the list of columns");
    return NULL;
  }
  if (XLENGTH(cols) > 100000) {
    ts_fail(e, "too many columns (%.0f)", (double)XLENGTH(cols));
    return NULL;
  }
  int ncol = (int)XLENGTH(cols);
  if (!(rows >= 0 && rows < INT32_MAX) || rows != (double)(R_xlen_t)rows) {
    ts_fail(e, "invalid number of rows (%.0f)", rows);
    return NULL;
  }
  R_xlen_t nrow = (R_xlen_t)rows;

  wcol *cs = (wcol *)R_alloc((size_t)ncol + 1, sizeof(wcol));
  memset(cs, 0, ((size_t)ncol + 1) * sizeof(wcol));
  int64_t body_len = 0;
  for (int j = 0; j < ncol; j++) {
    wcol *c = &cs[j];
    SEXP nm = STRING_ELT(names, j);
    if (nm == NA_STRING || Rf_getCharCE(nm) == CE_BYTES) {
      ts_fail(e, "column %d has a missing or \"bytes\"-encoded name", j + 1);
      return NULL;
    }
    c->name = utf8_of(nm, &c->name_len); /* kept until the .Call returns */
    if (ts_utf8_check((const uint8_t *)c->name, c->name_len)) {
      ts_fail(e, "the name of column %d is not valid UTF-8", j + 1);
      return NULL;
    }
    c->x = VECTOR_ELT(cols, j);
    if (scan_column(c, nrow, e)) return NULL;
    layout_column(c, nrow, &body_len);
  }

  msgs m = {cs, ncol, nrow, body_len};
  ts_fbw measure = {NULL, 0};
  write_schema(&measure, cs, ncol);
  int64_t schema_len = PAD8((int64_t)measure.pos);
  measure.pos = 0;
  write_batch(&measure, cs, ncol, nrow, body_len);
  int64_t batch_len = PAD8((int64_t)measure.pos);

  int64_t total = 8 + schema_len + 8 + batch_len + body_len + 8;
  SEXP out = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t)total));
  uint8_t *o = RAW(out);
  memset(o, 0, (size_t)(8 + schema_len + 8 + batch_len));
  size_t at = put_message(o, 0, schema_len, schema_fn, &m);
  at = put_message(o, at, batch_len, batch_fn, &m);
  for (int j = 0; j < ncol; j++) {
    zero_column(&cs[j], o + at);
    if (fill_column(&cs[j], o + at, nrow, e)) {
      UNPROTECT(1);
      return NULL;
    }
  }
  at += (size_t)body_len;
  ts_wr32(o + at, 0xFFFFFFFFu); /* end of stream */
  ts_wr32(o + at + 4, 0);
  UNPROTECT(1);
  return out;
}
