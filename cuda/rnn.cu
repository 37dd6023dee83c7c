/* rnn.cu — lab 03's fused GRU/LSTM step on the GPU (CPU twin: common/cpu/cpu_rnn.c; front:
 * chapters/03_bahdanau/rnn_cell.c; tests: tests/cuda/cases_rnn.c).
 *
 * GRU (PyTorch's form, gates [r | z | n]):
 *   r = sigma(gx_r + gh_r), z = sigma(gx_z + gh_z), n = tanh(gx_n + r * gh_n),
 *   h' = (1 - z) * n + z * h,           gh = h @ W_hh + b_hh.
 * LSTM (gates [i | f | g | o]): a = gx + h @ W_hh + b_hh,
 *   i, f, o = sigma(a_i, a_f, a_o), g = tanh(a_g), c' = f * c + i * g, h' = o * tanh(c').
 *
 * Forward: gh = Hp @ W_hh (B, G) through cuBLAS into act, then one gate kernel with a thread per
 * hidden unit (b, j): it reads the unit's 3 or 4 gate pre-activations (act[b, gate * H + j]),
 * overwrites them with the activations and writes h' (and c'). Consecutive threads take
 * consecutive j, so every gate row is read and written coalesced.
 * Backward: a gate-gradient kernel, again a thread per (b, j), writes dgh (B, G) and adds the
 * unit's own gradients (dgx, dC, the GRU's direct path z * dh into dH); then cuBLAS for
 * dH += dgh @ W_hh^T and dW_hh += Hp^T @ dgh, and a column-sum kernel for db_hh (a thread per
 * column, summing the B rows in order: no atomics). All plain kernels, one thread per output.
 */

#include "kernels.cuh"

/* ---------- row-major products through cuBLAS ---------- */

/* A row-major product through the kit's one cuBLAS wrapper (matmul.cu). */
static void gemm_rm(bool transA, bool transB, int m, int n, int k, float alpha, const float *A,
                    int lda, const float *B, int ldb, float beta, float *C, int ldc) {
  cuda_blas_product("rnn_cell", transA, transB, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C,
                    ldc, 0, 1);
}

static __device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/* ---------- forward ---------- */

/* gx, act (B, G) with act = Hp @ W_hh on entry; b_hh (G) or NULL; Hp, extra (B, H);
 * Cp (B, H) for the LSTM; out (B, H) for the GRU, (B, 2H) = [h' | c'] for the LSTM */
static __global__ void rnn_cell_kernel(CellKind kind, const float *gx, const float *Hp,
                                       const float *Cp, const float *b_hh, float *act,
                                       float *extra, float *out, int B, int H) {
  const long n = (long)B * H;
  const int G = (kind == CELL_GRU ? 3 : 4) * H;
  for (long u = first_index(); u < n; u += grid_stride()) {
    long b = u / H, j = u - b * H;
    float *a = act + b * G + j; /* gate k of this unit at a[k * H] */
    const float *x = gx + b * G + j, *bh = b_hh ? b_hh + j : NULL;
    float a0 = a[0], a1 = a[H], a2 = a[2 * H];
    if (bh) {
      a0 += bh[0];
      a1 += bh[H];
      a2 += bh[2 * H];
    }
    if (kind == CELL_GRU) {
      float r = sigmoid(x[0] + a0), z = sigmoid(x[H] + a1);
      float nn = tanhf(x[2 * H] + r * a2); /* a2 = gh_n, b_hh included */
      a[0] = r;
      a[H] = z;
      a[2 * H] = nn;
      extra[u] = a2;
      out[u] = (1.0f - z) * nn + z * Hp[u];
    } else {
      float a3 = a[3 * H] + (bh ? bh[3 * H] : 0.0f);
      float i = sigmoid(a0 + x[0]), f = sigmoid(a1 + x[H]);
      float g = tanhf(a2 + x[2 * H]), o = sigmoid(a3 + x[3 * H]);
      a[0] = i;
      a[H] = f;
      a[2 * H] = g;
      a[3 * H] = o;
      float cn = f * Cp[u] + i * g, tc = tanhf(cn);
      float *h = out + b * 2 * H + j;
      h[0] = o * tc;
      h[H] = cn; /* c' */
      extra[u] = tc;
    }
  }
}

static void cuda_rnn_cell(CellKind kind, const float *gx, const float *Hp, const float *Cp,
                          const float *W_hh, const float *b_hh, float *act, float *extra,
                          float *out, int B, int H) {
  const int G = (kind == CELL_GRU ? 3 : 4) * H;
  long n = (long)B * H;
  if (n <= 0) return;
  /* act (B, G) = Hp (B, H) @ W_hh (H, G); no W_hh: Hp is the zero state, act = 0 */
  if (W_hh)
    gemm_rm(false, false, B, G, H, 1.0f, Hp, H, W_hh, G, 0.0f, act, G);
  else
    CUDA_CHECK(cudaMemsetAsync(act, 0, sizeof(float) * (size_t)B * (size_t)G, cuda_stream()));
  LAUNCH(rnn_cell_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, kind, gx, Hp, Cp, b_hh, act,
         extra, out, B, H);
}

