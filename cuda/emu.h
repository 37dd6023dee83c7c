/* emu.h — a small CUDA emulator: the kernels of cuda/ (the .cu files) compiled as host C++
 * (g++ -DAL_CUDA_EMU) run their launches on the CPU, so every kernel is checked in CI, where there is no GPU.
 *
 * What it models, and why each part is there:
 *  - A launch runs its grid one block after another. A kernel launched with LAUNCH (no barriers)
 *    runs its threads one after another; one launched with LAUNCH_SYNC runs the threads of a
 *    block as fibers (user-level threads, each with its own stack) switched at every
 *    __syncthreads() and warp shuffle, which wait for the whole block or the 32 lanes of a warp.
 *    A barrier or shuffle inside a LAUNCH kernel, or a barrier that some threads of a block never
 *    reach, is an error naming the kernel.
 *  - Races. Threads run in order up to their next barrier, so one that reads shared memory a
 *    later thread writes reads the NaN poison every block's shared memory starts with. Under
 *    ThreadSanitizer (make test runs the checks that way too) every launch runs as fibers, each
 *    a TSan fiber ordered only by barriers, shuffles and launch boundaries — the GPU's own
 *    guarantees — with fresh shared memory per block: a missing __syncthreads, or two threads or
 *    blocks writing one element without an atomic, is reported as a data race.
 *  - Limits of the hardware: at most 1024 threads a block, 48 KB of static shared memory a block.
 *  - Device memory (cudaMalloc) is mapped PROT_NONE except while a launch or a copy function
 *    runs: host code that dereferences a device pointer crashes instead of passing.
 *  - cuBLAS's two products (cublasSgemm, cublasSgemmStridedBatched) compute the same
 *    column-major product on the CPU, so transpose flags and leading dimensions are tested.
 *  - compute-sanitizer's checks, without a GPU or helper threads (emu.cpp, "memcheck,
 *    initcheck and racecheck"): every load and store of a kernel is checked against the exact
 *    bounds of the allocations its launch was given, against what was ever written, and
 *    against the other threads' accesses since the last barrier; shuffle masks and partial
 *    warps are checked (synccheck). A finding stops the program with the source line.
 *  - A profiler: per kernel, global requests per warp and the 32-byte sectors they touch, shared
 *    requests and bank conflicts (emu_profile; cuda_check_emu --profile).
 * Threads within a block see each other's writes only through barriers and shuffles, as on the GPU.
 */
#ifndef AL_CUDA_EMU_H
#define AL_CUDA_EMU_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

/* The built-in indices, read through functions: the emulator's bookkeeping is not instrumented
 * by ThreadSanitizer (fibers share the thread's storage), only what kernels do with memory. */
dim3 emu_thread_idx(void);
dim3 emu_block_idx(void);
dim3 emu_block_dim(void);
dim3 emu_grid_dim(void);
#define threadIdx (emu_thread_idx())
#define blockIdx (emu_block_idx())
#define blockDim (emu_block_dim())
#define gridDim (emu_grid_dim())
static constexpr int warpSize = 32;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

/* ---------- runtime API (the part the kit uses) ---------- */
typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorNoDevice = 100
} cudaError_t;
typedef enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3
} cudaMemcpyKind;
typedef struct CUstream_st *cudaStream_t;
struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  int major, minor, multiProcessorCount;
};

cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaSetDevice(int d);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d);
cudaError_t cudaMalloc(void **p, size_t bytes);
cudaError_t cudaFree(void *p);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemset(void *p, int v, size_t bytes);
cudaError_t cudaDeviceSynchronize(void);
/* Streams: the emulator runs every launch and copy when it is made, so a stream orders nothing
 * here; it is kept for the counters (a synchronization is a host wait). */
#define cudaStreamNonBlocking 0x01
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t s);
cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t s);
/* Pinned (page-locked) host memory: an asynchronous copy to or from it leaves the host free. */
cudaError_t cudaMallocHost(void **p, size_t bytes);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaGetLastError(void);
const char *cudaGetErrorName(cudaError_t e);
const char *cudaGetErrorString(cudaError_t e);

/* ---------- cuBLAS (the part the kit uses) ---------- */
typedef struct cublasContext *cublasHandle_t;
typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUBLAS_DEFAULT_MATH = 0, CUBLAS_TF32_TENSOR_OP_MATH = 3 } cublasMath_t;
cublasStatus_t cublasCreate(cublasHandle_t *h);
cublasStatus_t cublasDestroy(cublasHandle_t h);
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode);
cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s);
cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                           int n, int k, const float *alpha, const float *A, int lda,
                           const float *B, int ldb, const float *beta, float *C, int ldc);
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda,
                                         long long strideA, const float *B, int ldb,
                                         long long strideB, const float *beta, float *C, int ldc,
                                         long long strideC, int count);
const char *cublasGetStatusName(cublasStatus_t s);

