/* lab07.h — exercises of lab 07 (the Vision Transformer) and the layers built on them.
 * Only the exercises are declared here: the _init functions and ViT_forward are chapter code
 * (chapters/07_vit/vit.h), so labs/ never calls into chapters/. The block reuses lab04's
 * MultiHeadAttention (and through it lab02's DotProductAttention), so with VARIANT=labs it runs
 * the student's own attention. */
#ifndef LAB07_H
#define LAB07_H

#include "lab04/lab04.h"

/* The book's PatchEmbedding: a stride-p convolution with p x p kernels, written as what it
 * computes — cut the image into p x p patches, flatten each (c, i, j), project it linearly. */
typedef struct PatchEmbedding {
  int img_size, patch_size, in_channels;
  int num_patches;  /* (img_size / patch_size)^2 */
  int num_hiddens;
  Linear proj;      /* W (in_channels * p * p, num_hiddens), b (num_hiddens): the conv kernel */
} PatchEmbedding;
/* Exercise 7.1 — X (batch, in_channels, img_size, img_size) -> (batch, num_patches,
 * num_hiddens). */
Tensor *PatchEmbedding_forward(PatchEmbedding *pe, Tensor *X);

/* dense – GELU – dropout – dense – dropout */
typedef struct ViTMLP {
  Linear dense1; /* (num_hiddens, mlp_num_hiddens) */
  Linear dense2; /* (mlp_num_hiddens, num_hiddens) */
  Dropout dropout1, dropout2;
} ViTMLP;
/* Exercise 7.4 — X (..., num_hiddens) -> (..., num_hiddens):
 * dropout2(dense2(dropout1(GELU(dense1(X))))). Exercise 7.2's block calls it. */
Tensor *ViTMLP_forward(ViTMLP *m, Tensor *X, bool training);

/* Pre-norm Transformer encoder block: X + MHA(LN1(X)), then X + MLP(LN2(X)). */
typedef struct ViTBlock {
  LayerNorm ln1, ln2;           /* (num_hiddens) */
  MultiHeadAttention attention; /* no bias, as the book's use_bias = False */
  ViTMLP mlp;
} ViTBlock;
/* Exercise 7.2 — X (batch, steps, num_hiddens) -> the same shape; valid_lens NULL or as
 * MultiHeadAttention_forward. */
Tensor *ViTBlock_forward(ViTBlock *blk, Tensor *X, Tensor *valid_lens, bool training);

typedef struct ViT {
  PatchEmbedding patch_embedding;
  Tensor *cls_token;     /* (1, 1, num_hiddens), zeros at init */
  Tensor *pos_embedding; /* (1, num_patches + 1, num_hiddens), N(0, 0.02^2) at init */
  Dropout dropout;       /* embedding dropout */
  ViTBlock *blks;        /* num_blks blocks (malloc'd; ViT_free) */
  int num_blks, num_hiddens, num_classes;
  LayerNorm head_ln;     /* head = LayerNorm + Linear on the <cls> output */
  Linear head;           /* (num_hiddens, num_classes) */
  bool mean_pool;        /* challenge: the head reads the patch outputs' mean, not <cls> (vit.c) */
} ViT;
/* Exercise 7.3 — the <cls> + position step. patches (batch, num_patches, num_hiddens) ->
 * (batch, num_patches + 1, num_hiddens): prepend cls_token to every example, add
 * pos_embedding, apply the embedding dropout. */
Tensor *vit_add_cls_and_positions(ViT *m, Tensor *patches, bool training);
/* Exercise 7.5 — the classification head. H (batch, steps, num_hiddens), the last block's
 * output -> logits (batch, num_classes): head(head_ln(H[:, 0])), the <cls> row. */
Tensor *ViT_head(ViT *m, Tensor *H);

#endif
