/* Tests of ops/shape.c: reshape views, permute/transpose, concat, slice, repeat_interleave,
 * patchify, copy and detach. Inputs are aranges, so every expected value is an index. */
#include "../../common/ops.h"
#include "../test.h"

static Tensor *arange_shaped(int ndim, const int *shape) {
  Tensor *t = tensor_new(ndim, shape);
  for (long i = 0; i < t->size; i++) t->data[i] = (float)i;
  return t;
}
#define ARANGE(...) arange_shaped(SHAPE(__VA_ARGS__))

/* ---------- reshape ---------- */

TEST(reshape_is_a_view) {
  Tensor *x = ARANGE(2, 3, 4);
  Tensor *y = t_view(x, 6, -1);
  CHECK_INT(y->ndim, 2);
  CHECK_INT(y->shape[0], 6);
  CHECK_INT(y->shape[1], 4);
  CHECK(y->data == x->data); /* shares storage, no copy */
  Tensor *z = t_view(x, -1);
  CHECK_INT(z->shape[0], 24);
  CHECK_ERROR(t_view(x, 4, 5), "cannot reshape (2, 3, 4) (24 elements) to (4, 5) (20 elements)");
  CHECK_ERROR(t_view(x, -1, 5), "no size for the -1 dim fits");
  CHECK_ERROR(t_view(x, -1, -1), "more than one -1");
  CHECK_ERROR(t_view(x, -2, 12), "negative size");
}

/* ---------- permute / transpose ---------- */

TEST(permute_values) {
  Tensor *x = ARANGE(2, 3, 4);
  Tensor *y = t_permute(x, (int[]){2, 0, 1}); /* y[k, i, j] = x[i, j, k] */
  CHECK_INT(y->shape[0], 4);
  CHECK_INT(y->shape[1], 2);
  CHECK_INT(y->shape[2], 3);
  int bad = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) bad += *tensor_at(y, (int[]){k, i, j}) != i * 12 + j * 4 + k;
  CHECK_INT(bad, 0);
  CHECK_ERROR(t_permute(x, (int[]){0, 0, 1}), "perm names dim 0 twice");
  CHECK_ERROR(t_permute(x, (int[]){0, 1, 3}), "dim 3 is out of range");
}

/* Above PERMUTE_PAR_MIN (65536 floats) the runs are split across threads: the values, the
 * fresh gradient (stored) and a second one (added) must still land on the right elements, for a
 * contiguous last dim (transpose_qkv's case) and a moved one. Integers: exact in float. */
TEST(permute_large_values_and_gradients) {
  const int perms[2][4] = {{0, 2, 1, 3}, {3, 1, 0, 2}};
  for (int pi = 0; pi < 2; pi++) {
    const int *pm = perms[pi];
    Tensor *x = ARANGE(4, 64, 32, 16); /* 131072 floats */
    x->requires_grad = true;
    Tensor *y = t_permute(x, pm);
    long bad = 0;
    int i[4];
    for (i[0] = 0; i[0] < 4; i[0]++)
      for (i[1] = 0; i[1] < 64; i[1]++)
        for (i[2] = 0; i[2] < 32; i[2]++)
          for (i[3] = 0; i[3] < 16; i[3]++) {
            int o[4] = {i[pm[0]], i[pm[1]], i[pm[2]], i[pm[3]]};
            bad += *tensor_at(y, o) != (float)(((i[0] * 64 + i[1]) * 32 + i[2]) * 16 + i[3]);
          }
    if (bad) test_fail(__FILE__, __LINE__, "perm %d: %ld wrong values", pi, bad);
    /* d/dx sum(y * y) = 2 x through the permutation back; two permutes of x reach x's
     * gradient twice (stored fresh, then added): 4 x */
    Tensor *y2 = t_permute(x, pm);
    Tensor *l = t_add(t_sum_all(t_mul(y, y)), t_sum_all(t_mul(y2, y2)));
    ag_backward(l);
    bad = 0;
    for (long k = 0; k < x->size; k++) bad += x->grad[k] != 4.0f * x->data[k];
    if (bad) test_fail(__FILE__, __LINE__, "perm %d: %ld wrong gradients", pi, bad);
    ag_step_reset();
  }
}

TEST(transpose_values) {
  Tensor *x = ARANGE(2, 3);
  Tensor *y = t_transpose(x, 0, -1);
  CHECK_INT(y->shape[0], 3);
  CHECK_CLOSE(y->data, ((float[]){0, 3, 1, 4, 2, 5}), 6, 0, 0);
  /* the d2l transpose_qkv step: (B, Q, H, D) -> (B, H, Q, D) */
  Tensor *q = ARANGE(2, 3, 4, 5);
  Tensor *t = t_transpose(q, 1, 2);
  CHECK_INT(t->shape[1], 4);
  CHECK(*tensor_at(t, (int[]){1, 2, 0, 3}) == *tensor_at(q, (int[]){1, 0, 2, 3}));
}

