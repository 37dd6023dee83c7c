/* Graded tests of exercises 6.1 (PositionWiseFFN_forward), 6.2 (AddNorm_forward), 6.3
 * (causal_valid_lens) and 6.5's causal masking (TransformerDecoderBlock_forward), labs/lab06/.
 * 12 points (6.4-6.6's others: test_blocks.c). The decoder-block test also runs your 6.1-6.3
 * and lab04 multi-head attention (and lab02's attention): those must work too. Expected values exist in
 * the reference build only (GRADE_REF, tests/grade/grade.h). */
#include <math.h>
#include <string.h>

#include "../../../chapters/06_transformer/transformer.h"
#include "../grade.h"
#include "../../sine_fill.h"

GRADED_TEST(lab06_ffn, 3, "6.1 PositionWiseFFN: dense2(relu(dense1(X))) at every position") {
  ParamSet ps = {0};
  PositionWiseFFN f;
  PositionWiseFFN_init(&f, &ps, "ffn", 3, 4, 2);
  sine_fill(f.dense1.W->data, 12, 0.7, 0.2, 1.0), sine_fill(f.dense1.b->data, 4, 0.9, 0.4, 0.5);
  sine_fill(f.dense2.W->data, 8, 0.5, 0.6, 1.0), sine_fill(f.dense2.b->data, 2, 1.1, 0.8, 0.5);
  Tensor *X = tensor_new(3, (int[]){2, 2, 3}); /* (batch, steps, in) */
  sine_fill(X->data, 12, 0.3, 1.0, 2.0);
  X->requires_grad = true;
  Tensor *Y = PositionWiseFFN_forward(&f, X);
  EXPECT_NOT_NULL(Y, "PositionWiseFFN_forward");
  if (!EXPECT_SHAPE(Y, "PositionWiseFFN_forward(X (2, 2, 3)) with 4 hidden, 2 outputs", 2, 2, 2))
    return;
#if GRADE_REF
  float want[8];
  int negatives = 0;
  for (int r = 0; r < 4; r++) {
    double h[4];
    for (int j = 0; j < 4; j++) {
      double a = f.dense1.b->data[j];
      for (int i = 0; i < 3; i++) a += (double)X->data[r * 3 + i] * f.dense1.W->data[i * 4 + j];
      negatives += a < 0;
      h[j] = a > 0 ? a : 0;
    }
    for (int o = 0; o < 2; o++) {
      double a = f.dense2.b->data[o];
      for (int j = 0; j < 4; j++) a += h[j] * f.dense2.W->data[j * 2 + o];
      want[r * 2 + o] = (float)a;
    }
  }
  REF_CHECK(negatives > 0, "(test setup: some hidden units must be negative so ReLU matters)");
#endif
  EXPECT_CLOSE(Y->data, want, 8, 1e-4, 1e-4, "dense2(relu(dense1(X))) (with both biases)");
  ag_backward(t_sum_all(Y));
  EXPECT(X->grad != NULL && f.dense1.W->grad != NULL,
         "no gradient reached X or dense1's weights: use Linear_forward and t_relu");
  paramset_free(&ps);
}

#if GRADE_REF
/* want (2 rows of 4) = LayerNorm(X + Y) with gamma, beta and eps 1e-5, in double */
static void addnorm_reference(const float *X, const float *Y, const float *gamma,
                              const float *beta, float *want) {
  for (int r = 0; r < 2; r++) {
    double s[4], mean = 0, var = 0;
    for (int j = 0; j < 4; j++) mean += s[j] = (double)X[r * 4 + j] + (Y ? Y[r * 4 + j] : 0);
    mean /= 4;
    for (int j = 0; j < 4; j++) var += (s[j] - mean) * (s[j] - mean) / 4;
    for (int j = 0; j < 4; j++)
      want[r * 4 + j] = (float)((s[j] - mean) / sqrt(var + 1e-5) * gamma[j] + beta[j]);
  }
}
#endif

GRADED_TEST(lab06_addnorm, 3, "6.2 AddNorm: LayerNorm(dropout(Y) + X)") {
  ParamSet ps = {0};
  AddNorm a;
  AddNorm_init(&a, &ps, "an", 4, 0.5f);
  sine_fill(a.ln.gamma->data, 4, 0.8, 0.3, 1.0), sine_fill(a.ln.beta->data, 4, 0.6, 0.9, 0.5);
  Tensor *X = tensor_new(3, (int[]){1, 2, 4}), *Y = tensor_new(3, (int[]){1, 2, 4});
  sine_fill(X->data, 8, 0.4, 0.1, 1.5), sine_fill(Y->data, 8, 0.9, 0.7, 1.0);
  Y->requires_grad = true;
  Tensor *Z = AddNorm_forward(&a, X, Y, false); /* evaluation: dropout is the identity */
  EXPECT_NOT_NULL(Z, "AddNorm_forward");
  if (!EXPECT_SHAPE(Z, "AddNorm_forward((1, 2, 4), (1, 2, 4))", 1, 2, 4)) return;
#if GRADE_REF
  float want[8];
  addnorm_reference(X->data, Y->data, a.ln.gamma->data, a.ln.beta->data, want);
#endif
  EXPECT_CLOSE(Z->data, want, 8, 1e-4, 1e-4,
               "layer norm (a->ln: gamma, beta, eps 1e-5) of X + Y, over the last dim");
  ag_backward(t_sum_all(t_square(Z)));
  EXPECT(Y->grad != NULL, "no gradient reached Y: build the result with the t_* ops");
  /* training with dropout 0.5: about half of Y is dropped, so the result must change */
  Tensor *Zt = AddNorm_forward(&a, X, Y, true);
  EXPECT_NOT_NULL(Zt, "AddNorm_forward (training)");
  double diff = 0;
  for (int i = 0; i < 8; i++) diff += fabs((double)Zt->data[i] - Z->data[i]);
  EXPECT(diff > 1e-3, "in training mode the dropout (a->dropout, p = 0.5) must act on Y");
  /* ... and only on Y: with Y = 0 a training pass is exactly LayerNorm(X) */
  Tensor *Zx = AddNorm_forward(&a, X, tensor_zeros(3, (int[]){1, 2, 4}), true);
  EXPECT_NOT_NULL(Zx, "AddNorm_forward (training, Y = 0)");
  if (!EXPECT_SHAPE(Zx, "AddNorm_forward (training, Y = 0)", 1, 2, 4)) return;
#if GRADE_REF
  addnorm_reference(X->data, NULL, a.ln.gamma->data, a.ln.beta->data, want);
#endif
  EXPECT_CLOSE(Zx->data, want, 8, 1e-4, 1e-4, /* float32 layer norm against double */
               "training with Y = 0 must give LayerNorm(X): dropout acts on Y only, not on X "
               "or on the sum");
  paramset_free(&ps);
}

