/* Graded tests of exercises 7.1 (PatchEmbedding_forward), 7.2 (ViTBlock_forward) and 7.3
 * (vit_add_cls_and_positions), labs/lab07/. 10 points. Every expected value is computed here
 * in double precision straight from the definitions, in the reference build only (GRADE_REF,
 * tests/grade/grade.h). The ViT block also runs your lab04
 * MultiHeadAttention_forward (and lab02's attention): those must work too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../grade.h"
#include "../../sine_fill.h"
#include "../../../chapters/07_vit/vit.h"
#include "vit_ref.h"

/* ---------------------------------------------------------------- 7.1 */

GRADED_TEST(lab07_patch_embedding, 3,
            "7.1 PatchEmbedding_forward: p x p patches, flattened (c, i, j), projected") {
  ParamSet ps = {0};
  PatchEmbedding pe;
  PatchEmbedding_init(&pe, &ps, "pe", 6, 3, 2, 5);
  sine_fill_tensor(pe.proj.W, 0.31, 0.2, 0.4);
  sine_fill_tensor(pe.proj.b, 0.7, 0.3, 0.2);
  Tensor *X = sine_tensor(4, (const int[]){2, 2, 6, 6}, 0.37, 0.2, 1.0); /* (batch, C, H, W) */
  Tensor *Y = PatchEmbedding_forward(&pe, X);
  EXPECT_NOT_NULL(Y, "PatchEmbedding_forward");
  if (!EXPECT_SHAPE(Y, "PatchEmbedding_forward((2, 2, 6, 6)), patch 3, 5 hiddens", 2, 4, 5))
    return;
#if GRADE_REF
  /* the stride-3 convolution, summed directly: patch (gy, gx) is output row gy * 2 + gx */
  float want[2 * 4 * 5];
  for (int b = 0; b < 2; b++)
    for (int gy = 0; gy < 2; gy++)
      for (int gx = 0; gx < 2; gx++)
        for (int o = 0; o < 5; o++) {
          double s = pe.proj.b->data[o];
          for (int c = 0; c < 2; c++)
            for (int i = 0; i < 3; i++)
              for (int j = 0; j < 3; j++)
                s += (double)X->data[((b * 2 + c) * 6 + gy * 3 + i) * 6 + gx * 3 + j] *
                     pe.proj.W->data[((c * 3 + i) * 3 + j) * 5 + o];
          want[(b * 4 + gy * 2 + gx) * 5 + o] = (float)s;
        }
#endif
  EXPECT_CLOSE(Y->data, want, 40, 1e-5, 1e-5,
               "patch embedding (patches row-major over the grid, features (c, i, j))");
  /* gradients reach the projection: d sum(Y) / d b = number of patches of all images */
  ag_backward(t_sum_all(Y));
  EXPECT(pe.proj.b->grad != NULL, "no gradient reached the projection's bias: use Linear_forward");
  if (pe.proj.b->grad) EXPECT_NEAR(pe.proj.b->grad[0], 8.0, 1e-5, "d sum(Y) / d b[0]");
  /* the book's check */
  PatchEmbedding big;
  PatchEmbedding_init(&big, &ps, "big", 96, 16, 3, 512);
  Tensor *Z = PatchEmbedding_forward(&big, tensor_zeros(4, (const int[]){4, 3, 96, 96}));
  EXPECT_NOT_NULL(Z, "PatchEmbedding_forward");
  EXPECT_SHAPE(Z, "the book's check: zeros (4, 3, 96, 96), patch 16, 512 hiddens", 4, 36, 512);
  paramset_free(&ps);
}

/* ---------------------------------------------------------------- 7.2 */

enum { B = 2, N = 3, HID = 4, HEADS = 2, MLPH = 6 };

#if GRADE_REF
static void ln_ref(const double *x, const Tensor *g, const Tensor *be, double *y) {
  for (int r = 0; r < B * N; r++) {
    double m = 0, v = 0;
    for (int j = 0; j < HID; j++) m += x[r * HID + j] / HID;
    for (int j = 0; j < HID; j++) v += (x[r * HID + j] - m) * (x[r * HID + j] - m) / HID;
    for (int j = 0; j < HID; j++)
      y[r * HID + j] = (x[r * HID + j] - m) / sqrt(v + 1e-5) * g->data[j] + be->data[j];
  }
}

