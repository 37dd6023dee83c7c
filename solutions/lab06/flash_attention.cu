/* Exercise 6.8 — fused attention, FlashAttention-style (8 points): the capstone of the kernel
 * track. Reference solution; the stub (labs/lab06/flash_attention.cu) says what to write. */
#include "lab06/lab06_kernels.h"

#include "../../cuda/al_cuda.h"

/* TILE queries a block (one per thread: one warp) and TILE keys a step; heads up to MAX_HEAD
 * floats keep the four shared arrays at 33 KB, under the 48 KB a block gets by default. */
enum { TILE = 32, MAX_HEAD = 64 };

/* One block per tile of TILE queries of one batch entry. Thread i owns query i0 + i: its row of
 * Q (copied to shared memory), its running max m, its sum l of exp(s - m) and its weighted sum
 * of V rows, acc (a row of shared memory). Each step, the block loads TILE rows of K and V into
 * shared memory together (coalesced), then every thread scores its query against them. */
static __global__ void flash_attention_kernel(const float *Q, const float *K, const float *V,
                                              const int *valid_lens, long rows_per_len,
                                              float *O, int batch, int queries, int keys, int d,
                                              int dv, float scale) {
  extern __shared__ float sh[]; /* the launch's shared_bytes */
  float *q_tile = sh;                        /* (TILE, d + 1): padded, see below */
  float *acc = q_tile + TILE * (d + 1);      /* (TILE, dv + 1) */
  float *k_tile = acc + TILE * (dv + 1);     /* (TILE, d) */
  float *v_tile = k_tile + TILE * d;         /* (TILE, dv) */
  const int i = threadIdx.x, tiles = (queries + TILE - 1) / TILE;
  for (long tile = blockIdx.x; tile < (long)batch * tiles; tile += gridDim.x) {
    const int b = (int)(tile / tiles), i0 = (int)(tile % tiles) * TILE;
    const int nq = queries - i0 < TILE ? queries - i0 : TILE;
    const long first = (long)b * queries + i0; /* the tile's first row of Q and O */
    /* the keys query i may see: its valid length, none for a thread past the last query */
    const int my_keys = i >= nq ? 0 : valid_lens ? valid_lens[(first + i) / rows_per_len] : keys;
    /* the tile's queries, read together: consecutive threads, consecutive floats. Row r sits
     * at r * (d + 1): thread i then reads q_tile[i * (d + 1) + c], 32 threads in 32 banks
     * (without the pad, d = 32 would put all 32 in one bank) */
    for (int e = i; e < nq * d; e += TILE) q_tile[(e / d) * (d + 1) + e % d] = Q[first * d + e];
    for (int c = 0; c < dv; c++) acc[i * (dv + 1) + c] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    for (int j0 = 0; j0 < keys; j0 += TILE) { /* the same trips for every thread: barriers */
      const int nk = keys - j0 < TILE ? keys - j0 : TILE;
      __syncthreads(); /* q_tile is written; nobody still reads the previous K and V tiles */
      for (int e = i; e < nk * d; e += TILE) k_tile[e] = K[((long)b * keys + j0) * d + e];
      for (int e = i; e < nk * dv; e += TILE) v_tile[e] = V[((long)b * keys + j0) * dv + e];
      __syncthreads(); /* the tiles are loaded */
      for (int j = 0; j < nk && j0 + j < my_keys; j++) {
        float s = 0.0f;
        for (int c = 0; c < d; c++) s += q_tile[i * (d + 1) + c] * k_tile[j * d + c];
        s *= scale;
        /* online softmax: a larger max rescales what was summed so far */
        const float m_new = fmaxf(m, s), corr = expf(m - m_new), p = expf(s - m_new);
        l = l * corr + p;
        for (int c = 0; c < dv; c++)
          acc[i * (dv + 1) + c] = acc[i * (dv + 1) + c] * corr + p * v_tile[j * dv + c];
        m = m_new;
      }
    }
    const float inv = l > 0.0f ? 1.0f / l : 0.0f; /* no valid key: a row of zeros */
    for (int c = 0; c < dv; c++) acc[i * (dv + 1) + c] *= inv;
    __syncthreads(); /* every row of acc is final */
    for (int e = i; e < nq * dv; e += TILE) O[first * dv + e] = acc[(e / dv) * (dv + 1) + e % dv];
    __syncthreads(); /* the next tile overwrites q_tile and acc */
  }
}

int flash_attention_cuda(const float *Q, const float *K, const float *V, const int *valid_lens,
                         long rows_per_len, float *O, int batch, int queries, int keys, int d,
                         int dv, float scale) {
  const long tiles = (long)batch * ((queries + TILE - 1) / TILE);
  if (tiles == 0) return 0;
  const size_t shared = sizeof(float) * (size_t)(TILE * (d + 1) + TILE * (dv + 1) + TILE * d +
                                                 TILE * dv);
  flash_attention_kernel<<<cap_grid(tiles, 65535), TILE, shared>>>(
      Q, K, V, valid_lens, rows_per_len, O, batch, queries, keys, d, dv, scale);
  return 0;
}
