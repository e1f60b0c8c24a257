#ifndef BLEDISSECT_CZLIB_SHIM_H
#define BLEDISSECT_CZLIB_SHIM_H
#include <zlib.h>

/* inflateInit2 and deflateInit2 are macros (they pass the library version and the stream size):
   Swift cannot call them, so they are wrapped here. */
static inline int bledissect_inflate_init2(z_streamp stream, int window_bits) {
  return inflateInit2(stream, window_bits);
}

static inline int bledissect_deflate_init2(z_streamp stream, int level, int window_bits) {
  return deflateInit2(stream, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
}
#endif
