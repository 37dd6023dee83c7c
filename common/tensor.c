/* tensor.c — tensor creation, the activation arena, errors and the autograd tape. */
#include "tensor.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "rng.h"
#include "util.h"

/* ---------- errors ---------- */

/* per thread: an error in a twin's thread (ag_context_use) must not jump into the main thread's
 * handler */
static _Thread_local jmp_buf *g_catch;
static _Thread_local char g_errmsg[1024];

void tensor_catch_errors(jmp_buf *env) { g_catch = env; }
const char *tensor_last_error(void) { return g_errmsg; }

_Noreturn void tensor_error(const char *op, const char *fmt, ...) {
  int n = snprintf(g_errmsg, sizeof g_errmsg, "%s: ", op ? op : "tensor");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_errmsg + n, sizeof g_errmsg - (size_t)n, fmt, ap);
  va_end(ap);
  if (g_catch) {
    jmp_buf *env = g_catch;
    g_catch = NULL; /* one catch per arming: a second error inside a handler must not loop */
    longjmp(*env, 1);
  }
  fflush(stdout);
  fprintf(stderr, "error: %s%s\n", program_prefix(), g_errmsg); /* "error: lab06: op: ..." */
  exit(1);
}

char *shape_str(const Tensor *t, char *buf, size_t n) {
  if (!t) {
    snprintf(buf, n, "(null)");
    return buf;
  }
  size_t k = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < t->ndim && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? ", %d" : "%d", t->shape[i]);
  if (k < n) snprintf(buf + k, n - k, t->ndim == 1 ? ")" : ")");
  return buf;
}

/* ---------- arena ---------- */
/* A list of chunks; allocation bumps a pointer in the current chunk. Reset rewinds to the
 * first chunk but keeps every chunk, so after the first step the loop allocates nothing. */

typedef struct Chunk {
  struct Chunk *next;
  size_t cap, used;
  unsigned char *mem;
} Chunk;

/* One arena per device: chunks of that device's memory. Tensor headers and host scratch use the
 * CPU's (arena_alloc); tensor data uses its device's (dev_alloc). */
/* Big requests (a ViT's 4736 x 2048 activations are 39 MB) get blocks of their own, kept across
 * steps: at a reset every block becomes free, and a request takes the smallest free block that
 * fits it (and is less than twice its size). Bumped through the chunks, a big request that did
 * not fit a chunk's tail skipped that tail and, where the next chunk was smaller, made another:
 * the book ViT preset held 1.35 GB of chunks for an 812 MB peak. */
typedef struct {
  void *p;
  size_t cap;
} BigBlock;

typedef struct {
  Chunk *first, *cur;
  size_t used_total, peak;
  BigBlock *big; /* [0, big_used): handed out this step; then free ones */
  size_t big_used, big_n, big_cap;
} Arena;

/* Gradient buffers handed back during backward (ag_set_release_grads), for the step's later
 * gradients to reuse; emptied with the arena. Best fit by size: the blocks of a network repeat
 * the same few shapes. */
#define FREE_GRADS 512
typedef struct {
  float *p;
  long n;     /* floats */
  Device dev; /* whose memory */
} FreeGrad;

/* Everything a forward and backward pass writes besides the tensors: the activation arenas, the
 * tape and the gradient switches. One context serves the program; a thread that trains a twin of
 * the model beside it (twin_parts_run) uses its own (ag_context_use). Other threads (the
 * ops' OpenMP workers) never allocate or record, and see the main context. */
struct AgContext {
  Arena arena[DEV_COUNT];
  bool grad_on;
  Tensor **tape;
  size_t tape_len, tape_cap;
  bool release_grads;
  FreeGrad free_grads[FREE_GRADS];
  int nfree_grads;
};
static AgContext g_main_ctx = {.grad_on = true};
static _Thread_local AgContext *t_ctx; /* NULL: the main context */
static inline AgContext *ctx(void) { return t_ctx ? t_ctx : &g_main_ctx; }

AgContext *ag_context_new(void) {
  AgContext *c = xcalloc(1, sizeof *c);
  c->grad_on = true;
  return c;
}
void ag_context_use(AgContext *c) { t_ctx = c; }

