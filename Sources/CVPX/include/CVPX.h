// CVPX: the libvpx VP8 headers plus init and control, which are macros.
#ifndef CVPX_H
#define CVPX_H

#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

vpx_codec_err_t wcs_vpx_codec_enc_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                       const vpx_codec_enc_cfg_t *cfg, vpx_codec_flags_t flags);
vpx_codec_err_t wcs_vpx_codec_dec_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                       const vpx_codec_dec_cfg_t *cfg, vpx_codec_flags_t flags);
/// `vpx_codec_control(ctx, id, value)` for the controls that take an int (`VP8E_SET_CPUUSED`, ...).
vpx_codec_err_t wcs_vpx_codec_control_int(vpx_codec_ctx_t *ctx, int control_id, int value);
/// `VP8D_GET_FRAME_CORRUPTED`: sets *corrupted to 1 when the last decoded frame was corrupt.
vpx_codec_err_t wcs_vpx_decoder_frame_corrupted(vpx_codec_ctx_t *ctx, int *corrupted);

#endif
