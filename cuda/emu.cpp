/* emu.cpp — the CUDA emulator's runtime (see emu.h for what it models and why). Compiled with
 * the kernels as host C++ into the test binaries only; the labs link the real CUDA runtime. */
#include "emu.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define EMU_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define EMU_TSAN 1
extern "C" void __tsan_ignore_thread_begin(void); /* in libtsan, not in its header */
extern "C" void __tsan_ignore_thread_end(void);
#endif

/* What ThreadSanitizer should not see: the emulator's own bookkeeping, which the scheduler and
 * the fibers of one OS thread hand back and forth (see "LAUNCH_SYNC" below). */
#define EMU_NO_TSAN __attribute__((no_sanitize_thread, noinline))

static thread_local dim3 t_thread_idx, t_block_idx, t_block_dim, t_grid_dim;
EMU_NO_TSAN dim3 emu_thread_idx(void) { return t_thread_idx; }
EMU_NO_TSAN dim3 emu_block_idx(void) { return t_block_idx; }
EMU_NO_TSAN dim3 emu_block_dim(void) { return t_block_dim; }
EMU_NO_TSAN dim3 emu_grid_dim(void) { return t_grid_dim; }

[[noreturn]] __attribute__((format(printf, 1, 2))) static void emu_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "cuda emulator: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  abort();
}

/* ---------- device memory: closed to the host except inside launches and copies ---------- */

struct Region {
  char *p;
  size_t len;
};
static std::vector<Region> g_regions;
static int g_open_depth;
static std::mutex g_mem_mutex;
static EmuCopyStats g_copies;
static long g_launches;

static void set_prot(int prot) {
  for (const Region &r : g_regions)
    if (mprotect(r.p, r.len, prot) != 0) emu_die("mprotect failed on device memory");
}
static void mem_open(void) {
  if (g_open_depth++ == 0) set_prot(PROT_READ | PROT_WRITE);
}
static void mem_close(void) {
  if (--g_open_depth == 0) set_prot(PROT_NONE);
}
static bool is_device(const void *p, size_t bytes) {
  const char *c = (const char *)p;
  for (const Region &r : g_regions)
    if (c >= r.p && c < r.p + r.len) {
      if (c + bytes > r.p + r.len)
        emu_die("a copy of %zu bytes runs past a device allocation", bytes);
      return true;
    }
  return false;
}

cudaError_t cudaGetDeviceCount(int *n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidValue; }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d) {
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "CUDA emulator (cuda/emu.cpp)");
  p->totalGlobalMem = (size_t)1 << 32;
  p->major = 9;
  p->multiProcessorCount = 1;
  return d == 0 ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaMalloc(void **out, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_mem_mutex);
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t len = bytes ? (bytes + page - 1) / page * page : page;
  void *p = mmap(NULL, len, g_open_depth ? PROT_READ | PROT_WRITE : PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return cudaErrorMemoryAllocation;
  g_regions.push_back({(char *)p, len});
  *out = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
  if (!p) return cudaSuccess;
  std::lock_guard<std::mutex> lock(g_mem_mutex);
  for (size_t i = 0; i < g_regions.size(); i++)
    if (g_regions[i].p == p) {
      munmap(p, g_regions[i].len);
      g_regions[i] = g_regions.back();
      g_regions.pop_back();
      return cudaSuccess;
    }
  emu_die("cudaFree of %p, which cudaMalloc did not return", p);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
  std::lock_guard<std::mutex> lock(g_mem_mutex);
  static const char *names[] = {"HostToHost", "HostToDevice", "DeviceToHost", "DeviceToDevice"};
  bool dd = is_device(dst, bytes), sd = is_device(src, bytes);
  bool want_dd = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool want_sd = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (bytes && (dd != want_dd || sd != want_sd))
    emu_die("cudaMemcpy%s: %s pointer is on the wrong side", names[kind & 3],
            dd != want_dd ? "the destination" : "the source");
  if (kind == cudaMemcpyHostToDevice) g_copies.to_device++;
  if (kind == cudaMemcpyDeviceToHost) g_copies.to_host++;
  if (kind == cudaMemcpyDeviceToDevice) g_copies.within++;
  mem_open();
  if (bytes) memmove(dst, src, bytes);
  mem_close();
  return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int v, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_mem_mutex);
  if (bytes && !is_device(p, bytes)) emu_die("cudaMemset of host memory (%p)", p);
  mem_open();
  memset(p, v, bytes);
  mem_close();
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "cudaSuccess";
  case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
  case cudaErrorNoDevice: return "cudaErrorNoDevice";
  }
  return "cudaErrorUnknown";
}
const char *cudaGetErrorString(cudaError_t e) {
  return e == cudaSuccess         ? "no error"
         : e == cudaErrorNoDevice ? "no CUDA-capable device is detected"
                                  : "error";
}

