/* cases_optim.c — the optimizers (cuda/optim.cu) against the CPU's, through the code that
 * trains the labs' models (common/params.c, optim.c): a small ParamSet is built on the case's
 * device, packed into its blocks, given the same values and gradients on either device, and
 * stepped; the output is what the steps left behind, copied into one tensor on the device (the harness
 * brings it back). Nothing here is differentiated: the compared output is everything.
 *
 * Parameter sets: one scalar; 31 and 33 floats; primes; a 32 -> 32 Linear with its bias, as in
 * lab06; and, for clipping only (it is slow to emulate), a block of 40009 floats, past the sum
 * of squares' 128 blocks of 256 threads, so its grid-stride loop wraps. */
#include <math.h>
#include <stdlib.h>

#include "../../common/nn.h"
#include "../../common/rng.h"
#include "cuda_check.h"

enum { MAX_PARAMS = 3, STEPS = 3 };
static const int sets[][MAX_PARAMS][2] = {
    /* per parameter {rows, cols}; {0, 0} ends the set */
    {{1, 1}},
    {{31, 1}, {33, 1}},
    {{7, 13}, {1, 11}, {5, 3}},
    {{32, 32}, {1, 32}},
    {{40009, 1}},
};
enum { N_SETS = sizeof sets / sizeof sets[0], N_SMALL = N_SETS - 1 };

/* Upload n floats from the host into device memory p of device d. */
static void put(Device d, float *p, const float *h, long n) {
  if (n) backend_of(d)->from_host(p, h, sizeof(float) * (size_t)n);
}

/* n values uniform in [lo, hi) from seed: the same on either device */
static float *draw(unsigned seed, long n, float lo, float hi) {
  float *h = malloc(sizeof(float) * (size_t)(n ? n : 1));
  Rng g;
  rng_init(&g, seed);
  for (long i = 0; i < n; i++) h[i] = rng_uniform(&g, lo, hi);
  return h;
}

/* The variant's parameters on r->dev, packed, with values uniform in [-1, 1). */
static void build(CcRun *r, ParamSet *ps) {
  char shape[96] = "";
  int len = 0;
  Device old = tensor_default_device();
  tensor_set_default_device(r->dev);
  for (int i = 0; i < MAX_PARAMS && sets[r->variant][i][0]; i++) {
    const int *s = sets[r->variant][i];
    char name[16];
    snprintf(name, sizeof name, "p%d", i);
    if (s[1] == 1)
      param_new(ps, name, 1, s);
    else
      param_new(ps, name, 2, s);
    len += snprintf(shape + len, sizeof shape - (size_t)len, "%s(%d%s", i ? " " : "", s[0],
                    s[1] == 1 ? ")" : "");
    if (s[1] != 1) len += snprintf(shape + len, sizeof shape - (size_t)len, ", %d)", s[1]);
  }
  tensor_set_default_device(old);
  paramset_to(ps, r->dev);
  float *w = draw(1000u + (unsigned)r->variant, ps->total, -1, 1);
  put(r->dev, ps->data, w, ps->total);
  free(w);
  cc_shape(r, "%s", shape);
}

/* The gradients of step t: uniform in [-scale, scale), a different draw each step. */
static void set_grads(CcRun *r, ParamSet *ps, int t, float scale) {
  float *g = draw(2000u + 17u * (unsigned)t + (unsigned)r->variant, ps->total, -scale, scale);
  put(r->dev, ps->grad, g, ps->total);
  free(g);
}

/* An output tensor (n) on r->dev holding the device buffers' floats, back to back, then the
 * host floats `extra`. */
