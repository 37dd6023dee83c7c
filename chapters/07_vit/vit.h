/* vit.h — the Vision Transformer of lab 07 (chapter-support code, chapters/07_vit/vit.c):
 * the layers' constructors and the whole model's readable forward pass, built on the exercises
 * PatchEmbedding_forward, ViTBlock_forward (with ViTMLP_forward), vit_add_cls_and_positions and
 * ViT_head (labs/lab07/lab07.h). */
#ifndef AL_VIT_H
#define AL_VIT_H

#include "lab07/lab07.h"

void PatchEmbedding_init(PatchEmbedding *pe, ParamSet *ps, const char *name, int img_size,
                         int patch_size, int in_channels, int num_hiddens);
void ViTMLP_init(ViTMLP *m, ParamSet *ps, const char *name, int num_hiddens, int mlp_num_hiddens,
                 float dropout);
void ViTBlock_init(ViTBlock *blk, ParamSet *ps, const char *name, int num_hiddens,
                   int mlp_num_hiddens, int num_heads, float dropout, bool use_bias);
void ViT_init(ViT *m, ParamSet *ps, int img_size, int patch_size, int in_channels,
              int num_hiddens, int mlp_num_hiddens, int num_heads, int num_blks,
              float emb_dropout, float blk_dropout, bool use_bias, int num_classes);
/* A second ViT built like `like` (sizes, dropout, readout), its parameters registered in ps and
 * drawn, as ViT_init's, from this thread's generator (rng_current). */
void ViT_init_like(ViT *m, ParamSet *ps, const ViT *like);
void ViT_free(ViT *m);

/* Images (batch, C, H, W) -> logits (batch, num_classes): the book's forward pass, every block
 * on every row. */
Tensor *ViT_forward(ViT *m, Tensor *X, bool training);
/* The two ends of ViT_forward, for passes that run its blocks another way (vit_cls_only.c):
 * images -> the tokens the blocks take, (batch, num_patches + 1, h); the blocks' output ->
 * logits (batch, num_classes): ViT_head (exercise 7.5) on the <cls> row, or with mean_pool on
 * the patch rows' mean. */
Tensor *ViT_tokens(ViT *m, Tensor *X, bool training);
Tensor *ViT_readout(ViT *m, Tensor *H);
/* A forward pass of the whole model: ViT_forward, or one that gives the same logits. */
typedef Tensor *(*ViTForwardFn)(ViT *m, Tensor *X, bool training);

#endif
