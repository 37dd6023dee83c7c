/* Tests of the reductions (common/ops/reduce.c): values and shapes for every dim, negative
 * dims, keepdim, range errors, the backward broadcast, and gradient checks. */
#include "../../common/ops.h"
#include "../test.h"

/* Sums of small integers are exact in float; means here divide them by 3, 4 or 24 and are
 * compared with a few-ulp allowance. */
#define EXACT 0.0
#define ULPS 1e-6

/* (2, 3, 4) holding 0..23: a[i][j][k] = 12 i + 4 j + k */
static Tensor *arange_234(void) {
  Tensor *t = tensor_new(SHAPE(2, 3, 4));
  for (int i = 0; i < 24; i++) t->data[i] = (float)i;
  return t;
}

static void check_shape(const Tensor *t, int ndim, const int *shape) {
  char got[64];
  CHECK_INT(t->ndim, ndim);
  for (int i = 0; i < ndim && i < t->ndim; i++)
    if (t->shape[i] != shape[i]) test_fail(__FILE__, __LINE__, "shape %s", shape_str(t, got, 64));
}

TEST(reduce_sum_each_dim) {
  Tensor *a = arange_234();
  /* dim 0: 12 + 8 j + 2 k */
  Tensor *s0 = t_sum(a, 0, false);
  check_shape(s0, SHAPE(3, 4));
  CHECK_CLOSE(s0->data, ((float[]){12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34}), 12, EXACT, 0);
  /* dim 1: 36 i + 12 + 3 k */
  Tensor *s1 = t_sum(a, 1, false);
  check_shape(s1, SHAPE(2, 4));
  CHECK_CLOSE(s1->data, ((float[]){12, 15, 18, 21, 48, 51, 54, 57}), 8, EXACT, 0);
  /* dim 2 (and -1): 48 i + 16 j + 6 */
  const float want2[6] = {6, 22, 38, 54, 70, 86};
  Tensor *s2 = t_sum(a, 2, false);
  check_shape(s2, SHAPE(2, 3));
  CHECK_CLOSE(s2->data, want2, 6, EXACT, 0);
  Tensor *sm1 = t_sum(a, -1, true);
  check_shape(sm1, SHAPE(2, 3, 1));
  CHECK_CLOSE(sm1->data, want2, 6, EXACT, 0);
  /* -3 is dim 0, kept as size 1 */
  Tensor *sm3 = t_sum(a, -3, true);
  check_shape(sm3, SHAPE(1, 3, 4));
  CHECK_CLOSE(sm3->data, s0->data, 12, EXACT, 0);
}

TEST(reduce_mean_each_dim) {
  Tensor *a = arange_234();
  Tensor *m1 = t_mean(a, 1, false);
  check_shape(m1, SHAPE(2, 4));
  CHECK_CLOSE(m1->data, ((float[]){4, 5, 6, 7, 16, 17, 18, 19}), 8, ULPS, ULPS);
  Tensor *m2 = t_mean(a, -1, false);
  check_shape(m2, SHAPE(2, 3));
  CHECK_CLOSE(m2->data, ((float[]){1.5f, 5.5f, 9.5f, 13.5f, 17.5f, 21.5f}), 6, ULPS, ULPS);
  Tensor *m0 = t_mean(a, 0, true);
  check_shape(m0, SHAPE(1, 3, 4));
  for (int j = 0; j < 12; j++) CHECK_NEAR(m0->data[j], 6 + j, ULPS);
}

TEST(reduce_all_and_1d) {
  Tensor *a = arange_234();
  Tensor *s = t_sum_all(a), *m = t_mean_all(a);
  check_shape(s, SHAPE(1));
  check_shape(m, SHAPE(1));
  CHECK_NEAR(s->data[0], 276, EXACT);
  CHECK_NEAR(m->data[0], 11.5, ULPS);
  /* a 1-D tensor reduces to shape (1), with or without keepdim */
  Tensor *v = tensor_arange(5);
  Tensor *v0 = t_sum(v, 0, false), *v1 = t_mean(v, -1, true);
  check_shape(v0, SHAPE(1));
  check_shape(v1, SHAPE(1));
  CHECK_NEAR(v0->data[0], 10, EXACT);
  CHECK_NEAR(v1->data[0], 2, ULPS);
}

