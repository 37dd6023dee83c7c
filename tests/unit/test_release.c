/* test_release.c — memory saving in training steps must not change a single number:
 * ag_set_release_grads (gradient and value buffers handed back during backward), arena_release,
 * and the ViT MLP that releases its GELU / dropout activations and rebuilds the dropout output
 * for dense2's backward (gelu_mlp_forward in common/nn.c, t_recompute in
 * common/ops/recompute.c). The reference is the same step with all of it off (eval-style plain
 * ops, release off): parameter gradients must agree bit for bit, since the same float
 * expressions run in the same order. */
#include <stdlib.h>
#include <string.h>

#include "../../common/nn.h"
#include "../../common/rng.h"
#include "../test.h"
#include "../../chapters/07_vit/vit.h"

/* The MLP with its recompute (the kit's gelu_mlp_forward, not exercise 7.4's plain one). */
static Tensor *mlp_recompute(ViTMLP *m, Tensor *X) {
  return gelu_mlp_forward(&m->dense1, &m->dropout1, &m->dense2, &m->dropout2, X, true);
}

/* One training step of two stacked ViT MLPs (dropout 0.3) with tanh and reshapes between, big enough (64 x 4096 floats = 1 MB
 * per MLP activation) that the arena hands out blocks of its own; returns the loss and copies
 * every parameter gradient into g (n floats). */
static double mlp_step(ViTMLP *m, ParamSet *ps, bool release, bool plain, float *g, long n) {
  rng_seed(7); /* the same dropout masks in every call */
  Tensor *X = tensor_new(2, (const int[]){64, 32}); /* (tokens, num_hiddens) */
  for (long i = 0; i < X->size; i++) X->data[i] = sinf(0.37f * (float)i);
  X->requires_grad = true;
  paramset_zero_grad(ps);
  ag_set_release_grads(release);
  Tensor *Y = X;
  for (int k = 0; k < 2; k++) {
    if (plain) { /* the composition of plain ops: nothing released, nothing recomputed */
      Tensor *H = t_dropout(t_gelu(Linear_forward(&m[k].dense1, Y)), m[k].dropout1.p, true);
      Y = t_dropout(Linear_forward(&m[k].dense2, H), m[k].dropout2.p, true);
    } else {
      Y = mlp_recompute(&m[k], Y);
      /* the caller set the threshold to 0: the recompute node must be on the tape */
      CHECK(Y->in[0] && Y->in[0]->name && strcmp(Y->in[0]->name, "recompute") == 0);
    }
    if (k == 0) { /* tanh's backward reads its output, here through a view (whose buffer is
                   * tanh's: releasing it at the view would hand tanh's values to the next
                   * gradient before tanh's backward reads them) */
      Y = t_tanh(t_reshape(t_tanh(Y), 2, (const int[]){32, 64}));
      Y = t_reshape(Y, 2, (const int[]){64, 32});
    }
  }
  Tensor *loss = t_sum_all(t_mul(Y, Y)); /* (1) */
  ag_backward(loss);
  double l = loss->data[0]; /* small values survive the release (the loops read the loss) */
  long off = 0;
  for (int k = 0; k < 2; k++) {
    Tensor *p[4] = {m[k].dense1.W, m[k].dense1.b, m[k].dense2.W, m[k].dense2.b};
    for (int i = 0; i < 4; i++) {
      CHECK(p[i]->grad != NULL);
      if (!p[i]->grad || off + p[i]->size > n) return NAN;
      memcpy(g + off, p[i]->grad, sizeof(float) * (size_t)p[i]->size);
      off += p[i]->size;
    }
  }
  CHECK(off == n);
  ag_set_release_grads(false);
  ag_step_reset();
  return l;
}

TEST(release_grads_and_vit_mlp_recompute_change_nothing) {
  size_t recompute_min = t_recompute_set_min(0); /* 1 MB activations: recompute them */
  ParamSet ps = {0};
  ViTMLP m[2];
  rng_seed(3);
  ViTMLP_init(&m[0], &ps, "mlp0", 32, 4096, 0.3f);
  ViTMLP_init(&m[1], &ps, "mlp1", 32, 4096, 0.3f);
  const long n = paramset_count(&ps);
  float *g_ref = calloc((size_t)n, sizeof(float)), *g = calloc((size_t)n, sizeof(float));
  double l_ref = mlp_step(m, &ps, false, true, g_ref, n);
  CHECK(l_ref > 0);
  bool any = false;
  for (long i = 0; i < n; i++) any |= g_ref[i] != 0;
  CHECK(any); /* a gradient of zeros would make the comparisons below empty */
  /* release on, plain ops; release off, the MLP's own path; both on (the training loops) */
  const bool cases[3][2] = {{true, true}, {false, false}, {true, false}};
  for (int c = 0; c < 3; c++) {
    double l = mlp_step(m, &ps, cases[c][0], cases[c][1], g, n);
    CHECK(l == l_ref);
    long diff = 0;
    for (long i = 0; i < n; i++) diff += g[i] != g_ref[i];
    if (diff) test_fail(__FILE__, __LINE__, "case %d (release %d, plain %d): %ld of %ld gradients differ", c,
                        cases[c][0], cases[c][1], diff, n);
  }
  free(g_ref);
  free(g);
  paramset_free(&ps);
  t_recompute_set_min(recompute_min);
}

TEST(arena_release_reuses_big_blocks_only) {
  void *a = arena_alloc(2u << 20); /* a block of its own */
  size_t used = arena_used();
  CHECK(arena_release(a));
  CHECK(arena_used() + (2u << 20) == used);
  CHECK(!arena_release(a)); /* already free */
  void *b = arena_alloc(2u << 20);
  CHECK(b == a); /* handed out again within the step */
  void *s = arena_alloc(64);
  CHECK(!arena_release(s)); /* small allocations are not reclaimed */
  CHECK(!arena_release(NULL));
  ag_step_reset();
}

/* The recompute is for large activations only: below the threshold the MLP is the plain
 * composition (no recompute node), at or above it the node is recorded (1 MB: the arena
 * reclaims blocks from that size on). */
TEST(vit_mlp_recompute_threshold) {
  ParamSet ps = {0};
  ViTMLP m;
  rng_seed(3);
  ViTMLP_init(&m, &ps, "mlp", 8, 4096, 0.3f);
  Tensor *X = tensor_full(2, (const int[]){64, 8}, 0.5f); /* (tokens, num_hiddens) */
  X->requires_grad = true;
  const size_t hidden_bytes = sizeof(float) * 64 * 4096;
  size_t old = t_recompute_set_min(hidden_bytes + 1);
  Tensor *Y = mlp_recompute(&m, X);
  CHECK(!(Y->in[0] && Y->in[0]->name && strcmp(Y->in[0]->name, "recompute") == 0));
  t_recompute_set_min(hidden_bytes);
  Y = mlp_recompute(&m, X);
  CHECK(Y->in[0] && Y->in[0]->name && strcmp(Y->in[0]->name, "recompute") == 0);
  CHECK(t_recompute_set_min(old) == hidden_bytes);
  ag_step_reset();
  paramset_free(&ps);
}
