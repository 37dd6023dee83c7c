/* vit.c — the Vision Transformer's constructors and ViT_forward (vit.h; not exercises: the
 * patch embedding, the block and the <cls> + position step are exercises 7.1–7.3 in labs/lab07/,
 * and ViTMLP_forward, which the block exercise calls, is defined in lab07.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/exercise.h"
#include "../../common/rng.h"
#include "../../common/step.h"
#include "../../common/util.h"
#include "vit.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* The book's LazyLinear and LazyConv2d keep PyTorch's default init
 * (Linear_reset_torch_default; for the patch convolution fan_in = 3 p^2 is the same); matching
 * it keeps our training curves comparable with the book's. */

void PatchEmbedding_init(PatchEmbedding *pe, ParamSet *ps, const char *name, int img_size,
                         int patch_size, int in_channels, int num_hiddens) {
  const char *nm = name && *name ? name : "patch_embedding";
  if (img_size < 1 || patch_size < 1 || img_size % patch_size != 0)
    tensor_error("PatchEmbedding_init",
                 "%s: img_size %d must be a positive multiple of patch_size %d (the book's "
                 "stride-p convolution would drop the leftover pixels; pick sizes that divide)",
                 nm, img_size, patch_size);
  if (in_channels < 1 || num_hiddens < 1)
    tensor_error("PatchEmbedding_init", "%s: in_channels %d and num_hiddens %d must be positive",
                 nm, in_channels, num_hiddens);
  pe->img_size = img_size;
  pe->patch_size = patch_size;
  pe->in_channels = in_channels;
  pe->num_patches = (img_size / patch_size) * (img_size / patch_size);
  pe->num_hiddens = num_hiddens;
  char buf[256];
  param_name(buf, sizeof buf, nm, "conv");
  Linear_init(&pe->proj, ps, buf, in_channels * patch_size * patch_size, num_hiddens, true);
  Linear_reset_torch_default(&pe->proj);
}

void ViTMLP_init(ViTMLP *m, ParamSet *ps, const char *name, int num_hiddens, int mlp_num_hiddens,
                 float dropout) {
  char buf[256];
  param_name(buf, sizeof buf, name, "dense1");
  Linear_init(&m->dense1, ps, buf, num_hiddens, mlp_num_hiddens, true);
  Linear_reset_torch_default(&m->dense1);
  param_name(buf, sizeof buf, name, "dense2");
  Linear_init(&m->dense2, ps, buf, mlp_num_hiddens, num_hiddens, true);
  Linear_reset_torch_default(&m->dense2);
  m->dropout1.p = m->dropout2.p = dropout;
}

void ViTBlock_init(ViTBlock *blk, ParamSet *ps, const char *name, int num_hiddens,
                   int mlp_num_hiddens, int num_heads, float dropout, bool use_bias) {
  char buf[256];
  param_name(buf, sizeof buf, name, "ln1");
  LayerNorm_init(&blk->ln1, ps, buf, num_hiddens);
  param_name(buf, sizeof buf, name, "attention");
  MultiHeadAttention_init(&blk->attention, ps, buf, num_hiddens, num_hiddens, num_hiddens,
                          num_hiddens, num_heads, dropout, use_bias);
  Linear *proj[4] = {&blk->attention.W_q, &blk->attention.W_k, &blk->attention.W_v,
                     &blk->attention.W_o};
  for (int i = 0; i < 4; i++) Linear_reset_torch_default(proj[i]);
  param_name(buf, sizeof buf, name, "ln2");
  LayerNorm_init(&blk->ln2, ps, buf, num_hiddens);
  param_name(buf, sizeof buf, name, "mlp");
  ViTMLP_init(&blk->mlp, ps, buf, num_hiddens, mlp_num_hiddens, dropout);
}

