// A C target needs one source file; both libraries import as they are.
#include "CFFmpegConvert.h"
