/* shape.cu — the shape ops on the GPU (CPU twin: common/cpu/cpu_shape.c; fronts:
 * common/ops/shape.c): permute/transpose, strided row copies (concat, slice, copy),
 * repeat_interleave and patchify, forward and backward. Tested by tests/cuda/cases_shape.c.
 *
 * Grid: every kernel here is one thread per element of the larger side, in a grid-stride loop,
 * EW_THREADS a block, consecutive threads on consecutive output floats (coalesced writes; the
 * reads are coalesced too wherever the innermost dim stays innermost, e.g. transpose_qkv's
 * (B, T, H, D) -> (B, H, T, D), and seq2seq's (T, B, H) -> (B, T, H): every permute on a lab's
 * hot path). A permutation that moves the innermost dim reads with a stride; no lab does that
 * on a hot path, so there is no tiled shared-memory transpose. No kernel here has barriers or
 * shared memory.
 *
 * No atomics either: every backward is a gather. A permutation and patchify (non-overlapping
 * patches) reach each input element exactly once, so their backward writes each element from
 * one thread; repeat_interleave's backward has each input element's thread sum its `reps`
 * output gradients itself, in the CPU's order, so both devices give the same bits.
 */
#include "kernels.cuh"

/* ---------- permute / transpose ---------- */

/* The front's plan (ops/shape.c, permute_geometry): output shape padded to T_MAXDIM dims, and
 * for each output dim the input stride it steps. Passed by value: it lives in registers. */
typedef struct {
  int oshape[T_MAXDIM];
  long sstride[T_MAXDIM];
} PermutePlan;

/* Output element t (row-major over oshape) is input element sum_k i_k * sstride[k]. Gather:
 * out[t] = in[off]; backward: in[off] (+)= out[t] (store when in's gradient is fresh). */
static __global__ void permute_kernel(float *in, float *outp, PermutePlan pl, PermuteMode mode,
                                      long total) {
  for (long t = first_index(); t < total; t += grid_stride()) {
    long r = t, off = 0;
    /* a fixed trip count keeps the plan's arrays in registers */
#pragma unroll
    for (int k = T_MAXDIM - 1; k >= 0; k--) {
      long q = r / pl.oshape[k];
      off += (r - q * pl.oshape[k]) * pl.sstride[k];
      r = q;
    }
    if (mode == PW_GATHER)
      outp[t] = in[off];
    else if (mode == PW_STORE)
      in[off] = outp[t];
    else
      in[off] += outp[t];
  }
}
static void cuda_permute(float *in, float *outp, const int *oshape, const long *sstride,
                         PermuteMode mode) {
  PermutePlan pl;
  long total = 1;
  for (int k = 0; k < T_MAXDIM; k++) {
    pl.oshape[k] = oshape[k];
    pl.sstride[k] = sstride[k];
    total *= oshape[k];
  }
  if (total > 0)
    LAUNCH(permute_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, in, outp, pl, mode, total);
}

/* ---------- strided rows: concat, slice, copy ---------- */

/* dst[r * dstride + j] (+)= src[r * sstride + j] for rows of n floats */
static __global__ void copy_rows_kernel(float *dst, long dstride, const float *src, long sstride,
                                        long rows, long n, bool add) {
  for (long t = first_index(); t < rows * n; t += grid_stride()) {
    long r = t / n, j = t - r * n;
    float v = src[r * sstride + j];
    if (add)
      dst[r * dstride + j] += v;
    else
      dst[r * dstride + j] = v;
  }
}
static void cuda_copy_rows(float *dst, long dstride, const float *src, long sstride, long rows,
                           long n, bool add) {
  if (rows * n > 0)
    LAUNCH(copy_rows_kernel, ew_blocks(rows * n, EW_THREADS), EW_THREADS, 0, dst, dstride, src,
           sstride, rows, n, add);
}

/* ---------- repeat_interleave ---------- */

