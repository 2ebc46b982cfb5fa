// A C target needs one source file; libyuv needs no shim.
#include "CYUV.h"
