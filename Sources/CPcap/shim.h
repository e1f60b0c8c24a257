#ifndef BLEDISSECT_CPCAP_SHIM_H
#define BLEDISSECT_CPCAP_SHIM_H
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#if defined(__linux__)
/* glibc's fopencookie is only declared with _GNU_SOURCE, which the Glibc module is not built
   with; declare the same function under our own names (same layout as cookie_io_functions_t). */
typedef ssize_t (*bledissect_cookie_read)(void *cookie, char *buffer, size_t size);
typedef ssize_t (*bledissect_cookie_write)(void *cookie, const char *buffer, size_t size);
typedef int (*bledissect_cookie_seek)(void *cookie, int64_t *offset, int whence);
typedef int (*bledissect_cookie_close)(void *cookie);
typedef struct {
  bledissect_cookie_read read;
  bledissect_cookie_write write;
  bledissect_cookie_seek seek;
  bledissect_cookie_close close;
} bledissect_cookie_functions;
extern FILE *bledissect_fopencookie(void *cookie, const char *mode, bledissect_cookie_functions functions)
    __asm__("fopencookie");
/* The stream's lock: its one reader is the reading thread, so libpcap's freads need not take it. */
#include <stdio_ext.h>
#endif
#endif
