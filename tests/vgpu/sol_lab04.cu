/* sol_lab04.cu — exercises 4.4/4.5's permute {0, 2, 1, 3}, naive and tiled, stored and
 * accumulated, on the virtual GPU against the CPU's index arithmetic. */
#include "lab04/permute_kernel.cu"
#include "harness.cuh"

int main() {
  const int A = 2, B = 9, C = 5, D = 24;
  const size_t n = (size_t)A * B * C * D;
  auto x = randoms(n, -1, 1), y0 = randoms(n, -1, 1);
  float *dx = to_device(x);
  for (int tiled = 0; tiled < 2; tiled++)
    for (int acc = 0; acc < 2; acc++) {
      float *dy = to_device(y0);
      std::vector<double> want(n);
      for (int a = 0; a < A; a++) for (int b = 0; b < B; b++) for (int c = 0; c < C; c++)
        for (int j = 0; j < D; j++) {
          size_t o = (((size_t)a * C + c) * B + b) * D + j, i = (((size_t)a * B + b) * C + c) * D + j;
          want[o] = (acc ? (double)y0[o] : 0.0) + x[i];
        }
      if (tiled) permute0213_tiled_cuda(dx, dy, A, B, C, D, acc);
      else permute0213_naive_cuda(dx, dy, A, B, C, D, acc);
      char what[64];
      snprintf(what, sizeof what, "permute0213_%s_cuda accumulate=%d", tiled ? "tiled" : "naive", acc);
      check(what, to_host(dy, n), want, 1e-6);
      cudaFree(dy);
    }
  return failures ? 1 : 0;
}
