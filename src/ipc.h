/* Arrow IPC stream codec (utf8, int32, float64, bool columns).
 *
 * Layers, bottom up:
 *   ipc_util.c   errors, little-endian access, UTF-8 validation
 *   flatbuf.c    a forward flatbuffer writer and a bounds-checked reader
 *   ipc_write.c  R columns -> record batch -> messages -> stream
 *   ipc_read.c   stream -> messages -> record batches -> R columns
 *   ipc_r.c      the .Call entry points
 *
 * No function here calls malloc: scratch memory comes from R_alloc (freed
 * when the .Call returns, also on an R error) and results are R vectors.
 * Errors are returned as messages (ts_err); R raises them. */
#ifndef TABSCREEN_IPC_H
#define TABSCREEN_IPC_H

#include <stddef.h>
#include <stdint.h>
#ifndef R_NO_REMAP
#define R_NO_REMAP
#endif
#include <Rinternals.h>

/* ---- errors -------------------------------------------------------------- */

#define TS_ERRLEN 600
typedef struct {
  char msg[TS_ERRLEN];
} ts_err;

/* Formats the message into e and returns -1. */
int ts_fail(ts_err *e, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Length of the longest prefix of s (n bytes) that is at most max bytes and
 * does not cut a UTF-8 sequence (for quoting names in messages). */
int ts_quote_len(const char *s, size_t n, size_t max);

/* ---- little-endian access ----------------------------------------------- */

static inline uint16_t ts_rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t ts_rd32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t ts_rd64(const uint8_t *p) {
  return (uint64_t)ts_rd32(p) | ((uint64_t)ts_rd32(p + 4) << 32);
}
static inline void ts_wr16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static inline void ts_wr32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}
static inline void ts_wr64(uint8_t *p, uint64_t v) {
  ts_wr32(p, (uint32_t)v);
  ts_wr32(p + 4, (uint32_t)(v >> 32));
}
/* 1 on a little-endian host (bulk copies use memcpy there). */
int ts_host_le(void);

/* ---- UTF-8 --------------------------------------------------------------- */

/* 0 if s (n bytes) is valid UTF-8 without NUL bytes, 1 if invalid UTF-8,
 * 2 if it holds a NUL byte (R strings cannot). */
int ts_utf8_check(const uint8_t *s, size_t n);

/* ---- flatbuffers --------------------------------------------------------- */

/* Forward writer: objects are appended; a parent's offset fields are patched
 * when its children are written after it, so offsets always point forward.
 * With buf == NULL nothing is stored and pos only measures the size. */
typedef struct {
  uint8_t *buf;
  size_t pos;
} ts_fbw;

/* One inline field of a table: size 1, 2, 4 or 8 bytes. An offset field
 * (is_offset) is 4 bytes, patched later with ts_fbw_link(w, f.pos, target). */
typedef struct {
  int id;
  int size;
  int is_offset;
  uint64_t value;
  size_t pos; /* out: absolute position of the field */
} ts_fbfield;

void ts_fbw_pad(ts_fbw *w, size_t align);
size_t ts_fbw_u32(ts_fbw *w, uint32_t v);
void ts_fbw_u64(ts_fbw *w, uint64_t v);
void ts_fbw_link(ts_fbw *w, size_t at, size_t target);
/* Writes a vtable and its table; returns the table's position. */
size_t ts_fbw_table(ts_fbw *w, ts_fbfield *f, int nf);
/* Writes a string (length, bytes, NUL); returns its position. */
size_t ts_fbw_string(ts_fbw *w, const char *s, size_t n);
/* Starts a vector of n elements aligned to elem_align; returns its position
 * (the caller writes the elements next). */
size_t ts_fbw_vector(ts_fbw *w, uint32_t n, size_t elem_align);

/* Bounds-checked reader. Every function returns -1 on corrupt data. */
typedef struct {
  const uint8_t *buf;
  size_t len;
} ts_fbr;

