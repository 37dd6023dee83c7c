/* vit_cls_only.h — the ViT's forward pass with its last block on the <cls> row only
 * (vit_cls_only.c), and the check that lets it stand in for ViT_forward on a run. */
#ifndef AL_VIT_CLS_ONLY_H
#define AL_VIT_CLS_ONLY_H

#include "vit.h"

/* Images (batch, C, H, W) -> logits (batch, num_classes), as ViT_forward, but the last block
 * computes the <cls> row only (the head reads nothing else). For the <cls> readout, not
 * mean pooling. */
Tensor *ViT_forward_cls_only(ViT *m, Tensor *X, bool training);

/* The forward pass to train and evaluate m with. ViT_forward_cls_only where, on images X (a few,
 * evaluation mode), the last block's <cls> row agrees with ViTBlock_forward's — your block, on
 * this run; otherwise ViT_forward, every block as written, with one line that says so. Mean
 * pooling reads every row: ViT_forward. */
ViTForwardFn ViT_forward_choose(ViT *m, Tensor *X);

/* The check itself, against a given block function (ViT_forward_choose passes
 * ViTBlock_forward; the tests pass others): true when the <cls> rows agree. */
typedef Tensor *(*ViTBlockFn)(ViTBlock *blk, Tensor *X, Tensor *valid_lens, bool training);
bool ViT_cls_only_agrees(ViT *m, Tensor *X, ViTBlockFn block);

#endif
