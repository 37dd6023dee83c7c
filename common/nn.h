/* nn.h — parameters, layers and optimizers. Names follow d2l in C spelling. */
#ifndef AL_NN_H
#define AL_NN_H

#include "ops.h"
#include "rng.h"

/* ---------- parameters (params.c) ---------- */
/* A model's parameters: every layer's init registers its tensors here. Once the model is built
 * they are packed into one block of values and one of gradients (llm.c's layout), so moving
 * the model, zeroing its gradients, an optimizer step, clipping and a checkpoint are each one
 * operation over one buffer. Packing happens at the first of those operations (or
 * paramset_pack); a parameter registered later is packed at the next one. */
typedef struct ParamSet {
  Tensor **items;
  int n, cap;
  int packed;        /* items[0..packed) live in the blocks */
  long total;        /* their scalars */
  float *data, *grad; /* the blocks (total floats each) on `device` */
  Device device;
} ParamSet;

/* A persistent tensor with a persistent grad, registered in ps; name is copied. It is created on
 * the default device (tensor.h), zeros for its layer's init to fill, and lives in a buffer of
 * its own until the set is packed. */
Tensor *param_new(ParamSet *ps, const char *name, int ndim, const int *shape);
/* "prefix.suffix" (just suffix without a prefix) into buf: a parameter's name in its model. */
const char *param_name(char *buf, size_t n, const char *prefix, const char *suffix);
long paramset_count(const ParamSet *ps);          /* number of scalars */
void paramset_print(const ParamSet *ps, FILE *f); /* one line per tensor: name, shape */
void paramset_pack(ParamSet *ps);                 /* into the blocks (no-op when packed) */
/* Move every parameter (and gradient) to device d: one copy of each block. */
void paramset_to(ParamSet *ps, Device d);
void paramset_zero_grad(ParamSet *ps);
void paramset_free(ParamSet *ps);                 /* frees every tensor and the blocks */
/* A twin's parameters read the values of src (same tensors, same order, same shapes: a second
 * model built by the same init): dst's tensors point into src's value block, its gradients stay
 * its own. Dies with a message when the two do not match. */
void paramset_share_values(ParamSet *dst, const ParamSet *src);
Tensor *paramset_find(const ParamSet *ps, const char *name);
/* A block of n floats (at least one, uninitialized) on device d: a set's values or gradients, an
 * optimizer's state. */
void *param_block_alloc(Device d, long n);

/* ---------- checkpoints (checkpoint.c) ---------- */

/* Binary checkpoint of every tensor of ps: magic "ALCKPT", format version, a model tag (free
 * text describing the architecture, e.g. "bahdanau gru additive e32 h32 l2 src184 tgt201"),
 * then per tensor its name, shape and data, then a CRC-32 (zlib) of everything before it.
 * Written to PATH.tmp and renamed, so a crash never leaves a half-written PATH.
 * The values leave the model's device in one copy of its block. Returns 0, or -1 with a
 * message in err. */
int checkpoint_save(ParamSet *ps, const char *tag, const char *path, char *err,
                    size_t errlen);
/* Load into an already-built ps. Every failure is -1 with a message naming the file and the
 * problem (not a checkpoint, newer version, truncated, CRC mismatch, different model tag,
 * missing or mismatched tensor); ps is only modified when the whole file checked out. */
int checkpoint_load(ParamSet *ps, const char *tag, const char *path, char *err, size_t errlen);

/* ---------- init (seeded: they draw from this thread's generator, rng_current) ---------- */
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

/* dense1 - GELU - dropout1 - dense2 - dropout2 (the ViT's MLP; mlp_recompute.c, on no lab's
 * path: lab07 runs exercise 7.4): X (..., in) -> (..., out). The same numbers as the plain
 * composition; in training, when the hidden activations are large
 * (t_recompute's threshold, ops.h), it hands the GELU, dropout1 and dense2 outputs back after the
 * forward and rebuilds dropout1's output just before dense2's backward: the book ViT preset's
 * peak memory drops by two 39 MB buffers per block. */
Tensor *gelu_mlp_forward(const Linear *dense1, const Dropout *dropout1, const Linear *dense2,
                         const Dropout *dropout2, Tensor *X, bool training);

/* ---------- optimizers (optim.c) ---------- */
typedef struct SGD {
  ParamSet *ps;
  float lr;
} SGD;
void SGD_step(SGD *opt);

typedef struct Adam {
  ParamSet *ps;
  float lr, beta1, beta2, eps;
  long t;
  float *m, *v; /* the moments: one block each, like ps's (allocated on the first step) */
  long n;       /* floats in m and v */
  Device device;
} Adam;
void Adam_init(Adam *opt, ParamSet *ps, float lr); /* betas (0.9, 0.999), eps 1e-8 */
void Adam_step(Adam *opt);
void Adam_free(Adam *opt);

/* Scale all gradients so their global L2 norm is at most max_norm; returns the norm before
 * (read back from the device). */
float clip_grad_norm(ParamSet *ps, float max_norm);
/* The same without the read: d2l's grad_clipping, what a training step calls. */
void grad_clipping(ParamSet *ps, float max_norm);

#endif
