/* Minimal flatbuffers: a forward writer for the few tables of Arrow's
 * Message/Schema/RecordBatch, and a reader that checks every offset.
 *
 * Wire format reminders (all little-endian):
 *   buffer start: uoffset (u32) to the root table
 *   table: soffset (i32) = table - vtable, then the inline fields
 *   vtable: u16 vtable size, u16 table size, one u16 per field id (offset of
 *           the field from the table start, 0 = absent, default value)
 *   uoffset fields point forward: target = position of the field + value
 *   vector: u32 count, elements; string: u32 length, bytes, NUL */
#include <string.h>
#include "ipc.h"

/* ---- writer -------------------------------------------------------------- */

void ts_fbw_pad(ts_fbw *w, size_t align) {
  while (w->pos % align) {
    if (w->buf) w->buf[w->pos] = 0;
    w->pos++;
  }
}

static size_t fbw_bytes(ts_fbw *w, const void *p, size_t n) {
  size_t at = w->pos;
  if (w->buf && n) memcpy(w->buf + at, p, n);
  w->pos += n;
  return at;
}

static void fbw_scalar(ts_fbw *w, uint64_t v, int size) {
  if (w->buf) {
    uint8_t *p = w->buf + w->pos;
    switch (size) {
      case 1: p[0] = (uint8_t)v; break;
      case 2: ts_wr16(p, (uint16_t)v); break;
      case 4: ts_wr32(p, (uint32_t)v); break;
      default: ts_wr64(p, v); break;
    }
  }
  w->pos += (size_t)size;
}

size_t ts_fbw_u32(ts_fbw *w, uint32_t v) {
  size_t at = w->pos;
  fbw_scalar(w, v, 4);
  return at;
}

void ts_fbw_u64(ts_fbw *w, uint64_t v) { fbw_scalar(w, v, 8); }

void ts_fbw_link(ts_fbw *w, size_t at, size_t target) {
  if (w->buf) ts_wr32(w->buf + at, (uint32_t)(target - at));
}

size_t ts_fbw_table(ts_fbw *w, ts_fbfield *f, int nf) {
  int nslots = 0;
  for (int i = 0; i < nf; i++)
    if (f[i].id + 1 > nslots) nslots = f[i].id + 1;

  /* inline layout: the soffset, then fields by decreasing size, each
   * aligned to its size (the table itself starts 8-aligned) */
  size_t off[16];
  size_t cur = 4;
  for (int size = 8; size >= 1; size /= 2)
    for (int i = 0; i < nf && i < 16; i++)
      if (f[i].size == size) {
        cur = (cur + (size_t)size - 1) / (size_t)size * (size_t)size;
        off[i] = cur;
        cur += (size_t)size;
      }
  size_t tbl_size = cur;

  ts_fbw_pad(w, 2);
  size_t vt = w->pos;
  fbw_scalar(w, 4 + 2 * (uint64_t)nslots, 2);
  fbw_scalar(w, tbl_size, 2);
  for (int id = 0; id < nslots; id++) {
    uint64_t slot = 0;
    for (int i = 0; i < nf; i++)
      if (f[i].id == id) slot = off[i];
    fbw_scalar(w, slot, 2);
  }

  ts_fbw_pad(w, 8);
  size_t tbl = w->pos;
  fbw_scalar(w, (uint32_t)(int32_t)(tbl - vt), 4);
  while (w->pos < tbl + tbl_size) { /* zero the inline area, then fill it */
    if (w->buf) w->buf[w->pos] = 0;
    w->pos++;
  }
  for (int i = 0; i < nf; i++) {
    f[i].pos = tbl + off[i];
    if (w->buf && !f[i].is_offset) {
      ts_fbw sub = {w->buf, f[i].pos};
      fbw_scalar(&sub, f[i].value, f[i].size);
    }
  }
  return tbl;
}

size_t ts_fbw_string(ts_fbw *w, const char *s, size_t n) {
  ts_fbw_pad(w, 4);
  size_t at = ts_fbw_u32(w, (uint32_t)n);
  fbw_bytes(w, s, n);
  fbw_scalar(w, 0, 1);
  return at;
}

size_t ts_fbw_vector(ts_fbw *w, uint32_t n, size_t elem_align) {
  if (elem_align < 4) elem_align = 4;
  /* the count is 4-aligned and the elements elem_align-aligned */
  ts_fbw_pad(w, 4);
  while ((w->pos + 4) % elem_align) {
    if (w->buf) w->buf[w->pos] = 0;
    w->pos++;
  }
  return ts_fbw_u32(w, n);
}

