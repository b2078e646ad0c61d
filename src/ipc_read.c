/* Arrow IPC stream -> R columns.
 *
 * Accepts what arrow-go, the JS apache-arrow package and ipc_write.c
 * produce: a Schema message, any number of RecordBatch messages
 * (concatenated), the end-of-stream marker; with or without continuation
 * markers; metadata V4 or V5; utf8, large_utf8, int32, float64 and bool
 * columns. Every offset and length is checked before it is used, so corrupt
 * or truncated input is an error, never an out-of-bounds read. Nothing is
 * malloc'ed: batch descriptions are R_alloc'ed, results are R vectors. */
#include <limits.h>
#include <string.h>
#include "ipc.h"

typedef struct {
  const char *name;
  size_t name_len;
  int kind;
} rfield;

typedef struct rbatch {
  int64_t length;
  const uint8_t *body;
  ts_fbr meta;
  size_t nodes, bufs; /* element 0 of the FieldNode and Buffer vectors in meta */
  struct rbatch *next;
} rbatch;

enum { MSG_SCHEMA = 1, MSG_DICTIONARY = 2, MSG_RECORD_BATCH = 3 };

static const char *type_names[] = {"NONE", "Null", "Int", "FloatingPoint", "Binary", "Utf8", "Bool",
                                   "Decimal", "Date", "Time", "Timestamp", "Interval", "List", "Struct",
                                   "Union", "FixedSizeBinary", "FixedSizeList", "Map", "Duration",
                                   "LargeBinary", "LargeUtf8", "LargeList", "RunEndEncoded",
                                   "BinaryView", "Utf8View", "ListView", "LargeListView"};

#define CORRUPT(what) ts_fail(e, "invalid Arrow IPC stream: corrupt %s", what)

static int nbufs_of(int kind) { return (kind == TS_UTF8 || kind == TS_LARGE_UTF8) ? 3 : 2; }

/* Reads the framing of the next message: *meta is its flatbuffer, or *eos
 * is set at the end-of-stream marker. */
static int next_frame(const uint8_t *b, size_t len, size_t *pos, ts_fbr *meta, int *eos, ts_err *e) {
  if (len - *pos < 4) return ts_fail(e, "invalid Arrow IPC stream: truncated (no end-of-stream marker)");
  uint32_t c = ts_rd32(b + *pos);
  int64_t mlen;
  if (c == 0xFFFFFFFFu) {
    if (len - *pos < 8) return ts_fail(e, "invalid Arrow IPC stream: truncated message length");
    mlen = (int32_t)ts_rd32(b + *pos + 4);
    *pos += 8;
  } else { /* framing before Arrow 0.15: the length alone */
    mlen = (int32_t)c;
    *pos += 4;
  }
  *eos = mlen == 0;
  if (*eos) return 0;
  if (mlen < 0 || (uint64_t)mlen > len - *pos)
    return ts_fail(e, "invalid Arrow IPC stream: message metadata length %lld out of range", (long long)mlen);
  meta->buf = b + *pos;
  meta->len = (size_t)mlen;
  *pos += (size_t)mlen;
  return 0;
}

