/* Lazy utf8 columns: a character vector (ALTREP) whose strings stay in the Arrow buffer Go returned
 * until R asks for them.
 *
 * Making an R string hashes every byte of it to intern it, so decoding 200 MB of abstracts into R
 * strings took most of a table's trip from Go; a column whose strings R never reads (or reads a
 * few of) need not pay that. The decoder checks every offset and every string (UTF-8, no NUL) as
 * for an eager column, so the methods here cannot fail on the data.
 *
 * data1: the column's description (a raw vector: lhdr, its segments (one per record batch), and a
 *        bitmap of the rows already made);
 * data2: list(cache, owner). cache is NULL or a character vector of the column's length holding
 *        each string once made; owner keeps the Arrow buffer alive (an external pointer whose
 *        finalizer frees it), shared by the table's lazy columns.
 * Once every row is made (by Elt, or at once by Dataptr, Set_elt or Duplicate), the cache is the
 * vector and the owner is dropped, so the buffer is freed when the table's last lazy column is
 * complete or collected: the text is held twice only while R is making its strings.
 * Serialisation writes the plain character vector (no Serialized_state method), so a saved result
 * reads back without tabscreen. */
#include <string.h>
#include "ipc.h"
#include <R_ext/Altrep.h>

static R_altrep_class_t lazy_class;

typedef struct {
  R_xlen_t row; /* first row of the segment in the column */
  R_xlen_t n;
  const uint8_t *offs; /* n + 1 offsets of 4 (utf8) or 8 (large_utf8) bytes */
  const uint8_t *data;
  const uint8_t *valid; /* NULL when the segment has no null */
  int wide;
} lseg;

typedef struct {
  R_xlen_t n, made;
  int cap, nseg, last, complete, no_na; /* cap: segments room was made for */
} lhdr;

#define HDR_BYTES ((sizeof(lhdr) + 7) & ~(size_t)7)

static lhdr *hdr_of(SEXP x) { return (lhdr *)RAW(R_altrep_data1(x)); }
static lseg *segs_of(lhdr *h) { return (lseg *)((uint8_t *)h + HDR_BYTES); }
static uint8_t *bits_of(lhdr *h) { return (uint8_t *)(segs_of(h) + h->cap); }

/* The segment holding row i (rows of consecutive calls are usually in the same one). */
static const lseg *seg_of(lhdr *h, R_xlen_t i) {
  lseg *s = segs_of(h);
  int k = h->last;
  if (!(k < h->nseg && s[k].row <= i && i < s[k].row + s[k].n)) {
    int lo = 0, hi = h->nseg - 1;
    while (lo < hi) {
      int mid = lo + (hi - lo + 1) / 2;
      if (s[mid].row <= i)
        lo = mid;
      else
        hi = mid - 1;
    }
    k = lo;
    h->last = k;
  }
  return &s[k];
}

/* The R string of row i, from the buffer (the owner must still be held). */
static SEXP make_elt(lhdr *h, R_xlen_t i) {
  const lseg *s = seg_of(h, i);
  R_xlen_t r = i - s->row;
  if (s->valid && !((s->valid[r >> 3] >> (r & 7)) & 1)) return NA_STRING;
  int64_t lo, hi;
  if (s->wide) {
    lo = (int64_t)ts_rd64(s->offs + 8 * r);
    hi = (int64_t)ts_rd64(s->offs + 8 * (r + 1));
  } else {
    lo = (int32_t)ts_rd32(s->offs + 4 * r);
    hi = (int32_t)ts_rd32(s->offs + 4 * (r + 1));
  }
  return Rf_mkCharLenCE((const char *)s->data + lo, (int)(hi - lo), CE_UTF8);
}

/* ---- owners ---------------------------------------------------------------- */

/* An owner's tag counts its incomplete lazy columns, so that the buffer goes as soon as the last
 * one is complete rather than at whatever collection finds the owner unreferenced (R does not
 * know how large the buffer is). */
typedef struct {
  R_xlen_t live;
  void (*release)(SEXP owner);
} ownstate;

SEXP ts_owner_new(void *buf, void (*release)(SEXP owner)) {
  SEXP tag = PROTECT(Rf_allocVector(RAWSXP, sizeof(ownstate)));
  ownstate *st = (ownstate *)RAW(tag);
  st->live = 0;
  st->release = release;
  SEXP p = R_MakeExternalPtr(buf, tag, R_NilValue);
  UNPROTECT(1);
  return p;
}

static ownstate *own_of(SEXP owner) {
  if (TYPEOF(owner) != EXTPTRSXP) return NULL;
  SEXP tag = R_ExternalPtrTag(owner);
  if (TYPEOF(tag) != RAWSXP || XLENGTH(tag) != (R_xlen_t)sizeof(ownstate)) return NULL;
  return (ownstate *)RAW(tag);
}

/* Every row made: the buffer is no longer read. */
static void set_complete(lhdr *h, SEXP d2) {
  h->complete = 1;
  SEXP owner = VECTOR_ELT(d2, 1);
  ownstate *st = own_of(owner);
  SET_VECTOR_ELT(d2, 1, R_NilValue);
  if (st && --st->live == 0 && st->release) st->release(owner);
}

static SEXP cache_of(SEXP x, lhdr *h) {
  SEXP d2 = R_altrep_data2(x);
  SEXP cache = VECTOR_ELT(d2, 0);
  if (cache == R_NilValue) {
    cache = Rf_allocVector(STRSXP, h->n);
    SET_VECTOR_ELT(d2, 0, cache);
  }
  return cache;
}

