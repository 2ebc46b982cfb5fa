// CFFmpegConvert: FFmpeg's picture scaling (libswscale) and audio resampling (libswresample),
// for reading media files and the audio of pulled sources. Apart from CFFmpeg so that
// recording links neither.
#ifndef CFFMPEGCONVERT_H
#define CFFMPEGCONVERT_H

#include <CFFmpeg.h>

#include <libswscale/swscale.h>
#include <libswresample/swresample.h>

#endif