/* The pre-norm block in double, one head at a time. */
static void block_ref(ViTBlock *blk, const float *xin, double *out) {
  double x[B * N * HID], y[B * N * HID], q[B * N * HID], k[B * N * HID], v[B * N * HID],
      cat[B * N * HID], att[B * N * HID], h1[B * N * MLPH], h2[B * N * HID];
  for (int i = 0; i < B * N * HID; i++) x[i] = xin[i];
  ln_ref(x, blk->ln1.gamma, blk->ln1.beta, y);
  lin_ref(y, B * N, &blk->attention.W_q, q);
  lin_ref(y, B * N, &blk->attention.W_k, k);
  lin_ref(y, B * N, &blk->attention.W_v, v);
  const int d = HID / HEADS;
  for (int b = 0; b < B; b++)
    for (int h = 0; h < HEADS; h++)
      for (int i = 0; i < N; i++) {
        double s[N], mx = -1e300, z = 0;
        for (int j = 0; j < N; j++) {
          s[j] = 0;
          for (int c = 0; c < d; c++)
            s[j] += q[(b * N + i) * HID + h * d + c] * k[(b * N + j) * HID + h * d + c];
          s[j] /= sqrt((double)d);
          mx = fmax(mx, s[j]);
        }
        for (int j = 0; j < N; j++) z += (s[j] = exp(s[j] - mx));
        for (int c = 0; c < d; c++) {
          double acc = 0;
          for (int j = 0; j < N; j++) acc += s[j] / z * v[(b * N + j) * HID + h * d + c];
          cat[(b * N + i) * HID + h * d + c] = acc;
        }
      }
  lin_ref(cat, B * N, &blk->attention.W_o, att);
  for (int i = 0; i < B * N * HID; i++) x[i] += att[i];
  ln_ref(x, blk->ln2.gamma, blk->ln2.beta, y);
  lin_ref(y, B * N, &blk->mlp.dense1, h1);
  for (int i = 0; i < B * N * MLPH; i++) h1[i] = h1[i] * 0.5 * erfc(-h1[i] / sqrt(2.0)); /* GELU */
  lin_ref(h1, B * N, &blk->mlp.dense2, h2);
  for (int i = 0; i < B * N * HID; i++) out[i] = x[i] + h2[i];
}
#endif

GRADED_TEST(lab07_vit_block, 4,
            "7.2 ViTBlock_forward: X + MHA(LN1(X)), then X + MLP(LN2(X)) (pre-norm)") {
  ParamSet ps = {0};
  ViTBlock blk;
  ViTBlock_init(&blk, &ps, "blk", HID, MLPH, HEADS, 0.0f, false);
  for (int j = 0; j < ps.n; j++) sine_fill_tensor(ps.items[j], 0.3 + 0.11 * j, 0.2 * j, 0.6);
  for (int j = 0; j < HID; j++) blk.ln1.gamma->data[j] += 1.0f, blk.ln2.gamma->data[j] += 1.0f;
  /* (batch, steps, hiddens) */
  Tensor *X = sine_tensor(3, (const int[]){B, N, HID}, 0.43, 0.1, 1.5);
  X->requires_grad = true;
  Tensor *Y = ViTBlock_forward(&blk, X, NULL, false);
  EXPECT_NOT_NULL(Y, "ViTBlock_forward");
  if (!EXPECT_SHAPE(Y, "ViTBlock_forward((2, 3, 4))", B, N, HID)) return;
#if GRADE_REF
  double ref[B * N * HID];
  block_ref(&blk, X->data, ref);
  float want[B * N * HID];
  for (int i = 0; i < B * N * HID; i++) want[i] = (float)ref[i];
#endif
  GRADE_INPUT(X->data, B * N * HID, "X");
  EXPECT_CLOSE(Y->data, want, B * N * HID, 1e-5, 1e-4,
               "block output (layer norm BEFORE attention and before the MLP; residuals add "
               "the un-normalized X)");
  ag_backward(t_sum_all(Y));
  EXPECT(X->grad != NULL, "no gradient reached X: build the output with t_add");
  EXPECT(blk.ln1.gamma->grad != NULL && blk.mlp.dense2.b->grad != NULL,
         "gradients must reach ln1 and the MLP: call LayerNorm_forward / ViTMLP_forward");
  if (blk.mlp.dense2.b->grad) /* d sum(Y) / d dense2.b = number of positions */
    EXPECT_NEAR(blk.mlp.dense2.b->grad[0], B * N, 1e-5, "d sum(Y) / d mlp.dense2.b[0]");
  /* the book's check: shape kept */
  ViTBlock big;
  ViTBlock_init(&big, &ps, "big", 24, 48, 8, 0.5f, false);
  Tensor *Z = ViTBlock_forward(&big, tensor_full(3, (const int[]){2, 100, 24}, 1.0f), NULL, false);
  EXPECT_NOT_NULL(Z, "ViTBlock_forward");
  EXPECT_SHAPE(Z, "the book's check: ones (2, 100, 24)", 2, 100, 24);
  /* dropout only while training */
  ViTBlock drop;
  ViTBlock_init(&drop, &ps, "drop", HID, MLPH, HEADS, 0.5f, false);
  Tensor *e1 = ViTBlock_forward(&drop, X, NULL, false), *e2 = ViTBlock_forward(&drop, X, NULL, false);
  Tensor *t1 = ViTBlock_forward(&drop, X, NULL, true);
  if (e1 && e2 && t1) {
    EXPECT_AGREE(e1->data, e2->data, e1->size, 0, 0, "eval mode must be deterministic");
    double diff = 0;
    for (long i = 0; i < e1->size; i++) diff = fmax(diff, fabs((double)e1->data[i] - t1->data[i]));
    EXPECT(diff > 1e-4, "training = true with dropout 0.5 should change the output (pass "
                        "`training` to the attention and the MLP)");
  }
  paramset_free(&ps);
}

