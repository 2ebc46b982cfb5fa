#include "COpus.h"

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