/* ---- reader -------------------------------------------------------------- */

/* Checks the table at pos and its vtable. */
static int fbr_check_table(const ts_fbr *r, uint64_t pos) {
  if (r->len < 4 || pos > r->len - 4) return -1;
  int64_t soff = (int32_t)ts_rd32(r->buf + pos);
  int64_t vt = (int64_t)pos - soff;
  if (vt < 0 || (uint64_t)vt > r->len - 4) return -1;
  uint64_t vt_size = ts_rd16(r->buf + vt), tbl_size = ts_rd16(r->buf + vt + 2);
  if (vt_size < 4 || vt_size % 2 || (uint64_t)vt + vt_size > r->len || tbl_size < 4 ||
      pos + tbl_size > r->len)
    return -1;
  return 0;
}

int ts_fbr_root(const ts_fbr *r, size_t *table) {
  if (r->len < 4) return -1;
  uint64_t pos = ts_rd32(r->buf);
  if (fbr_check_table(r, pos)) return -1;
  *table = (size_t)pos;
  return 0;
}

int ts_fbr_field(const ts_fbr *r, size_t table, int id, size_t size, size_t *pos) {
  /* table was checked by fbr_check_table */
  size_t vt = (size_t)((int64_t)table - (int32_t)ts_rd32(r->buf + table));
  size_t vt_size = ts_rd16(r->buf + vt), tbl_size = ts_rd16(r->buf + vt + 2);
  size_t slot = 4 + 2 * (size_t)id;
  if (slot + 2 > vt_size) return 0;
  size_t fo = ts_rd16(r->buf + vt + slot);
  if (fo == 0) return 0;
  if (fo < 4 || fo + size > tbl_size) return -1;
  *pos = table + fo;
  return 1;
}

#define FBR_SCALAR(name, type, size, read)                                   \
  int name(const ts_fbr *r, size_t table, int id, type def, type *out) {     \
    size_t p;                                                                \
    int st = ts_fbr_field(r, table, id, size, &p);                           \
    if (st < 0) return -1;                                                   \
    *out = st ? (type)read : def;                                            \
    return 0;                                                                \
  }
FBR_SCALAR(ts_fbr_u8, uint8_t, 1, r->buf[p])
FBR_SCALAR(ts_fbr_i16, int16_t, 2, ts_rd16(r->buf + p))
FBR_SCALAR(ts_fbr_i32, int32_t, 4, ts_rd32(r->buf + p))
FBR_SCALAR(ts_fbr_i64, int64_t, 8, ts_rd64(r->buf + p))

int ts_fbr_table_at(const ts_fbr *r, size_t pos, size_t *child) {
  if (r->len < 4 || pos > r->len - 4) return -1;
  uint64_t target = (uint64_t)pos + ts_rd32(r->buf + pos);
  if (fbr_check_table(r, target)) return -1;
  *child = (size_t)target;
  return 1;
}

int ts_fbr_table(const ts_fbr *r, size_t table, int id, size_t *child) {
  size_t p;
  int st = ts_fbr_field(r, table, id, 4, &p);
  if (st <= 0) return st;
  return ts_fbr_table_at(r, p, child);
}

/* Follows the uoffset in field id to a length-prefixed object. */
static int fbr_sized(const ts_fbr *r, size_t table, int id, size_t elem_size, size_t extra,
                     size_t *start, uint32_t *n) {
  size_t p;
  *start = 0;
  *n = 0;
  int st = ts_fbr_field(r, table, id, 4, &p);
  if (st <= 0) return st;
  uint64_t v = (uint64_t)p + ts_rd32(r->buf + p);
  if (v > r->len - 4) return -1;
  uint64_t count = ts_rd32(r->buf + v);
  if (count * elem_size + extra > r->len - (v + 4)) return -1;
  *start = (size_t)(v + 4);
  *n = (uint32_t)count;
  return 1;
}

int ts_fbr_vector(const ts_fbr *r, size_t table, int id, size_t elem_size, size_t *start,
                  uint32_t *n) {
  return fbr_sized(r, table, id, elem_size, 0, start, n) < 0 ? -1 : 0;
}

int ts_fbr_string(const ts_fbr *r, size_t table, int id, const char **s, size_t *n) {
  size_t start;
  uint32_t count;
  /* the NUL terminator is not required: some writers may omit it */
  if (fbr_sized(r, table, id, 1, 0, &start, &count) < 0) return -1;
  *s = count ? (const char *)r->buf + start : NULL;
  *n = count;
  return 0;
}
