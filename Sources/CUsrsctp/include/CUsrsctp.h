// CUsrsctp: the usrsctp header plus its init with a debug printf Swift cannot provide.
#ifndef CUSRSCTP_H
#define CUSRSCTP_H

#include <stddef.h>
#include <stdint.h>

#include <usrsctp.h>

/// `usrsctp_init_nothreads(port, conn_output, debug_printf)` with a debug printf that writes to
/// stderr when `debug` is non-zero (usrsctp's printf hook is variadic, which Swift cannot provide).
void wcs_usrsctp_init_nothreads(uint16_t port,
                                int (*conn_output)(void *addr, void *buffer, size_t length,
                                                   uint8_t tos, uint8_t set_df),
                                int debug);

#endif