/* ---------- backward ---------- */

/* Per unit (b, j): dgh (B, G) = d(loss)/d(gh) (stored), and adds into dgx (B, G), dC (B, H) and,
 * for the GRU, the direct path dH += dh * z; each pointer but dgh may be NULL. dout (B, H) for
 * the GRU, (B, 2H) = [dh' | dc'] for the LSTM. */
static __global__ void rnn_cell_grad_kernel(CellKind kind, const float *dout, const float *act,
                                            const float *extra, const float *Cp, float *dgh,
                                            float *dgx, float *dC, float *dH, const float *Hp,
                                            int B, int H) {
  const long n = (long)B * H;
  const int G = (kind == CELL_GRU ? 3 : 4) * H;
  for (long u = first_index(); u < n; u += grid_stride()) {
    long b = u / H, j = u - b * H, gate0 = b * G + j; /* gate k at gate0 + k * H */
    const float *a = act + gate0;
    float *dg = dgh + gate0;
    if (kind == CELL_GRU) {
      float dh = dout[u], r = a[0], z = a[H], nn = a[2 * H];
      float dn = dh * (1.0f - z), dz = dh * (Hp[u] - nn);
      float dan = dn * (1.0f - nn * nn);
      float dar = dan * extra[u] * r * (1.0f - r), daz = dz * z * (1.0f - z);
      dg[0] = dar;
      dg[H] = daz;
      dg[2 * H] = dan * r; /* gh_n enters as r * gh_n */
      if (dgx) { /* gx_n enters n directly: dan, not dan * r */
        float *x = dgx + gate0;
        x[0] += dar;
        x[H] += daz;
        x[2 * H] += dan;
      }
      if (dH) dH[u] += dh * z; /* h' = ... + z * h; the product adds dgh @ W_hh^T later */
    } else {
      const float *d = dout + b * 2 * H + j; /* dh' at d[0], dc' at d[H] */
      float i = a[0], f = a[H], g = a[2 * H], o = a[3 * H], tc = extra[u];
      float dc = d[H] + d[0] * o * (1.0f - tc * tc);
      float di = dc * g * i * (1.0f - i), df = dc * Cp[u] * f * (1.0f - f);
      float dgg = dc * i * (1.0f - g * g), d_o = d[0] * tc * o * (1.0f - o);
      dg[0] = di;
      dg[H] = df;
      dg[2 * H] = dgg;
      dg[3 * H] = d_o;
      if (dgx) {
        float *x = dgx + gate0;
        x[0] += di;
        x[H] += df;
        x[2 * H] += dgg;
        x[3 * H] += d_o;
      }
      if (dC) dC[u] += dc * f;
    }
  }
}

/* db[j] += sum_b dgh[b, j]: a thread per column j, rows in order */
static __global__ void column_sum_kernel(const float *dgh, float *db, int rows, int cols) {
  for (long j = first_index(); j < cols; j += grid_stride()) {
    float s = 0.0f;
    for (int b = 0; b < rows; b++) s += dgh[(long)b * cols + j];
    db[j] += s;
  }
}

/* act (B, G), extra (B, H): what the forward kept; dgh (B, G): scratch; dgx, dC, dH, dW_hh,
 * db_hh: gradients to add into, NULL when not wanted */
static void cuda_rnn_cell_grad(CellKind kind, const float *dout, const float *act,
                               const float *extra, const float *Hp, const float *Cp,
                               const float *W_hh, float *dgh, float *dgx, float *dC, float *dH,
                               float *dW_hh, float *db_hh, int B, int H) {
  const int G = (kind == CELL_GRU ? 3 : 4) * H;
  long n = (long)B * H;
  if (n <= 0) return;
  LAUNCH(rnn_cell_grad_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, kind, dout, act, extra,
         Cp, dgh, dgx, dC, dH, Hp, B, H);
  /* dH (B, H) += dgh (B, G) @ W_hh^T (G, H) */
  if (dH) gemm_rm(false, true, B, H, G, 1.0f, dgh, G, W_hh, G, 1.0f, dH, H);
  /* dW_hh (H, G) += Hp^T (H, B) @ dgh (B, G) */
  if (dW_hh) gemm_rm(true, false, H, G, B, 1.0f, Hp, H, dgh, G, 1.0f, dW_hh, G);
  if (db_hh)
    LAUNCH(column_sum_kernel, ew_blocks(G, EW_THREADS), EW_THREADS, 0, dgh, db_hh, B, G);
}

void cuda_register_rnn(Backend *be) {
  be->rnn_cell = cuda_rnn_cell;
  be->rnn_cell_grad = cuda_rnn_cell_grad;
}
