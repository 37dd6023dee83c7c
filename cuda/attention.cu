/* attention.cu — scaled dot-product attention in one kernel, FlashAttention-style (CPU twin:
 * common/cpu/cpu_attention.c; front: t_attention_fused, common/ops/attention.c; tests:
 * tests/cuda/cases_attention.c):
 *     O[b, i] = sum_j softmax_j(scale * Q[b, i] . K[b, j]) V[b, j]   over the keys j < len
 * without ever storing the (queries, keys) scores.
 *
 * Grid. A block per tile of ROWS queries of one batch entry; a thread per query of the tile
 * (blocks of ROWS = 32 threads, one warp). The block walks the keys in tiles of COLS: it loads
 * the tile's K and V rows into shared memory once (consecutive threads read consecutive
 * floats: coalesced), and every thread scores its query against all COLS keys from there, so
 * K and V are read from global memory once per query tile, not once per query. The softmax is
 * online: each thread keeps its row's running max m, the sum l of exp(s - m) and the weighted
 * sum acc of V rows; a tile with a larger max rescales l and acc by exp(m_old - m_new) once.
 * At the end O = acc / l (zeros when no key was valid: l = 0).
 * Q's tile comes in through shared memory too (coalesced), and O's goes out the same way. The
 * per-thread rows of Q and acc in shared memory are padded by one float, so the 32 threads
 * reading "their" row's element c hit 32 different banks.
 * Head sizes up to MAX_D: every lab's (8 to 64) fits; a larger one is an error naming it. */
#include "kernels.cuh"

/* MAX_D: the four shared tiles of a 64-float head take 33 KB, under the 48 KB a block gets
 * without opting in */
enum { ROWS = 32, COLS = 32, MAX_D = 64 };

/* Shared floats of a launch: the Q/O tile and acc (ROWS rows, padded), the K and V tiles. */
static size_t attention_shared_bytes(int d, int dv) {
  return sizeof(float) * ((size_t)ROWS * (d + 1) + (size_t)ROWS * (dv + 1) +
                          (size_t)COLS * d + (size_t)COLS * dv);
}

/* Copy a (rows, n) block of a row-major array with row stride n into shared memory at stride
 * n + pad, the block's threads striding the flat index (coalesced reads). */
static __device__ void load_tile(float *dst, int pad, const float *src, int rows, int n) {
  for (int e = threadIdx.x; e < rows * n; e += blockDim.x) dst[(e / n) * (n + pad) + e % n] = src[e];
}

/* One query tile: (b, i0 .. i0 + ROWS). The scores of a key tile live in registers (s[COLS]). */
static __global__ void attention_kernel(const float *Q, const float *K, const float *V,
                                        const int *len, long per, float *O, int B, int Tq,
                                        int Tk, int d, int dv, float scale) {
  SHARED_DYNAMIC(float, sh);
  float *q = sh, *acc = q + ROWS * (d + 1), *k = acc + ROWS * (dv + 1), *v = k + COLS * d;
  const int tiles = (Tq + ROWS - 1) / ROWS, t = threadIdx.x;
  for (long tile = blockIdx.x; tile < (long)B * tiles; tile += gridDim.x) { /* uniform */
    const int b = (int)(tile / tiles), i0 = (int)(tile % tiles) * ROWS;
    const int nq = Tq - i0 < ROWS ? Tq - i0 : ROWS; /* queries in this tile */
    const long row = (long)b * Tq + i0 + t;         /* this thread's query, if t < nq */
    const int keys = t < nq ? (len ? len[row / per] : Tk) : 0;
    int tile_keys = 0; /* keys any query of the tile may see: the loop bound for the block */
    for (int r = 0; r < nq; r++) {
      int kr = len ? len[((long)b * Tq + i0 + r) / per] : Tk;
      tile_keys = kr > tile_keys ? kr : tile_keys;
    }
    load_tile(q, 1, Q + ((long)b * Tq + i0) * d, nq, d);
    for (int c = 0; c < dv; c++) acc[t * (dv + 1) + c] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    for (int j0 = 0; j0 < tile_keys; j0 += COLS) {
      const int nk = tile_keys - j0 < COLS ? tile_keys - j0 : COLS;
      __syncthreads(); /* the previous key tile is no longer read */
      load_tile(k, 0, K + ((long)b * Tk + j0) * d, nk, d);
      load_tile(v, 0, V + ((long)b * Tk + j0) * dv, nk, dv);
      __syncthreads();
      float s[COLS], mt = m;
      const int nj = t < nq ? nk : 0; /* a thread past the last query only keeps the barriers */
#pragma unroll /* constant trip count: s[] stays in registers */
      for (int j = 0; j < COLS; j++) {
        float dot = 0.0f;
        if (j < nj)
          for (int c = 0; c < d; c++) dot += q[t * (d + 1) + c] * k[j * d + c];
        s[j] = j < nj && j0 + j < keys ? scale * dot : -INFINITY;
        mt = fmaxf(mt, s[j]);
      }
      if (mt == -INFINITY) continue; /* nothing valid yet for this query */
      const float corr = expf(m - mt); /* 0 on the first valid tile (m = -inf) */
      l *= corr;
      for (int c = 0; c < dv; c++) acc[t * (dv + 1) + c] *= corr;
#pragma unroll
      for (int j = 0; j < COLS; j++) {
        const float p = expf(s[j] - mt); /* 0 for a masked key, and past the tile's keys */
        l += p;
        if (p != 0.0f)
          for (int c = 0; c < dv; c++) acc[t * (dv + 1) + c] += p * v[j * dv + c];
      }
      m = mt;
    }
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    for (int c = 0; c < dv; c++) acc[t * (dv + 1) + c] *= inv;
    __syncthreads(); /* every row of acc is final */
    float *o = O + ((long)b * Tq + i0) * dv;
    for (int e = t; e < nq * dv; e += blockDim.x) o[e] = acc[(e / dv) * (dv + 1) + e % dv];
    __syncthreads(); /* the next tile overwrites q and acc */
  }
}

static void cuda_attention(const float *Q, const float *K, const float *V, const int *len,
                           long per, float *O, int B, int Tq, int Tk, int d, int dv,
                           float scale) {
  if (d > MAX_D || dv > MAX_D)
    tensor_error("t_attention_fused", "head sizes d=%d, dv=%d on cuda: the fused kernel holds "
                 "at most %d (cuda/attention.cu MAX_D); use the composed attention", d, dv, MAX_D);
  long tiles = (long)B * ((Tq + ROWS - 1) / ROWS);
  if (tiles > 0)
    LAUNCH_SYNC(attention_kernel, cap_grid(tiles, 65535), ROWS, attention_shared_bytes(d, dv), Q,
                K, V, len, per, O, B, Tq, Tk, d, dv, scale);
}

void cuda_register_attention(Backend *be) { be->attention = cuda_attention; }
