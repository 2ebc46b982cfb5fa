#include "CSDL2.h"

int wcs_sdl_windowpos_centered(void) { return SDL_WINDOWPOS_CENTERED; }

int wcs_sdl_windowpos_undefined(void) { return SDL_WINDOWPOS_UNDEFINED; }
