// Functions for FFmpeg macros and inline helpers Swift cannot import. No logic.
#include "CFFmpeg.h"

#include <errno.h>

int wcs_averror(int errnum) { return AVERROR(errnum); }
int wcs_averror_eagain(void) { return AVERROR(EAGAIN); }
int wcs_averror_enomem(void) { return AVERROR(ENOMEM); }
int wcs_averror_einval(void) { return AVERROR(EINVAL); }
int wcs_averror_eof(void) { return AVERROR_EOF; }
int wcs_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
int64_t wcs_av_nopts_value(void) { return AV_NOPTS_VALUE; }
int wcs_av_time_base(void) { return AV_TIME_BASE; }
int wcs_av_strerror(int errnum, char *buffer, size_t size) {
  return av_strerror(errnum, buffer, size);
}
double wcs_av_q2d(AVRational rational) { return av_q2d(rational); }
