/* vit.c — the Vision Transformer's constructors, ViTMLP_forward and ViT_forward (not
 * exercises; the patch embedding, the block and the <cls> + position step are exercises
 * 7.1–7.3 in labs/lab07/). */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "lab07/lab07.h"

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
  snprintf(buf, sizeof buf, "%.200s.conv", nm);
  Linear_init(&pe->proj, ps, buf, in_channels * patch_size * patch_size, num_hiddens, true);
  Linear_reset_torch_default(&pe->proj);
}

void ViTMLP_init(ViTMLP *m, ParamSet *ps, const char *name, int num_hiddens, int mlp_num_hiddens,
                 float dropout) {
  char buf[256];
  snprintf(buf, sizeof buf, "%.200s.dense1", name);
  Linear_init(&m->dense1, ps, buf, num_hiddens, mlp_num_hiddens, true);
  Linear_reset_torch_default(&m->dense1);
  snprintf(buf, sizeof buf, "%.200s.dense2", name);
  Linear_init(&m->dense2, ps, buf, mlp_num_hiddens, num_hiddens, true);
  Linear_reset_torch_default(&m->dense2);
  m->dropout1.p = m->dropout2.p = dropout;
}

/* Recomputing H = dropout1(GELU(A)) for dense2's backward (see ViTMLP_forward). This node sits
 * on the tape right after dense2's, so its backward runs just before dense2's: it rebuilds H's
 * values from A and dropout1's saved mask (the same two expressions t_gelu and t_dropout
 * evaluate, so the same bits) and passes its gradient on to Z unchanged. */
typedef struct {
  Tensor *A, *H; /* dense1's output, dropout1's output (values released after the forward) */
} MlpRecompute;

static void mlp_recompute_backward(Tensor *out) {
  const MlpRecompute *r = out->aux;
  bool grad_on = ag_grad_enabled();
  ag_set_grad_enabled(false);
  Tensor *G = t_gelu(r->A); /* (..., mlp_num_hiddens) */
  ag_set_grad_enabled(grad_on);
  const uint8_t *keep = r->H->aux; /* t_dropout's mask */
  const float scale = r->H->farg[0];
  for (long i = 0; i < G->size; i++) G->data[i] = G->data[i] * (keep[i] ? scale : 0.0f);
  r->H->data = G->data;
  float *dz = tensor_grad(out->in[0]);
  for (long i = 0; i < out->size; i++) dz[i] += out->grad[i];
}

Tensor *ViTMLP_forward(ViTMLP *m, Tensor *X, bool training) {
  Tensor *A = Linear_forward(&m->dense1, X);                   /* (..., mlp_num_hiddens) */
  Tensor *G = t_gelu(A);
  Tensor *H = Dropout_forward(&m->dropout1, G, training);
  Tensor *Z = Linear_forward(&m->dense2, H);                   /* (..., h) */
  if (H == G || !ag_needs_grad(Z, NULL, NULL) || !H->aux)      /* eval, or no dropout: plain */
    return Dropout_forward(&m->dropout2, Z, training);
  /* Memory (the book preset's MLP activations are 4736 x 2048, 39 MB each): no backward reads
   * the values of G (GELU's backward reads A, dropout's its mask) or of Z (a linear layer's
   * backward reads its input), and H's are rebuilt from A and the mask just before dense2's
   * backward needs them (mlp_recompute_backward; the cost is one GELU pass). So once the forward
   * is past them their buffers go back to the arena for the rest of the step. */
  Tensor *R = arena_calloc(sizeof *R); /* Z's values, with the recompute node on the tape */
  R->data = Z->data;
  R->ndim = Z->ndim;
  memcpy(R->shape, Z->shape, sizeof R->shape);
  R->size = Z->size;
  R->device = Z->device;
  R->name = "vit_mlp_recompute";
  MlpRecompute *rc = arena_alloc(sizeof *rc);
  *rc = (MlpRecompute){A, H};
  R->aux = rc;
  ag_record(R, mlp_recompute_backward, Z, NULL, NULL);
  Tensor *out = Dropout_forward(&m->dropout2, R, training);
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

void ViTBlock_init(ViTBlock *blk, ParamSet *ps, const char *name, int num_hiddens,
                   int mlp_num_hiddens, int num_heads, float dropout, bool use_bias) {
  char buf[256];
  snprintf(buf, sizeof buf, "%.200s.ln1", name);
  LayerNorm_init(&blk->ln1, ps, buf, num_hiddens);
  snprintf(buf, sizeof buf, "%.200s.attention", name);
  MultiHeadAttention_init(&blk->attention, ps, buf, num_hiddens, num_hiddens, num_hiddens,
                          num_hiddens, num_heads, dropout, use_bias);
  Linear *proj[4] = {&blk->attention.W_q, &blk->attention.W_k, &blk->attention.W_v,
                     &blk->attention.W_o};
  for (int i = 0; i < 4; i++) Linear_reset_torch_default(proj[i]);
  snprintf(buf, sizeof buf, "%.200s.ln2", name);
  LayerNorm_init(&blk->ln2, ps, buf, num_hiddens);
  snprintf(buf, sizeof buf, "%.200s.mlp", name);
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

Tensor *ViT_forward(ViT *m, Tensor *X, bool training) {
  Tensor *P = PatchEmbedding_forward(&m->patch_embedding, X); /* (B, num_patches, h) */
  if (!P) return NULL;
  Tensor *H = vit_add_cls_and_positions(m, P, training);     /* (B, num_patches + 1, h) */
  if (!H) return NULL;
  for (int i = 0; i < m->num_blks; i++) {
    H = ViTBlock_forward(&m->blks[i], H, NULL, training);     /* (B, num_patches + 1, h) */
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
