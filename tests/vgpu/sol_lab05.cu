/* sol_lab05.cu — exercise 5.2's positional-encoding table on the virtual GPU (sinf/cosf, whose
 * slow path uses local memory) against the formula in double. */
#include "lab05/posenc_kernel.cu"
#include "harness.cuh"

int main() {
  const int first = 3, rows = 40, d = 33;
  float *dp;
  CUDA_CHECK(cudaMalloc(&dp, sizeof(float) * rows * d));
  positional_encoding_cuda(dp, first, rows, d);
  std::vector<double> want((size_t)rows * d);
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < d; c++) {
      double a = (first + r) / std::pow(10000.0, (double)(c & ~1) / d);
      want[(size_t)r * d + c] = c % 2 ? std::cos(a) : std::sin(a);
    }
  check("positional_encoding_cuda", to_host(dp, want.size()), want, 2e-5);
  return failures ? 1 : 0;
}