/* ---------------------------------------------------------------- 7.3 */

GRADED_TEST(lab07_cls_and_positions, 3,
            "7.3 vit_add_cls_and_positions: prepend <cls>, add positions, dropout") {
  ParamSet ps = {0};
  ViT m;
  ViT_init(&m, &ps, 4, 2, 1, 3, 4, 1, 1, 0.0f, 0.0f, false, 2); /* 4 patches + <cls> */
  for (int i = 0; i < 3; i++) m.cls_token->data[i] = 10.0f * (float)(i + 1);
  for (int i = 0; i < 15; i++) m.pos_embedding->data[i] = 0.5f * (float)i;
  Tensor *P = sine_tensor(3, (const int[]){2, 4, 3}, 0.7, 0.1, 1.0); /* (batch, patches, hiddens) */
  Tensor *Y = vit_add_cls_and_positions(&m, P, false);
  EXPECT_NOT_NULL(Y, "vit_add_cls_and_positions");
  if (!EXPECT_SHAPE(Y, "vit_add_cls_and_positions((2, 4, 3))", 2, 5, 3)) {
    ViT_free(&m);
    return;
  }
#if GRADE_REF
  float want[2 * 5 * 3];
  for (int b = 0; b < 2; b++)
    for (int s = 0; s < 5; s++)
      for (int k = 0; k < 3; k++)
        want[(b * 5 + s) * 3 + k] = (s == 0 ? m.cls_token->data[k] : P->data[(b * 4 + s - 1) * 3 + k]) +
                                    m.pos_embedding->data[s * 3 + k];
#endif
  EXPECT_CLOSE(Y->data, want, 30, 1e-6, 0,
               "row 0 = <cls> + pos[0], row 1 + i = patch i + pos[1 + i], for every example");
  /* gradients: every example's <cls> row feeds the one cls_token */
  ag_backward(t_sum_all(Y));
  EXPECT(m.cls_token->grad != NULL && m.pos_embedding->grad != NULL,
         "gradients must reach cls_token and pos_embedding (use t_add / t_cat2)");
  if (m.cls_token->grad) EXPECT_NEAR(m.cls_token->grad[0], 2.0, 1e-6, "d sum(Y) / d cls_token[0] (2 examples)");
  if (m.pos_embedding->grad) EXPECT_NEAR(m.pos_embedding->grad[4], 2.0, 1e-6, "d sum(Y) / d pos[1][1]");
  ag_step_reset(); /* frees the arena: P is made again */
  P = sine_tensor(3, (const int[]){2, 4, 3}, 0.7, 0.1, 1.0);
  /* embedding dropout: active only while training */
  m.dropout.p = 0.5f;
  Tensor *E = vit_add_cls_and_positions(&m, P, false);
  Tensor *T = vit_add_cls_and_positions(&m, P, true);
  if (E && T) {
    EXPECT_CLOSE(E->data, want, 30, 1e-6, 0, "eval mode: no dropout");
    int zeros = 0;
    for (long i = 0; i < T->size; i++) zeros += T->data[i] == 0.0f;
    EXPECT(zeros > 0, "training = true with p = 0.5 zeroed nothing: apply m->dropout");
  }
  ViT_free(&m);
  paramset_free(&ps);
}