/* ---------- concat / slice ---------- */

TEST(concat_values) {
  Tensor *a = ARANGE(2, 2), *b = tensor_full(2, (int[]){2, 1}, 9);
  Tensor *c = t_cat2(a, b, 1);
  CHECK_INT(c->shape[1], 3);
  CHECK_CLOSE(c->data, ((float[]){0, 1, 9, 2, 3, 9}), 6, 0, 0);
  Tensor *d = t_concat((Tensor *[]){a, a, a}, 3, 0);
  CHECK_INT(d->shape[0], 6);
  CHECK_CLOSE(d->data + 8, ((float[]){0, 1, 2, 3}), 4, 0, 0);
  CHECK_ERROR(t_cat2(a, b, 0), "input 1 has shape (2, 1), input 0 has (2, 2)");
  CHECK_ERROR(t_cat2(a, tzeros(2), 0), "input 1 has shape (2)");
  CHECK_ERROR(t_concat((Tensor *[]){a}, 0, 0), "at least one tensor");
}

TEST(slice_values) {
  Tensor *x = ARANGE(2, 4);
  Tensor *y = t_slice(x, 1, 1, 3);
  CHECK_CLOSE(y->data, ((float[]){1, 2, 5, 6}), 4, 0, 0);
  Tensor *z = t_slice(x, -1, -2, 4); /* negative bounds count from the end */
  CHECK_CLOSE(z->data, ((float[]){2, 3, 6, 7}), 4, 0, 0);
  CHECK_INT(t_slice(x, 0, 1, 1)->size, 0);
  CHECK_ERROR(t_slice(x, 1, 2, 5), "range [2, 5) is not within dim 1 (size 4) of (2, 4)");
  CHECK_ERROR(t_slice(x, 2, 0, 1), "dim 2 is out of range");
}

/* ---------- repeat_interleave ---------- */

TEST(repeat_interleave_values) {
  /* d2l repeats valid_lens per head: (1, 2, 3) -> (1, 1, 2, 2, 3, 3) */
  Tensor *v = tensor_from(1, (int[]){3}, (float[]){1, 2, 3});
  CHECK_CLOSE(t_repeat_interleave(v, 2, 0)->data, ((float[]){1, 1, 2, 2, 3, 3}), 6, 0, 0);
  Tensor *x = ARANGE(2, 2);
  CHECK_CLOSE(t_repeat_interleave(x, 2, 0)->data, ((float[]){0, 1, 0, 1, 2, 3, 2, 3}), 8, 0, 0);
  CHECK_CLOSE(t_repeat_interleave(x, 3, 1)->data,
              ((float[]){0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3}), 12, 0, 0);
  CHECK_ERROR(t_repeat_interleave(x, 0, 0), "repeats = 0 must be >= 1");
}

/* ---------- patchify ---------- */

TEST(patchify_values) {
  /* (1, 2, 4, 4) with p = 2: 4 patches of 2 * 2 * 2 features; pixel (c, h, w) holds 16c+4h+w */
  Tensor *img = ARANGE(1, 2, 4, 4);
  Tensor *P = t_patchify(img, 2);
  CHECK_INT(P->ndim, 3);
  CHECK_INT(P->shape[1], 4);
  CHECK_INT(P->shape[2], 8);
  /* patch 1 = grid (0, 1): features (c, i, j) = pixel (c, i, 2 + j) */
  CHECK_CLOSE(P->data + 8, ((float[]){2, 3, 6, 7, 18, 19, 22, 23}), 8, 0, 0);
  /* patch 2 = grid (1, 0) */
  CHECK_CLOSE(P->data + 16, ((float[]){8, 9, 12, 13, 24, 25, 28, 29}), 8, 0, 0);
  CHECK_ERROR(t_patchify(ARANGE(1, 1, 6, 4), 4), "height 6 and width 4 must both be divisible");
  CHECK_ERROR(t_patchify(ARANGE(1, 4, 4), 2), "images must be (batch, channels, height, width)");
}

/* ---------- copy / detach ---------- */

TEST(copy_and_detach) {
  Tensor *x = ARANGE(2, 3);
  x->requires_grad = true;
  Tensor *c = t_copy(x), *d = t_detach(x);
  CHECK(c->data != x->data);
  CHECK_CLOSE(c->data, x->data, 6, 0, 0);
  CHECK(c->requires_grad);
  CHECK(d->data == x->data);
  CHECK(!d->requires_grad);
}

/* ---------- gradient checks ---------- */

/* A fresh copy per GRADCHECK: the tape of an earlier check in the same test still holds nodes
 * with gradients, and a later backward would push them into a shared input again. */
static Tensor *fresh(const Tensor *x) { return tensor_from(x->ndim, x->shape, x->data); }

