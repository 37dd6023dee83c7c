/* al_cuda.h — what every .cu file of cuda/ includes: the CUDA runtime and cuBLAS under nvcc,
 * or the emulator (emu.h) when the same file is compiled as host C++ for the tests (-DAL_CUDA_EMU);
 * the launch macros; error checks; and the kit's C headers.
 *
 * The kernel exercises (labs/, solutions/) are standard CUDA instead (<<<...>>>, __shared__):
 * cuda/emu_rewrite.awk turns them into AL_EMU_LAUNCH and emu_shared_array for the emulator.
 *
 * Conventions of the kit's kernel files (see cuda/README.md):
 *  - One file per family of ops, the same families as common/cpu/. Each kernel computes what
 *    its CPU twin computes (the Backend entry of common/backend.h) on the same raw pointers.
 *  - Launch with LAUNCH(kernel, grid, block, shared_bytes, args...); a kernel that uses
 *    __syncthreads or warp shuffles is launched with LAUNCH_SYNC (the emulator then runs its
 *    threads as fibers that wait for each other; under nvcc the two are the same launch).
 *  - Static shared memory is declared with SHARED_ARRAY(type, name, count), dynamic with
 *    SHARED_DYNAMIC(type, name).
 *  - Grid-stride loops (for (long i = first_index(); i < n; i += grid_stride())) so any grid
 *    size is correct and the launcher may cap the grid.
 */
#ifndef AL_CUDA_H
#define AL_CUDA_H

#ifdef AL_CUDA_EMU
#include "emu.h"
#define SHARED_ARRAY(type, name, count)                                                        \
  type *name = (type *)emu_shared(sizeof(type) * (count), alignof(type))
#define SHARED_DYNAMIC(type, name) type *name = (type *)emu_dynamic_shared()
#define LAUNCH_(sync, kernel, grid, block, shared, ...)                                        \
  emu_launch(#kernel, __FILE__, __LINE__, dim3(grid), dim3(block), (shared), (sync),           \
             [=] { kernel(__VA_ARGS__); }, #__VA_ARGS__, emu_args(__VA_ARGS__))
/* kernel<<<cfg>>>(args) of a kernel exercise, as cuda/emu_rewrite.awk writes it (emu.h) */
#define AL_EMU_LAUNCH(cfg, args, ...)                                                          \
  emu_kernel_call(&__VA_ARGS__, #__VA_ARGS__, __FILE__, __LINE__, #args, emu_launch_config cfg) args
#define AL_GRID_CAP(hw) emu_grid_cap(hw)
#define AL_GRID_NOTE(capped) emu_grid_note(capped)
#else
#include <cublas_v2.h>
#include <cuda_runtime.h>
#define SHARED_ARRAY(type, name, count) __shared__ type name[count]
#define SHARED_DYNAMIC(type, name)                                                             \
  extern __shared__ __align__(16) unsigned char al_dynamic_shared_[];                          \
  type *name = (type *)al_dynamic_shared_
#define LAUNCH_(sync, kernel, grid, block, shared, ...)                                        \
  do {                                                                                         \
    kernel<<<(grid), (block), (shared), cuda_stream()>>>(__VA_ARGS__);                         \
    cuda_check_launch(#kernel, __FILE__, __LINE__);                                            \
  } while (0)
#define AL_GRID_CAP(hw) (hw)
#define AL_GRID_NOTE(capped) ((void)0)
#endif
#define LAUNCH(kernel, grid, block, shared, ...)                                               \
  LAUNCH_(false, kernel, grid, block, shared, __VA_ARGS__)
#define LAUNCH_SYNC(kernel, grid, block, shared, ...)                                          \
  LAUNCH_(true, kernel, grid, block, shared, __VA_ARGS__)

#include <stdbool.h>
#include <stdint.h>

extern "C" {
#include "../common/backend.h"
}

/* ---------- errors: one line naming the call, the CUDA error and where; then exit ---------- */
[[noreturn]] void cuda_fail(const char *what, const char *err_name, const char *err_text,
                            const char *file, int line);
#define CUDA_CHECK(call)                                                                       \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) cuda_fail(#call, cudaGetErrorName(e_), cudaGetErrorString(e_),      \
                                     __FILE__, __LINE__);                                      \
  } while (0)
void cuda_check_launch(const char *kernel, const char *file, int line);
/* The kit's own stream (backend.cu): every launch, copy and cuBLAS call goes on it, in order, so
 * the host only waits where it reads a result (Backend.to_host). */
cudaStream_t cuda_stream(void);

/* ---------- grid shapes ---------- */
/* Threads a block for the elementwise kernels: 256 keeps 8 warps a block, enough to hide
 * memory latency, and many blocks a multiprocessor. */
enum { EW_THREADS = 256 };
/* A grid of `blocks` for a kernel whose grid-stride loop covers the rest, capped at `hw` (more
 * blocks than the GPU can hold at once only adds scheduling). The emulator's tests cap lower
 * (AL_CUDA_EMU_GRID_CAP), so every such loop takes several trips there. */
static inline unsigned cap_grid(long blocks, long hw) {
  long cap = AL_GRID_CAP(hw);
  if (blocks < 1) blocks = 1;
  AL_GRID_NOTE(blocks > cap);
  return (unsigned)(blocks > cap ? cap : blocks);
}
/* Blocks for n elements at `threads` a block, capped at 8192. */
static inline unsigned ew_blocks(long n, int threads) {
  return cap_grid((n + threads - 1) / threads, 8192);
}
static __device__ __forceinline__ long first_index(void) {
  return (long)blockIdx.x * blockDim.x + threadIdx.x;
}
static __device__ __forceinline__ long grid_stride(void) { return (long)gridDim.x * blockDim.x; }

/* Sum of v over the 32 lanes of a warp (every lane gets it). */
static __device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
static __device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
/* Sum of v over the block (blockDim.x a multiple of 32, at most 1024); every thread gets it.
 * Uses 32 floats of shared memory; two barriers. */
static __device__ __forceinline__ float block_sum(float v, float *scratch32) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_sum(v);
  if (lane == 0) scratch32[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch32[lane] : 0.0f;
  v = warp_sum(v);
  __syncthreads(); /* scratch may be reused right after */
  return v;
}

/* cuBLAS, as the process uses it (cuda/backend.cu). The nvcc build loads libcublas with dlopen
 * when the device opens (cuda_blas_load): linked, its ~200 MB of libraries would be mapped and
 * relocated by every lab run on the CPU. The emulator's table holds its own functions. */
typedef struct {
  cublasHandle_t handle;
  decltype(&cublasCreate) create;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasSetStream) set_stream;
  decltype(&cublasSgemm) sgemm;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched;
  decltype(&cublasGetStatusName) status_name;
} CudaBlas;
const CudaBlas *cuda_blas(void);

#endif
