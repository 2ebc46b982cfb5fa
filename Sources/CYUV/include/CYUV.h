// CYUV: libyuv, pixel format conversion and scaling (C API; its C++ parts are behind
// __cplusplus). Header only.
#ifndef CYUV_H
#define CYUV_H

#include <libyuv.h>

#endif
