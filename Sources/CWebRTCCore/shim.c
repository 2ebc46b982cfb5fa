// A C target needs one source file; the umbrella has no functions of its own.
#include "CWebRTCCore.h"
