/* params.c — a model's parameters as one block of values, one of gradients and one per
 * optimizer state (nn.h), and the operations over them: move, zero, SGD, Adam, clipping.
 * Each is one kernel call (or one copy) over a whole block, on the block's device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "nn.h"
#include "util.h"

/* ---------- the registry ---------- */

Tensor *param_new(ParamSet *ps, const char *name, int ndim, const int *shape) {
  const char *nm = name ? name : "param";
  if (ndim < 1 || ndim > T_MAXDIM)
    tensor_error("param_new", "parameter '%s': a tensor has 1 to %d dims, got %d", nm, T_MAXDIM,
                 ndim);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0)
      tensor_error("param_new", "parameter '%s': dim %d has negative size %d", nm, i, shape[i]);
  Tensor *t = xcalloc(1, sizeof *t);
  t->ndim = ndim;
  memcpy(t->shape, shape, sizeof(int) * (size_t)ndim);
  t->size = shape_numel(ndim, shape);
  t->data = xcalloc((size_t)(t->size ? t->size : 1), sizeof(float)); /* zeros until init */
  t->grad = NULL; /* tensor_grad() allocates it (persistently, since is_param) */
  t->device = DEV_CPU;
  t->requires_grad = true;
  t->is_param = true;
  t->name = xstrdup(nm);
  if (ps) {
    if (ps->n == ps->cap) {
      ps->cap = ps->cap ? 2 * ps->cap : 16;
      ps->items = xrealloc(ps->items, sizeof *ps->items * (size_t)ps->cap);
    }
    ps->items[ps->n++] = t;
  }
  return t;
}

const char *param_name(char *buf, size_t n, const char *prefix, const char *suffix) {
  if (prefix && *prefix)
    snprintf(buf, n, "%s.%s", prefix, suffix);
  else
    snprintf(buf, n, "%s", suffix);
  return buf;
}

long paramset_count(const ParamSet *ps) {
  long n = 0;
  for (int i = 0; i < ps->n; i++) n += ps->items[i]->size;
  return n;
}

void paramset_print(const ParamSet *ps, FILE *f) {
  int w = 4;
  for (int i = 0; i < ps->n; i++) {
    int len = (int)strlen(ps->items[i]->name);
    if (len > w) w = len;
  }
  for (int i = 0; i < ps->n; i++) {
    char s[64];
    const Tensor *t = ps->items[i];
    fprintf(f, "%-*s  %-18s %10ld\n", w, t->name, shape_str(t, s, sizeof s), t->size);
  }
}

Tensor *paramset_find(const ParamSet *ps, const char *name) {
  for (int i = 0; i < ps->n; i++)
    if (strcmp(ps->items[i]->name, name) == 0) return ps->items[i];
  return NULL;
}

/* ---------- the blocks ---------- */

static void *block_alloc(Device d, long n) {
  return backend_of(d)->alloc(sizeof(float) * (size_t)(n ? n : 1));
}

/* Copy n floats of one parameter from where it lives (device `from`) into the block (device
 * `to`); host memory that is not the block is then freed by the caller. */
static void move_floats(float *dst, Device to, const float *src, Device from, long n) {
  size_t bytes = sizeof(float) * (size_t)n;
  if (!bytes) return;
  if (from == to)
    backend_of(to)->copy(dst, src, bytes);
  else if (from == DEV_CPU)
    backend_of(to)->from_host(dst, src, bytes);
  else if (to == DEV_CPU)
    backend_of(from)->to_host(dst, src, bytes);
  else {
    float *h = xmalloc(bytes);
    backend_of(from)->to_host(h, src, bytes);
    backend_of(to)->from_host(dst, h, bytes);
    free(h);
  }
}

/* (Re)build the blocks on device d from wherever each parameter is now: the old blocks for
 * items[0..packed), single host buffers for parameters registered since. */
static void repack(ParamSet *ps, Device d) {
  long total = paramset_count(ps);
  float *data = block_alloc(d, total), *grad = block_alloc(d, total);
  backend_of(d)->zero(grad, sizeof(float) * (size_t)(total ? total : 1));
  long off = 0;
  for (int i = 0; i < ps->n; i++) {
    Tensor *t = ps->items[i];
    bool in_block = i < ps->packed;
    move_floats(data + off, d, t->data, t->device, t->size);
    if (t->grad) move_floats(grad + off, d, t->grad, t->device, t->size);
    if (!in_block) { /* single host buffers from param_new / tensor_grad */
      free(t->data);
      free(t->grad);
    }
    t->data = data + off;
    t->grad = grad + off;
    t->device = d;
    off += t->size;
  }
  if (ps->data) {
    backend_of(ps->device)->free(ps->data);
    backend_of(ps->device)->free(ps->grad);
  }
  ps->data = data;
  ps->grad = grad;
  ps->total = total;
  ps->packed = ps->n;
  ps->device = d;
}

void paramset_pack(ParamSet *ps) {
  if (ps->packed == ps->n && ps->data) return;
  repack(ps, ps->data ? ps->device : DEV_CPU);
}

void paramset_to(ParamSet *ps, Device d) {
  (void)backend_of(d); /* no table for d: the error names the device */
  if (ps->data && ps->packed == ps->n && ps->device == d) return;
  repack(ps, d);
}

void paramset_zero_grad(ParamSet *ps) {
  paramset_pack(ps);
  backend_of(ps->device)->zero(ps->grad, sizeof(float) * (size_t)(ps->total ? ps->total : 1));
}

void paramset_free(ParamSet *ps) {
  for (int i = 0; i < ps->n; i++) {
    Tensor *t = ps->items[i];
    if (i >= ps->packed) {
      free(t->data);
      free(t->grad);
    }
    free((void *)t->name);
    free(t);
  }
  if (ps->data) {
    backend_of(ps->device)->free(ps->data);
    backend_of(ps->device)->free(ps->grad);
  }
  free(ps->items);
  memset(ps, 0, sizeof *ps);
}

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
  float *m = block_alloc(ps->device, ps->total), *v = block_alloc(ps->device, ps->total);
  backend_of(ps->device)->zero(m, sizeof(float) * (size_t)(ps->total ? ps->total : 1));
  backend_of(ps->device)->zero(v, sizeof(float) * (size_t)(ps->total ? ps->total : 1));
  if (opt->m) {
    long keep = opt->n < ps->total ? opt->n : ps->total;
    move_floats(m, ps->device, opt->m, opt->device, keep);
    move_floats(v, ps->device, opt->v, opt->device, keep);
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

/* d2l's grad_clipping: g <- g * theta / ||g|| when the global norm exceeds theta. The norm
 * comes back to the host (one number); the scaling is one kernel over the gradient block. */
float clip_grad_norm(ParamSet *ps, float max_norm) {
  paramset_pack(ps);
  double sq;
  KERNEL_RET(sq, ps->device, sum_squares, ps->grad, ps->total);
  double norm = sqrt(sq);
  if (norm > max_norm) {
    float scale = (float)(max_norm / norm);
    KERNEL(ps->device, unary, UN_SCALE, scale, ps->grad, ps->grad, ps->total);
  }
  return (float)norm;
}
