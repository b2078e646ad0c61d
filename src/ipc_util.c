/* Errors, byte order and UTF-8 validation for the IPC codec. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "ipc.h"

int ts_fail(ts_err *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return -1;
}

int ts_quote_len(const char *s, size_t n, size_t max) {
  if (n <= max) return (int)n;
  size_t k = max;
  /* back up over continuation bytes so a sequence is not cut */
  while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
  return (int)k;
}

int ts_host_le(void) {
  const uint16_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* ASCII fast path: eight bytes at a time while none has its high bit set
 * and none is zero. */
#define TS_HI 0x8080808080808080ULL
#define TS_LO 0x0101010101010101ULL

/* 1 if none of the 32 bytes at s has its high bit set or is zero. Four words tested together:
 * text is mostly ASCII, and one branch per word made the check as slow as copying the text. */
static inline int ascii32(const uint8_t *s) {
  uint64_t a, b, c, d;
  memcpy(&a, s, 8);
  memcpy(&b, s + 8, 8);
  memcpy(&c, s + 16, 8);
  memcpy(&d, s + 24, 8);
  uint64_t hi = a | b | c | d;
  uint64_t zero = ((a - TS_LO) & ~a) | ((b - TS_LO) & ~b) | ((c - TS_LO) & ~c) | ((d - TS_LO) & ~d);
  return !((hi | zero) & TS_HI);
}

int ts_utf8_check(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    while (i + 32 <= n && ascii32(s + i)) i += 32;
    while (i + 8 <= n) {
      uint64_t v;
      memcpy(&v, s + i, 8);
      if ((v & TS_HI) || ((v - TS_LO) & ~v & TS_HI)) break;
      i += 8;
    }
    if (i >= n) break;
    uint8_t c = s[i];
    if (c == 0) return 2;
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t need;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      cp = c & 0x07;
    } else {
      return 1; /* continuation byte, overlong lead (C0, C1) or > F4 */
    }
    if (n - i <= need) return 1;
    for (size_t k = 1; k <= need; k++) {
      uint8_t d = s[i + k];
      if ((d & 0xC0) != 0x80) return 1;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return 1;
    i += need + 1;
  }
  return 0;
}
