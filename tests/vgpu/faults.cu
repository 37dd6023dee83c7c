/* faults.cu — what the virtual GPU must refuse or report (tests/suites/vgpu.sh reads the log):
 * argv[1] = oob: a write one past the end; unsupported: an instruction it does not model;
 * race: a block reduction without its trailing barrier; limits: 49 KB of shared memory;
 * threads: 2048 a block; endless: a loop the watchdog ends; uninit: a read of memory never
 * written (initcheck), whose value is the poison; warpsync: a warp's exchange through shared
 * memory with __syncwarp (no report) and without (an intra-warp racecheck report); registers:
 * 1024 threads of a kernel that needs ~96 registers each (ptxas); shfl: a shuffle that half a
 * warp reaches (synccheck, at the kernel's line through two levels of inlining); split:
 * __syncwarp() in both branches of an if, which sm_70+ allows. */
#include <cstdio>
#include <cmath>
#include <cstring>
#include <cuda_runtime.h>

__global__ void oob_kernel(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) y[i] = 1.0f; /* the bug: <= */
}
__global__ void unsupported_kernel(float *y) {
  asm volatile("nanosleep.u32 100;");
  y[threadIdx.x] = 0.0f;
}
__global__ void race_kernel(const float *x, float *y) {
  __shared__ float s[128];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  for (int h = 64; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h]; /* no barrier after: a race */
  }
  if (threadIdx.x == 0) *y = s[0];
}
__global__ void big_shared_kernel(float *y) {
  extern __shared__ float dyn[];
  __shared__ float st[256];
  st[threadIdx.x] = 1.0f;
  dyn[threadIdx.x] = st[threadIdx.x];
  y[threadIdx.x] = dyn[threadIdx.x];
}

__global__ void endless_kernel(const int *flag) {
  while (*(volatile const int *)flag == 0) { /* waits for a write that never comes */
  }
}

__global__ void uninit_kernel(const float *x, float *y) {
  y[threadIdx.x] = x[threadIdx.x] + 1.0f; /* x: allocated, never written */
}

template <bool sync> __global__ void warp_shared_kernel(const float *x, float *y) {
  __shared__ float s[32]; /* a warp's sum through shared memory: lanes exchange values */
  const int l = threadIdx.x;
  s[l] = x[l];
  if (sync) __syncwarp();
  for (int o = 16; o > 0; o >>= 1) {
    float v = l < o ? s[l + o] : 0.0f; /* without __syncwarp: reads another lane's write */
    if (sync) __syncwarp();
    if (l < o) s[l] += v;
    if (sync) __syncwarp();
  }
  if (l == 0) *y = s[0];
}

__global__ void heavy_kernel(const float *x, float *y) { /* ~96 registers a thread (ptxas) */
  float a[80];
#pragma unroll
  for (int i = 0; i < 80; i++) a[i] = x[threadIdx.x + i * 1024];
  float s = 0;
#pragma unroll
  for (int i = 0; i < 80; i++) s += a[i] * a[(i * 7) % 80];
#pragma unroll
  for (int i = 0; i < 80; i++) y[threadIdx.x + i * 1024] = a[i] * s;
}

static __device__ float lane_sum(float v) { /* inlined: its shuffle reports the caller's line */
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__global__ void diverged_shfl_kernel(float *y) {
  float v = (float)threadIdx.x;
  if (threadIdx.x < 16) v = lane_sum(v); /* half the warp: lanes 16-31 never arrive */
  y[threadIdx.x] = v;
}

__global__ void split_syncwarp_kernel(float *y) { /* __syncwarp in both branches (sm_70+) */
  __shared__ float s[32];
  const int l = threadIdx.x;
  if (l < 16) { s[l] = 1.0f; __syncwarp(); y[l] = s[l + 16]; }
  else { s[l] = 2.0f; __syncwarp(); y[l] = s[l - 16]; }
}

int main(int argc, char **argv) {
  float *y;
  cudaMalloc(&y, 256 * sizeof(float));
  cudaMemset(y, 0, 256 * sizeof(float));
  const char *what = argc > 1 ? argv[1] : "";
  cudaError_t e = cudaSuccess;
  if (!strcmp(what, "oob")) { oob_kernel<<<1, 288>>>(y, 256); e = cudaDeviceSynchronize(); }
  if (!strcmp(what, "unsupported")) { unsupported_kernel<<<1, 32>>>(y); e = cudaGetLastError(); }
  if (!strcmp(what, "race")) { race_kernel<<<1, 128>>>(y, y + 128); e = cudaDeviceSynchronize(); }
  if (!strcmp(what, "limits")) {
    big_shared_kernel<<<1, 256, 48 * 1024>>>(y); /* 1 KB static + 48 KB dynamic */
    e = cudaGetLastError();
  }
  if (!strcmp(what, "threads")) { race_kernel<<<1, 2048>>>(y, y); e = cudaGetLastError(); }
  if (!strcmp(what, "endless")) { endless_kernel<<<1, 32>>>((const int *)y); e = cudaDeviceSynchronize(); }
  if (!strcmp(what, "uninit")) {
    float *x, h = 0;
    cudaMalloc(&x, 32 * sizeof(float));
    uninit_kernel<<<1, 32>>>(x, y);
    cudaMemcpy(&h, y, sizeof h, cudaMemcpyDeviceToHost);
    printf("%s\n", std::isnan(h) ? "poisoned (NaN)" : "not poisoned");
  }
  if (!strcmp(what, "warpsync")) {
    float h[32], r[2], want = 0;
    for (int i = 0; i < 32; i++) want += h[i] = (float)(i * 3 - 40);
    cudaMemcpy(y, h, sizeof h, cudaMemcpyHostToDevice);
    warp_shared_kernel<true><<<1, 32>>>(y, y + 64);
    warp_shared_kernel<false><<<1, 32>>>(y, y + 65);
    cudaMemcpy(r, y + 64, sizeof r, cudaMemcpyDeviceToHost);
    printf("%s\n", r[0] == want && r[1] == want ? "sums right" : "sums wrong");
    e = cudaDeviceSynchronize();
  }
  if (!strcmp(what, "registers")) { heavy_kernel<<<1, 1024>>>(y, y); e = cudaGetLastError(); }
  if (!strcmp(what, "split")) {
    float h[32];
    split_syncwarp_kernel<<<1, 32>>>(y);
    cudaMemcpy(h, y, sizeof h, cudaMemcpyDeviceToHost);
    bool ok = true;
    for (int i = 0; i < 32; i++) ok = ok && h[i] == (i < 16 ? 2.0f : 1.0f);
    printf("%s\n", ok ? "exchanged" : "wrong values");
    e = cudaDeviceSynchronize();
  }
  if (!strcmp(what, "shfl")) { diverged_shfl_kernel<<<1, 32>>>(y); e = cudaDeviceSynchronize(); }
  printf("%s\n", cudaGetErrorName(e));
  return 0;
}
