/* nn.c — initializers and the d2l layers built on the ops (the parameter registry: params.c). */
#include "nn.h"

#include <math.h>

#include "rng.h"

/* ---------- init ---------- */

/* Initializers draw on the host and send the values to the parameter, wherever it lives
 * (tensor_stage). */
static float *init_begin(const char *op, Tensor *W) {
  if (!W) tensor_error(op, "got a NULL tensor");
  return tensor_stage(W);
}

void init_uniform(Tensor *W, float lo, float hi) {
  float *h = init_begin("init_uniform", W);
  Rng *rng = rng_current(); /* g_rng, or a twin's own (twin_build) */
  for (long i = 0; i < W->size; i++) h[i] = rng_uniform(rng, lo, hi);
  tensor_stage_done(W, h);
}

void init_normal(Tensor *W, float mean, float std) {
  float *h = init_begin("init_normal", W);
  Rng *rng = rng_current(); /* g_rng, or a twin's own (twin_build) */
  for (long i = 0; i < W->size; i++) h[i] = rng_normal(rng, mean, std);
  tensor_stage_done(W, h);
}

void init_const(Tensor *W, float v) {
  float *h = init_begin("init_const", W);
  for (long i = 0; i < W->size; i++) h[i] = v;
  tensor_stage_done(W, h);
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

void Linear_init(Linear *l, ParamSet *ps, const char *name, int in, int out, bool bias) {
  if (in <= 0 || out <= 0)
    tensor_error("Linear_init", "%s: in and out features must be positive, got (%d, %d)",
                 name ? name : "Linear", in, out);
  char buf[256];
  l->in = in;
  l->out = out;
  l->W = param_new(ps, param_name(buf, sizeof buf, name, "W"), 2, (int[]){in, out}); /* (in, out) */
  init_xavier_uniform(l->W, in, out);
  l->b = bias ? param_new(ps, param_name(buf, sizeof buf, name, "b"), 1, (int[]){out}) : NULL;
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
  e->W = param_new(ps, param_name(buf, sizeof buf, name, "W"), 2, (int[]){vocab, dim});
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
  ln->gamma = param_new(ps, param_name(buf, sizeof buf, name, "gamma"), 1, (int[]){dim});
  init_const(ln->gamma, 1.0f);
  ln->beta = param_new(ps, param_name(buf, sizeof buf, name, "beta"), 1, (int[]){dim}); /* zeros */
}

Tensor *LayerNorm_forward(const LayerNorm *ln, Tensor *x) {
  return t_layer_norm(x, ln->gamma, ln->beta, ln->eps);
}

Tensor *Dropout_forward(const Dropout *d, Tensor *x, bool training) {
  return t_dropout(x, d->p, training);
}
