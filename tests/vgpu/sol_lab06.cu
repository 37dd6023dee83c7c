/* sol_lab06.cu — exercises 6.7 (layer norm, forward and backward) and 6.8 (flash attention) on
 * the virtual GPU against double-precision CPU references. */
#include "lab06/flash_attention.cu"
#include "lab06/layer_norm_kernel.cu"
#include "harness.cuh"

static void layer_norm_test() {
  const int rows = 6, D = 300;
  auto x = randoms((size_t)rows * D, -2, 2), gamma = randoms(D, 0.5, 1.5), beta = randoms(D, -1, 1);
  auto g = randoms((size_t)rows * D, -1, 1);
  const float eps = 1e-5f;
  std::vector<double> want(x.size()), dxw(x.size()), dgw(D, 0.0), dbw(D, 0.0);
  for (int r = 0; r < rows; r++) {
    double m = 0, v = 0, mg = 0, mgx = 0;
    for (int j = 0; j < D; j++) m += x[r * D + j];
    m /= D;
    for (int j = 0; j < D; j++) v += (x[r * D + j] - m) * (x[r * D + j] - m);
    double rstd = 1 / std::sqrt(v / D + eps);
    for (int j = 0; j < D; j++) {
      double xh = (x[r * D + j] - m) * rstd, dxh = g[r * D + j] * (double)gamma[j];
      want[r * D + j] = xh * gamma[j] + beta[j];
      mg += dxh / D; mgx += dxh * xh / D;
      dgw[j] += g[r * D + j] * xh; dbw[j] += g[r * D + j];
    }
    for (int j = 0; j < D; j++) {
      double xh = (x[r * D + j] - m) * rstd, dxh = g[r * D + j] * (double)gamma[j];
      dxw[r * D + j] = rstd * (dxh - mg - xh * mgx);
    }
  }
  float *dx = to_device(x), *dgm = to_device(gamma), *dbt = to_device(beta), *dg = to_device(g);
  float *dy, *dst, *ddx, *ddg, *ddb;
  CUDA_CHECK(cudaMalloc(&dy, x.size() * 4)); CUDA_CHECK(cudaMalloc(&dst, rows * 2 * 4));
  CUDA_CHECK(cudaMalloc(&ddx, x.size() * 4));
  ddg = to_device(std::vector<float>(D, 0.0f)); ddb = to_device(std::vector<float>(D, 0.0f));
  layer_norm_cuda(dx, dgm, dbt, dy, dst, rows, D, eps);
  check("layer_norm_cuda", to_host(dy, x.size()), want, 1e-5);
  layer_norm_grad_cuda(dx, dgm, dst, dg, ddx, ddg, ddb, rows, D, 1);
  check("layer_norm_grad_cuda dx", to_host(ddx, x.size()), dxw, 1e-4);
  check("layer_norm_grad_cuda dgamma", to_host(ddg, D), dgw, 1e-4);
  check("layer_norm_grad_cuda dbeta", to_host(ddb, D), dbw, 1e-4);
}

static void flash_test() {
  const int batch = 2, queries = 40, keys = 37, d = 16, dv = 12;
  const float scale = 0.3f;
  auto Q = randoms((size_t)batch * queries * d, -1, 1), K = randoms((size_t)batch * keys * d, -1, 1);
  auto V = randoms((size_t)batch * keys * dv, -1, 1);
  std::vector<int> len = {keys, 11};
  std::vector<double> want((size_t)batch * queries * dv, 0.0);
  for (int b = 0; b < batch; b++)
    for (int i = 0; i < queries; i++) {
      int n = len[b];
      std::vector<double> s(n);
      double m = -INFINITY, z = 0;
      for (int j = 0; j < n; j++) {
        double dot = 0;
        for (int t = 0; t < d; t++) dot += (double)Q[((size_t)b * queries + i) * d + t] * K[((size_t)b * keys + j) * d + t];
        s[j] = scale * dot; m = std::fmax(m, s[j]);
      }
      for (int j = 0; j < n; j++) z += std::exp(s[j] - m);
      for (int j = 0; j < n; j++)
        for (int t = 0; t < dv; t++)
          want[((size_t)b * queries + i) * dv + t] += std::exp(s[j] - m) / z * V[((size_t)b * keys + j) * dv + t];
    }
  float *dq = to_device(Q), *dk = to_device(K), *dvv = to_device(V), *dO;
  int *dl = to_device(len);
  CUDA_CHECK(cudaMalloc(&dO, want.size() * 4));
  flash_attention_cuda(dq, dk, dvv, dl, queries, dO, batch, queries, keys, d, dv, scale);
  check("flash_attention_cuda", to_host(dO, want.size()), want, 1e-5);
}

int main() {
  layer_norm_test();
  flash_test();
  return failures ? 1 : 0;
}
