#include "CUsrsctp.h"

#include <stdarg.h>
#include <stdio.h>

static int wcs_usrsctp_debug_enabled = 0;
static void wcs_usrsctp_debug_printf(const char *format, ...) {
  if (!wcs_usrsctp_debug_enabled) return;
  va_list args;
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
}
void wcs_usrsctp_init_nothreads(uint16_t port,
                                int (*conn_output)(void *addr, void *buffer, size_t length,
                                                   uint8_t tos, uint8_t set_df),
                                int debug) {
  wcs_usrsctp_debug_enabled = debug;
  usrsctp_init_nothreads(port, conn_output, debug ? wcs_usrsctp_debug_printf : NULL);
}
