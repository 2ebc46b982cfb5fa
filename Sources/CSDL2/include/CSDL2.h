// CSDL2: the SDL2 headers (Debian's libsdl2-dev) for the window renderer, plus the few values
// Swift cannot import because SDL defines them as macro expressions. No rendering logic lives
// here. Linking SDL2 does nothing at load time: the video subsystem starts only when a window
// is opened, so programs without a display import it safely.
#ifndef CSDL2_H
#define CSDL2_H

#include <SDL2/SDL.h>
#include <SDL2/SDL_syswm.h>

/// SDL_WINDOWPOS_CENTERED (a macro expression).
int wcs_sdl_windowpos_centered(void);

/// SDL_WINDOWPOS_UNDEFINED (a macro expression).
int wcs_sdl_windowpos_undefined(void);

#endif
