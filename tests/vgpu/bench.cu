/* bench.cu — the interpreter's speed on the reference flash-attention kernel (exercise 6.8):
 * batch 2, 256 queries and keys, d = dv = 64. Not a test: tests/suites/vgpu.sh does not run it.
 * Run: VGPU_PTX=bench.ptx VGPU_STATS=bench.stats ./bench, then warp_insts / seconds. */
#include <chrono>

#include "lab06/flash_attention.cu"
#include "harness.cuh"

int main() {
  const int batch = 2, n = 256, d = 64;
  auto Q = randoms((size_t)batch * n * d, -1, 1);
  float *dq = to_device(Q), *dO;
  CUDA_CHECK(cudaMalloc(&dO, Q.size() * 4));
  auto t0 = std::chrono::steady_clock::now();
  flash_attention_cuda(dq, dq, dq, NULL, n, dO, batch, n, n, d, d, 0.125f);
  CUDA_CHECK(cudaDeviceSynchronize());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("flash_attention_cuda batch %d, %d queries x %d keys, d %d: %.2f s\n", batch, n, n, d, s);
  return 0;
}
