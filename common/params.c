/* params.c — the parameter registry: a model's parameters as one block of values and one of
 * gradients (nn.h), and the operations over the blocks: pack, move, zero, share. Each is one
 * kernel call (or one copy) over a whole block, on the block's device. The optimizers are
 * optim.c's, the checkpoints checkpoint.c's. */
#include <stdio.h>
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
  /* on the device the lab creates its tensors on; zeros until its layer's init */
  t->device = tensor_default_device();
  size_t bytes = sizeof(float) * (size_t)(t->size ? t->size : 1);
  t->data = backend_of(t->device)->alloc(bytes);
  backend_of(t->device)->zero(t->data, bytes);
  t->grad = NULL; /* tensor_grad() allocates it (persistently, since is_param) */
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

void *param_block_alloc(Device d, long n) {
  return backend_of(d)->alloc(sizeof(float) * (size_t)(n ? n : 1));
}

/* (Re)build the blocks on device d from wherever each parameter is now: the old blocks for
 * items[0..packed), single buffers for parameters registered since. */
static void repack(ParamSet *ps, Device d) {
  long total = paramset_count(ps);
  float *data = param_block_alloc(d, total), *grad = param_block_alloc(d, total);
  backend_of(d)->zero(grad, sizeof(float) * (size_t)(total ? total : 1));
  long off = 0;
  for (int i = 0; i < ps->n; i++) {
    Tensor *t = ps->items[i];
    bool in_block = i < ps->packed;
    const size_t bytes = sizeof(float) * (size_t)t->size;
    backend_copy(data + off, d, t->data, t->device, bytes);
    if (t->grad) backend_copy(grad + off, d, t->grad, t->device, bytes);
    if (!in_block) { /* single buffers from param_new / tensor_grad */
      backend_of(t->device)->free(t->data);
      if (t->grad) backend_of(t->device)->free(t->grad);
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
  repack(ps, ps->data ? ps->device : ps->n ? ps->items[0]->device : tensor_default_device());
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

void paramset_share_values(ParamSet *dst, const ParamSet *src) {
  paramset_pack(dst);
  if (dst->n != src->n || dst->total != src->total || dst->device != src->device ||
      src->packed != src->n)
    tensor_error("paramset_share_values", "%d tensors (%ld floats) on %s vs %d (%ld) on %s: "
                 "the twin must be built like the model, and the model packed",
                 dst->n, dst->total, device_name(dst->device), src->n, src->total,
                 device_name(src->device));
  for (int i = 0; i < dst->n; i++) {
    if (dst->items[i]->size != src->items[i]->size)
      tensor_error("paramset_share_values", "tensor %d: %s has %ld floats, %s %ld", i,
                   dst->items[i]->name, dst->items[i]->size, src->items[i]->name,
                   src->items[i]->size);
    dst->items[i]->data = src->items[i]->data; /* dst's own block stays allocated, unused */
  }
}

void paramset_free(ParamSet *ps) {
  for (int i = 0; i < ps->n; i++) {
    Tensor *t = ps->items[i];
    if (i >= ps->packed) {
      backend_of(t->device)->free(t->data);
      if (t->grad) backend_of(t->device)->free(t->grad);
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