GRADED_TEST(lab06_causal_valid_lens, 3,
            "6.3 causal_valid_lens: [b, i] = offset + i + 1, whole sequences and cached steps") {
  Tensor *a = causal_valid_lens(2, 4, 0);
  EXPECT_NOT_NULL(a, "causal_valid_lens(2, 4, 0)");
  if (!EXPECT_SHAPE(a, "causal_valid_lens(2, 4, 0)", 2, 4)) return;
  EXPECT_CLOSE(a->data, ((float[]){1, 2, 3, 4, 1, 2, 3, 4}), 8, 0, 0,
               "whole target (offset 0): query i sees keys 0..i");
  Tensor *b = causal_valid_lens(3, 1, 6);
  EXPECT_NOT_NULL(b, "causal_valid_lens(3, 1, 6)");
  if (!EXPECT_SHAPE(b, "causal_valid_lens(3, 1, 6)", 3, 1)) return;
  EXPECT_CLOSE(b->data, ((float[]){7, 7, 7}), 3, 0, 0,
               "token 6 decoded alone (6 tokens cached): it sees keys 0..6");
  Tensor *c = causal_valid_lens(1, 2, 3);
  EXPECT_NOT_NULL(c, "causal_valid_lens(1, 2, 3)");
  if (EXPECT_SHAPE(c, "causal_valid_lens(1, 2, 3)", 1, 2))
    EXPECT_CLOSE(c->data, ((float[]){4, 5}), 2, 0, 0, "two queries starting at position 3");
}

GRADED_TEST(lab06_decoder_block_causal, 3,
            "6.5 decoder block masked by 6.3: no future in evaluation passes; cache == full pass") {
  ParamSet ps = {0};
  TransformerDecoderBlock db;
  TransformerDecoderBlock_init(&db, &ps, "db", 8, 16, 2, 0.0f, false);
  ag_set_grad_enabled(false);
  Tensor *X = tensor_new(3, (int[]){2, 5, 8}), *enc = tensor_new(3, (int[]){2, 4, 8});
  sine_fill(X->data, X->size, 0.31, 0.2, 1.0), sine_fill(enc->data, enc->size, 0.57, 0.5, 1.0);
  Tensor *vl = tensor_from(1, (int[]){2}, (float[]){4, 2});
  Tensor *Y = TransformerDecoderBlock_forward(&db, X, enc, vl, NULL, false, DECODER_FIXED);
  EXPECT_NOT_NULL(Y, "TransformerDecoderBlock_forward (6.5; uses your causal_valid_lens)");
  if (!EXPECT_SHAPE(Y, "decoder block output", 2, 5, 8)) return;
#if GRADE_REF
  float want[2 * 5 * 8]; /* the expected output is the reference solution's, same weights */
  memcpy(want, Y->data, sizeof want);
#endif
  /* float32 attention and layer norms in another order of operations */
  EXPECT_CLOSE(Y->data, want, 2 * 5 * 8, 1e-5, 1e-4, "decoder block output (evaluation pass)");
  /* change the last position's input: the outputs at positions 0..3 must not move, even though
   * this is an evaluation (training = false) pass */
  Tensor *X2 = t_copy(X);
  for (int b = 0; b < 2; b++)
    for (int k = 0; k < 8; k++) X2->data[((long)b * 5 + 4) * 8 + k] += 1.0f;
  Tensor *Y2 = TransformerDecoderBlock_forward(&db, X2, enc, vl, NULL, false, DECODER_FIXED);
  EXPECT_NOT_NULL(Y2, "TransformerDecoderBlock_forward");
  for (int b = 0; b < 2; b++)
    EXPECT_AGREE(Y2->data + (long)b * 5 * 8, Y->data + (long)b * 5 * 8, 4 * 8, 1e-6, 0,
                 "outputs before the changed last token (the future leaks: mask missing?)");
  /* one token at a time with the cache: the same outputs as the masked full pass */
  Tensor *cache = NULL;
  for (int t = 0; t < 5; t++) {
    Tensor *Xt = t_slice(X, 1, t, t + 1); /* (2, 1, 8) */
    Tensor *Yt = TransformerDecoderBlock_forward(&db, Xt, enc, vl, &cache, false, DECODER_FIXED);
    EXPECT_NOT_NULL(Yt, "TransformerDecoderBlock_forward (one cached step)");
    for (int b = 0; b < 2; b++)
      EXPECT_AGREE(Yt->data + b * 8, Y->data + ((long)b * 5 + t) * 8, 8, 1e-5, 1e-5,
                   "step t with the cache vs position t of the full pass (offset = cache length?)");
  }
  ag_set_grad_enabled(true);
  paramset_free(&ps);
}
