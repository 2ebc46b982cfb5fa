// CTurboJPEG: libturbojpeg's TurboJPEG API for JPEG snapshots. Header only.
#ifndef CTURBOJPEG_H
#define CTURBOJPEG_H

#include <turbojpeg.h>

#endif
