/* optim.c — minibatch SGD, Adam (as torch.optim.Adam computes it) and global gradient clipping.
 * A parameter whose grad is NULL received no gradient yet: its gradient counts as zero. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "util.h"

static void check_host(const char *op, const Tensor *p) {
  if (p->device != DEV_CPU)
    tensor_error(op, "parameter '%s' is on the GPU but this optimizer step runs on the CPU",
                 p->name);
}

/* ---------- SGD ---------- */

void SGD_step(SGD *opt) {
  const float lr = opt->lr;
  for (int i = 0; i < opt->ps->n; i++) {
    Tensor *p = opt->ps->items[i];
    if (!p->grad) continue; /* zero gradient: nothing to do */
    check_host("SGD_step", p);
    float *restrict w = p->data;
    const float *restrict g = p->grad;
    for (long j = 0; j < p->size; j++) w[j] -= lr * g[j];
  }
}

/* ---------- Adam ---------- */

void Adam_init(Adam *opt, ParamSet *ps, float lr) {
  opt->ps = ps;
  opt->lr = lr;
  opt->beta1 = 0.9f;
  opt->beta2 = 0.999f;
  opt->eps = 1e-8f;
  opt->t = 0;
  opt->m = opt->v = NULL;
}

/* The moment arrays hold one entry per parameter followed by a NULL, so a parameter registered
 * after the first step still gets (zero) moments: count what is there, allocate the rest. */
static void adam_grow(Adam *opt) {
  int have = 0;
  if (opt->m)
    while (opt->m[have]) have++;
  int n = opt->ps->n;
  if (opt->m && have >= n) return;
  opt->m = xrealloc(opt->m, sizeof(float *) * (size_t)(n + 1));
  opt->v = xrealloc(opt->v, sizeof(float *) * (size_t)(n + 1));
  for (int i = have; i < n; i++) {
    size_t sz = (size_t)(opt->ps->items[i]->size ? opt->ps->items[i]->size : 1);
    opt->m[i] = xcalloc(sz, sizeof(float));
    opt->v[i] = xcalloc(sz, sizeof(float));
  }
  opt->m[n] = opt->v[n] = NULL;
}

/* m <- b1 m + (1-b1) g;  v <- b2 v + (1-b2) g^2;
 * p <- p - lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)   (eps after the sqrt, as torch). */
void Adam_step(Adam *opt) {
  adam_grow(opt);
  opt->t++;
  const float b1 = opt->beta1, b2 = opt->beta2, eps = opt->eps;
  const double bc1 = 1.0 - pow((double)b1, (double)opt->t);
  const double bc2 = 1.0 - pow((double)b2, (double)opt->t);
  const float step = (float)(opt->lr / bc1);
  const float inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
  for (int i = 0; i < opt->ps->n; i++) {
    Tensor *p = opt->ps->items[i];
    check_host("Adam_step", p);
    float *restrict w = p->data, *restrict m = opt->m[i], *restrict v = opt->v[i];
    const float *restrict g = p->grad;
    if (g) {
      for (long j = 0; j < p->size; j++) {
        m[j] = b1 * m[j] + (1.0f - b1) * g[j];
        v[j] = b2 * v[j] + (1.0f - b2) * g[j] * g[j];
        w[j] -= step * m[j] / (sqrtf(v[j]) * inv_sqrt_bc2 + eps);
      }
    } else { /* g = 0: the moments decay, the momentum still moves the weights */
      for (long j = 0; j < p->size; j++) {
        m[j] = b1 * m[j];
        v[j] = b2 * v[j];
        w[j] -= step * m[j] / (sqrtf(v[j]) * inv_sqrt_bc2 + eps);
      }
    }
  }
}

void Adam_free(Adam *opt) {
  if (opt->m) {
    for (int i = 0; opt->m[i]; i++) {
      free(opt->m[i]);
      free(opt->v[i]);
    }
  }
  free(opt->m);
  free(opt->v);
  opt->m = opt->v = NULL;
  opt->t = 0;
}

/* ---------- gradient clipping ---------- */

/* d2l's grad_clipping: g <- g * theta / ||g|| when the global norm exceeds theta. */
float clip_grad_norm(ParamSet *ps, float max_norm) {
  double sq = 0;
  for (int i = 0; i < ps->n; i++) {
    const Tensor *p = ps->items[i];
    if (!p->grad) continue;
    check_host("clip_grad_norm", p);
    /* per-tensor partial sums in double (millions of small squares), in 8 independent lanes
     * so the loop vectorizes: one running sum is a chain of dependent adds, which without
     * -ffast-math the compiler may not reorder */
    const float *g = p->grad;
    double lane[8] = {0}, s = 0;
    long j = 0;
    for (; j + 8 <= p->size; j += 8)
      for (int k = 0; k < 8; k++) lane[k] += (double)g[j + k] * g[j + k];
    for (; j < p->size; j++) s += (double)g[j] * g[j];
    for (int k = 0; k < 8; k++) s += lane[k];
    sq += s;
  }
  double norm = sqrt(sq);
  if (norm > max_norm) {
    float scale = (float)(max_norm / norm);
    for (int i = 0; i < ps->n; i++) {
      Tensor *p = ps->items[i];
      if (!p->grad) continue;
      for (long j = 0; j < p->size; j++) p->grad[j] *= scale;
    }
  }
  return (float)norm;
}
