/* cases_matmul.c — the matrix products (cuda/matmul.cu: cuBLAS through the row-major transpose
 * trick, the bias kernels) against the CPU's gemm. The backward of each op runs the products
 * with the other transpose flags (dA = dC B^T, dB = A^T dC), so all four flag pairs and both
 * cuBLAS entries are compared. Shapes: 1, 31, 33, primes, the empty inner dimension (k = 0:
 * C = 0, no cuBLAS call), and the labs' own: lab06's (64 * 10, 32) @ (32, 32) layers and its
 * attention's (64 * 4, 10, 8) batches of heads. */
#include "../../common/gemm.h"
#include "cuda_check.h"

/* t_matmul: (m, k) @ (k, n) */
static const int mm_shapes[][3] = {{1, 1, 1},   {1, 31, 1},  {31, 1, 33},      {33, 31, 1},
                                   {7, 13, 11}, {3, 0, 5},   {64 * 10, 32, 32}, {37, 97, 41},
                                   {1, 33, 31},  {0, 5, 3},  {4, 6, 0}};
enum { N_MM = sizeof mm_shapes / sizeof mm_shapes[0] };

static Tensor *run_matmul(CcRun *r) {
  const int *s = mm_shapes[r->variant];
  int m = s[0], k = s[1], n = s[2];
  cc_shape(r, "(%d, %d) @ (%d, %d)", m, k, k, n);
  Tensor *a = cc_input(r, 2, (int[]){m, k}, 41, -1, 1, true); /* (m, k) */
  Tensor *b = cc_input(r, 2, (int[]){k, n}, 42, -1, 1, true); /* (k, n) */
  return t_matmul(a, b);                                      /* (m, n) */
}

/* t_bmm: (B, m, k) @ (B, k, n); t_bmm_nt: (B, m, k) @ (B, n, k)^T */
static const int bmm_shapes[][4] = {{1, 1, 1, 1},    {2, 31, 33, 1}, {3, 1, 7, 33},
                                    {5, 13, 17, 11}, {4, 3, 0, 2},   {64 * 4, 10, 8, 10},
                                    {64 * 4, 10, 10, 8}, {1, 33, 31, 29}};
enum { N_BMM = sizeof bmm_shapes / sizeof bmm_shapes[0] };

static Tensor *bmm_case(CcRun *r, bool nt) {
  const int *s = bmm_shapes[r->variant];
  int B = s[0], m = s[1], k = s[2], n = s[3];
  cc_shape(r, nt ? "(%d, %d, %d) @ (%d, %d, %d)^T" : "(%d, %d, %d) @ (%d, %d, %d)", B, m, k, B,
           nt ? n : k, nt ? k : n);
  Tensor *a = cc_input(r, 3, (int[]){B, m, k}, 43, -1, 1, true); /* (B, m, k) */
  Tensor *b = nt ? cc_input(r, 3, (int[]){B, n, k}, 44, -1, 1, true)  /* (B, n, k) */
                 : cc_input(r, 3, (int[]){B, k, n}, 44, -1, 1, true); /* (B, k, n) */
  return nt ? t_bmm_nt(a, b) : t_bmm(a, b); /* (B, m, n) */
}
static Tensor *run_bmm(CcRun *r) { return bmm_case(r, false); }
static Tensor *run_bmm_nt(CcRun *r) { return bmm_case(r, true); }

/* t_linear: x (rows0, rows1, in) @ W (in, out) + b (out). Rows under 64 take bias_grad's plain
 * kernel, 64 and more the split one (cuda/matmul.cu); 300 outputs span 10 of its blocks. */
static const int lin_shapes[][4] = {{1, 1, 1, 1},     {1, 31, 33, 1},  {2, 3, 31, 33},
                                    {1, 64, 7, 13},   {64, 10, 32, 32}, {5, 13, 17, 300},
                                    {3, 37, 0, 11},   {0, 4, 7, 3},     {2, 3, 5, 0}};
enum { N_LIN = sizeof lin_shapes / sizeof lin_shapes[0] };