EmuCopyStats emu_copy_stats(void) { return g_copies; }
long emu_launch_count(void) { return g_launches; }

/* ---------- cuBLAS: the column-major products, computed on the CPU ---------- */

struct cublasContext {
  cublasMath_t mode;
};
cublasStatus_t cublasCreate(cublasHandle_t *h) {
  *h = new cublasContext{CUBLAS_DEFAULT_MATH};
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t h) {
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode) {
  h->mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}
const char *cublasGetStatusName(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_INVALID_VALUE";
}

/* C (m x n, column-major, ldc) = alpha op(A) op(B) + beta C, as cuBLAS defines it: op(A) is
 * m x k (A stored m x k with lda >= m, or k x m with lda >= k when transposed); beta == 0 does
 * not read C. Accumulated in double: this is the reference the GPU's float sums are held to. */
static cublasStatus_t gemm1(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            float alpha, const float *A, int lda, const float *B, int ldb,
                            float beta, float *C, int ldc) {
  if (m < 0 || n < 0 || k < 0 || lda < (ta == CUBLAS_OP_N ? m : k) || lda < 1 ||
      ldb < (tb == CUBLAS_OP_N ? k : n) || ldb < 1 || ldc < m || ldc < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int p = 0; p < k; p++) {
        float a = ta == CUBLAS_OP_N ? A[i + (long)p * lda] : A[p + (long)i * lda];
        float b = tb == CUBLAS_OP_N ? B[p + (long)j * ldb] : B[j + (long)p * ldb];
        s += (double)a * b;
      }
      float *c = &C[i + (long)j * ldc];
      *c = (float)(alpha * s + (beta == 0.0f ? 0.0 : (double)beta * *c));
    }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                           int n, int k, const float *alpha, const float *A, int lda,
                           const float *B, int ldb, const float *beta, float *C, int ldc) {
  return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc,
                                   0, 1);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda,
                                         long long strideA, const float *B, int ldb,
                                         long long strideB, const float *beta, float *C, int ldc,
                                         long long strideC, int count) {
  if (!h || count < 0) return CUBLAS_STATUS_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g_mem_mutex);
  /* the operands must be device memory, as on the GPU */
  if ((m && n && !is_device(C, sizeof(float))) || (m && k && !is_device(A, sizeof(float))) ||
      (k && n && !is_device(B, sizeof(float))))
    emu_die("cublasSgemm: an operand is host memory");
  g_launches++;
  mem_open();
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  for (int b = 0; b < count && st == CUBLAS_STATUS_SUCCESS; b++)
    st = gemm1(ta, tb, m, n, k, *alpha, A + b * strideA, lda, B + b * strideB, ldb, *beta,
               C + b * strideC, ldc);
  mem_close();
  return st;
}

/* ---------- launches ---------- */

enum { SHARED_STATIC_MAX = 48 * 1024, MAX_THREADS = 1024 };

