/* rng.c — xoshiro256** seeded through splitmix64; Box–Muller normals. */
#include "rng.h"

#include <math.h>

Rng g_rng;

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void rng_init(Rng *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
  r->has_spare = 0;
  r->spare = 0;
}

void rng_seed(uint64_t seed) { rng_init(&g_rng, seed); }

static _Thread_local Rng *t_rng;
Rng *rng_current(void) { return t_rng ? t_rng : &g_rng; }
void rng_use(Rng *r) { t_rng = r; }

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(Rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double rng_uniform01(Rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

float rng_uniform(Rng *r, float lo, float hi) {
  float v = lo + (hi - lo) * (float)rng_uniform01(r);
  return v < hi ? v : lo; /* rounding to float can reach hi; keep the interval half-open */
}

float rng_normal(Rng *r, float mean, float std) {
  if (r->has_spare) {
    r->has_spare = 0;
    return mean + std * (float)r->spare;
  }
  double u1, u2;
  do u1 = rng_uniform01(r);
  while (u1 <= 0.0);
  u2 = rng_uniform01(r);
  double rad = sqrt(-2.0 * log(u1));
  r->spare = rad * sin(2.0 * M_PI * u2);
  r->has_spare = 1;
  return mean + std * (float)(rad * cos(2.0 * M_PI * u2));
}

int rng_bernoulli(Rng *r, float p) { return rng_uniform01(r) < (double)p; }

int rng_int(Rng *r, int n) {
  if (n <= 1) return 0;
  uint64_t lim = UINT64_MAX - UINT64_MAX % (uint64_t)n;
  uint64_t x;
  do x = rng_next(r);
  while (x >= lim);
  return (int)(x % (uint64_t)n);
}

void rng_shuffle(Rng *r, int *a, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = rng_int(r, i + 1);
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}