static Tensor *linear_case(CcRun *r, bool bias) {
  const int *s = lin_shapes[r->variant];
  int in = s[2], out = s[3];
  cc_shape(r, "(%d, %d, %d) @ (%d, %d)%s", s[0], s[1], in, in, out, bias ? " + (out)" : "");
  Tensor *x = cc_input(r, 3, s, 45, -1, 1, true);                  /* (rows0, rows1, in) */
  Tensor *W = cc_input(r, 2, (int[]){in, out}, 46, -1, 1, true);   /* (in, out) */
  Tensor *b = bias ? cc_input(r, 1, &out, 47, -1, 1, true) : NULL; /* (out) */
  return t_linear(x, W, b);                                        /* (rows0, rows1, out) */
}
static Tensor *run_linear(CcRun *r) { return linear_case(r, false); }
static Tensor *run_linear_bias(CcRun *r) { return linear_case(r, true); }

/* ---------- the kernels called directly: what the fronts never pass ----------
 * The fronts always pass the tightest leading dimensions, alpha 1 and beta 0 or 1, and outputs
 * with nothing after them that is compared. These cases call the Backend entries themselves:
 * padded leading dimensions and strides (the padding must come back untouched), alpha and beta
 * of other values, alpha = 0, and a guard band of floats after every output (a kernel writing
 * past its end changes them; the CPU never does). The output is the whole buffer. */

enum { GUARD = 40 }; /* floats after an output that must stay as they were */

/* (transA, transB, m, n, k, count); count 1: gemm, else gemm_batched */
static const int raw_shapes[][6] = {
    {0, 0, 1, 1, 1, 1},  {0, 1, 31, 33, 7, 1}, {1, 0, 33, 1, 31, 1}, {1, 1, 5, 13, 11, 1},
    {0, 0, 7, 3, 0, 1},  {1, 1, 1, 31, 1, 3},  {0, 1, 10, 10, 8, 7}, {1, 0, 13, 7, 5, 4},
    {0, 0, 3, 5, 2, 1}};
enum { N_RAW = sizeof raw_shapes / sizeof raw_shapes[0] };

static Tensor *run_gemm_raw(CcRun *r) {
  const int *s = raw_shapes[r->variant];
  bool tA = s[0], tB = s[1];
  int m = s[2], n = s[3], k = s[4], count = s[5];
  /* op(A) (m, k) is stored (m, k) or (k, m), each row padded by 2; op(B) (k, n) likewise, by 1;
   * C (m, n) rows padded by 3; consecutive matrices one float further apart still */
  int lda = (tA ? m : k) + 2, ldb = (tB ? k : n) + 1, ldc = n + 3;
  long sA = (long)(tA ? k : m) * lda + 1, sB = (long)(tB ? n : k) * ldb + 1,
       sC = (long)m * ldc + 1;
  float alpha = r->variant == N_RAW - 1 ? 0.0f : 0.75f, beta = -0.5f; /* the last: alpha 0 */
  cc_shape(r, "%d x op%s(%d, %d) @ op%s(%d, %d), ld %d %d %d, alpha %g", count, tA ? "^T" : "",
           m, k, tB ? "^T" : "", k, n, lda, ldb, ldc, alpha);
  int na = (int)(sA * count), nb = (int)(sB * count), nc = (int)(sC * count) + GUARD;
  Tensor *A = cc_input(r, 1, &na, 51, -1, 1, false);
  Tensor *B = cc_input(r, 1, &nb, 52, -1, 1, false);
  Tensor *C = cc_input(r, 1, &nc, 53, -1, 1, false); /* read: beta is not 0 */
  if (count == 1)
    KERNEL(r->dev, gemm, tA, tB, m, n, k, alpha, A->data, lda, B->data, ldb, beta, C->data, ldc);
  else
    KERNEL(r->dev, gemm_batched, tA, tB, m, n, k, alpha, A->data, lda, sA, B->data, ldb, sB, beta,
           C->data, ldc, sC, count);
  return C;
}

/* bias_rows and bias_grad on (rows, n) with a guard band; rows under 64 and over (both kernels
 * of bias_grad), n a multiple of 32 and not */
static const int bias_shapes[][2] = {{1, 1},   {31, 33},  {64, 1},
                                     {65, 300}, {640, 32}, {97, 37},
                                     {3, 800}}; /* 800 columns outgrow a capped grid */
enum { N_BIAS = sizeof bias_shapes / sizeof bias_shapes[0] };

