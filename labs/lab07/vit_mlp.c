/* Exercise 7.4 — the ViT's MLP (3 points)
 *
 * The position-wise network of the ViT block differs from lab06's FFN in two ways: its
 * nonlinearity is GELU, x * Phi(x) with Phi the standard normal CDF (a smooth ReLU that lets a
 * little of the negative inputs through), and dropout follows EACH of its two dense layers:
 *   Y = dropout2(dense2(dropout1(GELU(dense1(X)))))
 *
 * ViTMLP_forward(m, X, training)
 *   X: (..., num_hiddens) -> (..., num_hiddens); the hidden layer has mlp_num_hiddens units.
 *   Layers: m->dense1 (num_hiddens -> mlp_num_hiddens), m->dense2 (back to num_hiddens):
 *   Linear_forward (common/nn.h) works on the last axis of any shape. m->dropout1 and
 *   m->dropout2: Dropout_forward(&m->dropout1, x, training), active only while training.
 *   Hints: t_gelu (common/ops.h) is the exact erf form, as torch.nn.GELU(); t_relu is not the
 *   same function. Every op records its backward, so gradients reach dense1 and dense2.
 * Example: X of ones (2, 100, 24), mlp_num_hiddens 48 -> (2, 100, 24).
 * Return NULL only while unimplemented. Your ViTBlock_forward (7.2) calls this function, so the
 * block's test needs it too.
 * Tests: tests/grade/lab07/test_vit_mlp_head.c — values in eval mode (2), where the two
 * dropouts sit (1). Run: make grade LAB=07.
 */
#include "lab07/lab07.h"

#include "../../common/exercise.h"

Tensor *ViTMLP_forward(ViTMLP *m, Tensor *X, bool training) {
  (void)m, (void)X, (void)training;
  EXERCISE_TODO("7.4", "ViTMLP_forward");
  return NULL;
}
