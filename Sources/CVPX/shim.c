#include "CVPX.h"

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
