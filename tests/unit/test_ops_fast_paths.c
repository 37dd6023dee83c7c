/* The size-dependent code paths of the op kernels, each against a plain double-precision
 * reference over a range of sizes that crosses its block boundaries: t_linear's bias rows
 * (8-float blocks with an overlapping last block), t_permute's contiguous runs (same), the
 * softmax's short-row blocks (< 16 keys) and long rows, and layer norm's 16-lane row sums. */
#include <stdlib.h>

#include "../../common/gemm.h"
#include "../../common/ops.h"
#include "../../common/rng.h"
#include "../test.h"

static Tensor *rnd(int ndim, const int *shape) { return tensor_randn(ndim, shape, 0, 1); }

TEST(fast_linear_bias_rows_every_width) {
  for (int n = 1; n <= 41; n++) {
    const int rows = 3, in = 5;
    Tensor *x = rnd(2, (int[]){rows, in}), *W = rnd(2, (int[]){in, n}), *b = rnd(1, (int[]){n});
    Tensor *y = t_linear(x, W, b);
    float *want = malloc(sizeof(float) * (size_t)(rows * n));
    for (int r = 0; r < rows; r++)
      for (int j = 0; j < n; j++) {
        double s = b->data[j];
        for (int k = 0; k < in; k++) s += (double)x->data[r * in + k] * W->data[k * n + j];
        want[r * n + j] = (float)s;
      }
    int before = test_failures();
    CHECK_CLOSE(y->data, want, rows * n, 1e-5, 1e-5); /* float sums of 6 terms of order 1 */
    if (test_failures() > before) test_fail(__FILE__, __LINE__, "t_linear with %d outputs", n);
    free(want);
    ag_step_reset();
  }
}

TEST(fast_permute_runs_every_length) {
  /* (B, T, H, D) -> (B, H, T, D): runs of D contiguous floats, D = 1..20; forward and the
   * gradient (the inverse permutation of the output gradient), exact: they only move floats */
  for (int D = 1; D <= 20; D++) {
    const int B = 2, T = 3, H = 4;
    Tensor *x = rnd(4, (int[]){B, T, H, D});
    x->requires_grad = true;
    Tensor *y = t_permute(x, (int[]){0, 2, 1, 3});
    Tensor *R = rnd(4, (int[]){B, H, T, D});
    ag_backward(t_sum_all(t_mul(y, R)));
    long bad = 0;
    for (int b = 0; b < B; b++)
      for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++)
          for (int d = 0; d < D; d++) {
            long xi = ((long)(b * T + t) * H + h) * D + d, yi = ((long)(b * H + h) * T + t) * D + d;
            bad += y->data[yi] != x->data[xi];
            bad += x->grad[xi] != R->data[yi];
          }
    if (bad) test_fail(__FILE__, __LINE__, "t_permute with D = %d: %ld wrong entries", D, bad);
    ag_step_reset();
  }
}

/* softmax of row x[0..n) kept, the rest of `keys` zero, in double */
static void softmax_ref(const float *x, int n, int keys, float *y) {
  double m = -INFINITY, s = 0;
  for (int j = 0; j < n; j++) m = x[j] > m ? x[j] : m;
  for (int j = 0; j < keys; j++) y[j] = 0;
  if (n == 0 || m == -INFINITY) return;
  for (int j = 0; j < n; j++) s += exp((double)x[j] - m);
  for (int j = 0; j < n; j++) y[j] = (float)(exp((double)x[j] - m) / s);
}

