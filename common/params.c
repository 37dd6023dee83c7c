/* params.c — a model's parameters as one block of values, one of gradients and one per
 * optimizer state (nn.h), and the operations over them: move, zero, SGD, Adam, clipping,
 * checkpoints.
 * Each is one kernel call (or one copy) over a whole block, on the block's device. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "data.h"
#include "gemm.h"
#include "nn.h"
#include "rng.h"
#include "util.h"

#ifdef _OPENMP
#include <omp.h>
#endif

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
 * items[0..packed), single buffers for parameters registered since. */
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

void twin_parts_run(TwinPartFn part, void *arg, ParamSet *ps, ParamSet *twin_ps, AgContext *ctx,
                    Rng *rng) {
  /* the second part's dropout generator: one draw of the program's seeds it on either path */
  const uint64_t seed = rng_next(&g_rng);
  if (!twin_ps) { /* one after the other on this thread; the caller's batch is off the arena */
    Rng second;
    rng_init(&second, seed);
    part(0, arg);
    ag_step_reset();
    rng_use(&second);
    part(1, arg);
    rng_use(NULL);
    return;
  }
  paramset_zero_grad(twin_ps);
  gemm_before_threads();
#pragma omp parallel num_threads(2)
  {
    int tid = 0, nth = 1;
#ifdef _OPENMP
    tid = omp_get_thread_num();
    nth = omp_get_num_threads();
#endif
    for (int p = tid; p < 2; p += nth) {
      if (p == 1) {
        rng_init(rng, seed);
        rng_use(rng);
        ag_context_use(ctx);
        ag_set_release_grads(true); /* only the parameters' gradients are read */
      }
      part(p, arg);
      if (p == 1) {
        ag_step_reset();
        ag_context_use(NULL);
        rng_use(NULL);
      }
    }
  }
  float *g = ps->grad;
  const float *g1 = twin_ps->grad;
  const long n = ps->total;
#pragma omp parallel for simd schedule(static) num_threads(2) if (n >= (1L << 16)) /* as Adam */
  for (long i = 0; i < n; i++) g[i] += g1[i];
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

/* ---------- checkpoints ---------- */

/* Layout (little-endian host order; the magic's version word rejects foreign byte orders):
 *   "ALCKPT\0\0"  u32 version  u32 tag_len  tag bytes  u32 count
 *   per tensor: u32 name_len, name, u32 ndim, i32 shape[ndim], f32 data[size]
 *   u32 crc32 of every byte above. */
#define CKPT_MAGIC "ALCKPT\0\0"
#define CKPT_VERSION 1u

typedef struct Buf {
  unsigned char *p;
  size_t n, cap;
} Buf;

static void buf_put(Buf *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 256;
    b->p = xrealloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}
static void buf_u32(Buf *b, uint32_t v) { buf_put(b, &v, 4); }

int checkpoint_save(ParamSet *ps, const char *tag, const char *path, char *err,
                    size_t errlen) {
  if (!ps || !path) return fail(err, errlen, "checkpoint_save: NULL argument");
  paramset_pack(ps);
  if (!tag) tag = "";
  Buf b = {0};
  buf_put(&b, CKPT_MAGIC, 8);
  buf_u32(&b, CKPT_VERSION);
  buf_u32(&b, (uint32_t)strlen(tag));
  buf_put(&b, tag, strlen(tag));
  buf_u32(&b, (uint32_t)ps->n);
  /* the whole parameter block to the host in one copy */
  float *host = xmalloc(sizeof(float) * (size_t)(ps->total ? ps->total : 1));
  backend_of(ps->device)->to_host(host, ps->data, sizeof(float) * (size_t)ps->total);
  long off = 0;
  for (int i = 0; i < ps->n; i++) {
    const Tensor *t = ps->items[i];
    const char *nm = t->name ? t->name : "";
    buf_u32(&b, (uint32_t)strlen(nm));
    buf_put(&b, nm, strlen(nm));
    buf_u32(&b, (uint32_t)t->ndim);
    for (int k = 0; k < t->ndim; k++) buf_u32(&b, (uint32_t)t->shape[k]);
    buf_put(&b, host + off, sizeof(float) * (size_t)t->size);
    off += t->size;
  }
  free(host);
  buf_u32(&b, crc32_update(0, b.p, b.n));
  size_t tl = strlen(path) + 5;
  char *tmp = xmalloc(tl);
  snprintf(tmp, tl, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  int rc = 0;
  if (!f) {
    rc = fail(err, errlen, "checkpoint_save: cannot create %s: %s", tmp, strerror(errno));
  } else {
    bool ok = fwrite(b.p, 1, b.n, f) == b.n;
    ok = (fflush(f) == 0) && ok;
    ok = (fsync(fileno(f)) == 0) && ok; /* on disk before the rename makes it the checkpoint */
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
      rc = fail(err, errlen, "checkpoint_save: writing %s failed: %s (disk full?)", tmp,
                strerror(errno));
      remove(tmp);
    } else if (rename(tmp, path) != 0) {
      rc = fail(err, errlen, "checkpoint_save: cannot rename %s to %s: %s", tmp, path,
                strerror(errno));
      remove(tmp);
    }
  }
  free(tmp);
  free(b.p);
  return rc;
}

/* A bounds-checked reader over the loaded file. */
typedef struct Rd {
  const unsigned char *p;
  size_t n, off;
} Rd;
static bool rd(Rd *r, void *dst, size_t n) {
  if (n > r->n - r->off) return false;
  memcpy(dst, r->p + r->off, n);
  r->off += n;
  return true;
}

int checkpoint_load(ParamSet *ps, const char *tag, const char *path, char *err, size_t errlen) {
  if (!ps || !path) return fail(err, errlen, "checkpoint_load: NULL argument");
  if (!tag) tag = "";
  FILE *f = fopen(path, "rb");
  if (!f) return fail(err, errlen, "checkpoint %s: cannot open: %s", path, strerror(errno));
  Buf b = {0};
  unsigned char chunk[65536];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (b.n + k > ((size_t)1 << 31)) {
      fclose(f);
      free(b.p);
      return fail(err, errlen, "checkpoint %s: larger than 2 GiB, not a lab checkpoint", path);
    }
    buf_put(&b, chunk, k);
  }
  bool rerr = ferror(f);
  fclose(f);
  int rc = -1;
  paramset_pack(ps);
  /* the file's values, staged on the host as one block and sent to the model in one copy */
  float *staged = xmalloc(sizeof(float) * (size_t)(ps->total ? ps->total : 1));
  long off = 0;
  char name[512];
  Rd r = {b.p, b.n, 0};
  char magic[8];
  uint32_t ver, tlen, count, crc;
  if (rerr) {
    fail(err, errlen, "checkpoint %s: read error", path);
    goto out;
  }
  if (!rd(&r, magic, 8) || memcmp(magic, CKPT_MAGIC, 8) != 0) {
    fail(err, errlen, "checkpoint %s: not an attention-lab checkpoint (bad magic); was it "
         "written by --save?", path);
    goto out;
  }
  if (!rd(&r, &ver, 4)) goto truncated;
  if (ver != CKPT_VERSION) {
    fail(err, errlen, "checkpoint %s: format version %u is %s this build's (version %u); %s",
         path, ver, ver < CKPT_VERSION ? "older than" : "newer than", CKPT_VERSION,
         ver < CKPT_VERSION ? "save it again with this build" : "use the build that wrote it");
    goto out;
  }
  if (b.n < 8 + 4 + 4) goto truncated;
  memcpy(&crc, b.p + b.n - 4, 4);
  if (crc32_update(0, b.p, b.n - 4) != crc) {
    fail(err, errlen, "checkpoint %s: CRC-32 mismatch: the file is truncated or corrupted "
         "(%zu bytes); save it again", path, b.n);
    goto out;
  }
  r.n = b.n - 4; /* the CRC is not payload */
  if (!rd(&r, &tlen, 4) || tlen > r.n - r.off) goto truncated;
  if (tlen != strlen(tag) || memcmp(r.p + r.off, tag, tlen) != 0) {
    fail(err, errlen, "checkpoint %s: saved for model '%.*s', but this model is '%s'; use the "
         "same --preset and model flags as when it was saved (./labNN --help lists them)", path,
         (int)(tlen < 200 ? tlen : 200), (const char *)r.p + r.off, tag);
    goto out;
  }
  r.off += tlen;
  if (!rd(&r, &count, 4)) goto truncated;
  if ((int)count != ps->n) {
    fail(err, errlen, "checkpoint %s: holds %u tensors, the model has %d", path, count, ps->n);
    goto out;
  }
  for (int i = 0; i < ps->n; i++) {
    Tensor *t = ps->items[i];
    uint32_t nl, nd;
    if (!rd(&r, &nl, 4) || nl >= sizeof name || !rd(&r, name, nl)) goto truncated;
    name[nl] = '\0';
    if (strcmp(name, t->name ? t->name : "") != 0) {
      fail(err, errlen, "checkpoint %s: tensor %d is '%s', the model expects '%s'", path, i,
           name, t->name ? t->name : "");
      goto out;
    }
    if (!rd(&r, &nd, 4) || nd < 1 || nd > T_MAXDIM) goto truncated;
    int shape[T_MAXDIM];
    bool same = (int)nd == t->ndim;
    for (uint32_t d = 0; d < nd; d++) {
      uint32_t v;
      if (!rd(&r, &v, 4)) goto truncated;
      shape[d] = (int)v;
      if (same && shape[d] != t->shape[d]) same = false;
    }
    if (!same) {
      char st[64], sf[96];
      int o = snprintf(sf, sizeof sf, "(");
      for (uint32_t d = 0; d < nd && o < 80; d++)
        o += snprintf(sf + o, sizeof sf - (size_t)o, "%s%d", d ? ", " : "", shape[d]);
      snprintf(sf + o, sizeof sf - (size_t)o, ")");
      fail(err, errlen, "checkpoint %s: tensor '%s' has shape %s in the file but %s in the model",
           path, name, sf, shape_str(t, st, sizeof st));
      goto out;
    }
    if (!rd(&r, staged + off, sizeof(float) * (size_t)t->size)) goto truncated;
    off += t->size;
  }
  if (r.off != r.n) {
    fail(err, errlen, "checkpoint %s: %zu unexpected bytes after the last tensor", path,
         r.n - r.off);
    goto out;
  }
  /* everything checked out: now overwrite the model */
  backend_of(ps->device)->from_host(ps->data, staged, sizeof(float) * (size_t)ps->total);
  rc = 0;
  goto out;
truncated:
  fail(err, errlen, "checkpoint %s: truncated or malformed (%zu bytes); save it again", path, b.n);
out:
  free(staged);
  free(b.p);
  return rc;
}
