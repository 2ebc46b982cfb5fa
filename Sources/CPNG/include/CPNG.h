// CPNG: libpng's simplified API (png_image) for snapshots and report thumbnails: PNG
// writing and reading in memory. Headers only, plus the one macro-valued constant Swift needs.
#ifndef CPNG_H
#define CPNG_H

#include <png.h>

/// PNG_IMAGE_VERSION (the png_image.version every call wants).
unsigned wcs_png_image_version(void);

#endif
