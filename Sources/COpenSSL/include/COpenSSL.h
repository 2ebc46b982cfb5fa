// COpenSSL: the OpenSSL and libsrtp2 headers plus small C functions for what Swift cannot import
// (function-like macros, DTLS timer calls, srtp_init once). No protocol logic lives here.
#ifndef COPENSSL_H
#define COPENSSL_H

#include <stddef.h>
#include <stdint.h>

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

#endif
