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

/* A twin of a ViT for a second thread: built like m (its cfg), its parameters read ps's values,
 * its gradients, tape, arena and dropout generator are its own. NULL off the CPU. It pays where
 * OpenMP grants exactly two threads (with more, the ops' own threads use them all) and the
 * model is small enough to train in halves (ViT_twin_pays; the measurements are in vit.c). */
bool ViT_twin_pays(const ViT *m);
typedef struct ViTTwin ViTTwin;
ViTTwin *ViT_twin_new(const ViT *m, ParamSet *ps);
void ViT_twin_free(ViTTwin *t);
/* One training step's gradients for a host batch X (bs, C, S, S), labels y (bs): forward, the
 * mean cross-entropy, backward, added into ps's gradients (zero them first). For a small model
 * a batch of 64 images or more runs as two halves, side by side on two threads with a twin,
 * one after the other without (same dropout draws, same step); the arena may be rewound in
 * between (X and y are copied first). Returns the mean loss. */
float ViT_batch_backward(ViT *m, ParamSet *ps, ViTTwin *twin, const float *X, const float *y,
                         int bs, int C, int S);

#endif