/* Makes every row not made yet; returns the cache, now the whole vector. */
static SEXP materialise(SEXP x) {
  lhdr *h = hdr_of(x);
  SEXP cache = cache_of(x, h);
  if (h->complete) return cache;
  uint8_t *bits = bits_of(h);
  for (R_xlen_t i = 0; i < h->n; i++) {
    if ((bits[i >> 3] >> (i & 7)) & 1) continue;
    SET_STRING_ELT(cache, i, make_elt(h, i));
    bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  }
  h->made = h->n;
  set_complete(h, R_altrep_data2(x));
  return cache;
}

static R_xlen_t lazy_length(SEXP x) { return hdr_of(x)->n; }

static SEXP lazy_elt(SEXP x, R_xlen_t i) {
  lhdr *h = hdr_of(x);
  if (i < 0 || i >= h->n) Rf_error("subscript out of bounds");
  SEXP cache = cache_of(x, h);
  uint8_t *bits = bits_of(h);
  if (h->complete || ((bits[i >> 3] >> (i & 7)) & 1)) return STRING_ELT(cache, i);
  SEXP s = make_elt(h, i);
  SET_STRING_ELT(cache, i, s);
  bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  if (++h->made == h->n) set_complete(h, R_altrep_data2(x));
  return s;
}

static void lazy_set_elt(SEXP x, R_xlen_t i, SEXP v) {
  lhdr *h = hdr_of(x);
  if (i < 0 || i >= h->n) Rf_error("subscript out of bounds");
  PROTECT(v);
  SET_STRING_ELT(materialise(x), i, v);
  UNPROTECT(1);
  h->no_na = 0;
}

static void *lazy_dataptr(SEXP x, Rboolean writeable) {
  (void)writeable;
  return (void *)STRING_PTR_RO(materialise(x));
}

static const void *lazy_dataptr_or_null(SEXP x) {
  lhdr *h = hdr_of(x);
  if (!h->complete) return NULL;
  return (const void *)STRING_PTR_RO(VECTOR_ELT(R_altrep_data2(x), 0));
}

/* A copy is a plain character vector (R modifies copies, never this vector's rows in place). */
static SEXP lazy_duplicate(SEXP x, Rboolean deep) {
  (void)deep;
  SEXP cache = materialise(x);
  R_xlen_t n = XLENGTH(cache);
  SEXP out = PROTECT(Rf_allocVector(STRSXP, n));
  for (R_xlen_t i = 0; i < n; i++) SET_STRING_ELT(out, i, STRING_ELT(cache, i));
  UNPROTECT(1);
  return out;
}

static int lazy_no_na(SEXP x) { return hdr_of(x)->no_na; }

static Rboolean lazy_inspect(SEXP x, int pre, int deep, int pvec, void (*inspect_subtree)(SEXP, int, int, int)) {
  (void)pre;
  (void)deep;
  (void)pvec;
  (void)inspect_subtree;
  lhdr *h = hdr_of(x);
  Rprintf(" tabscreen lazy utf8 (length %.0f, %.0f made, %d segments%s)\n", (double)h->n, (double)h->made,
          h->nseg, h->complete ? ", complete" : "");
  return TRUE;
}

void ts_lazy_init(DllInfo *dll) {
  lazy_class = R_make_altstring_class("lazy_utf8", "tabscreen", dll);
  R_set_altrep_Length_method(lazy_class, lazy_length);
  R_set_altrep_Duplicate_method(lazy_class, lazy_duplicate);
  R_set_altrep_Inspect_method(lazy_class, lazy_inspect);
  R_set_altvec_Dataptr_method(lazy_class, lazy_dataptr);
  R_set_altvec_Dataptr_or_null_method(lazy_class, lazy_dataptr_or_null);
  R_set_altstring_Elt_method(lazy_class, lazy_elt);
  R_set_altstring_Set_elt_method(lazy_class, lazy_set_elt);
  R_set_altstring_No_NA_method(lazy_class, lazy_no_na);
}

/* ---- building (ipc_read.c) ------------------------------------------------ */

SEXP ts_lazy_new(R_xlen_t n, int nseg, SEXP owner) {
  size_t bytes = HDR_BYTES + (size_t)nseg * sizeof(lseg) + ((size_t)n + 7) / 8;
  SEXP d1 = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t)bytes));
  memset(RAW(d1), 0, bytes);
  lhdr *h = (lhdr *)RAW(d1);
  h->n = n;
  h->cap = nseg;
  h->no_na = 1;
  SEXP d2 = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(d2, 1, owner);
  SEXP x = R_new_altrep(lazy_class, d1, d2);
  ownstate *st = own_of(owner);
  if (st) st->live++;
  UNPROTECT(2);
  return x;
}

void ts_lazy_add(SEXP x, R_xlen_t row, R_xlen_t n, const uint8_t *offs, const uint8_t *data, const uint8_t *valid,
                 int wide) {
  lhdr *h = hdr_of(x);
  if (h->nseg >= h->cap) Rf_error("tabscreen: internal error: more segments than counted");
  lseg *s = &segs_of(h)[h->nseg++];
  s->row = row;
  s->n = n;
  s->offs = offs;
  s->data = data;
  s->valid = valid;
  s->wide = wide;
  if (valid) h->no_na = 0;
}

void ts_lazy_done(SEXP x) {
  lhdr *h = hdr_of(x);
  if (h->n == 0) {
    SEXP d2 = R_altrep_data2(x);
    SET_VECTOR_ELT(d2, 0, Rf_allocVector(STRSXP, 0));
    set_complete(h, d2);
  }
}
