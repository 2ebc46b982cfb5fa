// CWebSockets: the libwebsockets header plus `LWS_PRE` as a function. Its TLS types are
// OpenSSL's, taken from COpenSSL so one module owns them.
#ifndef CWEBSOCKETS_H
#define CWEBSOCKETS_H

#include <stddef.h>

#include <COpenSSL.h>

#include <libwebsockets.h>

/// Bytes of headroom `lws_write` needs before the payload (`LWS_PRE`).
size_t wcs_lws_pre(void);

#endif