static int read_schema(const ts_fbr *m, size_t schema, rfield **fields, int *nfields, ts_err *e) {
  int16_t endian;
  if (ts_fbr_i16(m, schema, 0, 0, &endian)) return CORRUPT("schema");
  if (endian != 0) return ts_fail(e, "big-endian Arrow streams are not supported");
  size_t vec;
  uint32_t n;
  if (ts_fbr_vector(m, schema, 1, 4, &vec, &n)) return CORRUPT("schema fields");
  rfield *fs = (rfield *)R_alloc((size_t)n + 1, sizeof(rfield));
  for (uint32_t j = 0; j < n; j++) {
    size_t f, type;
    if (ts_fbr_table_at(m, vec + 4 * (size_t)j, &f) < 0) return CORRUPT("field");
    if (ts_fbr_string(m, f, 0, &fs[j].name, &fs[j].name_len)) return CORRUPT("field name");
    if (!fs[j].name) fs[j].name = "";
    if (ts_utf8_check((const uint8_t *)fs[j].name, fs[j].name_len))
      return ts_fail(e, "the name of column %u is not valid UTF-8 or holds a NUL byte", j + 1);
    int q = ts_quote_len(fs[j].name, fs[j].name_len, 100);
    size_t dict;
    int st = ts_fbr_table(m, f, 4, &dict);
    if (st < 0) return CORRUPT("field dictionary");
    if (st > 0) return ts_fail(e, "column '%.*s' is dictionary-encoded, which is not supported", q, fs[j].name);
    size_t kids;
    uint32_t nkids;
    if (ts_fbr_vector(m, f, 5, 4, &kids, &nkids)) return CORRUPT("field children");
    uint8_t tt;
    if (ts_fbr_u8(m, f, 2, 0, &tt)) return CORRUPT("field type");
    st = ts_fbr_table(m, f, 3, &type);
    if (st < 0) return CORRUPT("field type");
    if (st == 0) return ts_fail(e, "invalid Arrow IPC stream: column '%.*s' has no type", q, fs[j].name);
    char desc[64];
    snprintf(desc, sizeof desc, "%s", tt < sizeof type_names / sizeof *type_names ? type_names[tt] : "unknown");
    fs[j].kind = 0;
    if (tt == 5) {
      fs[j].kind = TS_UTF8;
    } else if (tt == 20) {
      fs[j].kind = TS_LARGE_UTF8;
    } else if (tt == 6) {
      fs[j].kind = TS_BOOL;
    } else if (tt == 2) {
      int32_t bits;
      uint8_t sign;
      if (ts_fbr_i32(m, type, 0, 0, &bits) || ts_fbr_u8(m, type, 1, 0, &sign)) return CORRUPT("Int type");
      if (bits == 32 && sign) fs[j].kind = TS_INT32;
      snprintf(desc, sizeof desc, "%s%d", sign ? "int" : "uint", (int)bits);
    } else if (tt == 3) {
      int16_t prec;
      if (ts_fbr_i16(m, type, 0, 0, &prec)) return CORRUPT("FloatingPoint type");
      if (prec == 2) fs[j].kind = TS_FLOAT64;
      snprintf(desc, sizeof desc, "float%d", prec == 0 ? 16 : prec == 1 ? 32 : 64);
    }
    if (!fs[j].kind || nkids)
      return ts_fail(e, "column '%.*s' has the Arrow type %s; supported types are utf8, int32, float64 and bool", q,
                     fs[j].name, desc);
  }
  *fields = fs;
  *nfields = (int)n;
  return 0;
}