TEST(fast_softmax_short_and_long_rows) {
  /* keys 1..40 cross the short-row threshold (16); 300 rows cross a 256-row block; valid
   * lengths cycle through 0..keys so empty, partial and full rows all occur */
  for (int keys = 1; keys <= 40; keys += (keys < 20 ? 1 : 7)) {
    const int rows = 300;
    Tensor *x = tensor_randn(2, (int[]){rows, keys}, 0, 3);
    Tensor *lens = tensor_new(1, (int[]){rows});
    for (int r = 0; r < rows; r++) lens->data[r] = (float)(r % (keys + 1));
    Tensor *y = t_softmax(x), *ym = t_softmax(t_sequence_mask(x, lens, -INFINITY));
    float *want = malloc(sizeof(float) * (size_t)(rows * keys));
    float *wantm = malloc(sizeof(float) * (size_t)(rows * keys));
    for (int r = 0; r < rows; r++) {
      softmax_ref(x->data + r * keys, keys, keys, want + r * keys);
      softmax_ref(x->data + r * keys, r % (keys + 1), keys, wantm + r * keys);
    }
    int before = test_failures();
    /* probabilities <= 1 from a float exp within ~1e-7 relative and a float sum */
    CHECK_CLOSE(y->data, want, rows * keys, 1e-6, 1e-5);
    CHECK_CLOSE(ym->data, wantm, rows * keys, 1e-6, 1e-5);
    if (test_failures() > before) test_fail(__FILE__, __LINE__, "softmax with %d keys", keys);
    free(want), free(wantm);
    ag_step_reset();
  }
  /* a row of -inf (what sequence_mask leaves of a length-0 row) is zeros in both paths */
  for (int keys = 3; keys <= 33; keys += 30) {
    Tensor *x = tensor_full(2, (int[]){2, keys}, -INFINITY);
    x->data[keys] = 1.0f; /* row 1 has one finite score: probability 1 there */
    Tensor *y = t_softmax(x);
    long bad = 0;
    for (int j = 0; j < 2 * keys; j++) bad += y->data[j] != (j == keys ? 1.0f : 0.0f);
    if (bad) test_fail(__FILE__, __LINE__, "all -inf rows with %d keys", keys);
    ag_step_reset();
  }
}

TEST(fast_layer_norm_every_width) {
  for (int D = 1; D <= 40; D++) {
    const int rows = 5;
    Tensor *x = tensor_randn(2, (int[]){rows, D}, 0.5f, 2);
    Tensor *g = rnd(1, (int[]){D}), *b = rnd(1, (int[]){D});
    Tensor *y = t_layer_norm(x, g, b, 1e-5f);
    float *want = malloc(sizeof(float) * (size_t)(rows * D));
    for (int r = 0; r < rows; r++) {
      double m = 0, v = 0;
      for (int j = 0; j < D; j++) m += x->data[r * D + j];
      m /= D;
      for (int j = 0; j < D; j++) v += (x->data[r * D + j] - m) * (x->data[r * D + j] - m);
      v /= D;
      for (int j = 0; j < D; j++)
        want[r * D + j] = (float)((x->data[r * D + j] - m) / sqrt(v + 1e-5) * g->data[j] + b->data[j]);
    }
    int before = test_failures();
    CHECK_CLOSE(y->data, want, rows * D, 1e-5, 1e-5); /* float row sums of up to 40 terms */
    if (test_failures() > before) test_fail(__FILE__, __LINE__, "layer norm with D = %d", D);
    free(want);
    ag_step_reset();
  }
}

/* t_linear's backward skips the zero rows of the output gradient (cpu_linear_grad) once a product
 * is large (2^20 multiply-adds) and an eighth of its rows or more are zero. Against a double
 * reference: x (rows, 64) and W (64, 64) feed y = x W + b, whose gradient R has zero rows
 * (padding-like: the tail of each sequence of 8, then random rows); x's gradient arrives fresh
 * (its row r dead: exactly 0) or on top of another op's (x * S), W's on top of a second linear's.
 * The gradient matrices must match, and the products done must shrink with the live rows. */
