/* fastmath.h — exp, tanh and sigmoid as branch-free inline float code, so the loops that call
 * them vectorize (libm's tanhf is a call per element that GCC cannot vectorize, which made t_tanh the slowest
 * elementwise op by far).
 *
 * Accuracy (checked against double-precision libm in tests/unit/test_fastmath.c): relative
 * error below 5e-7 (a few float ulps) for exp on [-87, 88], tanh everywhere and sigmoid down to
 * x = -87; NaN in gives NaN out; no float-to-int conversion, so no undefined behaviour on NaN
 * or infinity.
 */
#ifndef AL_FASTMATH_H
#define AL_FASTMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* c ? a : b as a bit blend, with no branch for the compiler to keep. GCC turns `c ? f(x) : g(x)`
 * into control flow when both sides are float arithmetic (under the default -ftrapping-math it
 * may not compute the side that was not taken), and a loop with control flow vectorizes only
 * where the ISA has masked operations (AVX-512): under AVX2 and NEON the loops calling tanh and
 * sigmoid stayed scalar ("not vectorized: control flow in loop"). Here both sides are computed
 * and blended, which every vector ISA does in one or two instructions. */
static inline float fm_select(int c, float a, float b) {
  uint32_t ua, ub, m = -(uint32_t)(c != 0), r;
  memcpy(&ua, &a, sizeof ua);
  memcpy(&ub, &b, sizeof ub);
  r = (ua & m) | (ub & ~m);
  float f;
  memcpy(&f, &r, sizeof f);
  return f;
}

/* e^x with x clamped to [-87, 88] (results stay normal floats). Cephes' method: x = k ln2 + r,
 * |r| <= ln2 / 2, e^r by a degree-7 polynomial (within 1e-7 relative), 2^k built in the
 * exponent bits. Adding 1.5 * 2^23 rounds x / ln2 to the integer k held in the low mantissa
 * bits, which become the exponent field without a float-to-int conversion. */
static inline float fast_expf(float x) {
  const float shifter = 0x1.8p23f;
  /* the clamp as two blends (a NaN fails both compares and passes through; fminf/fmaxf
   * would drop it, and plain ?: becomes a branch under AVX2) */
  float xc = fm_select(x > 88.0f, 88.0f, x);
  xc = fm_select(xc < -87.0f, -87.0f, xc);
  float kb = xc * 1.44269504f + shifter;
  float k = kb - shifter;
  float r = xc - k * 0.693359375f; /* ln 2 in two parts: k * hi is exact */
  r = r - k * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  uint32_t kbits, ebits;
  memcpy(&kbits, &kb, sizeof kbits);
  ebits = (kbits - 0x4B400000u + 127u) << 23; /* k + bias in the exponent field */
  float scale;
  memcpy(&scale, &ebits, sizeof scale);
  return p * scale;
}

/* tanh x = (1 - e) / (1 + e) with e = e^{-2|x|}, where that loses nothing to cancellation
 * (|x| >= 0.3); below, the odd Taylor series to x^9 (truncation < 6e-8 relative). For
 * |x| > 44, e bottoms out at e^-87 and the quotient rounds to exactly 1. The sign is copied
 * back, so tanh(-0) = -0. */
static inline float fast_tanhf(float x) {
  float ax = fabsf(x);
  float e = fast_expf(-2.0f * ax);
  float big = (1.0f - e) / (1.0f + e);
  float x2 = x * x;
  float small = ax * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315 +
                                                                  x2 * (62.0f / 2835)))));
  return copysignf(fm_select(ax < 0.3f, small, big), x);
}

/* 1 / (1 + e^-x). Exactly 1 for x > 87 (e^-87 vanishes next to 1) and exactly 0 below -88,
 * where the true value is under 7e-39 (a subnormal float). */
static inline float fast_sigmoidf(float x) {
  float s = 1.0f / (1.0f + fast_expf(-x));
  return fm_select(x < -88.0f, 0.0f, s);
}

#endif