/* Checks a RecordBatch against the schema and its body. */
static int read_batch(const ts_fbr *m, size_t rb, const uint8_t *body, int64_t body_len, const rfield *fs,
                      int nf, rbatch *out, ts_err *e) {
  int64_t length;
  if (ts_fbr_i64(m, rb, 0, 0, &length)) return CORRUPT("record batch");
  if (length < 0 || length >= INT_MAX) return ts_fail(e, "invalid Arrow IPC stream: record batch length %lld", (long long)length);
  size_t comp;
  int st = ts_fbr_table(m, rb, 3, &comp);
  if (st < 0) return CORRUPT("record batch");
  if (st > 0) return ts_fail(e, "compressed Arrow record batches are not supported");
  uint32_t nn, nb;
  if (ts_fbr_vector(m, rb, 1, 16, &out->nodes, &nn) || ts_fbr_vector(m, rb, 2, 16, &out->bufs, &nb))
    return CORRUPT("record batch");
  uint32_t want = 0;
  for (int j = 0; j < nf; j++) want += (uint32_t)nbufs_of(fs[j].kind);
  if (nn != (uint32_t)nf || nb != want)
    return ts_fail(e, "invalid Arrow IPC stream: record batch has %u field nodes and %u buffers, the schema needs %d and %u",
                   nn, nb, nf, want);
  for (uint32_t k = 0; k < nb; k++) {
    int64_t off = (int64_t)ts_rd64(m->buf + out->bufs + 16 * k);
    int64_t len = (int64_t)ts_rd64(m->buf + out->bufs + 16 * k + 8);
    if (off < 0 || len < 0 || off > body_len || len > body_len - off)
      return ts_fail(e, "invalid Arrow IPC stream: buffer %u (offset %lld, length %lld) lies outside the %lld-byte body",
                     k, (long long)off, (long long)len, (long long)body_len);
  }
  int64_t bitmap = (length + 7) / 8;
  size_t k = 0;
  for (int j = 0; j < nf; j++) {
    int q = ts_quote_len(fs[j].name, fs[j].name_len, 100);
    int64_t nlen = (int64_t)ts_rd64(m->buf + out->nodes + 16 * (size_t)j);
    int64_t nulls = (int64_t)ts_rd64(m->buf + out->nodes + 16 * (size_t)j + 8);
    if (nlen != length || nulls < 0 || nulls > length)
      return ts_fail(e, "invalid Arrow IPC stream: column '%.*s' has length %lld and %lld nulls in a batch of %lld rows",
                     q, fs[j].name, (long long)nlen, (long long)nulls, (long long)length);
    int64_t blen[3];
    for (int b = 0; b < nbufs_of(fs[j].kind); b++) blen[b] = (int64_t)ts_rd64(m->buf + out->bufs + 16 * (k + (size_t)b) + 8);
    if (nulls > 0 && blen[0] < bitmap)
      return ts_fail(e, "invalid Arrow IPC stream: column '%.*s' has a short validity bitmap", q, fs[j].name);
    int64_t need = 0;
    switch (fs[j].kind) {
      case TS_UTF8: need = length ? 4 * (length + 1) : 0; break;
      case TS_LARGE_UTF8: need = length ? 8 * (length + 1) : 0; break;
      case TS_INT32: need = 4 * length; break;
      case TS_FLOAT64: need = 8 * length; break;
      case TS_BOOL: need = bitmap; break;
    }
    if (blen[1] < need)
      return ts_fail(e, "invalid Arrow IPC stream: column '%.*s' has a %lld-byte buffer where %lld rows need %lld",
                     q, fs[j].name, (long long)blen[1], (long long)length, (long long)need);
    k += (size_t)nbufs_of(fs[j].kind);
  }
  out->length = length;
  out->body = body;
  out->meta = *m;
  return 0;
}

/* Buffer b of column j (the buffer index of its first buffer is k0). */
static const uint8_t *batch_buffer(const rbatch *bt, size_t k, int64_t *len) {
  *len = (int64_t)ts_rd64(bt->meta.buf + bt->bufs + 16 * k + 8);
  return bt->body + ts_rd64(bt->meta.buf + bt->bufs + 16 * k);
}

#define IS_VALID(bm, i) (!(bm) || ((bm)[(i) >> 3] >> ((i) & 7)) & 1)

/* Copies the column j of batch bt into x from row at; a lazy x (ipc_lazy.c) gets the batch's
 * buffers, checked as the strings of an eager one are. */
