/* sol_lab02.cu — exercise 2.6's masked softmax (forward, backward) on the virtual GPU against
 * a double-precision CPU reference; rows of lengths 0 .. keys, keys not a multiple of 32. */
#include "lab02/masked_softmax_kernel.cu"
#include "harness.cuh"

int main() {
  const int rows = 37, keys = 70, per = 1;
  auto x = randoms((size_t)rows * keys, -3, 3), g = randoms((size_t)rows * keys, -1, 1);
  std::vector<int> len(rows);
  for (int r = 0; r < rows; r++) len[r] = (r * 7) % (keys + 1);
  std::vector<double> want(x.size(), 0.0), dwant(x.size(), 0.0);
  for (int r = 0; r < rows; r++) {
    int n = len[r / per];
    double m = -INFINITY, s = 0;
    for (int j = 0; j < n; j++) m = std::fmax(m, x[r * keys + j]);
    for (int j = 0; j < n; j++) s += std::exp(x[r * keys + j] - m);
    for (int j = 0; j < n; j++) want[r * keys + j] = std::exp(x[r * keys + j] - m) / s;
  }
  float *dx = to_device(x), *dy, *dg = to_device(g), *ddx;
  int *dlen = to_device(len);
  CUDA_CHECK(cudaMalloc(&dy, x.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&ddx, x.size() * sizeof(float)));
  masked_softmax_cuda(dx, dy, dlen, per, rows, keys);
  auto y = to_host(dy, x.size());
  check("masked_softmax_cuda", y, want, 1e-5);
  for (int r = 0; r < rows; r++) {
    double dot = 0;
    for (int j = 0; j < keys; j++) dot += (double)g[r * keys + j] * y[r * keys + j];
    for (int j = 0; j < keys; j++) dwant[r * keys + j] = y[r * keys + j] * (g[r * keys + j] - dot);
  }
  masked_softmax_cuda_backward(dy, dg, ddx, rows, keys, true);
  check("masked_softmax_cuda_backward", to_host(ddx, x.size()), dwant, 1e-5);
  return failures ? 1 : 0;
}
