/* tensor.c — tensors: the default device, creation, moves between devices, host copies and
 * printing. Layer: calls error.c, context.c (the arena) and backend.c (the device tables);
 * autograd.c and the ops build on it, nothing below calls it (the map of the layers is in
 * context.h). */
#include "tensor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "rng.h"
#include "util.h"

/* AL_CHECK_HOST_COPIES=1 (the CUDA suites set it): host_read copies back anyway and dies if a
 * tensor's host copy no longer matches its data (something wrote the data in place). */
static int g_check_host_copies = -1;
static bool check_host_copies(void) {
  if (g_check_host_copies < 0) {
    const char *e = getenv("AL_CHECK_HOST_COPIES");
    g_check_host_copies = e && strcmp(e, "1") == 0;
  }
  return g_check_host_copies;
}
void tensor_check_host_copies(bool on) { g_check_host_copies = on; }

const float *host_read(const Tensor *t) {
  if (t->device == DEV_CPU) return t->data;
  if (t->host && !check_host_copies()) return t->host; /* it came from the host: no copy back */
  float *h = arena_alloc(sizeof(float) * (size_t)(t->size ? t->size : 1));
  tensor_to_host(t, h);
  if (t->host && memcmp(h, t->host, sizeof(float) * (size_t)t->size) != 0)
    tensor_error(t->name, "the host copy of this %s tensor no longer matches its data: something "
                 "wrote the data in place after it was sent (tensor.h: Tensor.host)",
                 device_name(t->device));
  return h;
}

/* ---------- creation ---------- */

long shape_numel(int ndim, const int *shape) {
  long n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

static void check_shape(const char *op, int ndim, const int *shape) {
  if (ndim < 1 || ndim > T_MAXDIM)
    tensor_error(op, "a tensor has 1 to %d dims, got %d", T_MAXDIM, ndim);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) tensor_error(op, "dim %d has negative size %d", i, shape[i]);
}

static Device g_default_device = DEV_CPU;

void tensor_set_default_device(Device d) {
  (void)backend_of(d); /* a device without a table is an error now, not at the first op */
  g_default_device = d;
}
Device tensor_default_device(void) { return g_default_device; }

Tensor *tensor_new_on(Device d, int ndim, const int *shape) {
  check_shape("tensor_new", ndim, shape);
  Tensor *t = arena_calloc(sizeof *t);
  t->ndim = ndim;
  memcpy(t->shape, shape, sizeof(int) * (size_t)ndim);
  t->size = shape_numel(ndim, shape);
  t->data = dev_alloc(d, sizeof(float) * (size_t)(t->size ? t->size : 1));
  t->device = d;
  t->name = "tensor";
  return t;
}

Tensor *tensor_new(int ndim, const int *shape) {
  return tensor_new_on(g_default_device, ndim, shape);
}

/* Keep a host copy of what was sent to t (not on the CPU, where the data is on the host, nor for
 * parameters: the optimizer changes their data) */
static void keep_host_copy(Tensor *t, const float *src, size_t bytes) {
  t->host = NULL;
  if (t->device == DEV_CPU || t->is_param || t->size > TENSOR_HOST_COPY_MAX) return;
  float *h = arena_alloc(bytes ? bytes : 1);
  memcpy(h, src, bytes);
  t->host = h;
}

void tensor_copy_from_host(Tensor *t, const float *src) {
  size_t bytes = sizeof(float) * (size_t)t->size;
  backend_of(t->device)->from_host(t->data, src, bytes);
  keep_host_copy(t, src, bytes);
}

float *tensor_stage(Tensor *t) {
  return t->device == DEV_CPU ? t->data
                              : arena_alloc(sizeof(float) * (size_t)(t->size ? t->size : 1));
}
Tensor *tensor_stage_done(Tensor *t, float *h) {
  if (h != t->data) tensor_copy_from_host(t, h);
  return t;
}

Tensor *tensor_zeros(int ndim, const int *shape) {
  Tensor *t = tensor_new(ndim, shape);
  backend_of(t->device)->zero(t->data, sizeof(float) * (size_t)t->size);
  return t;
}

Tensor *tensor_full(int ndim, const int *shape, float v) {
  Tensor *t = tensor_new(ndim, shape);
  float *h = tensor_stage(t);
  for (long i = 0; i < t->size; i++) h[i] = v;
  return tensor_stage_done(t, h);
}

