/* counters.cu — kernels whose counters and results are known by hand, run on the virtual GPU
 * (tests/suites/vgpu.sh checks the device's counts per kernel; this program checks values). */
#include <cstdio>
#include <cuda_runtime.h>

__global__ void copy_kernel(const float *x, float *y) { /* one float a lane: 4 sectors/request */
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i];
}
__global__ void stride_kernel(const float *x, float *y) { /* lane l reads x[32 l]: 32 sectors */
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i * 32];
}
__global__ void transpose_kernel(const float *in, float *out) { /* 32x32 tile, unpadded */
  __shared__ float tile[32][32];
  tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
  __syncthreads();
  out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y]; /* a column: 32-way */
}
__global__ void transpose_padded_kernel(const float *in, float *out) {
  __shared__ float tile[32][33];
  tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
  __syncthreads();
  out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
__global__ void diverge_kernel(const float *x, float *y) { /* even and odd lanes branch apart */
  int i = threadIdx.x;
  float v = x[i];
  if (i % 2 == 0) {
    for (int k = 0; k < i % 7; k++) v = v * 0.5f + 1.0f; /* a loop: not if-converted */
  } else {
    v = v + 100.0f;
  }
  v += __shfl_xor_sync(0xffffffffu, v, 1); /* every lane must be back here (reconverged) */
  y[i] = v;
}
__global__ void shuffle_kernel(const float *x, float *y) { /* a warp's sum, by butterfly */
  float v = x[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  y[threadIdx.x] = v;
}
__global__ void block_sum_kernel(const float *x, float *y) { /* 256 threads, tree in shared */
  __shared__ float s[256];
  s[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  for (int h = 128; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = s[0];
}
__global__ void atomic_kernel(int *count) { atomicAdd(count, 1); }
__global__ void ballot_kernel(const float *x, unsigned *y) {
  unsigned b = __ballot_sync(0xffffffffu, x[threadIdx.x] > 0.0f);
  if (threadIdx.x == 0) *y = b;
}

__constant__ float table[4] = {1.5f, 2.5f, 3.5f, 4.5f}; /* module data: initialized */
__device__ int hits;                                   /* module data: zero (PTX's default) */
__global__ void table_kernel(float *y) {
  y[threadIdx.x] = table[threadIdx.x % 4];
  atomicAdd(&hits, 1);
}
__global__ void hits_kernel(int *out) { *out = hits; }

static int failures;
static void check(const char *what, bool ok) {
  printf("%s %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) failures++;
}

int main() {
  const int N = 1024;
  float h[N * 32], r[N];
  for (int i = 0; i < N * 32; i++) h[i] = (float)(i % 97) - 40.0f;
  float *x, *y;
  cudaMalloc(&x, sizeof h);
  cudaMalloc(&y, sizeof r);
  cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice);

  copy_kernel<<<4, 256>>>(x, y);
  cudaMemcpy(r, y, sizeof r, cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int i = 0; i < N; i++) ok = ok && r[i] == h[i];
  check("copy", ok);

  stride_kernel<<<4, 256>>>(x, y);
  cudaMemcpy(r, y, sizeof r, cudaMemcpyDeviceToHost);
  ok = true;
  for (int i = 0; i < N; i++) ok = ok && r[i] == h[i * 32];
  check("stride", ok);

  transpose_kernel<<<1, dim3(32, 32)>>>(x, y);
  cudaMemcpy(r, y, sizeof r, cudaMemcpyDeviceToHost);
  ok = true;
  for (int i = 0; i < 32; i++) for (int j = 0; j < 32; j++) ok = ok && r[i * 32 + j] == h[j * 32 + i];
  check("transpose", ok);
  transpose_padded_kernel<<<1, dim3(32, 32)>>>(x, y);
  cudaMemcpy(r, y, sizeof r, cudaMemcpyDeviceToHost);
  ok = true;
  for (int i = 0; i < 32; i++) for (int j = 0; j < 32; j++) ok = ok && r[i * 32 + j] == h[j * 32 + i];
  check("transpose padded", ok);

  diverge_kernel<<<1, 64>>>(x, y);
  cudaMemcpy(r, y, 64 * sizeof(float), cudaMemcpyDeviceToHost);
  ok = true;
  float v[64];
  for (int i = 0; i < 64; i++) {
    v[i] = h[i];
    if (i % 2 == 0) for (int k = 0; k < i % 7; k++) v[i] = v[i] * 0.5f + 1.0f;
    else v[i] = v[i] + 100.0f;
  }
  for (int i = 0; i < 64; i++) ok = ok && r[i] == v[i] + v[i ^ 1];
  check("divergence", ok);

  shuffle_kernel<<<1, 64>>>(x, y);
  cudaMemcpy(r, y, 64 * sizeof(float), cudaMemcpyDeviceToHost);
  ok = true;
  for (int w = 0; w < 2; w++) {
    float s = 0;
    for (int l = 0; l < 32; l++) s += h[w * 32 + l];
    for (int l = 0; l < 32; l++) ok = ok && r[w * 32 + l] == s; /* integers: exact */
  }
  check("shuffle reduction", ok);

  block_sum_kernel<<<4, 256>>>(x, y);
  cudaMemcpy(r, y, 4 * sizeof(float), cudaMemcpyDeviceToHost);
  ok = true;
  for (int b = 0; b < 4; b++) {
    float s = 0;
    for (int i = 0; i < 256; i++) s += h[b * 256 + i];
    ok = ok && r[b] == s;
  }
  check("block reduction", ok);

  int *count, c = -1;
  cudaMalloc(&count, sizeof(int));
  cudaMemset(count, 0, sizeof(int));
  atomic_kernel<<<3, 100>>>(count);
  cudaMemcpy(&c, count, sizeof c, cudaMemcpyDeviceToHost);
  check("atomics", c == 300);

  unsigned b = 0, want = 0;
  ballot_kernel<<<1, 32>>>(x, (unsigned *)count);
  cudaMemcpy(&b, count, sizeof b, cudaMemcpyDeviceToHost);
  for (int l = 0; l < 32; l++) if (h[l] > 0.0f) want |= 1u << l;
  check("ballot", b == want);

  table_kernel<<<1, 64>>>(y);
  hits_kernel<<<1, 1>>>(count);
  cudaMemcpy(r, y, 64 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(&c, count, sizeof c, cudaMemcpyDeviceToHost);
  ok = c == 64;
  for (int i = 0; i < 64; i++) ok = ok && r[i] == 1.5f + (float)(i % 4);
  check("__constant__ table and __device__ counter", ok);

  check("no error", cudaDeviceSynchronize() == cudaSuccess && cudaGetLastError() == cudaSuccess);
  cudaFree(x); cudaFree(y); cudaFree(count);
  return failures ? 1 : 0;
}
