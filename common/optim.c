/* optim.c — the optimizers (SGD, Adam) and gradient clipping over a model's parameter block
 * (nn.h): each step is one kernel call over the whole block, on the block's device. */
#include <math.h>
#include <stdlib.h>

#include "backend.h"
#include "nn.h"

/* ---------- SGD ---------- */

void SGD_step(SGD *opt) {
  ParamSet *ps = opt->ps;
  paramset_pack(ps);
  KERNEL(ps->device, sgd, ps->data, ps->grad, opt->lr, ps->total);
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
  opt->n = 0;
  opt->device = DEV_CPU;
}

/* The moments follow the parameter block: the same length (a parameter registered after the
 * first step gets zero moments at the end, where packing puts it) and the same device. */
static void adam_follow(Adam *opt) {
  ParamSet *ps = opt->ps;
  if (opt->m && opt->n == ps->total && opt->device == ps->device) return;
  float *m = param_block_alloc(ps->device, ps->total), *v = param_block_alloc(ps->device, ps->total);
  backend_of(ps->device)->zero(m, sizeof(float) * (size_t)(ps->total ? ps->total : 1));
  backend_of(ps->device)->zero(v, sizeof(float) * (size_t)(ps->total ? ps->total : 1));
  if (opt->m) {
    long keep = opt->n < ps->total ? opt->n : ps->total;
    const size_t bytes = sizeof(float) * (size_t)keep;
    backend_copy(m, ps->device, opt->m, opt->device, bytes);
    backend_copy(v, ps->device, opt->v, opt->device, bytes);
    backend_of(opt->device)->free(opt->m);
    backend_of(opt->device)->free(opt->v);
  }
  opt->m = m;
  opt->v = v;
  opt->n = ps->total;
  opt->device = ps->device;
}

void Adam_step(Adam *opt) {
  paramset_pack(opt->ps);
  adam_follow(opt);
  opt->t++;
  const float b1 = opt->beta1, b2 = opt->beta2;
  const double bc1 = 1.0 - pow((double)b1, (double)opt->t);
  const double bc2 = 1.0 - pow((double)b2, (double)opt->t);
  const float step = (float)(opt->lr / bc1);
  const float inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
  ParamSet *ps = opt->ps;
  KERNEL(ps->device, adam, ps->data, ps->grad, opt->m, opt->v, ps->total, b1, b2, step,
         inv_sqrt_bc2, opt->eps);
}

void Adam_free(Adam *opt) {
  if (opt->m) {
    backend_of(opt->device)->free(opt->m);
    backend_of(opt->device)->free(opt->v);
  }
  opt->m = opt->v = NULL;
  opt->n = 0;
  opt->t = 0;
}

/* ---------- gradient clipping ---------- */

/* d2l's grad_clipping: g <- g * theta / ||g|| when the global norm exceeds theta, over the
 * gradient block on its device. The norm stays there (one float of the step's arena): a
 * training step never waits for it. Returns where it is. */
static float *clip(ParamSet *ps, float max_norm) {
  paramset_pack(ps);
  float *norm = dev_alloc(ps->device, sizeof(float));
  KERNEL(ps->device, clip_grad, ps->grad, ps->total, max_norm, norm);
  return norm;
}

void grad_clipping(ParamSet *ps, float max_norm) { (void)clip(ps, max_norm); }

float clip_grad_norm(ParamSet *ps, float max_norm) {
  float norm;
  backend_of(ps->device)->to_host(&norm, clip(ps, max_norm), sizeof norm); /* read back */
  return norm;
}