static int fill(SEXP x, int lazy, R_xlen_t at, const rbatch *bt, int j, size_t k, const rfield *f, ts_err *e) {
  int64_t n = bt->length, vlen, blen, dlen;
  int64_t nulls = (int64_t)ts_rd64(bt->meta.buf + bt->nodes + 16 * (size_t)j + 8);
  const uint8_t *vbuf = batch_buffer(bt, k, &vlen);
  const uint8_t *valid = nulls > 0 ? vbuf : NULL;
  const uint8_t *buf = batch_buffer(bt, k + 1, &blen);
  int le = ts_host_le();
  int q = ts_quote_len(f->name, f->name_len, 100);
  switch (f->kind) {
    case TS_UTF8:
    case TS_LARGE_UTF8: {
      if (n == 0) return 0;
      int wide = f->kind == TS_LARGE_UTF8;
      const uint8_t *data = batch_buffer(bt, k + 2, &dlen);
      int64_t prev = wide ? (int64_t)ts_rd64(buf) : (int32_t)ts_rd32(buf);
      if (prev < 0 || prev > dlen)
        return ts_fail(e, "invalid Arrow IPC stream: column '%.*s' has string offsets outside its data", q, f->name);
      for (int64_t i = 0; i < n; i++) {
        int64_t next = wide ? (int64_t)ts_rd64(buf + 8 * (i + 1)) : (int32_t)ts_rd32(buf + 4 * (i + 1));
        if (next < prev || next > dlen)
          return ts_fail(e, "invalid Arrow IPC stream: column '%.*s', row %lld: string offsets outside its data", q,
                         f->name, (long long)(at + i + 1));
        if (IS_VALID(valid, i)) {
          int64_t len = next - prev;
          if (len > INT_MAX)
            return ts_fail(e, "column '%.*s', row %lld: a string longer than R allows", q, f->name, (long long)(at + i + 1));
          int bad = ts_utf8_check(data + prev, (size_t)len);
          if (bad)
            return ts_fail(e, "column '%.*s', row %lld: %s", q, f->name, (long long)(at + i + 1),
                           bad == 2 ? "the text holds a NUL byte, which R strings cannot" : "the text is not valid UTF-8");
          if (!lazy) SET_STRING_ELT(x, at + i, Rf_mkCharLenCE((const char *)data + prev, (int)len, CE_UTF8));
        } else if (!lazy) {
          SET_STRING_ELT(x, at + i, NA_STRING);
        }
        prev = next;
      }
      if (lazy) ts_lazy_add(x, at, (R_xlen_t)n, buf, data, valid, wide);
      break;
    }
    case TS_INT32: {
      int *v = INTEGER(x) + at;
      if (le && n) memcpy(v, buf, (size_t)n * 4);
      for (int64_t i = 0; i < n; i++) {
        if (!le) v[i] = (int)(int32_t)ts_rd32(buf + 4 * i);
        if (!IS_VALID(valid, i)) v[i] = NA_INTEGER;
      }
      break;
    }
    case TS_FLOAT64: {
      double *v = REAL(x) + at;
      if (le && n) memcpy(v, buf, (size_t)n * 8);
      for (int64_t i = 0; i < n; i++) {
        if (!le) {
          uint64_t u = ts_rd64(buf + 8 * i);
          memcpy(v + i, &u, 8);
        }
        if (!IS_VALID(valid, i)) v[i] = NA_REAL;
      }
      break;
    }
    case TS_BOOL: {
      int *v = LOGICAL(x) + at;
      for (int64_t i = 0; i < n; i++)
        v[i] = IS_VALID(valid, i) ? (int)((buf[i >> 3] >> (i & 7)) & 1) : NA_LOGICAL;
      break;
    }
  }
  return 0;
}

/* Text of the column whose first buffer is k in all batches, from the first and last offsets of
 * each (checked later; here only an estimate), and the batches that have rows. */
static int64_t text_bytes(const rbatch *first, size_t k, const rfield *f, int *nseg) {
  int64_t bytes = 0;
  *nseg = 0;
  for (const rbatch *bt = first; bt; bt = bt->next) {
    if (bt->length == 0) continue;
    (*nseg)++;
    int64_t olen;
    const uint8_t *offs = batch_buffer(bt, k + 1, &olen);
    int64_t lo, hi;
    if (f->kind == TS_LARGE_UTF8) {
      lo = (int64_t)ts_rd64(offs);
      hi = (int64_t)ts_rd64(offs + 8 * bt->length);
    } else {
      lo = (int32_t)ts_rd32(offs);
      hi = (int32_t)ts_rd32(offs + 4 * bt->length);
    }
    if (hi > lo && hi - lo < INT64_MAX / 4 - bytes) bytes += hi - lo;
  }
  return bytes;
}

/* A text column becomes lazy (ipc_lazy.c) when its strings are long and many: making R strings of
 * short ones costs little (most are already interned: model names, dates), and a small table is
 * simpler as plain vectors. */
#define LAZY_MIN_BYTES (1 << 20)
#define LAZY_MIN_MEAN 64

