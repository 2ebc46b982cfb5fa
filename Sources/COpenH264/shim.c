#include "COpenH264.h"

int wcs_openh264_create(ISVCEncoder **encoder) { return WelsCreateSVCEncoder(encoder); }
void wcs_openh264_destroy(ISVCEncoder *encoder) {
  (*encoder)->Uninitialize(encoder);
  WelsDestroySVCEncoder(encoder);
}
int wcs_openh264_default_params(ISVCEncoder *encoder, SEncParamExt *params) {
  return (*encoder)->GetDefaultParams(encoder, params);
}
int wcs_openh264_initialize(ISVCEncoder *encoder, const SEncParamExt *params) {
  return (*encoder)->InitializeExt(encoder, params);
}
int wcs_openh264_encode(ISVCEncoder *encoder, const SSourcePicture *picture, SFrameBSInfo *info) {
  return (*encoder)->EncodeFrame(encoder, picture, info);
}
int wcs_openh264_force_idr(ISVCEncoder *encoder) {
  return (*encoder)->ForceIntraFrame(encoder, true);
}
int wcs_openh264_set_option_int(ISVCEncoder *encoder, ENCODER_OPTION option, int value) {
  return (*encoder)->SetOption(encoder, option, &value);
}
int wcs_openh264_set_bitrate(ISVCEncoder *encoder, ENCODER_OPTION option, int bitsPerSecond) {
  SBitrateInfo info = {.iLayer = SPATIAL_LAYER_ALL, .iBitrate = bitsPerSecond};
  return (*encoder)->SetOption(encoder, option, &info);
}
