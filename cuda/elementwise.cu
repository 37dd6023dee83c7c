/* elementwise.cu — the elementwise ops on the GPU (CPU twin: common/cpu/cpu_elementwise.c):
 * fill, accumulate, the broadcast binary ops and their gradients, the unary ops and theirs.
 *
 * Grid: one thread per output element in a grid-stride loop, EW_THREADS (256) a block, so
 * consecutive threads touch consecutive floats (coalesced). A broadcast operand's offset comes
 * from the output index through the Broadcast plan, passed by value. Tested by
 * tests/cuda/check_ops.c (families "elementwise", "unary") against the CPU kernels.
 */
#include "kernels.cuh"

/* ---------- fill, acc ---------- */

static __global__ void fill_kernel(float *x, float v, long n) {
  for (long i = first_index(); i < n; i += grid_stride()) x[i] = v;
}
static void cuda_fill(float *x, float v, long n) {
  if (n > 0) LAUNCH(fill_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, x, v, n);
}

static __global__ void acc_kernel(float *dst, const float *src, long n) {
  for (long i = first_index(); i < n; i += grid_stride()) dst[i] += src[i];
}
static void cuda_acc(float *dst, const float *src, long n) {
  if (n > 0) LAUNCH(acc_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, dst, src, n);
}

/* ---------- broadcast binary ops ---------- */

/* The offsets into a and b of output element i: row r = i / len[0] walks the outer merged dims
 * with dim 1 fastest (the CPU's odometer order), column j steps by stride[.][0]. */
static __device__ __forceinline__ void bc_offsets(const Broadcast &bc, long i, long *oa,
                                                  long *ob) {
  long n = bc.len[0], r = i / n, j = i - r * n;
  long a = j * bc.stride[ARG_A][0], b = j * bc.stride[ARG_B][0];
  /* a fixed trip count, so the plan's arrays stay in registers (a loop to bc.nd would index
   * them at run time, which puts them in local memory) */
#pragma unroll
  for (int k = 1; k < T_MAXDIM; k++) {
    if (k < bc.nd) {
      long q = r / bc.len[k], idx = r - q * bc.len[k];
      a += idx * bc.stride[ARG_A][k];
      b += idx * bc.stride[ARG_B][k];
      r = q;
    }
  }
  *oa = a;
  *ob = b;
}

static __device__ __forceinline__ float binary_apply(BinaryOp op, float x, float y) {
  switch (op) {
  case BIN_ADD: return x + y;
  case BIN_SUB: return x - y;
  case BIN_MUL: return x * y;
  default: return x / y;
  }
}

static __global__ void binary_kernel(BinaryOp op, Broadcast bc, const float *a, const float *b,
                                     float *out, long total) {
  for (long i = first_index(); i < total; i += grid_stride()) {
    long oa, ob;
    bc_offsets(bc, i, &oa, &ob);
    out[i] = binary_apply(op, a[oa], b[ob]);
  }
}
static void cuda_binary(BinaryOp op, const Broadcast *bc, const float *a, const float *b,
                        float *out) {
  long total = bc->rows * bc->len[0];
  if (total > 0)
    LAUNCH(binary_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, op, *bc, a, b, out,
           total);
}

/* Whether operand x repeats along some merged dim of length > 1: several output elements then
 * share one gradient element. */
static bool repeats(const Broadcast *bc, int x) {
  for (int k = 0; k < bc->nd; k++)
    if (bc->stride[x][k] == 0 && bc->len[k] > 1) return true;
  return false;
}

/* gx[off_x] (+)= scale * g[i] * y[off_y], one thread per output element; `atomic` when several
 * elements share one gx element (their order of addition is then the hardware's). */
static __global__ void binary_grad_kernel(Broadcast bc, int x, float *gx, const float *g,
                                          const float *y, float scale, bool store, bool atomic,
                                          long total) {
  for (long i = first_index(); i < total; i += grid_stride()) {
    long oa, ob;
    bc_offsets(bc, i, &oa, &ob);
    long ox = x == ARG_A ? oa : ob, oy = x == ARG_A ? ob : oa;
    float v = scale * g[i] * (y ? y[oy] : 1.0f);
    if (store) gx[ox] = v;
    else if (atomic) atomicAdd(&gx[ox], v);
    else gx[ox] += v;
  }
}

/* The common repeated case (a bias added along rows, x repeated along the contiguous dim 0 of
 * each row): one warp per row sums the row, then one atomic add a row. Blocks of 8 warps. */
enum { ROWS_PER_BLOCK = 8 };
static __global__ void binary_grad_rows_kernel(Broadcast bc, int x, float *gx, const float *g,
                                               const float *y, float scale, bool store) {
  long n = bc.len[0];
  int lane = threadIdx.x % 32;
  for (long r = (long)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32; r < bc.rows;
       r += (long)gridDim.x * ROWS_PER_BLOCK) {
    long oa, ob;
    bc_offsets(bc, r * n, &oa, &ob);
    long ox = x == ARG_A ? oa : ob, oy = x == ARG_A ? ob : oa;
    long iy = y ? (x == ARG_A ? bc.stride[ARG_B][0] : bc.stride[ARG_A][0]) : 0;
    float s = 0.0f;
    for (long j = lane; j < n; j += 32) s += g[r * n + j] * (y ? y[oy + j * iy] : 1.0f);
    s = warp_sum(s);
    if (lane == 0) {
      if (store) gx[ox] = scale * s; /* one row per element of gx: rows are distinct */
      else atomicAdd(&gx[ox], scale * s);
    }
  }
}