void ViT_init(ViT *m, ParamSet *ps, int img_size, int patch_size, int in_channels,
              int num_hiddens, int mlp_num_hiddens, int num_heads, int num_blks,
              float emb_dropout, float blk_dropout, bool use_bias, int num_classes) {
  if (num_blks < 1 || num_classes < 2)
    tensor_error("ViT_init", "num_blks %d must be >= 1 and num_classes %d >= 2", num_blks,
                 num_classes);
  m->num_blks = num_blks;
  m->num_hiddens = num_hiddens;
  m->num_classes = num_classes;
  m->mean_pool = false;
  m->last_cls_only = 0;
  m->cfg.img_size = img_size;
  m->cfg.patch_size = patch_size;
  m->cfg.in_channels = in_channels;
  m->cfg.num_hiddens = num_hiddens;
  m->cfg.mlp_num_hiddens = mlp_num_hiddens;
  m->cfg.num_heads = num_heads;
  m->cfg.num_blks = num_blks;
  m->cfg.emb_dropout = emb_dropout;
  m->cfg.blk_dropout = blk_dropout;
  m->cfg.use_bias = use_bias;
  m->cfg.num_classes = num_classes;
  PatchEmbedding_init(&m->patch_embedding, ps, "patch_embedding", img_size, patch_size,
                      in_channels, num_hiddens);
  m->cls_token = param_new(ps, "cls_token", 3, (const int[]){1, 1, num_hiddens});
  init_const(m->cls_token, 0.0f);
  int steps = m->patch_embedding.num_patches + 1; /* + the <cls> token */
  m->pos_embedding = param_new(ps, "pos_embedding", 3, (const int[]){1, steps, num_hiddens});
  init_normal(m->pos_embedding, 0.0f, 0.02f);
  m->dropout.p = emb_dropout;
  m->blks = xcalloc((size_t)num_blks, sizeof(ViTBlock));
  for (int i = 0; i < num_blks; i++) {
    char name[32];
    snprintf(name, sizeof name, "blks.%d", i);
    ViTBlock_init(&m->blks[i], ps, name, num_hiddens, mlp_num_hiddens, num_heads, blk_dropout,
                  use_bias);
  }
  LayerNorm_init(&m->head_ln, ps, "head.0", num_hiddens);
  Linear_init(&m->head, ps, "head.1", num_hiddens, num_classes, true);
  Linear_reset_torch_default(&m->head);
}

void ViT_free(ViT *m) {
  free(m->blks);
  m->blks = NULL;
}

/* The last block for the <cls> row only. The classifier reads nothing else, so in the last
 * block the other rows' queries, attention output, second norm and MLP are work whose result
 * is dropped (the book computes them): keys and values still come from every row. The book ViT
 * preset's step does 0.62 of its products' arithmetic this way, the CPU preset's 0.65.
 * X (B, n, h) -> (B, 1, h). */
static Tensor *vit_block_cls(ViTBlock *blk, Tensor *X, bool training) {
  Tensor *Y = LayerNorm_forward(&blk->ln1, X); /* (B, n, h) */
  Tensor *A = MultiHeadAttention_forward(&blk->attention, t_slice(Y, 1, 0, 1), Y, Y, NULL,
                                         training); /* (B, 1, h) */
  if (!A) return NULL;
  Tensor *Xc = t_add(t_slice(X, 1, 0, 1), A); /* (B, 1, h) */
  return t_add(Xc, ViTMLP_forward(&blk->mlp, LayerNorm_forward(&blk->ln2, Xc), training));
}

/* vit_block_cls stands in for ViTBlock_forward (exercise 7.2) only where they agree: the <cls>
 * row of both on X's first images, evaluation mode, once per model. A block written differently
 * (post-norm, a challenge variant) then runs in full, as written. Tolerance 1e-4 of the row's largest
 * entry: the same arithmetic, products of 1 row instead of n summed in another order. */
