/* nn.c — initializers and the d2l layers built on the ops (the parameter registry: params.c). */
#include "nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "rng.h"
#include "util.h"

/* ---------- init ---------- */

/* Initializers draw on the host and copy the values into the parameter, wherever it lives. */
static float *init_begin(const char *op, const Tensor *W) {
  if (!W) tensor_error(op, "got a NULL tensor");
  if (W->device == DEV_CPU) return W->data;
  return xmalloc(sizeof(float) * (size_t)(W->size ? W->size : 1));
}

static void init_end(Tensor *W, float *h) {
  if (h == W->data) return;
  tensor_copy_from_host(W, h);
  free(h);
}

void init_uniform(Tensor *W, float lo, float hi) {
  float *h = init_begin("init_uniform", W);
  Rng *rng = rng_current(); /* g_rng, or a twin's own (twin_build) */
  for (long i = 0; i < W->size; i++) h[i] = rng_uniform(rng, lo, hi);
  init_end(W, h);
}

void init_normal(Tensor *W, float mean, float std) {
  float *h = init_begin("init_normal", W);
  Rng *rng = rng_current(); /* g_rng, or a twin's own (twin_build) */
  for (long i = 0; i < W->size; i++) h[i] = rng_normal(rng, mean, std);
  init_end(W, h);
}

void init_const(Tensor *W, float v) {
  float *h = init_begin("init_const", W);
  for (long i = 0; i < W->size; i++) h[i] = v;
  init_end(W, h);
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

/* ---------- the GELU MLP, with a recompute (memory) ---------- */

/* Recomputing H = dropout1(GELU(A)) for dense2's backward (see gelu_mlp_forward). This node sits
 * on the tape right after dense2's, so its backward runs just before dense2's: it rebuilds H's
 * values from A and dropout1's saved mask (t_dropout keeps the mask in aux, the scale in
 * farg[0]) with the same two expressions t_gelu and t_dropout evaluate, so the same bits, and
 * passes its gradient on to Z unchanged. Device memory is touched only through kernels. */
typedef struct {
  Tensor *A, *H; /* dense1's output, dropout1's output (values released after the forward) */
} MlpRecompute;

static void mlp_recompute_backward(Tensor *out) {
  const MlpRecompute *r = out->aux;
  bool grad_on = ag_grad_enabled();
  ag_set_grad_enabled(false);
  Tensor *G = t_gelu(r->A); /* (..., mlp_num_hiddens) */
  ag_set_grad_enabled(grad_on);
  /* dropout's backward kernel, fresh, is x * (keep ? scale : 0): the forward's expression */
  KERNEL(out->device, dropout_grad, G->data, G->data, r->H->aux, r->H->farg[0], G->size, true);
  r->H->data = G->data;
  KERNEL(out->device, acc, tensor_grad(out->in[0]), out->grad, out->size);
}

static size_t g_recompute_min = 8u << 20;

size_t gelu_mlp_set_recompute_min(size_t bytes) {
  size_t old = g_recompute_min;
  g_recompute_min = bytes;
  return old;
}

Tensor *gelu_mlp_forward(const Linear *dense1, const Dropout *dropout1, const Linear *dense2,
                         const Dropout *dropout2, Tensor *X, bool training) {
  Tensor *A = Linear_forward(dense1, X); /* (..., mlp_num_hiddens) */
  Tensor *G = t_gelu(A);
  Tensor *H = Dropout_forward(dropout1, G, training);
  Tensor *Z = Linear_forward(dense2, H); /* (..., h) */
  /* eval, no dropout, or activations too small to be worth a second GELU pass: plain */
  if (H == G || !ag_needs_grad(Z, NULL, NULL) || !H->aux ||
      sizeof(float) * (size_t)G->size < g_recompute_min)
    return Dropout_forward(dropout2, Z, training);
  /* Memory (the book ViT preset's MLP activations are 4736 x 2048, 39 MB each): no backward
   * reads the values of G (GELU's backward reads A, dropout's its mask) or of Z (a linear
   * layer's backward reads its input), and H's are rebuilt from A and the mask just before
   * dense2's backward needs them (mlp_recompute_backward; the cost is one GELU pass). So once
   * the forward is past them their buffers go back to the arena for the rest of the step. */
  Tensor *R = arena_calloc(sizeof *R); /* Z's values, with the recompute node on the tape */
  R->data = Z->data;
  R->ndim = Z->ndim;
  memcpy(R->shape, Z->shape, sizeof R->shape);
  R->size = Z->size;
  R->device = Z->device;
  R->name = "gelu_mlp_recompute";
  MlpRecompute *rc = arena_alloc(sizeof *rc);
  *rc = (MlpRecompute){A, H};
  R->aux = rc;
  ag_record(R, mlp_recompute_backward, Z, NULL, NULL);
  Tensor *out = Dropout_forward(dropout2, R, training);
  /* each pointer is cleared with its release: a released block may be handed out again */
  arena_release(G->data);
  G->data = NULL;
  arena_release(H->data);
  H->data = NULL; /* until mlp_recompute_backward rebuilds it */
  if (out != R) {
    arena_release(Z->data);
    Z->data = R->data = NULL;
  }
  return out;
}
