/* cases_reduce.c — sums and means (cuda/reduce.cu) against the CPU: over the last dim, a middle
 * dim, the first dim, and everything; shapes 1, 31, 33, primes and lab06's (64, 10, 32). */
#include "cuda_check.h"

static const int shapes[][3] = {{1, 1, 1},  {1, 1, 31}, {3, 33, 1},   {5, 7, 11},
                                {2, 31, 33}, {64, 10, 32}, {1, 1031, 3}};
enum { N = sizeof shapes / sizeof shapes[0] };

static Tensor *reduce_case(CcRun *r, int dim, bool mean) {
  const int *s = shapes[r->variant];
  cc_shape(r, "(%d, %d, %d) over dim %d", s[0], s[1], s[2], dim);
  Tensor *x = cc_input(r, 3, s, 31, -1, 1, true);
  return mean ? t_mean(x, dim, false) : t_sum(x, dim, dim == 1);
}
static Tensor *run_sum_last(CcRun *r) { return reduce_case(r, 2, false); }
static Tensor *run_sum_mid(CcRun *r) { return reduce_case(r, 1, false); }
static Tensor *run_mean_first(CcRun *r) { return reduce_case(r, 0, true); }
static Tensor *run_mean_last(CcRun *r) { return reduce_case(r, -1, true); }
static Tensor *run_sum_all(CcRun *r) {
  const int *s = shapes[r->variant];
  cc_shape(r, "(%d, %d, %d)", s[0], s[1], s[2]);
  return t_sum_all(cc_input(r, 3, s, 32, -1, 1, true));
}
static Tensor *run_mean_all(CcRun *r) {
  const int *s = shapes[r->variant];
  cc_shape(r, "(%d, %d, %d)", s[0], s[1], s[2]);
  return t_mean_all(cc_input(r, 3, s, 33, -1, 1, true));
}

/* sums of up to ~20k terms in [-1, 1]: float partial sums (GPU) against double (CPU) differ by
 * a few ulps of the running sum, ~1e-6 of 1 + |sum| */
#define WHY "float tree sums on the GPU, double sums on the CPU: ulps of the running sum"
const CcCase cases_reduce[] = {
    {"sum (last dim)", N, run_sum_last, 1e-5f, WHY},
    {"sum (middle dim, keepdim)", N, run_sum_mid, 1e-5f, WHY},
    {"mean (first dim)", N, run_mean_first, 1e-5f, WHY},
    {"mean (last dim)", N, run_mean_last, 1e-5f, WHY},
    {"sum_all", N, run_sum_all, 1e-5f, WHY},
    {"mean_all", N, run_mean_all, 1e-5f, WHY},
    {0},
};
