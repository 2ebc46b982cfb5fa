#include "CWebRTCCore.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

size_t wcs_lws_pre(void) { return LWS_PRE; }

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

int wcs_opus_encoder_set(OpusEncoder *encoder, int request, int32_t value) {
  return opus_encoder_ctl(encoder, request, (opus_int32)value);
}
int wcs_opus_encoder_get(OpusEncoder *encoder, int request, int32_t *value) {
  opus_int32 v = 0;
  int r = opus_encoder_ctl(encoder, request, &v);
  *value = (int32_t)v;
  return r;
}
int wcs_opus_decoder_set(OpusDecoder *decoder, int request, int32_t value) {
  return opus_decoder_ctl(decoder, request, (opus_int32)value);
}
int wcs_opus_decoder_get(OpusDecoder *decoder, int request, int32_t *value) {
  opus_int32 v = 0;
  int r = opus_decoder_ctl(decoder, request, &v);
  *value = (int32_t)v;
  return r;
}
int wcs_opus_encoder_reset(OpusEncoder *encoder) { return opus_encoder_ctl(encoder, OPUS_RESET_STATE); }
int wcs_opus_decoder_reset(OpusDecoder *decoder) { return opus_decoder_ctl(decoder, OPUS_RESET_STATE); }

vpx_codec_err_t wcs_vpx_codec_enc_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                       const vpx_codec_enc_cfg_t *cfg, vpx_codec_flags_t flags) {
  return vpx_codec_enc_init(ctx, iface, cfg, flags);
}
vpx_codec_err_t wcs_vpx_codec_dec_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                       const vpx_codec_dec_cfg_t *cfg, vpx_codec_flags_t flags) {
  return vpx_codec_dec_init(ctx, iface, cfg, flags);
}
vpx_codec_err_t wcs_vpx_codec_control_int(vpx_codec_ctx_t *ctx, int control_id, int value) {
  return vpx_codec_control_(ctx, control_id, value);
}
vpx_codec_err_t wcs_vpx_decoder_frame_corrupted(vpx_codec_ctx_t *ctx, int *corrupted) {
  return vpx_codec_control(ctx, VP8D_GET_FRAME_CORRUPTED, corrupted);
}

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

int wcs_enable_receive_timestamps(int fd) {
  int on = 1;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
}

long wcs_recv_datagram(int fd, void *buffer, size_t capacity, void *address, uint32_t *length,
                       int64_t *seconds, int64_t *nanoseconds) {
  struct iovec part = {.iov_base = buffer, .iov_len = capacity};
  union {
    char bytes[CMSG_SPACE(sizeof(struct timespec))];
    struct cmsghdr align;
  } control;
  struct msghdr message = {0};
  message.msg_name = address;
  message.msg_namelen = *length;
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control.bytes;
  message.msg_controllen = sizeof control.bytes;
  *seconds = 0;
  *nanoseconds = 0;
  ssize_t received = recvmsg(fd, &message, MSG_TRUNC);
  if (received < 0) return (long)received;
  *length = message.msg_namelen;
  for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_TIMESTAMPNS &&
        header->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
      struct timespec stamp;
      memcpy(&stamp, CMSG_DATA(header), sizeof stamp);
      *seconds = (int64_t)stamp.tv_sec;
      *nanoseconds = (int64_t)stamp.tv_nsec;
    }
  }
  return (long)received;
}
