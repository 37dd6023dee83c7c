/* vit.h — the Vision Transformer of lab 07 (chapter-support code, chapters/07_vit/vit.c):
 * the layers' constructors and the whole model's forward pass, built on the exercises
 * PatchEmbedding_forward, ViTBlock_forward and vit_add_cls_and_positions (labs/lab07/lab07.h). */
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
void ViT_free(ViT *m);

/* Images (batch, C, H, W) -> logits (batch, num_classes). */
Tensor *ViT_forward(ViT *m, Tensor *X, bool training);

#endif