#define ARENA_ALIGN 64
#define ARENA_CHUNK (8u << 20)
#define ARENA_BIG (1u << 20)

static Chunk *chunk_new(Device d, size_t cap) {
  Chunk *c = xmalloc(sizeof *c);
  c->next = NULL;
  c->cap = cap;
  c->used = 0;
  c->mem = d == DEV_CPU ? aligned_alloc(ARENA_ALIGN, cap) : backend_of(d)->alloc(cap);
  if (!c->mem) die("out of memory: activation arena chunk of %zu bytes", cap);
  return c;
}

static void *arena_alloc_big(Device d, size_t need) {
  Arena *A = &ctx()->arena[d];
  size_t best = A->big_n;
  for (size_t i = A->big_used; i < A->big_n; i++)
    if (A->big[i].cap >= need && A->big[i].cap / 2 < need &&
        (best == A->big_n || A->big[i].cap < A->big[best].cap))
      best = i;
  if (best == A->big_n) { /* none fits: a new block */
    if (A->big_n == A->big_cap) {
      A->big_cap = A->big_cap ? 2 * A->big_cap : 64;
      A->big = xrealloc(A->big, A->big_cap * sizeof *A->big);
    }
    void *p = d == DEV_CPU ? aligned_alloc(ARENA_ALIGN, need) : backend_of(d)->alloc(need);
    if (!p) die("out of memory: activation arena block of %zu bytes", need);
    A->big[A->big_n++] = (BigBlock){p, need};
  }
  BigBlock b = A->big[best];
  A->big[best] = A->big[A->big_used];
  A->big[A->big_used++] = b;
  A->used_total += need;
  if (A->used_total > A->peak) A->peak = A->used_total;
  return b.p;
}

bool arena_release(void *p) {
  for (int d = 0; p && d < DEV_COUNT; d++) {
    Arena *A = &ctx()->arena[d];
    for (size_t i = 0; i < A->big_used; i++)
      if (A->big[i].p == p) {
        BigBlock b = A->big[i];
        A->big[i] = A->big[--A->big_used]; /* the last one handed out takes its place */
        A->big[A->big_used] = b;           /* and b joins the free ones */
        A->used_total -= b.cap;
        return true;
      }
  }
  return false;
}

