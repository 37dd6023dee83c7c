/* Exercise 6.8 — fused attention, FlashAttention-style (8 points): the capstone of the kernel
 * track. One kernel computes d2l's DotProductAttention (without its dropout):
 *     O[b, i] = sum_j softmax_j(scale * Q[b, i] . K[b, j]) V[b, j]
 * over the keys j < valid_lens[(b * queries + i) / rows_per_len] (valid_lens NULL: all keys),
 * a row with no valid key all zeros — and never stores the (queries x keys) scores.
 *
 * What: write flash_attention_cuda (declared in labs/lab06/lab06_kernels.h). Q (batch, queries,
 *   d), K (batch, keys, d), V (batch, keys, dv), O (batch, queries, dv): device memory,
 *   row-major. d, dv <= 64. Return 0 once launched; the stub returns -1.
 * How (chapters/06_transformer/lab06.c, "Attention in one kernel", says why):
 *   - ONE BLOCK PER TILE OF 32 QUERIES of one batch entry, ONE THREAD PER QUERY (32 threads: one
 *     warp); a grid-stride loop over the tiles, tile = b * ceil(queries / 32) + query tile.
 *   - Shared memory (dynamic: extern __shared__ float sh[]; sized by the launch) for the tile's Q
 *     rows, each thread's output accumulator acc, and one tile of 32 rows of K and of V.
 *     Pad the per-thread rows (Q and acc) to d + 1 and dv + 1 floats: thread i then reads
 *     row i's element c in bank (i * (d + 1) + c) % 32, all different — unpadded with d = 32,
 *     all 32 threads would hit one bank (the grade prints the bank conflicts).
 *   - Load Q's tile and each K/V tile cooperatively: thread t copies elements t, t + 32, ...
 *     so consecutive threads read consecutive floats (coalesced). __syncthreads() before a tile
 *     is overwritten and after it is loaded; every thread must reach every barrier (loop over
 *     the key tiles the same number of times in every thread; mask inside).
 *   - The ONLINE SOFTMAX: each thread keeps m (the largest score so far, start -INFINITY),
 *     l (sum of exp(s - m)) and acc (sum of exp(s - m) V rows). For each valid key:
 *       m_new = max(m, s);  corr = exp(m - m_new);  p = exp(s - m_new)
 *       l = l * corr + p;   acc = acc * corr + p * V[j];   m = m_new
 *     At the end O = acc / l (zeros when l = 0: no valid key). The result equals the softmax
 *     of the whole row, but K and V are read once per tile of queries, not once per query.
 *   - The launch: kernel<<<cap_grid(tiles, 65535), 32, shared_bytes>>>(...): blocks of 32
 *     threads, the bytes of dynamic shared memory third. A block may hold 48 KB of shared
 *     memory in all (static and dynamic): a GPU refuses a launch that asks for more.
 * Tests: tests/grade/lab06/test_flash_attention.c.
 * Check: make grade LAB=06 runs it in the CUDA emulator with its sanitizers (a race, a missing
 *   barrier, a read past K's end score 0, the report shown), at the lab's shapes and uneven
 *   ones (1, 31, 33, 97 queries; a 0 length; the causal lengths); 2 of the points need your
 *   kernel's global loads within 2x of the reference's (K and V read once per query tile).
 *   make lab06-emu && build/emu-bin/lab06 --device cuda compares your kernel with the composed
 *   attention on a batch of the lab. On a GPU: make lab06 && ./lab06 --device cuda.
 * Until it returns 0, --device cuda uses the kit's own kernel for the fused attention.
 */
#include "lab06/lab06_kernels.h"

#include "../../common/exercise.h"
#include "../../cuda/al_cuda.h"

int flash_attention_cuda(const float *Q, const float *K, const float *V, const int *valid_lens,
                         long rows_per_len, float *O, int batch, int queries, int keys, int d,
                         int dv, float scale) {
  (void)Q, (void)K, (void)V, (void)valid_lens, (void)rows_per_len, (void)O, (void)batch;
  (void)queries, (void)keys, (void)d, (void)dv, (void)scale;
  EXERCISE_TODO("6.8", "flash_attention_cuda");
  return -1;
}
