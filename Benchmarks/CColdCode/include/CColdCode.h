#ifndef C_COLD_CODE_H
#define C_COLD_CODE_H

#include <stdint.h>

/// Number of functions behind `wcs_cold_code_run`, each alone on its own 64-byte code line.
#define WCS_COLD_CODE_LINES 2048

/// Calls the first `lines` (at most `WCS_COLD_CODE_LINES`) of 2,048 small functions, each aligned
/// to its own 64-byte line of code, in one fixed shuffled order, and returns a value that depends
/// on every call (so none is optimised away). For the benchmarks only: a receiver that calls it
/// once a packet touches `lines` more distinct code lines a packet, which measures what a code
/// line the caches lost between two packets costs on this machine.
uint64_t wcs_cold_code_run(uint32_t lines, uint64_t seed);

#endif