SEXP ts_ipc_read(const uint8_t *b, size_t len, double *nrow, SEXP owner, int *kept, ts_err *e) {
  size_t pos = 0;
  int nf = -1, eos = 0;
  rfield *fs = NULL;
  rbatch *first = NULL, **tail = &first;
  int64_t total = 0;

  for (int index = 0;; index++) {
    ts_fbr m;
    if (next_frame(b, len, &pos, &m, &eos, e)) return NULL;
    if (eos) break;
    size_t root, hdr;
    int16_t version;
    uint8_t htype;
    int64_t body_len;
    if (ts_fbr_root(&m, &root) || ts_fbr_i16(&m, root, 0, 0, &version) || ts_fbr_u8(&m, root, 1, 0, &htype) ||
        ts_fbr_i64(&m, root, 3, 0, &body_len)) {
      CORRUPT("message");
      return NULL;
    }
    if (version < 3) { /* V4 = 3, V5 = 4 */
      ts_fail(e, "unsupported Arrow metadata version V%d (V4 or V5 needed)", version + 1);
      return NULL;
    }
    if (body_len < 0 || (uint64_t)body_len > len - pos) {
      ts_fail(e, "invalid Arrow IPC stream: message body of %lld bytes, %lld left", (long long)body_len,
              (long long)(len - pos));
      return NULL;
    }
    if (ts_fbr_table(&m, root, 2, &hdr) != 1) {
      CORRUPT("message header");
      return NULL;
    }
    const uint8_t *body = b + pos;
    pos += (size_t)body_len;
    if (index == 0) {
      if (htype != MSG_SCHEMA) {
        ts_fail(e, "invalid Arrow IPC stream: it does not start with a schema");
        return NULL;
      }
      if (read_schema(&m, hdr, &fs, &nf, e)) return NULL;
    } else if (htype == MSG_RECORD_BATCH) {
      rbatch *bt = (rbatch *)R_alloc(1, sizeof(rbatch));
      if (read_batch(&m, hdr, body, body_len, fs, nf, bt, e)) return NULL;
      bt->next = NULL;
      *tail = bt;
      tail = &bt->next;
      total += bt->length;
      if (total >= INT_MAX) {
        ts_fail(e, "the Arrow stream has more rows than an R data frame can hold");
        return NULL;
      }
    } else if (htype == MSG_DICTIONARY) {
      ts_fail(e, "dictionary-encoded Arrow streams are not supported");
      return NULL;
    } else {
      ts_fail(e, "invalid Arrow IPC stream: unexpected message type %d", (int)htype);
      return NULL;
    }
  }
  if (nf < 0) {
    ts_fail(e, "invalid Arrow IPC stream: no schema");
    return NULL;
  }

  SEXP cols = PROTECT(Rf_allocVector(VECSXP, nf));
  SEXP names = PROTECT(Rf_allocVector(STRSXP, nf));
  int *lazy = (int *)R_alloc((size_t)nf + 1, sizeof(int));
  *kept = 0;
  size_t k = 0;
  for (int j = 0; j < nf; j++) {
    SET_STRING_ELT(names, j, Rf_mkCharLenCE(fs[j].name, (int)fs[j].name_len, CE_UTF8));
    int text = fs[j].kind == TS_UTF8 || fs[j].kind == TS_LARGE_UTF8;
    SEXPTYPE t = text                         ? STRSXP
                 : fs[j].kind == TS_INT32     ? INTSXP
                 : fs[j].kind == TS_FLOAT64   ? REALSXP
                                              : LGLSXP;
    lazy[j] = 0;
    if (text && owner != R_NilValue) {
      int nseg;
      int64_t bytes = text_bytes(first, k, &fs[j], &nseg);
      lazy[j] = bytes >= LAZY_MIN_BYTES && bytes >= LAZY_MIN_MEAN * total;
      if (lazy[j]) {
        SET_VECTOR_ELT(cols, j, ts_lazy_new((R_xlen_t)total, nseg, owner));
        *kept = 1;
      }
    }
    if (!lazy[j]) SET_VECTOR_ELT(cols, j, Rf_allocVector(t, (R_xlen_t)total));
    k += (size_t)nbufs_of(fs[j].kind);
  }
  Rf_setAttrib(cols, R_NamesSymbol, names);
  R_xlen_t at = 0;
  for (rbatch *bt = first; bt; bt = bt->next) {
    k = 0;
    for (int j = 0; j < nf; j++) {
      if (fill(VECTOR_ELT(cols, j), lazy[j], at, bt, j, k, &fs[j], e)) {
        UNPROTECT(2);
        return NULL;
      }
      k += (size_t)nbufs_of(fs[j].kind);
    }
    at += (R_xlen_t)bt->length;
  }
  for (int j = 0; j < nf; j++)
    if (lazy[j]) ts_lazy_done(VECTOR_ELT(cols, j));
  UNPROTECT(2);
  *nrow = (double)total;
  return cols;
}
