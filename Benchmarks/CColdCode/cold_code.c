#include "CColdCode.h"

// 2,048 distinct functions from one line each: __COUNTER__ makes every body different, so the
// linker folds none of them; aligned(64) puts each on a code line of its own.
#define COLD(name) \
  __attribute__((noinline, aligned(64))) static uint64_t name(uint64_t x) { \
    return (x ^ (uint64_t)__COUNTER__) * 0x9E3779B97F4A7C15ull; \
  }
#define COLD4(p) COLD(p##0) COLD(p##1) COLD(p##2) COLD(p##3)
#define COLD16(p) COLD4(p##0) COLD4(p##1) COLD4(p##2) COLD4(p##3)
#define COLD64(p) COLD16(p##0) COLD16(p##1) COLD16(p##2) COLD16(p##3)
#define COLD256(p) COLD64(p##0) COLD64(p##1) COLD64(p##2) COLD64(p##3)
#define COLD1024(p) COLD256(p##0) COLD256(p##1) COLD256(p##2) COLD256(p##3)
COLD1024(cold_a)
COLD1024(cold_b)

#define NAME4(p) p##0, p##1, p##2, p##3,
#define NAME16(p) NAME4(p##0) NAME4(p##1) NAME4(p##2) NAME4(p##3)
#define NAME64(p) NAME16(p##0) NAME16(p##1) NAME16(p##2) NAME16(p##3)
#define NAME256(p) NAME64(p##0) NAME64(p##1) NAME64(p##2) NAME64(p##3)
#define NAME1024(p) NAME256(p##0) NAME256(p##1) NAME256(p##2) NAME256(p##3)
static uint64_t (*const cold_functions[WCS_COLD_CODE_LINES])(uint64_t) = {
  NAME1024(cold_a) NAME1024(cold_b)
};

// Called in a shuffled order, so the hardware's next-line prefetch does not hide the misses as
// it would for functions laid out one after the other.
static uint16_t cold_order[WCS_COLD_CODE_LINES];

__attribute__((constructor)) static void cold_shuffle(void) {
  uint64_t state = 0x2545F4914F6CDD1Dull;
  for (uint32_t i = 0; i < WCS_COLD_CODE_LINES; i++) cold_order[i] = (uint16_t)i;
  for (uint32_t i = WCS_COLD_CODE_LINES - 1; i > 0; i--) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t j = (uint32_t)((state >> 33) % (i + 1));
    uint16_t swap = cold_order[i];
    cold_order[i] = cold_order[j];
    cold_order[j] = swap;
  }
}

uint64_t wcs_cold_code_run(uint32_t lines, uint64_t seed) {
  uint64_t x = seed;
  if (lines > WCS_COLD_CODE_LINES) lines = WCS_COLD_CODE_LINES;
  for (uint32_t i = 0; i < lines; i++) x = cold_functions[cold_order[i]](x);
  return x;
}
