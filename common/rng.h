/* rng.h — the one seeded random generator (no rand()). Same seed, same numbers. */
#ifndef AL_RNG_H
#define AL_RNG_H

#include <stdint.h>

typedef struct Rng {
  uint64_t s[4]; /* xoshiro256** state */
  double spare;  /* cached second normal of Box–Muller */
  int has_spare;
} Rng;

void rng_init(Rng *r, uint64_t seed);
uint64_t rng_next(Rng *r);
double rng_uniform01(Rng *r);                 /* [0, 1) */
float rng_uniform(Rng *r, float lo, float hi); /* [lo, hi) */
float rng_normal(Rng *r, float mean, float std);
int rng_bernoulli(Rng *r, float p);           /* 1 with probability p */
int rng_int(Rng *r, int n);                   /* [0, n) without modulo bias */
void rng_shuffle(Rng *r, int *a, int n);      /* Fisher–Yates */

/* The program's generator: seeded by the lab's --seed, used by init, dropout and shuffling. */
extern Rng g_rng;
void rng_seed(uint64_t seed);
/* The generator this thread's initializers and dropout draw from: g_rng, or the one rng_use gave
 * it (a twin's thread in twin_parts_run, so two threads never share a state; a twin's init in
 * twin_build, so the program's stream does not move). rng_use(NULL) restores g_rng. */
Rng *rng_current(void);
void rng_use(Rng *r);

#endif
