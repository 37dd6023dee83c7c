/* fastmath.h — exp, tanh and sigmoid for lab 03's fused kernels, written so the compiler can
 * vectorize the loops that call them (libm's tanhf was half of the training time in a profile).
 * Accuracy: relative error below 2e-7 over the float range the models use (checked against libm
 * in tests/unit/test_lab03.c). */
#ifndef LAB03_FASTMATH_H
#define LAB03_FASTMATH_H

#include <stdint.h>

/* e^x: x = k ln2 + r with |r| <= ln2 / 2, e^r by a degree-7 Taylor polynomial (truncation
 * < 3e-9 relative), 2^k put straight into the exponent bits. x is clamped to [-87, 88]. */
static inline float al_expf(float x) {
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  float k = __builtin_rintf(x * 1.44269504088896341f);
  float r = (x - k * 0.693145751953125f) - k * 1.428606820309417e-6f; /* ln2 = hi + lo */
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  union { int32_t i; float f; } s = {.i = ((int32_t)k + 127) << 23};
  return p * s.f;
}

/* tanh x: (1 - e) / (1 + e) with e = e^{-2|x|} where that loses nothing to cancellation
 * (|x| >= 0.3), the odd Taylor series to x^9 below (truncation < 6e-8 relative). */
static inline float al_tanhf(float x) {
  float ax = x < 0 ? -x : x;
  float e = al_expf(-2.0f * ax);
  float big = (1.0f - e) / (1.0f + e);
  float x2 = x * x;
  float small = ax * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315 +
                                                                  x2 * (62.0f / 2835)))));
  float t = ax < 0.3f ? small : big;
  return x < 0 ? -t : t;
}

static inline float al_sigmoidf(float x) { return 1.0f / (1.0f + al_expf(-x)); }

#endif
