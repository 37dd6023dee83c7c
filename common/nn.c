/* nn.c — the parameter registry, initializers and the d2l layers built on the ops. */
#include "nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "util.h"

/* ---------- parameter registry ---------- */

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

void paramset_zero_grad(ParamSet *ps) {
  for (int i = 0; i < ps->n; i++) {
    Tensor *t = ps->items[i];
    if (t->grad) memset(t->grad, 0, sizeof(float) * (size_t)t->size);
  }
}

void paramset_free(ParamSet *ps) {
  for (int i = 0; i < ps->n; i++) {
    Tensor *t = ps->items[i];
    free(t->data);
    free(t->grad);
    free((void *)t->name);
    free(t);
  }
  free(ps->items);
  ps->items = NULL;
  ps->n = ps->cap = 0;
}

Tensor *paramset_find(const ParamSet *ps, const char *name) {
  for (int i = 0; i < ps->n; i++)
    if (strcmp(ps->items[i]->name, name) == 0) return ps->items[i];
  return NULL;
}

/* ---------- init ---------- */

/* Initializers write host memory; parameters are created on the CPU. */
static void check_host(const char *op, const Tensor *W) {
  if (!W) tensor_error(op, "got a NULL tensor");
  if (W->device != DEV_CPU)
    tensor_error(op, "'%s' lives on the GPU; initialize parameters before moving them", W->name);
}

void init_uniform(Tensor *W, float lo, float hi) {
  check_host("init_uniform", W);
  for (long i = 0; i < W->size; i++) W->data[i] = rng_uniform(&g_rng, lo, hi);
}

void init_normal(Tensor *W, float mean, float std) {
  check_host("init_normal", W);
  for (long i = 0; i < W->size; i++) W->data[i] = rng_normal(&g_rng, mean, std);
}

void init_const(Tensor *W, float v) {
  check_host("init_const", W);
  for (long i = 0; i < W->size; i++) W->data[i] = v;
}

/* Glorot & Bengio: keep the variance of activations and gradients about equal across layers,
 * Var = 2 / (fan_in + fan_out). Uniform on [-a, a] has variance a^2 / 3. */
void init_xavier_uniform(Tensor *W, int fan_in, int fan_out) {
  if (fan_in + fan_out <= 0)
    tensor_error("init_xavier_uniform", "fan_in + fan_out must be positive, got %d + %d", fan_in,
                 fan_out);
  float a = (float)sqrt(6.0 / (fan_in + fan_out));
  init_uniform(W, -a, a);
}

void init_xavier_normal(Tensor *W, int fan_in, int fan_out) {
  if (fan_in + fan_out <= 0)
    tensor_error("init_xavier_normal", "fan_in + fan_out must be positive, got %d + %d", fan_in,
                 fan_out);
  init_normal(W, 0.0f, (float)sqrt(2.0 / (fan_in + fan_out)));
}

/* ---------- layers ---------- */

/* "prefix.suffix" (or just suffix without a prefix) into buf. */
static const char *pname(char *buf, size_t n, const char *prefix, const char *suffix) {
  if (prefix && *prefix)
    snprintf(buf, n, "%s.%s", prefix, suffix);
  else
    snprintf(buf, n, "%s", suffix);
  return buf;
}

void Linear_init(Linear *l, ParamSet *ps, const char *name, int in, int out, bool bias) {
  if (in <= 0 || out <= 0)
    tensor_error("Linear_init", "%s: in and out features must be positive, got (%d, %d)",
                 name ? name : "Linear", in, out);
  char buf[256];
  l->in = in;
  l->out = out;
  l->W = param_new(ps, pname(buf, sizeof buf, name, "W"), 2, (int[]){in, out}); /* (in, out) */
  init_xavier_uniform(l->W, in, out);
  l->b = bias ? param_new(ps, pname(buf, sizeof buf, name, "b"), 1, (int[]){out}) : NULL;
  /* param_new zero-fills, which is the bias init */
}

Tensor *Linear_forward(const Linear *l, Tensor *x) { return t_linear(x, l->W, l->b); }

void Linear_reset_torch_default(Linear *l) {
  const float bound = 1.0f / sqrtf((float)l->in);
  init_uniform(l->W, -bound, bound);
  if (l->b) init_uniform(l->b, -bound, bound);
}

void Embedding_init(Embedding *e, ParamSet *ps, const char *name, int vocab, int dim) {
  if (vocab <= 0 || dim <= 0)
    tensor_error("Embedding_init", "%s: vocab and dim must be positive, got (%d, %d)",
                 name ? name : "Embedding", vocab, dim);
  char buf[256];
  e->vocab = vocab;
  e->dim = dim;
  e->W = param_new(ps, pname(buf, sizeof buf, name, "W"), 2, (int[]){vocab, dim});
  init_normal(e->W, 0.0f, 1.0f); /* torch.nn.Embedding's default */
}

Tensor *Embedding_forward(const Embedding *e, Tensor *ids) { return t_embedding(e->W, ids); }

void LayerNorm_init(LayerNorm *ln, ParamSet *ps, const char *name, int dim) {
  if (dim <= 0)
    tensor_error("LayerNorm_init", "%s: dim must be positive, got %d",
                 name ? name : "LayerNorm", dim);
  char buf[256];
  ln->dim = dim;
  ln->eps = 1e-5f; /* torch.nn.LayerNorm's default */
  ln->gamma = param_new(ps, pname(buf, sizeof buf, name, "gamma"), 1, (int[]){dim});
  init_const(ln->gamma, 1.0f);
  ln->beta = param_new(ps, pname(buf, sizeof buf, name, "beta"), 1, (int[]){dim}); /* zeros */
}

Tensor *LayerNorm_forward(const LayerNorm *ln, Tensor *x) {
  return t_layer_norm(x, ln->gamma, ln->beta, ln->eps);
}

Tensor *Dropout_forward(const Dropout *d, Tensor *x, bool training) {
  return t_dropout(x, d->p, training);
}
