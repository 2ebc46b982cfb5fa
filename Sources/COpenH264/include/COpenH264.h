// COpenH264: the OpenH264 encoder headers plus calls through the encoder's C vtable
// (`(*encoder)->Method(encoder, ...)`), which Swift cannot make directly. No logic.
#ifndef COPENH264_H
#define COPENH264_H

#include <stdbool.h>
#include <wels/codec_api.h>
#include <wels/codec_app_def.h>
#include <wels/codec_def.h>

/// `WelsCreateSVCEncoder`: 0 and *encoder set on success.
int wcs_openh264_create(ISVCEncoder **encoder);
/// `Uninitialize` then `WelsDestroySVCEncoder`.
void wcs_openh264_destroy(ISVCEncoder *encoder);
/// `GetDefaultParams`.
int wcs_openh264_default_params(ISVCEncoder *encoder, SEncParamExt *params);
/// `InitializeExt`.
int wcs_openh264_initialize(ISVCEncoder *encoder, const SEncParamExt *params);
/// `EncodeFrame`.
int wcs_openh264_encode(ISVCEncoder *encoder, const SSourcePicture *picture, SFrameBSInfo *info);
/// `ForceIntraFrame(true)`: the next picture is an IDR.
int wcs_openh264_force_idr(ISVCEncoder *encoder);
/// `SetOption` with an int value (trace level, data format).
int wcs_openh264_set_option_int(ISVCEncoder *encoder, ENCODER_OPTION option, int value);
/// `SetOption(ENCODER_OPTION_BITRATE)` / `(ENCODER_OPTION_MAX_BITRATE)` for all spatial layers.
int wcs_openh264_set_bitrate(ISVCEncoder *encoder, ENCODER_OPTION option, int bitsPerSecond);

#endif
