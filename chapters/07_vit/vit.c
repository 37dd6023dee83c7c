/* vit.c — the Vision Transformer's constructors and ViT_forward (vit.h; not exercises: the
 * patch embedding, the block, the <cls> + position step, the MLP and the head are exercises
 * 7.1–7.5 in labs/lab07/). */
#include <stdio.h>
#include <stdlib.h>

#include "../../common/util.h"
#include "vit.h"

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

void ViT_init_like(ViT *m, ParamSet *ps, const ViT *like) {
  const ViTBlock *b = &like->blks[0]; /* every block is built alike */
  const PatchEmbedding *pe = &like->patch_embedding;
  ViT_init(m, ps, pe->img_size, pe->patch_size, pe->in_channels, like->num_hiddens,
           b->mlp.dense1.out, b->attention.num_heads, like->num_blks, like->dropout.p,
           b->mlp.dropout1.p, b->attention.W_q.b != NULL, like->num_classes);
  m->mean_pool = like->mean_pool;
}

void ViT_free(ViT *m) {
  free(m->blks);
  m->blks = NULL;
}

Tensor *ViT_tokens(ViT *m, Tensor *X, bool training) {
  Tensor *P = PatchEmbedding_forward(&m->patch_embedding, X); /* (B, num_patches, h) */
  if (!P) return NULL;
  return vit_add_cls_and_positions(m, P, training);           /* (B, num_patches + 1, h) */
}

Tensor *ViT_readout(ViT *m, Tensor *H) {
  if (H && m->mean_pool) { /* challenge 2: the head reads the patches' mean as its row 0 */
    const int steps = H->shape[1];
    H = t_mean(t_slice(H, 1, 1, steps), 1, true); /* (B, 1, h) */
  }
  return H ? ViT_head(m, H) : NULL; /* (B, num_classes) */
}

Tensor *ViT_forward(ViT *m, Tensor *X, bool training) {
  Tensor *H = ViT_tokens(m, X, training); /* (B, num_patches + 1, h) */
  for (int i = 0; H && i < m->num_blks; i++)
    H = ViTBlock_forward(&m->blks[i], H, NULL, training); /* (B, num_patches + 1, h) */
  return ViT_readout(m, H);                               /* (B, num_classes) */
}