static void linear_grad_case(int rows, int dead_every, bool x_twice, double *flops) {
  const int in = 64, out = 64, T = 8;
  Tensor *x = rnd(2, (int[]){rows, in}), *W = rnd(2, (int[]){in, out}), *b = rnd(1, (int[]){out});
  Tensor *x2 = rnd(2, (int[]){3, in}), *S = rnd(2, (int[]){rows, in});
  Tensor *R = rnd(2, (int[]){rows, out}), *R2 = rnd(2, (int[]){3, out});
  for (int r = 0; r < rows; r++) /* dead: past a length that varies with the row's sequence */
    if (dead_every && (r % T >= T - 1 - (r / T) % 4 || r % dead_every == 0))
      for (int j = 0; j < out; j++) R->data[(size_t)r * out + j] = 0.0f;
  if (dead_every > 1) /* live by one element only: the last, or the first after 16 zeros */
    for (int r = 0; r < 2; r++)
      for (int j = 0; j < out; j++)
        R->data[(size_t)r * out + j] = j == (r ? 16 : out - 1) ? 0.5f : -0.0f;
  x->requires_grad = W->requires_grad = b->requires_grad = true;
  Tensor *loss = t_add(t_sum_all(t_mul(t_linear(x, W, b), R)),
                       t_sum_all(t_mul(t_linear(x2, W, NULL), R2)));
  if (x_twice) loss = t_add(loss, t_sum_all(t_mul(x, S)));
  const double f0 = gemm_flops();
  ag_backward(loss);
  *flops = gemm_flops() - f0;
  float *gx = malloc(sizeof(float) * (size_t)rows * in), *gW = malloc(sizeof(float) * in * out);
  for (int r = 0; r < rows; r++) /* dx = R W^T (+ S) */
    for (int i = 0; i < in; i++) {
      double s = x_twice ? S->data[(size_t)r * in + i] : 0;
      for (int j = 0; j < out; j++)
        s += (double)R->data[(size_t)r * out + j] * W->data[i * out + j];
      gx[(size_t)r * in + i] = (float)s;
    }
  for (int i = 0; i < in; i++) /* dW = x^T R + x2^T R2 */
    for (int j = 0; j < out; j++) {
      double s = 0;
      for (int r = 0; r < rows; r++)
        s += (double)x->data[(size_t)r * in + i] * R->data[(size_t)r * out + j];
      for (int r = 0; r < 3; r++) s += (double)x2->data[r * in + i] * R2->data[r * out + j];
      gW[i * out + j] = (float)s;
    }
  int before = test_failures();
  /* float sums of up to rows + 3 products of order 1: 1e-4 absolute at rows 512 */
  CHECK_CLOSE(x->grad, gx, (long)rows * in, 1e-4, 1e-5);
  CHECK_CLOSE(W->grad, gW, (long)in * out, 1e-4, 1e-5);
  long nonzero = 0; /* a fresh dx's dead rows: exactly 0, as the reference's */
  for (long e = 0; !x_twice && e < (long)rows * in; e++)
    nonzero += gx[e] == 0.0f && x->grad[e] != 0.0f;
  CHECK(nonzero == 0);
  if (test_failures() > before)
    test_fail(__FILE__, __LINE__, "t_linear backward, %d rows, dead every %d, x twice %d", rows,
              dead_every, x_twice);
  free(gx);
  free(gW);
  ag_step_reset();
}

TEST(fast_linear_grad_skips_zero_rows) {
  double f_full, f_part, f_none, f;
  linear_grad_case(512, 0, false, &f_full); /* every row live: the products as they are */
  linear_grad_case(512, 5, false, &f_part); /* ~half the rows dead */
  linear_grad_case(512, 5, true, &f);       /* x's gradient accumulates */
  linear_grad_case(512, 1, false, &f_none); /* every row dead */
  linear_grad_case(24, 5, true, &f);        /* too small to skip: the full products */
  const double per_row = 2.0 * 2 * 64 * 64; /* dx and dW: 2 x 64 x 64 multiply-adds a row */
  printf("  backward products: %.0f (every row live), %.0f (some dead), %.0f (all dead)\n",
         f_full, f_part, f_none);
  CHECK(f_part < f_full - 0.3 * 512 * per_row); /* more than 30% of the rows skipped */
  CHECK(f_none < f_full - 0.99 * 512 * per_row);
}