struct Launch {
  const char *kernel, *file;
  int line;
  dim3 grid, block;
  int nthreads;
  bool sync;
  const std::function<void()> *body;
  size_t dynamic_shared;
  union Slot {
    float f;
    double d;
  } slots[MAX_THREADS];
};
static Launch g_launch;

/* The current block's shared memory and its barriers' synchronisation objects (ThreadSanitizer:
 * a barrier's generations alternate between two objects, so a thread leaving generation g
 * acquires only what arrived at g, not what already arrived at g + 1). */
struct BlockMem {
  alignas(16) unsigned char shared[SHARED_STATIC_MAX];
  unsigned char *dynamic;
  char block_sync[2], warp_sync[MAX_THREADS / 32][2];
};
static BlockMem *g_block;
static std::vector<unsigned char> g_dynamic;
static unsigned long g_block_gen, g_warp_gen[MAX_THREADS / 32];

/* per thread: its linear index in the block and its static shared-memory cursor */
static thread_local int t_tid = -1;
static thread_local size_t t_shared_used;
static thread_local bool t_in_launch;

EMU_NO_TSAN static void need_sync(const char *what) {
  if (!t_in_launch) emu_die("%s called outside a kernel", what);
  if (!g_launch.sync)
    emu_die("kernel %s calls %s but was launched with LAUNCH; launch it with LAUNCH_SYNC",
            g_launch.kernel, what);
}

EMU_NO_TSAN void *emu_shared(size_t bytes, size_t align) {
  if (!t_in_launch) emu_die("shared memory used outside a kernel");
  size_t off = (t_shared_used + align - 1) / align * align;
  if (off + bytes > SHARED_STATIC_MAX)
    emu_die("kernel %s declares more than 48 KB of static shared memory (%zu bytes)",
            g_launch.kernel, off + bytes);
  t_shared_used = off + bytes;
  return g_block->shared + off;
}

EMU_NO_TSAN void *emu_dynamic_shared(void) { return g_block->dynamic; }

EMU_NO_TSAN static void block_wait(void);
EMU_NO_TSAN static void warp_wait(int warp);

void __syncthreads(void) {
  need_sync("__syncthreads");
  block_wait();
}

/* The lanes of this thread's warp: a block's last warp may be partial. */
EMU_NO_TSAN static int warp_lanes(int warp) {
  int rest = g_launch.nthreads - warp * 32;
  return rest < 32 ? rest : 32;
}

template <typename T>
EMU_NO_TSAN static T shuffle(const char *name, T v, int src_of_lane(int lane, int arg, int width),
                             int arg, int width) {
  need_sync(name);
  if (width < 1 || width > 32 || (width & (width - 1)))
    emu_die("%s: width must be a power of two up to 32", name);
  int warp = t_tid / 32, lane = t_tid % 32, lanes = warp_lanes(warp);
  Launch::Slot *s = g_launch.slots + warp * 32;
  if constexpr (sizeof(T) == sizeof(float)) s[lane].f = v;
  else s[lane].d = v;
  warp_wait(warp); /* every lane has written its value */
  int src = src_of_lane(lane, arg, width);
  T r = v;
  if (src >= 0 && src < lanes) {
    if constexpr (sizeof(T) == sizeof(float)) r = s[src].f;
    else r = s[src].d;
  }
  warp_wait(warp); /* every lane has read before the slots are reused */
  return r;
}
EMU_NO_TSAN static int src_down(int lane, int delta, int width) {
  return (lane % width) + delta < width ? lane + delta : -1;
}
EMU_NO_TSAN static int src_xor(int lane, int mask, int width) {
  int s = lane ^ mask;
  return s / width == lane / width ? s : -1;
}
EMU_NO_TSAN static int src_idx(int lane, int src, int width) {
  return (lane / width) * width + src % width;
}