static bool block_cls_agrees(ViTBlock *blk, Tensor *X) {
  const bool was = ag_grad_enabled();
  ag_set_grad_enabled(false);
  if (X->shape[0] > 4) X = t_slice(X, 0, 0, 4); /* 4 images tell; the batch's would cost memory */
  Tensor *full = ViTBlock_forward(blk, X, NULL, false); /* (B, n, h) */
  Tensor *cls = full ? vit_block_cls(blk, X, false) : NULL; /* (B, 1, h) */
  bool same = full && cls && full->ndim == 3 && full->shape[0] == X->shape[0] &&
              full->shape[1] == X->shape[1] && full->shape[2] == X->shape[2];
  if (same) {
    const int B = X->shape[0], n = X->shape[1], h = X->shape[2];
    const float *f = host_read(full), *c = host_read(cls);
    double big = 0, diff = 0;
    for (int b = 0; b < B; b++)
      for (int j = 0; j < h; j++) {
        const float fv = f[(long)b * n * h + j], cv = c[(long)b * h + j];
        big = fmax(big, fabs(fv));
        diff = isfinite(fv) && isfinite(cv) ? fmax(diff, fabs(fv - cv)) : INFINITY;
      }
    same = diff <= 1e-4 * fmax(big, 1.0);
    if (!same)
      printf("%snote: ViTBlock_forward's <cls> row differs from the pre-norm block's (by %.3g): "
             "the last block runs on every row, as written\n", program_prefix(), diff);
  }
  ag_set_grad_enabled(was);
  return same;
}

Tensor *ViT_forward(ViT *m, Tensor *X, bool training) {
  Tensor *P = PatchEmbedding_forward(&m->patch_embedding, X); /* (B, num_patches, h) */
  if (!P) return NULL;
  Tensor *H = vit_add_cls_and_positions(m, P, training);     /* (B, num_patches + 1, h) */
  if (!H) return NULL;
  for (int i = 0; i < m->num_blks; i++) {
    ViTBlock *blk = &m->blks[i];
    const bool last = i == m->num_blks - 1 && !m->mean_pool; /* mean pooling reads every row */
    if (last && m->last_cls_only == 0) m->last_cls_only = block_cls_agrees(blk, H) ? 1 : -1;
    if (last && m->last_cls_only == 1)
      H = vit_block_cls(blk, H, training);                    /* (B, 1, h) */
    else
      H = ViTBlock_forward(blk, H, NULL, training);           /* (B, num_patches + 1, h) */
    if (!H) return NULL;
  }
  const int B = H->shape[0], steps = H->shape[1], h = H->shape[2];
  Tensor *Z; /* (B, h) */
  if (m->mean_pool)
    Z = t_mean(t_slice(H, 1, 1, steps), 1, false);            /* mean over the patches */
  else
    Z = t_reshape(t_slice(H, 1, 0, 1), 2, (const int[]){B, h}); /* the <cls> output */
  return Linear_forward(&m->head, LayerNorm_forward(&m->head_ln, Z)); /* (B, num_classes) */
}

/* ---------------------------------------------------------------- a training step in halves */

struct ViTTwin {
  ViT net;      /* built like the model; its parameters read the model's values */
  ParamSet ps;  /* its own gradients */
  AgContext *ctx;
  Rng rng;
};

/* Whether a batch trains in two halves: for a small model, whose ops are too small to split
 * over threads, the halves can run side by side (a twin); a large one splits its products
 * instead, and in halves one after the other it lost 5-8% (book preset). Measured: the CPU
 * preset, 1.1 M multiply-adds per image in its blocks, gained 13-15% images/s with a twin; the
 * book preset, 233 M, gained nothing, and its peak RSS went 595 -> 961 MB (a second arena and
 * gradient block). The same rule on every path keeps a run the same on one thread, two and a
 * device. */
static bool in_halves(const ViT *m, int bs) {
  const double n = (double)m->patch_embedding.num_patches + 1, h = m->cfg.num_hiddens;
  const double macs = m->cfg.num_blks * n * (4 * h * h + 2 * h * m->cfg.mlp_num_hiddens);
  return bs >= 64 && macs < 16e6;
}

bool ViT_twin_pays(const ViT *m) {
#ifdef _OPENMP
  return omp_get_max_threads() == 2 && in_halves(m, 64);
#else
  (void)m;
  return false;
#endif
}