int ts_fbr_root(const ts_fbr *r, size_t *table);
/* Position of field id of size bytes: 1 present, 0 absent, -1 corrupt. */
int ts_fbr_field(const ts_fbr *r, size_t table, int id, size_t size, size_t *pos);
int ts_fbr_u8(const ts_fbr *r, size_t table, int id, uint8_t def, uint8_t *out);
int ts_fbr_i16(const ts_fbr *r, size_t table, int id, int16_t def, int16_t *out);
int ts_fbr_i32(const ts_fbr *r, size_t table, int id, int32_t def, int32_t *out);
int ts_fbr_i64(const ts_fbr *r, size_t table, int id, int64_t def, int64_t *out);
/* Sub-table in field id: 1 present, 0 absent, -1 corrupt. */
int ts_fbr_table(const ts_fbr *r, size_t table, int id, size_t *child);
/* Table whose uoffset is stored at pos (a vector element). */
int ts_fbr_table_at(const ts_fbr *r, size_t pos, size_t *child);
/* Vector in field id: *start = element 0, *n = count (0 if absent). */
int ts_fbr_vector(const ts_fbr *r, size_t table, int id, size_t elem_size, size_t *start,
                  uint32_t *n);
/* String in field id: *s, *n (NULL, 0 if absent). */
int ts_fbr_string(const ts_fbr *r, size_t table, int id, const char **s, size_t *n);

/* ---- codec --------------------------------------------------------------- */

enum { TS_UTF8 = 1, TS_INT32, TS_FLOAT64, TS_BOOL, TS_LARGE_UTF8 };

/* Encodes the vectors cols (character, integer, double, logical; each nrow
 * long) named names into an IPC stream. Returns a raw vector, or NULL with
 * e set. */
SEXP ts_ipc_write(SEXP cols, SEXP names, double nrow, ts_err *e);

/* Decodes an IPC stream into a named list of R vectors (*nrow rows).
 * Returns NULL with e set on any invalid input. owner: R_NilValue, or an
 * object that keeps buf alive and unchanged for as long as it is referenced
 * (an external pointer whose finalizer frees buf): large text columns then
 * stay in buf as lazy character vectors (ipc_lazy.c) that reference owner,
 * and *kept is 1 if any does. */
SEXP ts_ipc_read(const uint8_t *buf, size_t len, double *nrow, SEXP owner, int *kept, ts_err *e);

/* Decodes an IPC stream held anywhere (an R raw vector, a buffer from Go) into
 * list(named list of columns | NULL, nrow, error | NULL), never raising for bad
 * data. owner and *kept as for ts_ipc_read (*kept is 0 on an error). */
SEXP ts_ipc_read_list(const uint8_t *buf, size_t len, SEXP owner, int *kept);

/* ---- lazy text columns (ipc_lazy.c) --------------------------------------- */

#include <R_ext/Rdynload.h>
/* An owner for ts_ipc_read: an external pointer to buf whose release(owner)
 * frees buf and clears the pointer; it is called when the last lazy column
 * of the owner is complete (the caller also registers it as the finalizer). */
SEXP ts_owner_new(void *buf, void (*release)(SEXP owner));
/* Registers the ALTREP class (R_init_tabscreen). */
void ts_lazy_init(DllInfo *dll);
/* A lazy character vector of n rows in nseg segments, keeping owner. */
SEXP ts_lazy_new(R_xlen_t n, int nseg, SEXP owner);
/* Adds the segment of rows row .. row + n - 1: n + 1 offsets (4 bytes, or 8
 * when wide) into data, validity bitmap valid (NULL: no nulls). Every string
 * must have been checked (bounds, UTF-8, no NUL). */
void ts_lazy_add(SEXP x, R_xlen_t row, R_xlen_t n, const uint8_t *offs, const uint8_t *data,
                 const uint8_t *valid, int wide);
/* Ends the building of x. */
void ts_lazy_done(SEXP x);

/* ---- .Call entry points (ipc_r.c) ---------------------------------------- */

SEXP C_ipc_write(SEXP cols, SEXP names, SEXP nrow);
SEXP C_ipc_read(SEXP raw);

#endif
