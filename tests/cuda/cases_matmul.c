/* cases_matmul.c — the matrix products (cuda/matmul.cu: cuBLAS through the row-major transpose
 * trick, the bias kernels) against the CPU's gemm. The backward of each op runs the products
 * with the other transpose flags (dA = dC B^T, dB = A^T dC), so all four flag pairs and both
 * cuBLAS entries are compared. Shapes: 1, 31, 33, primes, the empty inner dimension (k = 0:
 * C = 0, no cuBLAS call), and the labs' own: lab06's (64 * 10, 32) @ (32, 32) layers and its
 * attention's (64 * 4, 10, 8) batches of heads. */
#include "cuda_check.h"

/* t_matmul: (m, k) @ (k, n) */
static const int mm_shapes[][3] = {{1, 1, 1},   {1, 31, 1},  {31, 1, 33},      {33, 31, 1},
                                   {7, 13, 11}, {3, 0, 5},   {64 * 10, 32, 32}, {37, 97, 41},
                                   {1, 33, 31}};
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
                                    {3, 37, 0, 11}};
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
    {0},
};
