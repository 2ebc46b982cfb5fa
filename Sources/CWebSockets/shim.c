#include "CWebSockets.h"

size_t wcs_lws_pre(void) { return LWS_PRE; }