/* ---------- inside kernels ---------- */
void __syncthreads(void);
float __shfl_down_sync(unsigned mask, float v, unsigned delta, int width = warpSize);
float __shfl_xor_sync(unsigned mask, float v, int lane_mask, int width = warpSize);
float __shfl_sync(unsigned mask, float v, int src_lane, int width = warpSize);
double __shfl_down_sync(unsigned mask, double v, unsigned delta, int width = warpSize);
double __shfl_xor_sync(unsigned mask, double v, int lane_mask, int width = warpSize);
float __shfl_up_sync(unsigned mask, float v, unsigned delta, int width = warpSize);
int __shfl_down_sync(unsigned mask, int v, unsigned delta, int width = warpSize);
int __shfl_up_sync(unsigned mask, int v, unsigned delta, int width = warpSize);
int __shfl_xor_sync(unsigned mask, int v, int lane_mask, int width = warpSize);
int __shfl_sync(unsigned mask, int v, int src_lane, int width = warpSize);
/* The lanes of mask meet (as a shuffle does, with its checks); votes over their predicates. */
void __syncwarp(unsigned mask = 0xffffffffu);
unsigned __ballot_sync(unsigned mask, int predicate);
int __any_sync(unsigned mask, int predicate);
int __all_sync(unsigned mask, int predicate);
/* Blocks run one after another and every access is seen at once: nothing to order. */
static inline void __threadfence(void) {}
static inline void __threadfence_block(void) {}
float atomicAdd(float *p, float v);
int atomicAdd(int *p, int v);
unsigned atomicAdd(unsigned *p, unsigned v);
unsigned long long atomicAdd(unsigned long long *p, unsigned long long v);
double atomicAdd(double *p, double v);
int atomicSub(int *p, int v);
unsigned atomicSub(unsigned *p, unsigned v);
int atomicMax(int *p, int v);
unsigned atomicMax(unsigned *p, unsigned v);
int atomicMin(int *p, int v);
unsigned atomicMin(unsigned *p, unsigned v);
int atomicExch(int *p, int v);
unsigned atomicExch(unsigned *p, unsigned v);
float atomicExch(float *p, float v);
int atomicCAS(int *p, int compare, int v);
unsigned atomicCAS(unsigned *p, unsigned compare, unsigned v);
unsigned long long atomicCAS(unsigned long long *p, unsigned long long compare,
                             unsigned long long v);
