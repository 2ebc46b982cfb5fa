#include "COpenSSL.h"

#include <pthread.h>

// OpenSSL's atexit handler frees its global locks and tables while other threads may still be
// inside OpenSSL (an event loop signing a STUN check as exit() runs), which crashes the exit
// of a process whose work succeeded. The process's memory goes anyway, so the handler is not
// registered; this must be the process's first OpenSSL call, hence a load-time constructor.
__attribute__((constructor)) static void wcs_openssl_init_without_atexit(void) {
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

long wcs_ssl_ctx_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
long wcs_ssl_ctx_set_read_ahead(SSL_CTX *ctx, long yes) { return SSL_CTX_set_read_ahead(ctx, yes); }
uint64_t wcs_ssl_ctx_set_no_query_mtu(SSL_CTX *ctx) {
  return SSL_CTX_set_options(ctx, SSL_OP_NO_QUERY_MTU);
}
long wcs_ssl_set_mtu(SSL *ssl, long mtu) { return SSL_set_mtu(ssl, mtu); }
long wcs_dtls_set_link_mtu(SSL *ssl, long mtu) { return DTLS_set_link_mtu(ssl, mtu); }
long wcs_dtls_get_timeout(SSL *ssl, long *seconds, long *microseconds) {
  struct timeval tv = {0, 0};
  long r = DTLSv1_get_timeout(ssl, &tv);
  *seconds = (long)tv.tv_sec;
  *microseconds = (long)tv.tv_usec;
  return r;
}
long wcs_dtls_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }
long wcs_bio_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
long wcs_bio_set_mem_eof_return(BIO *bio, long value) { return BIO_set_mem_eof_return(bio, value); }
long wcs_bio_reset(BIO *bio) { return BIO_reset(bio); }
void wcs_openssl_free(void *pointer) { OPENSSL_free(pointer); }
EVP_PKEY *wcs_evp_ec_gen_p256(void) { return EVP_EC_gen("P-256"); }

static int wcs_accept_any_chain(int preverify_ok, X509_STORE_CTX *store) {
  (void)preverify_ok;
  (void)store;
  return 1;
}
void wcs_ssl_ctx_request_peer_certificate(SSL_CTX *ctx) {
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, wcs_accept_any_chain);
}
long wcs_ssl_ctx_set1_groups_list(SSL_CTX *ctx, const char *list) {
  return SSL_CTX_set1_groups_list(ctx, list);
}
long wcs_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
  return SSL_CTX_set_min_proto_version(ctx, version);
}
long wcs_ssl_ctx_set_max_proto_version(SSL_CTX *ctx, int version) {
  return SSL_CTX_set_max_proto_version(ctx, version);
}
long wcs_ssl_set_tlsext_host_name(SSL *ssl, const char *name) {
  return SSL_set_tlsext_host_name(ssl, name);
}

static pthread_once_t wcs_srtp_once = PTHREAD_ONCE_INIT;
static srtp_err_status_t wcs_srtp_init_status = srtp_err_status_fail;
static void wcs_srtp_init_run(void) { wcs_srtp_init_status = srtp_init(); }
srtp_err_status_t wcs_srtp_init_once(void) {
  pthread_once(&wcs_srtp_once, wcs_srtp_init_run);
  return wcs_srtp_init_status;
}

void wcs_srtp_policy_aes_cm_128_hmac_sha1_80(srtp_crypto_policy_t *policy) {
  srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(policy);
}
void wcs_srtp_policy_aes_cm_128_hmac_sha1_32(srtp_crypto_policy_t *policy) {
  srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(policy);
}
void wcs_srtp_policy_aead_aes_128_gcm(srtp_crypto_policy_t *policy) {
  srtp_crypto_policy_set_aes_gcm_128_16_auth(policy);
}
void wcs_srtp_policy_aead_aes_256_gcm(srtp_crypto_policy_t *policy) {
  srtp_crypto_policy_set_aes_gcm_256_16_auth(policy);
}