static Tensor *collect(CcRun *r, const float *const *bufs, const long *lens, int nbufs,
                       const float *extra, int n_extra) {
  long n = n_extra;
  for (int i = 0; i < nbufs; i++) n += lens[i];
  Tensor *out = tensor_new_on(r->dev, 1, (int[]){(int)n}); /* (n) */
  long off = 0;
  for (int i = 0; i < nbufs; i++) {
    if (lens[i]) backend_of(r->dev)->copy(out->data + off, bufs[i], sizeof(float) * lens[i]);
    off += lens[i];
  }
  put(r->dev, out->data + off, extra, n_extra);
  return out;
}

/* SGD_step, STEPS times: the parameters after */
static Tensor *run_sgd(CcRun *r) {
  ParamSet ps = {0};
  build(r, &ps);
  SGD opt = {.ps = &ps, .lr = 0.1f};
  for (int t = 0; t < STEPS; t++) {
    set_grads(r, &ps, t, 1.0f);
    SGD_step(&opt);
  }
  Tensor *out = collect(r, (const float *const[]){ps.data}, (long[]){ps.total}, 1, NULL, 0);
  paramset_free(&ps);
  return out;
}

/* clip_grad_norm once with a bound under the gradients' norm (they are scaled down) and once
 * over it (left alone): the gradients after, and the two norms it returned */
static Tensor *run_clip(CcRun *r) {
  ParamSet ps = {0};
  build(r, &ps);
  float norms[2];
  set_grads(r, &ps, 0, 1.0f);
  /* uniform in [-1, 1): the norm is about sqrt(total / 3); the bound is half that */
  norms[0] = clip_grad_norm(&ps, 0.5f * sqrtf((float)ps.total / 3.0f));
  Tensor *clipped = collect(r, (const float *const[]){ps.grad}, (long[]){ps.total}, 1, NULL, 0);
  set_grads(r, &ps, 1, 1.0f);
  norms[1] = clip_grad_norm(&ps, 2.0f * sqrtf((float)ps.total / 3.0f) + 1.0f);
  Tensor *out = collect(r, (const float *const[]){clipped->data, ps.grad},
                        (long[]){ps.total, ps.total}, 2, norms, 2);
  paramset_free(&ps);
  return out;
}

/* STEPS steps of what train_seq2seq does (common/seq2seq_train.c): gradients, clip to norm 1, an
 * Adam step; the parameters and both moments after, and the norms */
static Tensor *run_adam(CcRun *r) {
  ParamSet ps = {0};
  build(r, &ps);
  Adam opt;
  Adam_init(&opt, &ps, 0.01f);
  float norms[STEPS];
  for (int t = 0; t < STEPS; t++) {
    /* step 1's gradients are small (norm under 1, not clipped); the others are clipped */
    set_grads(r, &ps, t, t == 1 ? 0.5f / sqrtf((float)ps.total) : 1.0f);
    norms[t] = clip_grad_norm(&ps, 1.0f);
    Adam_step(&opt);
  }
  Tensor *out = collect(r, (const float *const[]){ps.data, opt.m, opt.v},
                        (long[]){ps.total, ps.total, ps.total}, 3, norms, STEPS);
  Adam_free(&opt);
  paramset_free(&ps);
  return out;
}

/* Tolerances. SGD: the same float multiply and subtract (nvcc may fuse them: 1 ulp). Clipping:
 * both devices sum squares in double, in different orders (~1e-15 relative), so the norm and the
 * scale factor round to the same floats but for a tie. Adam: the same float operations in the
 * same order (sqrtf and the division are correctly rounded on both; a fused multiply-add in the
 * moments is 1 ulp), and a few ulps of a moment move the update by as little. */
const CcCase cases_optim[] = {
    {"sgd", N_SMALL, run_sgd, 1e-6f, "the same float ops; at most a fused multiply-add's 1 ulp"},
    {"clip_grad_norm (clip_grad)", N_SETS, run_clip, 1e-6f,
     "squares summed in double on both devices: the norm rounds to the same float"},
    {"adam (with clipping)", N_SMALL, run_adam, 1e-6f,
     "the same float ops in the same order; fused multiply-adds differ by an ulp"},
    {0},
};