static Tensor *f_reshape(Tensor **in, void *ctx) { return t_view(in[0], 3, -1, 2); }
static Tensor *f_permute(Tensor **in, void *ctx) { return t_permute(in[0], (int[]){1, 2, 0}); }
static Tensor *f_transpose(Tensor **in, void *ctx) { return t_transpose(in[0], 0, 2); }
static Tensor *f_concat4(Tensor **in, void *ctx) { return t_concat(in, 4, 1); }
static Tensor *f_cat2_same(Tensor **in, void *ctx) { return t_cat2(in[0], in[0], 0); }
static Tensor *f_slice(Tensor **in, void *ctx) { return t_slice(in[0], 1, 1, 3); }
static Tensor *f_repeat(Tensor **in, void *ctx) { return t_repeat_interleave(in[0], 3, 1); }
static Tensor *f_patchify(Tensor **in, void *ctx) { return t_patchify(in[0], 2); }
static Tensor *f_copy(Tensor **in, void *ctx) { return t_copy(in[0]); }

TEST(grad_shape_ops) {
  Tensor *x = tensor_randn(3, (int[]){2, 3, 4}, 0, 1);
  GRADCHECK(f_reshape, (Tensor *[]){fresh(x)}, 1, NULL);
  GRADCHECK(f_permute, (Tensor *[]){fresh(x)}, 1, NULL);
  GRADCHECK(f_transpose, (Tensor *[]){fresh(x)}, 1, NULL);
  GRADCHECK(f_slice, (Tensor *[]){fresh(x)}, 1, NULL);
  GRADCHECK(f_repeat, (Tensor *[]){fresh(x)}, 1, NULL);
  GRADCHECK(f_copy, (Tensor *[]){fresh(x)}, 1, NULL);
  GRADCHECK(f_cat2_same, (Tensor *[]){fresh(x)}, 1, NULL); /* one input twice: gradients add */
}

TEST(grad_concat_more_than_three_inputs) {
  Tensor *xs[4];
  for (int k = 0; k < 4; k++) xs[k] = tensor_randn(2, (int[]){2, k + 1}, 0, 1);
  GRADCHECK(f_concat4, xs, 4, NULL);
}

TEST(grad_patchify) {
  Tensor *img = tensor_randn(4, (int[]){2, 2, 4, 6}, 0, 1);
  GRADCHECK(f_patchify, (Tensor *[]){img}, 1, NULL);
}

static Tensor *f_permute_heads(Tensor **in, void *ctx) {
  return t_permute(in[0], (int[]){0, 2, 1, 3}); /* transpose_qkv's (B, n, h, d) -> (B, h, n, d) */
}
static Tensor *f_view_of_permute(Tensor **in, void *ctx) {
  return t_view(t_permute(in[0], (int[]){0, 2, 1, 3}), -1, 3); /* a view of a copy */
}
static Tensor *f_cat_last(Tensor **in, void *ctx) { return t_cat2(in[0], in[1], -1); }
static Tensor *f_cat_first(Tensor **in, void *ctx) { return t_cat2(in[0], in[1], 0); }
static Tensor *f_slice_first(Tensor **in, void *ctx) { return t_slice(in[0], 0, 1, 2); }
static Tensor *f_slice_last(Tensor **in, void *ctx) { return t_slice(in[0], -1, 0, 3); }
static Tensor *f_repeat_first(Tensor **in, void *ctx) { return t_repeat_interleave(in[0], 2, 0); }
static Tensor *f_repeat_last(Tensor **in, void *ctx) { return t_repeat_interleave(in[0], 2, -1); }

/* The shape ops along the other dims: first and last, 4-D permutes, different-sized inputs. */
TEST(grad_shape_ops_other_dims) {
  Tensor *x4 = tensor_randn(4, (int[]){2, 3, 2, 3}, 0, 1);
  GRADCHECK(f_permute_heads, (Tensor *[]){fresh(x4)}, 1, NULL);
  GRADCHECK(f_view_of_permute, (Tensor *[]){fresh(x4)}, 1, NULL);
  Tensor *a = tensor_randn(3, (int[]){2, 3, 2}, 0, 1), *b = tensor_randn(3, (int[]){2, 3, 4}, 0, 1);
  GRADCHECK(f_cat_last, ((Tensor *[]){a, b}), 2, NULL);
  Tensor *c = tensor_randn(3, (int[]){1, 3, 4}, 0, 1), *d = tensor_randn(3, (int[]){3, 3, 4}, 0, 1);
  GRADCHECK(f_cat_first, ((Tensor *[]){c, d}), 2, NULL);
  Tensor *x = tensor_randn(3, (int[]){3, 2, 4}, 0, 1);
  GRADCHECK(f_slice_first, (Tensor *[]){fresh(x)}, 1, NULL);
  GRADCHECK(f_slice_last, (Tensor *[]){fresh(x)}, 1, NULL);
  GRADCHECK(f_repeat_first, (Tensor *[]){fresh(x)}, 1, NULL);
  GRADCHECK(f_repeat_last, (Tensor *[]){fresh(x)}, 1, NULL);
}