static Tensor *run_bias_rows(CcRun *r) {
  int rows = bias_shapes[r->variant][0], n = bias_shapes[r->variant][1];
  cc_shape(r, "(%d, %d) + %d guard", rows, n, GUARD);
  int ny = rows * n + GUARD;
  Tensor *b = cc_input(r, 1, &n, 54, -1, 1, false);   /* (n) */
  Tensor *Y = cc_input(r, 1, &ny, 55, -1, 1, false);  /* (rows, n), then the guard */
  KERNEL(r->dev, bias_rows, Y->data, b->data, rows, n);
  return Y;
}

static Tensor *run_bias_grad(CcRun *r) {
  int rows = bias_shapes[r->variant][0], n = bias_shapes[r->variant][1];
  cc_shape(r, "(%d, %d) + %d guard", rows, n, GUARD);
  int ndb = n + GUARD, ny = rows * n;
  Tensor *dY = cc_input(r, 1, &ny, 56, -1, 1, false);  /* (rows, n) */
  Tensor *db = cc_input(r, 1, &ndb, 57, -1, 1, false); /* (n), then the guard: added onto */
  KERNEL(r->dev, bias_grad, db->data, dY->data, rows, n);
  return db;
}

/* gemm_flops() (the labs' GFLOP/s lines) counts a device's products as the CPU's: the count
 * added by a t_matmul and a t_bmm_nt of mm_shapes (k = 0 adds nothing), as a (1) output */
static Tensor *run_flops(CcRun *r) {
  const int *s = mm_shapes[r->variant];
  int m = s[0], k = s[1], n = s[2];
  cc_shape(r, "(%d, %d) @ (%d, %d), 3 x (%d, %d) @ (%d, %d)^T", m, k, k, n, m, k, n, k);
  Tensor *a = cc_input(r, 2, (int[]){m, k}, 48, -1, 1, false);     /* (m, k) */
  Tensor *b = cc_input(r, 2, (int[]){k, n}, 49, -1, 1, false);     /* (k, n) */
  Tensor *a3 = cc_input(r, 3, (int[]){3, m, k}, 48, -1, 1, false); /* (3, m, k) */
  Tensor *b3 = cc_input(r, 3, (int[]){3, n, k}, 49, -1, 1, false); /* (3, n, k) */
  double f0 = gemm_flops();
  t_matmul(a, b);
  t_bmm_nt(a3, b3);
  float added = (float)(gemm_flops() - f0);
  Device old = tensor_default_device();
  tensor_set_default_device(r->dev);
  Tensor *out = tensor_from(1, (int[]){1}, &added); /* (1) */
  tensor_set_default_device(old);
  return out;
}

/* Tolerances: the emulated cuBLAS sums each dot product in double (a GPU's in float, in its own
 * order), the CPU in float in its blocked kernel's order. A float sum of k terms of size <= 1
 * drifts like sqrt(k) * 6e-8 * |running sum|: for the batched heads (k <= 33) ~1e-6; for the
 * weight gradients summed over lab06's 640 rows ~5e-6 typical, ~2e-5 for the largest of 1024
 * outputs (seen: 1.0e-5), hence 3e-5 there. */
#define BMM_WHY "FP32 dot products of <= 33 terms summed in another order than the CPU's blocks"
#define MM_WHY "FP32 sums over 640 rows (the weight gradients) in another order than the CPU's"
const CcCase cases_matmul[] = {
    {"t_matmul", N_MM, run_matmul, 3e-5f, MM_WHY},
    {"t_bmm", N_BMM, run_bmm, 1e-5f, BMM_WHY},
    {"t_bmm_nt", N_BMM, run_bmm_nt, 1e-5f, BMM_WHY},
    {"t_linear", N_LIN, run_linear, 3e-5f, MM_WHY},
    {"t_linear (bias)", N_LIN, run_linear_bias, 3e-5f, MM_WHY},
    {"gemm, gemm_batched (padded, alpha, beta, guard)", N_RAW, run_gemm_raw, 1e-5f, BMM_WHY},
    {"gemm_flops counted", N_MM, run_flops, 0.0f, "whole numbers under 2^24: exact"},
    {"bias_rows (guard)", N_BIAS, run_bias_rows, 0.0f, "a copy: exact"},
    {"bias_grad (guard)", N_BIAS, run_bias_grad, 1e-5f,
     "640 float terms of size <= 1 onto a sum < 30, in 8 interleaved partial sums"},
    {0},
};