EMU_NO_TSAN float __shfl_down_sync(unsigned, float v, unsigned d, int w) {
  return shuffle<float>("__shfl_down_sync", v, src_down, (int)d, w);
}
EMU_NO_TSAN float __shfl_xor_sync(unsigned, float v, int m, int w) {
  return shuffle<float>("__shfl_xor_sync", v, src_xor, m, w);
}
EMU_NO_TSAN float __shfl_sync(unsigned, float v, int s, int w) {
  return shuffle<float>("__shfl_sync", v, src_idx, s, w);
}
EMU_NO_TSAN double __shfl_down_sync(unsigned, double v, unsigned d, int w) {
  return shuffle<double>("__shfl_down_sync", v, src_down, (int)d, w);
}
EMU_NO_TSAN double __shfl_xor_sync(unsigned, double v, int m, int w) {
  return shuffle<double>("__shfl_xor_sync", v, src_xor, m, w);
}

/* a compare-and-swap loop on the value's bits (no atomic add for floating point in C++17) */
template <typename T, typename Bits> static T atomic_add_cas(T *p, T v) {
  Bits *u = (Bits *)p, old = __atomic_load_n(u, __ATOMIC_RELAXED), nu;
  T f;
  do {
    memcpy(&f, &old, sizeof f);
    T s = f + v;
    memcpy(&nu, &s, sizeof nu);
  } while (!__atomic_compare_exchange_n(u, &old, nu, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
  return f;
}
float atomicAdd(float *p, float v) { return atomic_add_cas<float, uint32_t>(p, v); }
double atomicAdd(double *p, double v) { return atomic_add_cas<double, uint64_t>(p, v); }
int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }

EMU_NO_TSAN static void set_thread(int tid) {
  const dim3 &b = g_launch.block;
  t_thread_idx = dim3(tid % b.x, tid / b.x % b.y, tid / (b.x * b.y));
  t_block_dim = b;
  t_grid_dim = g_launch.grid;
  t_tid = tid;
}

EMU_NO_TSAN static void set_block(long blk) {
  const dim3 &g = g_launch.grid;
  t_block_idx = dim3(blk % g.x, blk / g.x % g.y, blk / ((long)g.x * g.y));
}

EMU_NO_TSAN static long grid_blocks(void) {
  return (long)g_launch.grid.x * g_launch.grid.y * g_launch.grid.z;
}

/* Poison a block's shared memory: a read of a value no thread wrote is a NaN. */
/* Begin a block: its shared memory, poisoned (a read of a value no thread wrote is a NaN). */
EMU_NO_TSAN static void block_begin(void) {
#ifdef EMU_TSAN
  /* Each block has memory of its own (as on the GPU, where blocks never see each other's shared
   * memory): freshly allocated, so ThreadSanitizer forgets the previous block's accesses, and
   * its barriers' synchronisation objects with it, so nothing orders two blocks. */
  g_block = (BlockMem *)malloc(sizeof(BlockMem) + g_launch.dynamic_shared);
  if (!g_block) emu_die("no memory for a block's shared memory");
  g_block->dynamic = (unsigned char *)(g_block + 1);
#else
  static BlockMem one; /* blocks run one after another */
  g_block = &one;
  g_dynamic.resize(g_launch.dynamic_shared);
  g_block->dynamic = g_dynamic.data();
#endif
  memset(g_block->shared, 0xff, sizeof g_block->shared);
  if (g_launch.dynamic_shared) memset(g_block->dynamic, 0xff, g_launch.dynamic_shared);
  g_block_gen = 0;
  for (int w = 0; w < MAX_THREADS / 32; w++) g_warp_gen[w] = 0;
}

EMU_NO_TSAN static void block_end(void) {
#ifdef EMU_TSAN
  /* the block's fibers are not ordered before the scheduler (that would order the blocks):
   * the free is not an access */
  __tsan_ignore_thread_begin();
  free(g_block);
  __tsan_ignore_thread_end();
#endif
  g_block = NULL;
}

/* ---------- LAUNCH_SYNC: a block's threads are fibers (user-level threads with their own stacks)
 * on the launching thread, switched at every barrier and shuffle. Each runs until it waits, in
 * thread order, so a thread that reads shared memory before the barrier that should precede it
 * reads the NaN poison (or a stale value) instead of its neighbour's write: deterministic, and
 * ~10x cheaper than waking OS threads. Under ThreadSanitizer each fiber is a TSan fiber,
 * switched without synchronisation; only barriers, shuffles and launch boundaries order
 * them (release/acquire below), exactly the ordering the GPU guarantees, so a missing
 * __syncthreads is reported as a data race even though the fibers never run at once.
 * ---------- */

#ifdef EMU_TSAN
static void tsan_release(void *a) { __tsan_release(a); }
static void tsan_acquire(void *a) { __tsan_acquire(a); }
#else
static void tsan_release(void *) {}
static void tsan_acquire(void *) {}
#endif
/* synchronisation objects of the launch boundaries */
static char g_launch_start, g_launch_end;

/* The switch itself. On x86-64 a few instructions that save the callee-saved registers and swap
 * stacks (glibc's swapcontext also saves the signal mask: a system call per switch, ~85% of an
 * emulated lab's time); elsewhere ucontext. */
#if defined(__x86_64__)
struct FiberContext {
  void *sp;
};
/* al_emu_switch(save, to): push rbp, rbx, r12-r15, store rsp in *save, load `to`, pop, return */
extern "C" void al_emu_switch(void **save, void *to);
asm(".text\n"
    ".globl al_emu_switch\n"
    ".hidden al_emu_switch\n"
    ".type al_emu_switch, @function\n"
    "al_emu_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size al_emu_switch, .-al_emu_switch\n");
EMU_NO_TSAN static void fiber_switch(FiberContext *from, FiberContext *to) {
  al_emu_switch(&from->sp, to->sp);
}
/* A stack that al_emu_switch "returns" into entry with: six zero registers, entry's address,
 * and a zero return address for entry's own frame (the ABI's alignment at a call: rsp % 16 == 8) */
EMU_NO_TSAN static void fiber_prepare(FiberContext *c, char *stack, size_t size,
                                     void (*entry)(void)) {
  void **sp = (void **)(((uintptr_t)stack + size) & ~(uintptr_t)15);
  *--sp = NULL;
  *--sp = (void *)entry;
  for (int i = 0; i < 6; i++) *--sp = NULL;
  c->sp = sp;
}
#else
struct FiberContext {
  ucontext_t uc;
};
EMU_NO_TSAN static void fiber_switch(FiberContext *from, FiberContext *to) {
  swapcontext(&from->uc, &to->uc);
}
EMU_NO_TSAN static void fiber_prepare(FiberContext *c, char *stack, size_t size,
                                     void (*entry)(void)) {
  getcontext(&c->uc); /* returns once here: makecontext below replaces where it resumes */
  c->uc.uc_stack.ss_sp = stack;
  c->uc.uc_stack.ss_size = size;
  c->uc.uc_link = NULL;
  makecontext(&c->uc, entry, 0);
}
#endif

enum FiberState { RUNNABLE, AT_BLOCK_BARRIER, AT_WARP_BARRIER, FINISHED };
struct Fiber {
  FiberContext ctx;
  char *stack;
  FiberState state;
  size_t shared_used; /* its static shared-memory cursor */
  void *fake_stack;   /* ASan's bookkeeping across switches */
  void *tsan;         /* TSan's fiber */
  void *wait_sync;    /* what it acquires when its barrier opens */
};
enum { FIBER_STACK = 256 * 1024 }; /* kernels are shallow; ASan's frames are larger */
static Fiber g_fibers[MAX_THREADS];
static int g_nfibers_alloc;
static FiberContext g_sched_ctx;
static int g_current = -1;
#ifdef EMU_TSAN
static void *g_sched_tsan;
#endif
#ifdef EMU_ASAN
static const void *g_sched_stack;
static size_t g_sched_stack_size;
static void *g_sched_fake;
#endif

/* Back to the scheduler, until it resumes this fiber. */
EMU_NO_TSAN static void fiber_yield(FiberState why) {
  Fiber *f = &g_fibers[g_current];
  f->state = why;
  f->shared_used = t_shared_used;
#ifdef EMU_TSAN
  __tsan_switch_to_fiber(g_sched_tsan, __tsan_switch_to_fiber_no_sync);
#endif
#ifdef EMU_ASAN
  __sanitizer_start_switch_fiber(why == FINISHED ? NULL : &f->fake_stack, g_sched_stack,
                                 g_sched_stack_size);
#endif
  fiber_switch(&f->ctx, &g_sched_ctx);
#ifdef EMU_ASAN
  __sanitizer_finish_switch_fiber(f->fake_stack, &g_sched_stack, &g_sched_stack_size);
#endif
  tsan_acquire(f->wait_sync); /* everything before the barrier, in every thread it waited for */
}

EMU_NO_TSAN static void fiber_main(void) {
#ifdef EMU_ASAN
  __sanitizer_finish_switch_fiber(NULL, &g_sched_stack, &g_sched_stack_size);
#endif
  tsan_acquire(&g_launch_start);
  (*g_launch.body)();
  tsan_release(&g_launch_end);
  fiber_yield(FINISHED); /* never resumed */
}

EMU_NO_TSAN static void block_wait(void) {
  void *sync = &g_block->block_sync[g_block_gen & 1];
  tsan_release(sync);
  g_fibers[g_current].wait_sync = sync;
  fiber_yield(AT_BLOCK_BARRIER);
}
EMU_NO_TSAN static void warp_wait(int warp) {
  void *sync = &g_block->warp_sync[warp][g_warp_gen[warp] & 1];
  tsan_release(sync);
  g_fibers[g_current].wait_sync = sync;
  fiber_yield(AT_WARP_BARRIER);
}

EMU_NO_TSAN static void resume(int i) {
  Fiber *f = &g_fibers[i];
  g_current = i;
  set_thread(i);
  t_shared_used = f->shared_used;
#ifdef EMU_TSAN
  g_sched_tsan = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(f->tsan, __tsan_switch_to_fiber_no_sync);
#endif
#ifdef EMU_ASAN
  __sanitizer_start_switch_fiber(&g_sched_fake, f->stack, FIBER_STACK);
#endif
  fiber_switch(&g_sched_ctx, &f->ctx);
#ifdef EMU_ASAN
  __sanitizer_finish_switch_fiber(g_sched_fake, NULL, NULL);
#endif
  g_current = -1;
}

/* A fresh start of the kernel body on f's stack. */
EMU_NO_TSAN static void fiber_start(Fiber *f) {
  fiber_prepare(&f->ctx, f->stack, FIBER_STACK, fiber_main);
  f->state = RUNNABLE;
  f->shared_used = 0;
  f->wait_sync = &g_launch_start;
}

/* Run one block: resume every runnable fiber in thread order; when none is runnable, release
 * the barrier everyone (block) or a whole warp is waiting at; anything else is a deadlock. */
EMU_NO_TSAN static void run_block_fibers(int n) {
  for (int i = 0; i < n; i++) fiber_start(&g_fibers[i]);
  for (;;) {
    bool ran = false;
    for (int i = 0; i < n; i++)
      if (g_fibers[i].state == RUNNABLE) {
        resume(i);
        ran = true;
      }
    if (ran) continue;
    int finished = 0, at_block = 0;
    for (int i = 0; i < n; i++) {
      finished += g_fibers[i].state == FINISHED;
      at_block += g_fibers[i].state == AT_BLOCK_BARRIER;
    }
    if (finished == n) return;
    if (at_block == n) {
      for (int i = 0; i < n; i++) g_fibers[i].state = RUNNABLE;
      g_block_gen++;
      continue;
    }
    bool released = false;
    for (int w = 0; w * 32 < n; w++) {
      int lanes = warp_lanes(w), waiting = 0;
      for (int l = 0; l < lanes; l++) waiting += g_fibers[w * 32 + l].state == AT_WARP_BARRIER;
      if (waiting == lanes) {
        for (int l = 0; l < lanes; l++) g_fibers[w * 32 + l].state = RUNNABLE;
        g_warp_gen[w]++;
        released = true;
      }
    }
    if (!released)
      emu_die("kernel %s: %s (threads of a block wait at different barriers, or some exited "
              "while others wait at __syncthreads; every thread must reach every barrier)",
              g_launch.kernel, at_block ? "__syncthreads never completes" : "a warp shuffle "
              "never completes");
  }
}

static void run_sync_grid(void) {
  int n = g_launch.nthreads;
  for (; g_nfibers_alloc < n; g_nfibers_alloc++) {
#ifdef EMU_TSAN
    g_fibers[g_nfibers_alloc].tsan = __tsan_create_fiber(0);
#endif
    void *p = mmap(NULL, FIBER_STACK, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) emu_die("no memory for a fiber stack");
    g_fibers[g_nfibers_alloc].stack = (char *)p;
  }
  t_in_launch = true;
  /* Earlier launches happen before every thread of this one, and all of it before whatever
   * follows; nothing orders two blocks of one launch (or two threads between barriers), so
   * under ThreadSanitizer a write that another block or thread also touches is a race. */
  for (long blk = 0; blk < grid_blocks(); blk++) {
    block_begin();
    set_block(blk);
    tsan_release(&g_launch_start); /* earlier launches and the poison come first */
    run_block_fibers(n);
    block_end();
  }
  tsan_acquire(&g_launch_end);
  t_in_launch = false;
}

void emu_launch(const char *kernel, const char *file, int line, dim3 grid, dim3 block,
                size_t dynamic_shared, bool sync, const std::function<void()> &body) {
  if (t_in_launch) emu_die("kernel %s launched from inside kernel %s", kernel, g_launch.kernel);
  long nthreads = (long)block.x * block.y * block.z;
  if (nthreads < 1 || nthreads > MAX_THREADS || block.z > 64)
    emu_die("kernel %s (%s): block of %ld threads; a block has 1 to 1024", kernel, file,
            nthreads);
  if (grid.x < 1 || grid.y < 1 || grid.z < 1 || grid.y > 65535 || grid.z > 65535)
    emu_die("kernel %s (%s): empty or oversized grid (%ld blocks in y or z)", kernel, file,
            (long)(grid.x < 1 ? 0 : grid.y > 65535 ? grid.y : grid.z));
  if (dynamic_shared > SHARED_STATIC_MAX)
    emu_die("kernel %s (%s): %ld bytes of dynamic shared memory; the default limit is 48 KB",
            kernel, file, (long)dynamic_shared);
  std::lock_guard<std::mutex> lock(g_mem_mutex);
  g_launches++;
  g_launch.kernel = kernel;
  g_launch.file = file;
  g_launch.line = line;
  g_launch.grid = grid;
  g_launch.block = block;
  g_launch.nthreads = (int)nthreads;
  g_launch.sync = sync;
  g_launch.body = &body;
  g_launch.dynamic_shared = dynamic_shared;
  mem_open();
#ifdef EMU_TSAN
  /* every launch as fibers: threads without barriers can race on global memory too */
  const bool fibers = true;
#else
  const bool fibers = sync; /* a barrier-free block's threads simply run in turn */
#endif
  if (!fibers) {
    t_in_launch = true;
    for (long blk = 0; blk < grid_blocks(); blk++) {
      block_begin();
      set_block(blk);
      for (int t = 0; t < nthreads; t++) {
        set_thread(t);
        t_shared_used = 0;
        body();
      }
      block_end();
    }
    t_in_launch = false;
  } else {
    run_sync_grid();
  }
  mem_close();
}