TEST(reduce_dim_out_of_range) {
  Tensor *a = arange_234();
  CHECK_ERROR(t_sum(a, 3, false), "t_sum: dim 3 is out of range for a tensor of shape (2, 3, 4)");
  CHECK_ERROR(t_mean(a, -4, true), "t_mean: dim -4 is out of range");
  CHECK_ERROR(t_sum(tensor_arange(3), 1, false), "use 0..0, or -1..-1");
}

TEST(reduce_backward_broadcasts_gradient) {
  /* y = mean over dim 1 of (2, 3); seeding dy = (1, 2) gives dx = 1/3 and 2/3 per row */
  Tensor *x = tensor_new(SHAPE(2, 3));
  for (int i = 0; i < 6; i++) x->data[i] = (float)i;
  x->requires_grad = true;
  ag_backward_with(t_mean(x, 1, false), (float[]){1, 2});
  const float third = 1.0f / 3.0f;
  CHECK_CLOSE(x->grad, ((float[]){third, third, third, 2 * third, 2 * third, 2 * third}), 6,
              ULPS, 0);
  /* and sum over dim 0 passes each column's gradient to both rows */
  ag_step_reset();
  x = tzeros(2, 3);
  x->requires_grad = true;
  ag_backward_with(t_sum(x, 0, true), (float[]){1, 2, 3});
  CHECK_CLOSE(x->grad, ((float[]){1, 2, 3, 1, 2, 3}), 6, EXACT, 0);
}

typedef struct {
  int dim;
  bool keepdim, mean;
} ReduceCase;

static Tensor *gc_reduce(Tensor **x, void *ctx) {
  const ReduceCase *c = ctx;
  return c->mean ? t_mean(x[0], c->dim, c->keepdim) : t_sum(x[0], c->dim, c->keepdim);
}
static Tensor *gc_sum_all(Tensor **x, void *ctx) { return t_sum_all(x[0]); }
static Tensor *gc_mean_all(Tensor **x, void *ctx) { return t_mean_all(x[0]); }

TEST(reduce_gradcheck) {
  for (int mean = 0; mean <= 1; mean++)
    for (int keep = 0; keep <= 1; keep++)
      for (int dim = -3; dim < 3; dim++) {
        ReduceCase c = {dim, keep, mean};
        Tensor *in[1] = {tensor_randn(SHAPE(2, 3, 4), 0, 1)};
        int before = test_failures();
        /* GRADCHECK's tolerance: float32 central differences with step 1e-2 */
        GRADCHECK(gc_reduce, in, 1, &c);
        if (test_failures() > before)
          test_fail(__FILE__, __LINE__, "%s dim %d keepdim %d", mean ? "t_mean" : "t_sum", dim,
                    keep);
      }
  for (int dim = 0; dim < 4; dim++) { /* 4-D, the largest rank */
    ReduceCase c = {dim, false, true};
    Tensor *in[1] = {tensor_randn(SHAPE(2, 3, 2, 2), 0, 1)};
    GRADCHECK(gc_reduce, in, 1, &c);
  }
  /* fresh inputs for each check: the tape of an earlier check still points at its inputs */
  Tensor *in_sum[1] = {tensor_randn(SHAPE(3, 4), 0, 1)};
  GRADCHECK(gc_sum_all, in_sum, 1, NULL);
  Tensor *in_mean[1] = {tensor_randn(SHAPE(3, 4), 0, 1)};
  GRADCHECK(gc_mean_all, in_mean, 1, NULL);
}

TEST(reduce_null_input_is_an_error) {
  CHECK_ERROR(t_sum(NULL, 0, false), "t_sum: an input is NULL");
  CHECK_ERROR(t_mean_all(NULL), "an input is NULL");
}