Tensor *tensor_full_on(Device d, int ndim, const int *shape, float v) {
  Tensor *t = tensor_new_on(d, ndim, shape);
  KERNEL(d, fill, t->data, v, t->size);
  return t;
}

Tensor *tensor_from(int ndim, const int *shape, const float *src) {
  Tensor *t = tensor_new(ndim, shape);
  tensor_copy_from_host(t, src);
  return t;
}

Tensor *tensor_arange(int n) {
  Tensor *t = tensor_new(1, (int[]){n});
  float *h = tensor_stage(t);
  for (int i = 0; i < n; i++) h[i] = (float)i;
  return tensor_stage_done(t, h);
}

Tensor *tensor_rand(int ndim, const int *shape, float lo, float hi) {
  Tensor *t = tensor_new(ndim, shape);
  float *h = tensor_stage(t);
  for (long i = 0; i < t->size; i++) h[i] = rng_uniform(&g_rng, lo, hi);
  return tensor_stage_done(t, h);
}

Tensor *tensor_randn(int ndim, const int *shape, float mean, float std) {
  Tensor *t = tensor_new(ndim, shape);
  float *h = tensor_stage(t);
  for (long i = 0; i < t->size; i++) h[i] = rng_normal(&g_rng, mean, std);
  return tensor_stage_done(t, h);
}

Tensor *tensor_to(Tensor *x, Device d) {
  if (x->device == d) return x;
  Tensor *t = tensor_new_on(d, x->ndim, x->shape);
  t->name = x->name;
  size_t bytes = sizeof(float) * (size_t)x->size;
  backend_copy(t->data, d, x->data, x->device, bytes);
  if (x->device == DEV_CPU) keep_host_copy(t, x->data, bytes); /* it came from the host */
  return t;
}

void tensor_to_packed(Tensor **xs, int n, Device d) {
  if (d == DEV_CPU) return;
  enum { ALIGN = 64 }; /* each piece where the arena would put it: exact bounds per tensor */
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    if (xs[i]->device != DEV_CPU)
      tensor_error("tensor_to_packed", "tensor %d (%s) is on %s: only host tensors are sent", i,
                   xs[i]->name, device_name(xs[i]->device));
    total += (sizeof(float) * (size_t)xs[i]->size + ALIGN - 1) / ALIGN * ALIGN;
  }
  char *h = arena_alloc(total ? total : 1), *blk = dev_alloc(d, total ? total : 1);
  const Backend *be = backend_of(d);
  size_t off = 0;
  Tensor *out[n ? n : 1];
  for (int i = 0; i < n; i++) {
    const size_t bytes = sizeof(float) * (size_t)xs[i]->size;
    memcpy(h + off, xs[i]->data, bytes);
    if (be->carved) be->carved(blk + off, bytes);
    Tensor *t = arena_calloc(sizeof *t);
    t->ndim = xs[i]->ndim;
    memcpy(t->shape, xs[i]->shape, sizeof t->shape);
    t->size = xs[i]->size;
    t->data = (float *)(blk + off);
    t->device = d;
    t->name = xs[i]->name;
    keep_host_copy(t, xs[i]->data, bytes); /* it came from the host */
    out[i] = t;
    off += (bytes + ALIGN - 1) / ALIGN * ALIGN;
  }
  be->from_host(blk, h, total); /* the one copy */
  for (int i = 0; i < n; i++) xs[i] = out[i];
}

/* ---------- constants: sent once per device ---------- */

/* A constant's device copy and the host bytes it was made from (kept for the program): `rows`
 * copies of a row of n floats. */
typedef struct {
  Device d;
  long n, rows;
  float *host, *dev;
} ConstEntry;
enum { CONST_MAX = 64 };
static ConstEntry g_consts[CONST_MAX];
static int g_nconsts;

/* A new entry (an older one stays: tensors of this step may still read it), or NULL when the
 * table is full (the caller then makes a plain copy). */
static ConstEntry *const_send(Device d, long n, long rows, const float *src) {
  if (g_nconsts == CONST_MAX) return NULL;
  const Backend *be = backend_of(d);
  ConstEntry *e = &g_consts[g_nconsts++];
  const size_t bytes = sizeof(float) * (size_t)n * (size_t)rows;
  *e = (ConstEntry){d, n, rows, xmalloc(bytes), be->alloc(bytes)};
  for (long r = 0; r < rows; r++) memcpy(e->host + r * n, src, sizeof(float) * (size_t)n);
  be->from_host(e->dev, e->host, bytes);
  backend_note_const_send(d);
  return e;
}

