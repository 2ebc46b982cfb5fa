#include "CPNG.h"

unsigned wcs_png_image_version(void) { return PNG_IMAGE_VERSION; }
