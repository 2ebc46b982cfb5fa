// CFFmpeg: the C headers of FFmpeg's container and codec libraries (libavformat, libavcodec,
// libavutil) plus small C functions for the macros Swift cannot import. No logic lives here.
// Scaling and resampling are CFFmpegConvert's.
#ifndef CFFMPEG_H
#define CFFMPEG_H

#include <stddef.h>
#include <stdint.h>

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>

/// `AVERROR(errnum)`: the negative FFmpeg error code for a POSIX errno value.
int wcs_averror(int errnum);
/// `AVERROR(EAGAIN)`: "output not available in this state, send more input".
int wcs_averror_eagain(void);
/// `AVERROR(ENOMEM)`: an allocation failed.
int wcs_averror_enomem(void);
/// `AVERROR(EINVAL)`: an invalid argument (e.g. an unsupported conversion).
int wcs_averror_einval(void);
/// `AVERROR_EOF`: end of file / the codec was fully drained.
int wcs_averror_eof(void);
/// `AVERROR_INVALIDDATA`.
int wcs_averror_invaliddata(void);
/// `AV_NOPTS_VALUE`: "no timestamp".
int64_t wcs_av_nopts_value(void);
/// `AV_TIME_BASE`: microseconds per second in FFmpeg's internal time base.
int wcs_av_time_base(void);
/// `av_err2str` (a macro using a compound literal): writes the message of `errnum` into `buffer`
/// (NUL-terminated, at most `size` bytes) with `av_strerror`; returns its result.
int wcs_av_strerror(int errnum, char *buffer, size_t size);
/// `av_q2d` (static inline): a rational as a double.
double wcs_av_q2d(AVRational rational);

#endif