/* A tensor of the given shape over a constant's first elements */
static Tensor *const_view(const ConstEntry *e, int ndim, const int *shape) {
  Tensor *t = arena_calloc(sizeof *t);
  t->ndim = ndim;
  memcpy(t->shape, shape, sizeof(int) * (size_t)ndim);
  t->size = shape_numel(ndim, shape);
  t->data = e->dev;
  t->host = e->host;
  t->device = e->d;
  t->name = "constant";
  return t;
}

Tensor *tensor_const_rows(int rows, int n, const float *row) {
  const int shape[2] = {rows, n};
  check_shape("tensor_const_rows", 2, shape);
  const Device d = g_default_device;
  const ConstEntry *e = NULL;
  if (d != DEV_CPU) {
    for (int i = 0; i < g_nconsts && !e; i++)
      if (g_consts[i].d == d && g_consts[i].n == n &&
          g_consts[i].rows >= rows && memcmp(g_consts[i].host, row, sizeof(float) * (size_t)n) == 0)
        e = &g_consts[i];
    /* room for a batch of 256 at once, so that batches of other sizes find it too */
    if (!e) e = const_send(d, n, rows > 256 ? rows : 256, row);
    if (e) return const_view(e, 2, shape);
  }
  Tensor *t = tensor_new(2, shape);
  float *h = tensor_stage(t);
  for (int r = 0; r < rows; r++) memcpy(h + (long)r * n, row, sizeof(float) * (size_t)n);
  return tensor_stage_done(t, h);
}

void tensor_same_device(const char *op, const Tensor *a, const Tensor *b, const Tensor *c) {
  const Tensor *ts[3] = {a, b, c};
  const Tensor *first = NULL;
  for (int i = 0; i < 3; i++) {
    if (!ts[i]) continue;
    if (!first) {
      first = ts[i];
    } else if (ts[i]->device != first->device) {
      char s1[64], s2[64];
      tensor_error(op, "inputs on two devices: %s %s is on %s, %s %s is on %s; a graph lives on "
                   "one device (move one with tensor_to)", first->name,
                   shape_str(first, s1, sizeof s1), device_name(first->device), ts[i]->name,
                   shape_str(ts[i], s2, sizeof s2), device_name(ts[i]->device));
    }
  }
}

bool tensor_same_shape(const Tensor *a, const Tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

float *tensor_at(Tensor *t, const int *idx) {
  if (t->device != DEV_CPU)
    tensor_error("tensor_at", "the tensor is on %s; tensor_at reads host memory: copy it first "
                 "(tensor_to(t, DEV_CPU))", device_name(t->device));
  long off = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (idx[i] < 0 || idx[i] >= t->shape[i]) {
      char s[64];
      tensor_error("tensor_at", "index %d out of range for dim %d of shape %s", idx[i], i,
                   shape_str(t, s, sizeof s));
    }
    off = off * t->shape[i] + idx[i];
  }
  return t->data + off;
}

void tensor_to_host(const Tensor *t, float *dst) {
  backend_of(t->device)->to_host(dst, t->data, sizeof(float) * (size_t)t->size);
}

static void print_rec(FILE *f, const Tensor *t, const float *data, int dim, long *off,
                      int indent, int dec) {
  fputc('[', f);
  int n = t->shape[dim];
  for (int i = 0; i < n; i++) {
    if (dim == t->ndim - 1) {
      float v = data[(*off)++];
      if (i) fputs(", ", f);
      fprintf(f, "%.*f", dec, (double)v);
    } else {
      if (i) {
        fputc(',', f);
        for (int b = 0; b < t->ndim - 1 - dim; b++) fputc('\n', f);
        for (int s = 0; s < indent + 1; s++) fputc(' ', f);
      }
      print_rec(f, t, data, dim + 1, off, indent + 1, dec);
    }
  }
  fputc(']', f);
}

void tensor_fprint(FILE *f, const Tensor *t, const char *name, int decimals) {
  if (name) fprintf(f, "%s = ", name);
  fputs("tensor(", f);
  long off = 0;
  int indent = 7 + (name ? (int)strlen(name) + 3 : 0);
  if (t->size == 0)
    fputs("[]", f);
  else
    print_rec(f, t, host_read(t), 0, &off, indent, decimals);
  fputs(")\n", f);
}

void tensor_print(const Tensor *t, const char *name) { tensor_fprint(stdout, t, name, 4); }