/* out (outer, n * reps, inner): output index k along the dim is input index k / reps */
static __global__ void repeat_interleave_kernel(const float *x, float *out, long outer, int n,
                                                int reps, long inner) {
  const long nr = (long)n * reps, total = outer * nr * inner;
  for (long t = first_index(); t < total; t += grid_stride()) {
    long q = t / inner, i = t - q * inner, o = q / nr, k = q - o * nr;
    out[t] = x[(o * n + k / reps) * inner + i];
  }
}
static void cuda_repeat_interleave(const float *x, float *out, long outer, int n, int reps,
                                   long inner) {
  long total = outer * n * reps * inner;
  if (total > 0)
    LAUNCH(repeat_interleave_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, x, out, outer,
           n, reps, inner);
}

/* dx (outer, n, inner) += the sum of its reps output gradients, added one by one in the CPU's
 * order: one thread per element of dx */
static __global__ void repeat_interleave_grad_kernel(float *dx, const float *g, long outer, int n,
                                                     int reps, long inner) {
  const long total = outer * n * inner;
  for (long t = first_index(); t < total; t += grid_stride()) {
    long q = t / inner, i = t - q * inner; /* q = o * n + k */
    const float *gq = g + q * reps * inner + i;
    float v = dx[t];
    for (int r = 0; r < reps; r++) v += gq[(long)r * inner];
    dx[t] = v;
  }
}
static void cuda_repeat_interleave_grad(float *dx, const float *g, long outer, int n, int reps,
                                        long inner) {
  long total = outer * n * inner;
  if (total > 0 && reps > 0)
    LAUNCH(repeat_interleave_grad_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, dx, g,
           outer, n, reps, inner);
}

/* ---------- patchify ---------- */

/* images (B, C, H, W) <-> patches (B, gh * gw, C * p * p): patch (ph, pw) of image b is row
 * b * gh * gw + ph * gw + pw, its feature c * p * p + i * p + j is pixel (c, ph * p + i,
 * pw * p + j). One thread per patch element; backward adds it back to its pixel (patches do
 * not overlap: one thread a pixel). */
typedef struct {
  int B, C, H, W;
} ImageShape;

static __global__ void patchify_kernel(float *img, float *patches, ImageShape s, int p,
                                       bool backward) {
  const int gh = s.H / p, gw = s.W / p;
  const long total = (long)s.B * gh * gw * s.C * p * p;
  for (long t = first_index(); t < total; t += grid_stride()) {
    long q = t;
    int j = (int)(q % p);
    q /= p;
    int i = (int)(q % p);
    q /= p;
    int c = (int)(q % s.C);
    q /= s.C;
    int pw = (int)(q % gw);
    q /= gw;
    int ph = (int)(q % gh);
    long b = q / gh;
    float *px = img + ((b * s.C + c) * s.H + (long)ph * p + i) * s.W + (long)pw * p + j;
    if (backward)
      *px += patches[t];
    else
      patches[t] = *px;
  }
}
static void cuda_patchify(float *img, float *patches, const int *shape, int p, bool backward) {
  ImageShape s = {shape[0], shape[1], shape[2], shape[3]};
  if (p < 1) return;
  long total = (long)s.B * (s.H / p) * (s.W / p) * s.C * p * p;
  if (total > 0)
    LAUNCH(patchify_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, img, patches, s, p,
           backward);
}

/* ---------- index tensors as ints ---------- */

/* out[i] = min((int)x[i], max): labels, ids and valid lengths (checked by the front) as the int
 * arrays the kernels take, converted here so that no int array is sent from the host. */
static __global__ void index_ints_kernel(const float *x, int *out, long n, int max) {
  for (long i = first_index(); i < n; i += grid_stride()) {
    float v = x[i];
    out[i] = v > (float)max ? max : (int)v;
  }
}
static void cuda_index_ints(const float *x, int *out, long n, int max) {
  if (n > 0) LAUNCH(index_ints_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, x, out, n, max);
}

void cuda_register_shape(Backend *be) {
  be->index_ints = cuda_index_ints;
  be->permute = cuda_permute;
  be->copy_rows = cuda_copy_rows;
  be->repeat_interleave = cuda_repeat_interleave;
  be->repeat_interleave_grad = cuda_repeat_interleave_grad;
  be->patchify = cuda_patchify;
}