static void cuda_binary_grad(const Broadcast *bc, int x, float *gx, const float *g,
                             const float *y, float scale, bool store) {
  long total = bc->rows * bc->len[0];
  if (total <= 0) return;
  bool rows_only = bc->stride[x][0] == 0 && bc->len[0] > 1;
  for (int k = 1; k < bc->nd && rows_only; k++)
    if (bc->stride[x][k] == 0 && bc->len[k] > 1) rows_only = false; /* rows share gx too */
  if (rows_only && !store) {
    long blocks = (bc->rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    LAUNCH_SYNC(binary_grad_rows_kernel, cap_grid(blocks, 4096),
                32 * ROWS_PER_BLOCK, 0, *bc, x, gx, g, y, scale, false);
  } else {
    LAUNCH(binary_grad_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, *bc, x, gx, g, y,
           scale, store, !store && repeats(bc, x), total);
  }
}

static __global__ void div_grad_b_kernel(float *gb, const float *ga_sum, const float *b, long n) {
  for (long k = first_index(); k < n; k += grid_stride()) gb[k] -= ga_sum[k] / (b[k] * b[k]);
}
static void cuda_div_grad_b(float *gb, const float *ga_sum, const float *b, long n) {
  if (n > 0) LAUNCH(div_grad_b_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, gb, ga_sum, b, n);
}

/* ---------- unary ops ---------- */

/* GELU(x) = x Phi(x), exact (erf) form, as the CPU's; normcdff is CUDA's Phi. */
static __device__ __forceinline__ float unary_apply(UnaryOp op, float s, float x) {
  switch (op) {
  case UN_SCALE: return x * s;
  case UN_ADD_SCALAR: return x + s;
  case UN_EXP: return expf(x);
  case UN_LOG: return logf(x);
  case UN_SQUARE: return x * x;
  case UN_TANH: return tanhf(x);
  case UN_SIGMOID: return 1.0f / (1.0f + expf(-x));
  case UN_RELU: return x > 0.0f ? x : 0.0f;
  case UN_GELU: return x * normcdff(x);
  default: return 1.0f / x; /* UN_RECIPROCAL */
  }
}

/* dy/dx times g, from the input x or the output y, whichever is cheaper (as on the CPU) */
static __device__ __forceinline__ float unary_grad_apply(UnaryOp op, float s, float g, float x,
                                                         float y) {
  switch (op) {
  case UN_SCALE: return s * g;
  case UN_ADD_SCALAR: return g;
  case UN_EXP: return g * y;
  case UN_LOG: return g / x;
  case UN_SQUARE: return 2.0f * x * g;
  case UN_TANH: return g * (1.0f - y * y);
  case UN_SIGMOID: return g * y * (1.0f - y);
  case UN_RELU: return y > 0.0f ? g : 0.0f;
  case UN_GELU: /* Phi(x) + x phi(x), phi the normal density */
    return g * (normcdff(x) + x * 0.39894228040143268f * expf(-0.5f * x * x));
  default: return -g / (x * x); /* UN_RECIPROCAL has no backward on the CPU; d(1/x) */
  }
}

static __global__ void unary_kernel(UnaryOp op, float s, const float *x, float *y, long n) {
  for (long i = first_index(); i < n; i += grid_stride()) y[i] = unary_apply(op, s, x[i]);
}
static void cuda_unary(UnaryOp op, float s, const float *x, float *y, long n) {
  if (n > 0) LAUNCH(unary_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, op, s, x, y, n);
}

/* x or y may be NULL where the op does not need it (as the CPU kernel allows) */
static __global__ void unary_grad_kernel(UnaryOp op, float s, const float *g, const float *x,
                                         const float *y, float *gx, long n, bool fresh) {
  for (long i = first_index(); i < n; i += grid_stride()) {
    float v = unary_grad_apply(op, s, g[i], x ? x[i] : 0.0f, y ? y[i] : 0.0f);
    gx[i] = fresh ? v : gx[i] + v;
  }
}
static void cuda_unary_grad(UnaryOp op, float s, const float *g, const float *x, const float *y,
                            float *gx, long n, bool fresh) {
  if (n > 0)
    LAUNCH(unary_grad_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, op, s, g, x, y, gx, n,
           fresh);
}

void cuda_register_elementwise(Backend *be) {
  be->fill = cuda_fill;
  be->acc = cuda_acc;
  be->binary = cuda_binary;
  be->binary_grad = cuda_binary_grad;
  be->div_grad_b = cuda_div_grad_b;
  be->unary = cuda_unary;
  be->unary_grad = cuda_unary_grad;
}
