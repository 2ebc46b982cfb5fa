// CWebRTCCore: the C headers of the libraries WCSApi2 for Linux builds on, plus small C
// functions for what Swift cannot import (function-like macros, variadic ctl calls, LWS_PRE).
// No protocol logic lives here.
#ifndef CWEBRTCCORE_H
#define CWEBRTCCORE_H

#include <stddef.h>
#include <stdint.h>

#include <libwebsockets.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <srtp2/srtp.h>

#include <opus/opus.h>

#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

#include <usrsctp.h>

// libyuv: pixel format conversion and scaling (C API; its C++ parts are behind __cplusplus).
#include <libyuv.h>

// MARK: libwebsockets

/// Bytes of headroom `lws_write` needs before the payload (`LWS_PRE`).
size_t wcs_lws_pre(void);

// MARK: OpenSSL (function-like macros and DTLS timer calls)

long wcs_ssl_ctx_set_mode(SSL_CTX *ctx, long mode);
long wcs_ssl_ctx_set_read_ahead(SSL_CTX *ctx, long yes);
/// Sets `SSL_OP_NO_QUERY_MTU` so the MTU given with `wcs_dtls_set_link_mtu` is used as is.
uint64_t wcs_ssl_ctx_set_no_query_mtu(SSL_CTX *ctx);
long wcs_ssl_set_mtu(SSL *ssl, long mtu);
long wcs_dtls_set_link_mtu(SSL *ssl, long mtu);
/// `DTLSv1_get_timeout`: 1 and the time left when a retransmission timer runs, else 0.
long wcs_dtls_get_timeout(SSL *ssl, long *seconds, long *microseconds);
/// `DTLSv1_handle_timeout`: 1 when a flight was retransmitted, 0 when nothing was due, -1 on error.
long wcs_dtls_handle_timeout(SSL *ssl);
long wcs_bio_get_mem_data(BIO *bio, char **data);
long wcs_bio_set_mem_eof_return(BIO *bio, long value);
long wcs_bio_reset(BIO *bio);
void wcs_openssl_free(void *pointer);
/// A fresh EC key on P-256 (`EVP_EC_gen("P-256")`), or NULL.
EVP_PKEY *wcs_evp_ec_gen_p256(void);
/// Asks the peer for its certificate and accepts any chain: WebRTC authenticates the peer by the
/// certificate fingerprint in the SDP (RFC 8122), which the caller compares after the handshake.
void wcs_ssl_ctx_request_peer_certificate(SSL_CTX *ctx);
/// `SSL_CTX_set1_groups_list` (a macro in OpenSSL 3).
long wcs_ssl_ctx_set1_groups_list(SSL_CTX *ctx, const char *list);
/// `SSL_CTX_set_min_proto_version` / `max` (macros in OpenSSL 3).
long wcs_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version);
long wcs_ssl_ctx_set_max_proto_version(SSL_CTX *ctx, int version);
/// `SSL_set_tlsext_host_name` (a macro).
long wcs_ssl_set_tlsext_host_name(SSL *ssl, const char *name);

// MARK: libsrtp2

/// `srtp_init()` exactly once per process (pthread_once); later calls return the first result.
/// libsrtp refuses a second `srtp_init` (it re-registers its debug module), and several modules
/// of one process need it.
srtp_err_status_t wcs_srtp_init_once(void);

// libsrtp2 policy setters that are macros

void wcs_srtp_policy_aes_cm_128_hmac_sha1_80(srtp_crypto_policy_t *policy);
void wcs_srtp_policy_aes_cm_128_hmac_sha1_32(srtp_crypto_policy_t *policy);
void wcs_srtp_policy_aead_aes_128_gcm(srtp_crypto_policy_t *policy);
void wcs_srtp_policy_aead_aes_256_gcm(srtp_crypto_policy_t *policy);

// MARK: libopus ctl requests (variadic in C)

/// `opus_encoder_ctl(encoder, request, value)` for the `OPUS_SET_*` requests that take an int.
int wcs_opus_encoder_set(OpusEncoder *encoder, int request, int32_t value);
/// `opus_encoder_ctl(encoder, request, &value)` for the `OPUS_GET_*` requests that give an int.
int wcs_opus_encoder_get(OpusEncoder *encoder, int request, int32_t *value);
int wcs_opus_decoder_set(OpusDecoder *decoder, int request, int32_t value);
int wcs_opus_decoder_get(OpusDecoder *decoder, int request, int32_t *value);
int wcs_opus_encoder_reset(OpusEncoder *encoder);
int wcs_opus_decoder_reset(OpusDecoder *decoder);

// MARK: libvpx (init and control are macros)

vpx_codec_err_t wcs_vpx_codec_enc_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                       const vpx_codec_enc_cfg_t *cfg, vpx_codec_flags_t flags);
vpx_codec_err_t wcs_vpx_codec_dec_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                       const vpx_codec_dec_cfg_t *cfg, vpx_codec_flags_t flags);
/// `vpx_codec_control(ctx, id, value)` for the controls that take an int (`VP8E_SET_CPUUSED`, ...).
vpx_codec_err_t wcs_vpx_codec_control_int(vpx_codec_ctx_t *ctx, int control_id, int value);
/// `VP8D_GET_FRAME_CORRUPTED`: sets *corrupted to 1 when the last decoded frame was corrupt.
vpx_codec_err_t wcs_vpx_decoder_frame_corrupted(vpx_codec_ctx_t *ctx, int *corrupted);

// MARK: usrsctp

/// `usrsctp_init_nothreads(port, conn_output, debug_printf)` with a debug printf that writes to
/// stderr when `debug` is non-zero (usrsctp's printf hook is variadic, which Swift cannot provide).
void wcs_usrsctp_init_nothreads(uint16_t port,
                                int (*conn_output)(void *addr, void *buffer, size_t length,
                                                   uint8_t tos, uint8_t set_df),
                                int debug);

// MARK: UDP receive with the kernel's arrival time (CMSG_* are macros)
// Plain integer and void pointer types only: including <sys/socket.h> here would make this
// module own the socket declarations, hiding them from Swift files that import only Glibc.

/// Turns on `SO_TIMESTAMPNS` for `fd`: each datagram carries the kernel's receive time.
/// Returns setsockopt's result (0, or -1 with errno).
int wcs_enable_receive_timestamps(int fd);
/// `recvmsg` of one datagram into `buffer`, the sender's address into `address` (a
/// `sockaddr_storage`; `*length` in: its capacity, out: the address length) and the kernel's
/// receive time (`CLOCK_REALTIME`, `SCM_TIMESTAMPNS`) into `*seconds` and `*nanoseconds`, both
/// left 0 when the datagram has none. Returns recvmsg's result with `MSG_TRUNC`: the datagram's
/// full length, more than `capacity` when only its first `capacity` bytes were stored (-1 with
/// errno).
long wcs_recv_datagram(int fd, void *buffer, size_t capacity, void *address, uint32_t *length,
                       int64_t *seconds, int64_t *nanoseconds);

#endif