/* a float's bits as an int and back (a float atomicMax is atomicCAS on them) */
static inline int __float_as_int(float x) {
  int i;
  std::memcpy(&i, &x, sizeof i);
  return i;
}
static inline unsigned __float_as_uint(float x) { return (unsigned)__float_as_int(x); }
static inline float __int_as_float(int i) {
  float x;
  std::memcpy(&x, &i, sizeof x);
  return x;
}
static inline float __uint_as_float(unsigned u) { return __int_as_float((int)u); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline float __fdividef(float a, float b) { return a / b; }
static inline float __ldg(const float *p) { return *p; }
static inline int __ldg(const int *p) { return *p; }

/* Static shared memory of the current block (SHARED_ARRAY in al_cuda.h): every thread makes the
 * same calls in the same order, so each gets the same offset. */
void *emu_shared(size_t bytes, size_t align);
/* The launch's dynamic shared memory (the third launch argument). */
void *emu_dynamic_shared(void);
/* A `__shared__` declaration of standard CUDA (cuda/emu_rewrite.awk makes it
 * `T (&name)[N] = emu_shared_array<T[N]>([] {});`): one array per declaration in each block,
 * wherever and however often its threads pass it (the lambda's own type tells the sites apart). */
void *emu_shared_site(const void *site, size_t bytes, size_t align);
template <class A, size_t Align = alignof(A), class Site> static inline A &emu_shared_array(Site) {
  static char site;
  return *(A *)emu_shared_site(&site, sizeof(A), Align > alignof(A) ? Align : alignof(A));
}

/* The pointers a launch was given (LAUNCH's arguments, and the 8-byte words of a plan struct
 * passed by value): the device allocations they point into are the only ones its threads may
 * touch (memcheck). Values that are not device pointers are ignored by the emulator. */
struct EmuArgs {
  enum { MAX = 256 };
  int n;
  struct {
    int arg;
    const void *p;
  } v[MAX];
};
template <typename T> static inline void emu_arg1(EmuArgs &a, int i, const T &x) {
  if constexpr (std::is_pointer_v<T>) {
    if (a.n < EmuArgs::MAX) a.v[a.n++] = {i, (const void *)x};
  } else if constexpr (std::is_class_v<T> && sizeof(T) >= sizeof(void *)) {
    for (size_t k = 0; k + sizeof(void *) <= sizeof(T) && a.n < EmuArgs::MAX; k += sizeof(void *)) {
      const void *w;
      std::memcpy(&w, (const char *)&x + k, sizeof w);
      a.v[a.n++] = {i, w};
    }
  }
}
template <typename... A> static inline EmuArgs emu_args(const A &...x) {
  EmuArgs a;
  a.n = 0;
  int i = 0;
  (emu_arg1(a, i++, x), ...);
  return a;
}

/* Run `body` once per thread of the grid; sync: the kernel uses barriers or shuffles. `names`
 * is the launch's argument list as written (for reports), `args` its pointers. */
void emu_launch(const char *kernel, const char *file, int line, dim3 grid, dim3 block,
                size_t dynamic_shared, bool sync, const std::function<void()> &body,
                const char *names, const EmuArgs &args);

/* A launch of standard CUDA, k<<<grid, block, shared, stream>>>(args) (cuda/emu_rewrite.awk
 * makes it AL_EMU_LAUNCH((grid, block, shared, stream), (args), k), al_cuda.h): the arguments
 * are converted to the kernel's parameter types, as nvcc does, and the threads run as fibers
 * (LAUNCH_SYNC's mode: a barrier or a shuffle needs no other launch). */
struct EmuLaunchConfig {
  dim3 grid, block;
  size_t shared;
};
static inline EmuLaunchConfig emu_launch_config(dim3 grid, dim3 block, size_t shared = 0,
                                                cudaStream_t = nullptr) {
  return {grid, block, shared};
}
namespace { /* internal to each file: no weak global symbol in a kernel exercise's object */
template <typename T> struct EmuSame {
  using type = T;
};
template <typename... P> struct EmuKernelCall {
  void (*kernel)(P...);
  const char *name, *file;
  int line;
  const char *args;
  EmuLaunchConfig cfg;
  void operator()(typename EmuSame<P>::type... a) const {
    void (*k)(P...) = kernel;
    emu_launch(name, file, line, cfg.grid, cfg.block, cfg.shared, true, [=] { k(a...); }, args,
               emu_args(a...));
  }
};
template <typename... P>
static inline EmuKernelCall<P...> emu_kernel_call(void (*k)(P...), const char *name,
                                                  const char *file, int line, const char *args,
                                                  EmuLaunchConfig cfg) {
  return {k, name, file, line, args, cfg};
}
} // namespace

/* The grid cap of the launchers (al_cuda.h's cap_grid): `hw`, or AL_CUDA_EMU_GRID_CAP from the
 * environment when smaller, so grid-stride loops take several trips in the tests. */
long emu_grid_cap(long hw);
/* The same cap set by a program (the grader's kernel tests, whose environment is empty);
 * 0: none. Set this way, it caps every launch's grid, through cap_grid or not. */
void emu_set_grid_cap(long blocks);
/* The next launch's grid came through cap_grid, cut by the cap or not: the tests list the
 * kernels whose grid no case outgrew (their grid-stride loops never took a second trip). */
void emu_grid_note(bool capped);
int emu_grid_never_capped(const char **kernels, int max);

/* The arena handed out [p, p + bytes) of a device allocation as one tensor's memory: from now on
 * its bounds are exact and its contents unwritten (memcheck, initcheck). */
void emu_carve(void *p, size_t bytes);

/* The profiler: while on, every launch's memory accesses are counted per warp (see cuda/README.md).
 * emu_profile_take copies the counters per kernel since the last take (at most max) and clears
 * them; it returns how many kernels there were. */
struct EmuKernelProfile {
  const char *kernel;
  long launches, threads;
  long ld_req, ld_sectors, st_req, st_sectors, atomics; /* global memory, per warp request */
  long sh_req, sh_wavefronts;                            /* shared memory: wavefronts >= req */
  double flops;                                          /* counted for cuBLAS only */
};
void emu_profile(bool on);
int emu_profile_take(EmuKernelProfile *out, int max);

/* For tests: host<->device copies since the program started, and whether memory is closed. */
struct EmuCopyStats {
  long to_device, to_host, within;
};
EmuCopyStats emu_copy_stats(void);
long emu_launch_count(void);
/* The grader's kernel tests: every copy made while the log is on (emu_copy_log(true) clears
 * it; take returns how many there were, the first max in out), and the bytes of device memory
 * allocated now (cudaMalloc's, not yet freed). */
struct EmuCopy {
  const void *dst, *src;
  size_t bytes;
  int kind; /* cudaMemcpyKind */
};
void emu_copy_log(bool on);
int emu_copy_log_take(EmuCopy *out, int max);
size_t emu_device_bytes(void);

/* Counters since the program started, for the per-step lines of the labs (backend.cu). A host
 * wait is every call that blocks the host until the GPU has caught up: a synchronous cudaMemcpy
 * to or from the host, an asynchronous one to or from pageable (not pinned) host memory, a
 * stream or device synchronization, cudaFree and cudaFreeHost. Bytes moved and the H100
 * estimate are counted while the profiler is on (AL_CUDA_EMU_PROFILE=1). */
struct EmuCounters {
  long launches, to_device, to_host, waits;
  double bytes_to_device, bytes_to_host; /* the copies' bytes */
  double moved_bytes, h100_seconds;      /* kernels' and cuBLAS's traffic, and its estimate */
};
EmuCounters emu_counters(void);

/* device math functions the host library lacks */
static inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }

#endif
