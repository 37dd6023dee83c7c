/* nn.h — parameters, layers and optimizers. Names follow d2l in C spelling. */
#ifndef AL_NN_H
#define AL_NN_H

#include "ops.h"

/* ---------- parameter registry ---------- */
/* A model's parameters: every layer's init registers its tensors here, so one call counts,
 * lists, zeroes, clips, saves or frees them all. */
typedef struct ParamSet {
  Tensor **items;
  int n, cap;
} ParamSet;

/* A persistent (malloc'd) tensor with a persistent grad, registered in ps. name is copied. */
Tensor *param_new(ParamSet *ps, const char *name, int ndim, const int *shape);
long paramset_count(const ParamSet *ps);          /* number of scalars */
void paramset_print(const ParamSet *ps, FILE *f); /* one line per tensor: name, shape */
void paramset_zero_grad(ParamSet *ps);
void paramset_free(ParamSet *ps);                 /* frees every tensor and the list */
Tensor *paramset_find(const ParamSet *ps, const char *name);

/* ---------- init (seeded rng) ---------- */
void init_xavier_uniform(Tensor *W, int fan_in, int fan_out);
void init_xavier_normal(Tensor *W, int fan_in, int fan_out);
void init_uniform(Tensor *W, float lo, float hi);
void init_normal(Tensor *W, float mean, float std);
void init_const(Tensor *W, float v);

/* ---------- layers ---------- */
typedef struct Linear {
  Tensor *W; /* (in, out) */
  Tensor *b; /* (out), or NULL */
  int in, out;
} Linear;
/* Xavier-uniform W, zero bias (d2l's init_seq2seq does this for the seq2seq models). */
void Linear_init(Linear *l, ParamSet *ps, const char *name, int in, int out, bool bias);
Tensor *Linear_forward(const Linear *l, Tensor *x); /* (..., in) -> (..., out) */
/* Re-draw W and b as PyTorch's default nn.Linear init does (kaiming_uniform with a = sqrt 5):
 * U(-1/sqrt(in), 1/sqrt(in)) for both. For layers the book leaves at that default. */
void Linear_reset_torch_default(Linear *l);

typedef struct Embedding {
  Tensor *W; /* (vocab, dim) */
  int vocab, dim;
} Embedding;
void Embedding_init(Embedding *e, ParamSet *ps, const char *name, int vocab, int dim);
Tensor *Embedding_forward(const Embedding *e, Tensor *ids); /* (...) -> (..., dim) */

typedef struct LayerNorm {
  Tensor *gamma, *beta; /* (dim) */
  int dim;
  float eps;
} LayerNorm;
void LayerNorm_init(LayerNorm *ln, ParamSet *ps, const char *name, int dim);
Tensor *LayerNorm_forward(const LayerNorm *ln, Tensor *x);

typedef struct Dropout {
  float p;
} Dropout;
Tensor *Dropout_forward(const Dropout *d, Tensor *x, bool training);

/* ---------- optimizers ---------- */
typedef struct SGD {
  ParamSet *ps;
  float lr;
} SGD;
void SGD_step(SGD *opt);

typedef struct Adam {
  ParamSet *ps;
  float lr, beta1, beta2, eps;
  long t;
  float **m, **v; /* per-parameter moments, malloc'd on first step */
} Adam;
void Adam_init(Adam *opt, ParamSet *ps, float lr); /* betas (0.9, 0.999), eps 1e-8 */
void Adam_step(Adam *opt);
void Adam_free(Adam *opt);

/* Scale all gradients so their global L2 norm is at most max_norm; returns the norm before. */
float clip_grad_norm(ParamSet *ps, float max_norm);

#endif