void *dev_alloc(Device d, size_t bytes) {
  Arena *A = &ctx()->arena[d];
  size_t need = (bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (need == 0) need = ARENA_ALIGN;
  if (need >= ARENA_BIG) return arena_alloc_big(d, need);
  if (!A->first) A->first = A->cur = chunk_new(d, need > ARENA_CHUNK ? need : ARENA_CHUNK);
  while (A->cur->used + need > A->cur->cap) {
    if (A->cur->next && A->cur->next->cap >= need) {
      A->cur = A->cur->next;
      A->cur->used = 0;
      continue;
    }
    if (A->cur->next) { /* next chunk too small for this request: insert a big one */
      Chunk *c = chunk_new(d, need > ARENA_CHUNK ? need : ARENA_CHUNK);
      c->next = A->cur->next;
      A->cur->next = c;
    } else {
      A->cur->next = chunk_new(d, need > ARENA_CHUNK ? need : ARENA_CHUNK);
    }
    A->cur = A->cur->next;
    A->cur->used = 0;
  }
  void *p = A->cur->mem + A->cur->used;
  A->cur->used += need;
  A->used_total += need;
  if (A->used_total > A->peak) A->peak = A->used_total;
  return p;
}

void *dev_calloc(Device d, size_t bytes) {
  void *p = dev_alloc(d, bytes);
  if (d == DEV_CPU)
    memset(p, 0, bytes);
  else
    backend_of(d)->zero(p, bytes);
  return p;
}

void *arena_alloc(size_t bytes) { return dev_alloc(DEV_CPU, bytes); }

void *arena_calloc(size_t bytes) {
  void *p = arena_alloc(bytes);
  memset(p, 0, bytes);
  return p;
}

size_t arena_used(void) {
  size_t n = 0;
  for (int d = 0; d < DEV_COUNT; d++) n += ctx()->arena[d].used_total;
  return n;
}
size_t arena_peak(void) {
  size_t n = 0;
  for (int d = 0; d < DEV_COUNT; d++) n += ctx()->arena[d].peak;
  return n;
}

static void arena_reset(void) {
  for (int d = 0; d < DEV_COUNT; d++) {
    Arena *A = &ctx()->arena[d];
    if (A->first) {
      A->cur = A->first;
      A->cur->used = 0;
    }
    A->used_total = 0;
    A->big_used = 0;
  }
}

void arena_free_all(void) {
  for (int d = 0; d < DEV_COUNT; d++) {
    Arena *A = &ctx()->arena[d];
    Chunk *c = A->first;
    while (c) {
      Chunk *n = c->next;
      if (d == DEV_CPU)
        free(c->mem);
      else
        backend_of((Device)d)->free(c->mem);
      free(c);
      c = n;
    }
    A->first = A->cur = NULL;
    for (size_t i = 0; i < A->big_n; i++) {
      if (d == DEV_CPU)
        free(A->big[i].p);
      else
        backend_of((Device)d)->free(A->big[i].p);
    }
    free(A->big);
    A->big = NULL;
    A->big_used = A->big_n = A->big_cap = 0;
    A->used_total = 0;
  }
}

void *dev_upload(Device d, const void *host, size_t bytes) {
  if (d == DEV_CPU) return (void *)host;
  void *p = dev_alloc(d, bytes);
  backend_of(d)->from_host(p, host, bytes);
  return p;
}

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

/* Keep a host copy of what was sent to t (not for parameters: the optimizer changes their data) */
static void keep_host_copy(Tensor *t, const float *src, size_t bytes) {
  t->host = NULL;
  if (t->is_param || t->size > TENSOR_HOST_COPY_MAX) return;
  float *h = arena_alloc(bytes ? bytes : 1);
  memcpy(h, src, bytes);
  t->host = h;
}

void tensor_copy_from_host(Tensor *t, const float *src) {
  size_t bytes = sizeof(float) * (size_t)t->size;
  if (t->device == DEV_CPU) {
    memcpy(t->data, src, bytes);
  } else {
    backend_of(t->device)->from_host(t->data, src, bytes);
    keep_host_copy(t, src, bytes);
  }
}

/* Host memory to fill t's data in: t->data on the CPU, else scratch that stage_done uploads. */
static float *stage(Tensor *t) {
  return t->device == DEV_CPU ? t->data
                              : arena_alloc(sizeof(float) * (size_t)(t->size ? t->size : 1));
}
static Tensor *stage_done(Tensor *t, float *h) {
  if (h != t->data) tensor_copy_from_host(t, h);
  return t;
}

Tensor *tensor_zeros(int ndim, const int *shape) {
  Tensor *t = tensor_new(ndim, shape);
  if (t->device == DEV_CPU)
    memset(t->data, 0, sizeof(float) * (size_t)t->size);
  else
    backend_of(t->device)->zero(t->data, sizeof(float) * (size_t)t->size);
  return t;
}

Tensor *tensor_full(int ndim, const int *shape, float v) {
  Tensor *t = tensor_new(ndim, shape);
  float *h = stage(t);
  for (long i = 0; i < t->size; i++) h[i] = v;
  return stage_done(t, h);
}

Tensor *tensor_from(int ndim, const int *shape, const float *src) {
  Tensor *t = tensor_new(ndim, shape);
  tensor_copy_from_host(t, src);
  return t;
}

Tensor *tensor_like(const Tensor *t) {
  Tensor *z = tensor_new_on(t->device, t->ndim, t->shape);
  if (z->device == DEV_CPU)
    memset(z->data, 0, sizeof(float) * (size_t)z->size);
  else
    backend_of(z->device)->zero(z->data, sizeof(float) * (size_t)z->size);
  return z;
}

Tensor *tensor_arange(int n) {
  Tensor *t = tensor_new(1, (int[]){n});
  float *h = stage(t);
  for (int i = 0; i < n; i++) h[i] = (float)i;
  return stage_done(t, h);
}

Tensor *tensor_rand(int ndim, const int *shape, float lo, float hi) {
  Tensor *t = tensor_new(ndim, shape);
  float *h = stage(t);
  for (long i = 0; i < t->size; i++) h[i] = rng_uniform(&g_rng, lo, hi);
  return stage_done(t, h);
}

Tensor *tensor_randn(int ndim, const int *shape, float mean, float std) {
  Tensor *t = tensor_new(ndim, shape);
  float *h = stage(t);
  for (long i = 0; i < t->size; i++) h[i] = rng_normal(&g_rng, mean, std);
  return stage_done(t, h);
}

Tensor *tensor_to(Tensor *x, Device d) {
  if (x->device == d) return x;
  Tensor *t = tensor_new_on(d, x->ndim, x->shape);
  t->name = x->name;
  size_t bytes = sizeof(float) * (size_t)x->size;
  if (x->device == DEV_CPU) {
    backend_of(d)->from_host(t->data, x->data, bytes);
    keep_host_copy(t, x->data, bytes);
  } else if (d == DEV_CPU) {
    backend_of(x->device)->to_host(t->data, x->data, bytes);
  } else { /* between two devices: through the host */
    float *h = arena_alloc(bytes ? bytes : 1);
    backend_of(x->device)->to_host(h, x->data, bytes);
    backend_of(d)->from_host(t->data, h, bytes);
  }
  return t;
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
  if (t->device == DEV_CPU)
    memcpy(dst, t->data, sizeof(float) * (size_t)t->size);
  else
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

/* ---------- autograd ---------- */


void ag_set_grad_enabled(bool on) { ctx()->grad_on = on; }
bool ag_grad_enabled(void) { return ctx()->grad_on; }
size_t ag_tape_len(void) { return ctx()->tape_len; }

bool ag_needs_grad(const Tensor *a, const Tensor *b, const Tensor *c) {
  if (!ctx()->grad_on) return false;
  return (a && a->requires_grad) || (b && b->requires_grad) || (c && c->requires_grad);
}

void ag_record(Tensor *out, BackwardFn fn, Tensor *a, Tensor *b, Tensor *c) {
  out->requires_grad = true;
  out->backward = fn;
  out->in[0] = a;
  out->in[1] = b;
  out->in[2] = c;
  if (ctx()->tape_len == ctx()->tape_cap) {
    ctx()->tape_cap = ctx()->tape_cap ? 2 * ctx()->tape_cap : 4096;
    ctx()->tape = xrealloc(ctx()->tape, ctx()->tape_cap * sizeof *ctx()->tape);
  }
  ctx()->tape[ctx()->tape_len++] = out;
}

void ag_set_release_grads(bool on) { ctx()->release_grads = on; }

static float *reuse_grad(Device d, long n) {
  int best = -1;
  for (int i = 0; i < ctx()->nfree_grads; i++)
    if (ctx()->free_grads[i].dev == d && ctx()->free_grads[i].n >= n && (best < 0 || ctx()->free_grads[i].n < ctx()->free_grads[best].n))
      best = i;
  if (best < 0) return NULL;
  float *p = ctx()->free_grads[best].p;
  ctx()->free_grads[best] = ctx()->free_grads[--ctx()->nfree_grads];
  return p;
}

/* A view's gradient is its base's buffer: nothing to push back. */
static void view_backward(Tensor *out) { (void)out; }

void ag_record_view(Tensor *out, Tensor *x) { ag_record(out, view_backward, x, NULL, NULL); }

/* A new gradient buffer for t: zeroed, or (zero false) left as it is for a caller that stores
 * every element. Parameters keep theirs across steps, so theirs is always zeroed. */
static float *grad_alloc(Tensor *t, bool zero) {
  size_t n = (size_t)(t->size ? t->size : 1);
  float *g = !t->is_param && ctx()->nfree_grads ? reuse_grad(t->device, (long)n) : NULL;
  if (t->device != DEV_CPU) {
    const Backend *be = backend_of(t->device);
    if (!g)
      g = t->is_param ? be->alloc(n * sizeof(float)) : dev_alloc(t->device, n * sizeof(float));
    if (zero || t->is_param) be->zero(g, n * sizeof(float));
    return g;
  }
  if (t->is_param) return xcalloc(n, sizeof(float));
  if (!g) g = arena_alloc(sizeof(float) * n);
  if (!zero) return g;
  if (t->size >= (1L << 16)) {
    /* a large activation's gradient (the ViT's are 0.5-40 MB) is zeroed by all threads: a
     * serial memset here was the biggest single-threaded stretch of a training step */
    const long n = t->size, chunk = 1L << 14;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i += chunk)
      memset(g + i, 0, sizeof(float) * (size_t)(n - i < chunk ? n - i : chunk));
  } else {
    memset(g, 0, sizeof(float) * (size_t)(t->size ? t->size : 1));
  }
  return g;
}

float *tensor_grad(Tensor *t) {
  if (!t->grad)
    t->grad = t->backward == view_backward ? tensor_grad(t->in[0]) : grad_alloc(t, true);
  return t->grad;
}

float *tensor_grad_fresh(Tensor *t, bool *fresh) {
  *fresh = false;
  if (!t->grad) {
    if (t->backward == view_backward) {
      t->grad = tensor_grad_fresh(t->in[0], fresh);
    } else {
      t->grad = grad_alloc(t, false);
      *fresh = !t->is_param;
    }
  }
  return t->grad;
}

void ag_backward_with(Tensor *out, const float *seed) {
  float *g = tensor_grad(out);
  /* add the seed into the gradient (device memory): a given seed (host memory) is uploaded; the
   * default, all ones, is made on the device (no copy) */
  const float *s;
  if (seed) {
    s = dev_upload(out->device, seed, sizeof(float) * (size_t)(out->size ? out->size : 1));
  } else {
    float *ones = dev_alloc(out->device, sizeof(float) * (size_t)(out->size ? out->size : 1));
    KERNEL(out->device, fill, ones, 1.0f, out->size);
    s = ones;
  }
  KERNEL(out->device, acc, g, s, out->size);
  /* Walk the tape newest-first; a node no gradient reached has nothing to push. */
  for (size_t i = ctx()->tape_len; i-- > 0;) {
    Tensor *t = ctx()->tape[i];
    if (t->grad && t->backward) {
      t->backward(t);
      /* Its consumers (later on the tape) have all run: nothing adds to or reads t's gradient
       * or its values again. A view's buffers are its base's, which is still to come. Big
       * buffers go back to the arena (any later allocation may reuse them), small gradients
       * to the gradient pool. */
      if (ctx()->release_grads && t->backward != view_backward && !t->is_param) {
        long n = t->size ? t->size : 1;
        if ((size_t)n * sizeof(float) >= ARENA_BIG) {
          arena_release(t->grad);
        } else if (ctx()->nfree_grads < FREE_GRADS) {
          ctx()->free_grads[ctx()->nfree_grads].p = t->grad;
          ctx()->free_grads[ctx()->nfree_grads].dev = t->device;
          ctx()->free_grads[ctx()->nfree_grads++].n = n;
        }
        t->grad = NULL;
        if (arena_release(t->data)) t->data = NULL; /* a big block; small values stay (the
                                                      * loop reads the loss after backward) */
      }
    }
  }
}

void ag_backward(Tensor *loss) {
  if (loss->size != 1) {
    char s[64];
    tensor_error("ag_backward", "the loss must have one element, got shape %s; "
                 "reduce it first (t_sum_all / t_mean_all)", shape_str(loss, s, sizeof s));
  }
  ag_backward_with(loss, NULL);
}

void ag_step_reset(void) {
  ctx()->tape_len = 0;
  ctx()->nfree_grads = 0;
  arena_reset();
}

void tensor_shutdown(void) {
  AgContext *c = ctx();
  c->nfree_grads = 0;
  free(c->tape);
  c->tape = NULL;
  c->tape_len = c->tape_cap = 0;
  arena_free_all();
}

void ag_context_free(AgContext *c) {
  if (!c) return;
  AgContext *was = t_ctx;
  t_ctx = c;
  tensor_shutdown();
  t_ctx = was;
  free(c);
}
