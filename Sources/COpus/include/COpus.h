// COpus: the libopus header plus its ctl requests, which are variadic in C.
#ifndef COPUS_H
#define COPUS_H

#include <stdint.h>

#include <opus/opus.h>

/// `opus_encoder_ctl(encoder, request, value)` for the `OPUS_SET_*` requests that take an int.
int wcs_opus_encoder_set(OpusEncoder *encoder, int request, int32_t value);
/// `opus_encoder_ctl(encoder, request, &value)` for the `OPUS_GET_*` requests that give an int.
int wcs_opus_encoder_get(OpusEncoder *encoder, int request, int32_t *value);
int wcs_opus_decoder_set(OpusDecoder *decoder, int request, int32_t value);
int wcs_opus_decoder_get(OpusDecoder *decoder, int request, int32_t *value);
int wcs_opus_encoder_reset(OpusEncoder *encoder);
int wcs_opus_decoder_reset(OpusDecoder *decoder);

#endif