ViTTwin *ViT_twin_new(const ViT *m, ParamSet *ps) {
  paramset_pack(ps); /* a model built on a device is on it once packed */
  if (ps->device != DEV_CPU) return NULL;
  ViTTwin *t = xcalloc(1, sizeof *t);
  const Rng saved = g_rng; /* the twin's init must not move the program's random stream */
  ViT_init(&t->net, &t->ps, m->cfg.img_size, m->cfg.patch_size, m->cfg.in_channels,
           m->cfg.num_hiddens, m->cfg.mlp_num_hiddens, m->cfg.num_heads, m->cfg.num_blks,
           m->cfg.emb_dropout, m->cfg.blk_dropout, m->cfg.use_bias, m->cfg.num_classes);
  g_rng = saved;
  t->net.mean_pool = m->mean_pool;
  paramset_share_values(&t->ps, ps);
  t->ctx = ag_context_new();
  return t;
}

void ViT_twin_free(ViTTwin *t) {
  if (!t) return;
  ViT_free(&t->net);
  paramset_free(&t->ps);
  ag_context_free(t->ctx);
  free(t);
}

/* Images [lo, hi) of the batch: forward, the mean cross-entropy scaled to its share of the
 * batch's mean, backward. Returns the part's mean loss. */
static float part_backward(ViT *m, const float *X, const float *y, int lo, int hi, int bs, int C,
                           int S) {
  const int n = hi - lo;
  const size_t img = (size_t)C * S * S;
  Tensor *Xh = tensor_new_on(DEV_CPU, 4, (const int[]){n, C, S, S}); /* (n, C, S, S) */
  Tensor *yh = tensor_new_on(DEV_CPU, 1, (const int[]){n});          /* (n) */
  memcpy(Xh->data, X + (size_t)lo * img, sizeof(float) * (size_t)n * img);
  memcpy(yh->data, y + lo, sizeof(float) * (size_t)n);
  const Device dv = m->head.W->device;
  Tensor *logits = NEED(ViT_forward(m, tensor_to(Xh, dv), true), "training the ViT"); /* (n, 10) */
  Tensor *loss = t_mean_all(t_cross_entropy(logits, tensor_to(yh, dv), NULL));         /* (1) */
  float l;
  tensor_to_host(loss, &l); /* the one number a step reads back */
  ag_backward(n == bs ? loss : t_scale(loss, (float)n / (float)bs));
  return l;
}

/* What each half of a batch needs (twin_parts_run). */
typedef struct {
  ViT *m[2]; /* the model, and its twin (or the model again) for the second half */
  const float *X, *y;
  int half, bs, C, S;
  float loss[2];
} HalfStep;

static void half_part(int part, void *arg) {
  HalfStep *st = arg;
  st->loss[part] = part_backward(st->m[part], st->X, st->y, part ? st->half : 0,
                                 part ? st->bs : st->half, st->bs, st->C, st->S);
}

float ViT_batch_backward(ViT *m, ParamSet *ps, ViTTwin *twin, const float *X, const float *y,
                         int bs, int C, int S) {
  const int half = in_halves(m, bs) ? bs / 2 : bs; /* the first part's images */
  if (half == bs) return part_backward(m, X, y, 0, bs, bs, C, S);
  /* The batch is copied out of the arena, which the serial path rewinds between the halves.
   * The first step runs serially: there the model checks its last block (vit_block_cls). */
  const size_t n = (size_t)bs * C * S * S;
  float *Xc = xmalloc(sizeof(float) * n), *yc = xmalloc(sizeof(float) * (size_t)bs);
  memcpy(Xc, X, sizeof(float) * n);
  memcpy(yc, y, sizeof(float) * (size_t)bs);
  if (twin && m->last_cls_only == 0) twin = NULL;
  if (twin) twin->net.last_cls_only = m->last_cls_only;
  HalfStep st = {{m, twin ? &twin->net : m}, Xc, yc, half, bs, C, S, {0, 0}};
  twin_parts_run(half_part, &st, ps, twin ? &twin->ps : NULL, twin ? twin->ctx : NULL,
                 twin ? &twin->rng : NULL);
  free(Xc);
  free(yc);
  return (st.loss[0] * (float)half + st.loss[1] * (float)(bs - half)) / (float)bs;
}
