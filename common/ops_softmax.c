/* ops_softmax.c — softmax, log-softmax, masked softmax, sequence masking, and the two losses.
 *
 * All softmaxes work on rows: the last dim is the row, every leading dim is flattened into the
 * row count. Each row subtracts its max before exponentiating, so large logits never overflow.
 * Masking uses -inf semantics: a masked key contributes exp(-inf) = 0, and a row with nothing
 * left to attend to (valid length 0, or every kept score -inf) is all zeros, never NaN and never
 * the uniform row d2l's -1e6 trick would give.
 *
 * Every error check (shapes, labels, valid lengths) runs before the OpenMP loops: tensor_error
 * may longjmp, which must never happen inside a parallel region.
 */
#include <math.h>
#include <string.h>

#include "fastmath.h"
#include "ops.h"

/* Rows are spread over threads only when there is enough work to pay for the fork. */
#define PAR_MIN_ELEMS 32768

static void need_cpu(const char *op, const char *what, const Tensor *t) {
  if (!t) tensor_error(op, "%s is NULL (did an unfinished exercise return NULL?)", what);
  if (t->device != DEV_CPU)
    tensor_error(op, "%s is on the GPU but this op has no CUDA kernel in this build; "
                 "move it to the CPU first", what);
}

static int last_dim(const Tensor *t) { return t->shape[t->ndim - 1]; }
static long num_rows(const Tensor *t) { return shape_numel(t->ndim - 1, t->shape); }

/* ---------- row kernels ---------- */
/* Written so GCC vectorizes them without -ffast-math: the exponential is a branch-free
 * polynomial instead of a call to expf, and reductions keep LANES independent partial results
 * (a fixed summation order, so results are deterministic). */

#define LANES 8

/* exp(x) for x <= 0, the only range a max-shifted softmax needs: fast_expf (within 1e-7
 * relative over [-87, 0]), with -inf and everything below -87 (exp < 2^-125) giving exactly 0;
 * NaN stays NaN. */
static inline float exp_le0(float x) { return fm_select(x < -87.0f, 0.0f, fast_expf(x)); }

/* The max of x[0..n), -inf when n == 0. A NaN is skipped here but poisons the sum later. */
static float row_max(const float *x, int n) {
  float acc[LANES], m = -INFINITY;
  for (int k = 0; k < LANES; k++) acc[k] = -INFINITY;
  int j = 0;
  for (; j + LANES <= n; j += LANES)
    for (int k = 0; k < LANES; k++) acc[k] = x[j + k] > acc[k] ? x[j + k] : acc[k];
  for (; j < n; j++) m = x[j] > m ? x[j] : m;
  for (int k = 0; k < LANES; k++) m = acc[k] > m ? acc[k] : m;
  return m;
}

/* sum of a[j] * b[j] (b == NULL: of a[j]). */
static float row_dot(const float *a, const float *b, int n) {
  float acc[LANES] = {0}, s = 0;
  int j = 0;
  if (b) {
    for (; j + LANES <= n; j += LANES)
      for (int k = 0; k < LANES; k++) acc[k] += a[j + k] * b[j + k];
    for (; j < n; j++) s += a[j] * b[j];
  } else {
    for (; j + LANES <= n; j += LANES)
      for (int k = 0; k < LANES; k++) acc[k] += a[j + k];
    for (; j < n; j++) s += a[j];
  }
  for (int k = 0; k < LANES; k++) s += acc[k];
  return s;
}

/* e[j] = exp(x[j] - m) for j < n; returns their sum. Kept out of line: inlined into the
 * cross-entropy's row loop, GCC 12 turned it into fully masked vector code, 30% slower. */
__attribute__((noinline)) static float exp_shifted(const float *x, float m, float *e, int n) {
  for (int j = 0; j < n; j++) e[j] = exp_le0(x[j] - m); /* hot */
  return row_dot(e, NULL, n);
}

/* y[0..n) = softmax(x[0..n)), y[n..keys) = 0. A row whose max is -inf (empty, or all -inf)
 * has no probability mass to spread: it becomes zeros. */
static void softmax_row(const float *x, float *y, int n, int keys) {
  float m = row_max(x, n);
  if (m == -INFINITY) n = 0;
  float inv = 1.0f / exp_shifted(x, m, y, n);
  for (int j = 0; j < n; j++) y[j] *= inv;
  if (keys > n) memset(y + n, 0, sizeof(float) * (size_t)(keys - n));
}

/* Softmax of rows [r0, r1) of x (rows of `keys`) into y, row r keeping its first n_r entries:
 * n_r = lens ? lens->len[r / lens->per] : keys. Short rows (attention over a few keys) would
 * leave every exp in the scalar remainder of a vector loop, so they go in three passes: the
 * max-shifted rows (masked entries -inf), one exp over the whole block, which vectorizes, and
 * the per-row normalization. A row with nothing left (max -inf) sums to 0 and stays all 0. */
#define SHORT_ROW 16
#define ROW_BLOCK 256 /* rows per block: 16 KB of a short-row block stays in L1 */

typedef struct {
  const int *len;
  long per;
} RowLens;

static void softmax_rows(const float *x, float *y, long r0, long r1, int keys,
                         const RowLens *lens) {
  if (keys >= SHORT_ROW) {
    for (long r = r0; r < r1; r++)
      softmax_row(x + r * keys, y + r * keys, lens ? lens->len[r / lens->per] : keys, keys);
    return;
  }
  for (long r = r0; r < r1; r++) {
    const float *xr = x + r * keys;
    float *yr = y + r * keys;
    int n = lens ? lens->len[r / lens->per] : keys;
    float m = row_max(xr, n);
    if (m == -INFINITY) n = 0; /* nothing to attend to (-inf - -inf would be NaN) */
    for (int j = 0; j < keys; j++) yr[j] = fm_select(j < n, xr[j] - m, -INFINITY);
  }
  float *yb = y + r0 * keys;
  const long cnt = (r1 - r0) * keys;
  for (long i = 0; i < cnt; i++) yb[i] = exp_le0(yb[i]); /* hot */
  for (long r = r0; r < r1; r++) {
    float *yr = y + r * keys;
    float sum = row_dot(yr, NULL, keys);
    if (sum > 0) {
      float inv = 1.0f / sum;
      for (int j = 0; j < keys; j++) yr[j] *= inv;
    }
  }
}

/* Softmax over every row of X, blocks of rows split over threads when there is enough work. */
static void softmax_all(const Tensor *X, Tensor *out, const RowLens *lens) {
  int keys = last_dim(X);
  long rows = num_rows(X);
  long nblk = (rows + ROW_BLOCK - 1) / ROW_BLOCK;
#pragma omp parallel for schedule(static) if (X->size >= PAR_MIN_ELEMS)
  for (long b = 0; b < nblk; b++) {
    long r0 = b * ROW_BLOCK, r1 = r0 + ROW_BLOCK < rows ? r0 + ROW_BLOCK : rows;
    softmax_rows(X->data, out->data, r0, r1, keys, lens);
  }
}

/* dx += y * (g - <g, y>): the softmax Jacobian-vector product. Masked entries have y = 0, so
 * the same formula serves the masked softmax and sends them no gradient. */
static void softmax_backward(Tensor *out) {
  Tensor *x = out->in[0];
  const float *y = out->data, *g = out->grad;
  bool fresh; /* nothing reached x yet: store instead of add */
  float *dx = tensor_grad_fresh(x, &fresh);
  int keys = last_dim(out);
  long rows = num_rows(out);
#pragma omp parallel for schedule(static) if (out->size >= PAR_MIN_ELEMS)
  for (long r = 0; r < rows; r++) {
    const float *yr = y + r * keys, *gr = g + r * keys;
    float *dr = dx + r * keys;
    float dot = row_dot(gr, yr, keys);
    if (fresh)
      for (int j = 0; j < keys; j++) dr[j] = yr[j] * (gr[j] - dot);
    else
      for (int j = 0; j < keys; j++) dr[j] += yr[j] * (gr[j] - dot);
  }
}

Tensor *t_softmax(Tensor *x) {
  need_cpu("t_softmax", "x", x);
  Tensor *out = tensor_new(x->ndim, x->shape);
  out->name = "softmax";
  softmax_all(x, out, NULL);
  if (ag_needs_grad(x, NULL, NULL)) ag_record(out, softmax_backward, x, NULL, NULL);
  return out;
}

/* ---------- log-softmax ---------- */

/* y = log softmax(x) gives dx = g - softmax(x) * sum(g), with softmax(x) = exp(y). */
static void log_softmax_backward(Tensor *out) {
  Tensor *x = out->in[0];
  const float *y = out->data, *g = out->grad;
  bool fresh;
  float *dx = tensor_grad_fresh(x, &fresh);
  int n = last_dim(out);
  long rows = num_rows(out);
#pragma omp parallel for schedule(static) if (out->size >= PAR_MIN_ELEMS)
  for (long r = 0; r < rows; r++) {
    const float *yr = y + r * n, *gr = g + r * n;
    float *dr = dx + r * n;
    float gs = row_dot(gr, NULL, n);
    if (fresh)
      for (int j = 0; j < n; j++) dr[j] = gr[j] - exp_le0(yr[j]) * gs; /* y <= 0 */
    else
      for (int j = 0; j < n; j++) dr[j] += gr[j] - exp_le0(yr[j]) * gs;
  }
}

Tensor *t_log_softmax(Tensor *x) {
  need_cpu("t_log_softmax", "x", x);
  Tensor *out = tensor_new(x->ndim, x->shape);
  out->name = "log_softmax";
  int n = last_dim(x);
  long rows = num_rows(x);
#pragma omp parallel for schedule(static) if (x->size >= PAR_MIN_ELEMS)
  for (long r = 0; r < rows; r++) {
    const float *xr = x->data + r * n;
    float *yr = out->data + r * n;
    float m = row_max(xr, n);
    if (m == -INFINITY) { /* log of a zero row: every entry is log 0 */
      for (int j = 0; j < n; j++) yr[j] = -INFINITY;
      continue;
    }
    float lse = m + logf(exp_shifted(xr, m, yr, n)); /* yr holds the exponentials for now */
    for (int j = 0; j < n; j++) yr[j] = xr[j] - lse;
  }
  if (ag_needs_grad(x, NULL, NULL)) ag_record(out, log_softmax_backward, x, NULL, NULL);
  return out;
}

/* ---------- valid lengths ---------- */

/* The valid lengths of X's rows: row r (of X viewed as (rows, keys)) keeps keys j < len[r/per].
 * A (d0) tensor gives one length per index of dim 0, a (d0, d1) tensor one per (dim 0, dim 1)
 * pair; both reduce to "one length per run of `per` consecutive rows" in row-major order.
 * Lengths must be whole numbers >= 0; a length beyond the number of keys is clamped to it
 * (it masks nothing), matching d2l's `arange(maxlen) < valid_len` test. */
typedef struct {
  int *len; /* arena, one per entry of valid_lens */
  long per; /* rows sharing one length */
} Lens;

static Lens resolve_lens(const char *op, const Tensor *X, const Tensor *valid_lens) {
  char sx[64], sl[64];
  need_cpu(op, "valid_lens", valid_lens);
  shape_str(X, sx, sizeof sx);
  shape_str(valid_lens, sl, sizeof sl);
  if (X->ndim < 2)
    tensor_error(op, "X %s needs a batch dim before the keys to be masked by valid_lens %s", sx,
                 sl);
  bool ok = valid_lens->shape[0] == X->shape[0] &&
            (valid_lens->ndim == 1 ||
             (valid_lens->ndim == 2 && X->ndim >= 3 && valid_lens->shape[1] == X->shape[1]));
  if (!ok) {
    if (X->ndim >= 3)
      tensor_error(op, "valid_lens has shape %s but X is %s: expected (%d) (one length per batch "
                   "row) or (%d, %d) (one per batch row and query)", sl, sx, X->shape[0],
                   X->shape[0], X->shape[1]);
    tensor_error(op, "valid_lens has shape %s but X is %s: expected (%d), one length per row", sl,
                 sx, X->shape[0]);
  }
  int keys = last_dim(X);
  long nl = valid_lens->size;
  Lens L = {arena_alloc(sizeof(int) * (size_t)(nl ? nl : 1)), nl ? num_rows(X) / nl : 1};
  for (long i = 0; i < nl; i++) {
    float v = valid_lens->data[i];
    if (!(v >= 0) || v != floorf(v))
      tensor_error(op, "valid_lens[%ld] = %g: a valid length is a whole number >= 0", i, (double)v);
    L.len[i] = v > (float)keys ? keys : (int)v;
  }
  return L;
}

/* ---------- masked softmax ---------- */

Tensor *t_masked_softmax(Tensor *X, Tensor *valid_lens) {
  if (!valid_lens) return t_softmax(X);
  need_cpu("t_masked_softmax", "X", X);
  Lens L = resolve_lens("t_masked_softmax", X, valid_lens);
  Tensor *out = tensor_new(X->ndim, X->shape);
  out->name = "masked_softmax";
  softmax_all(X, out, &(RowLens){L.len, L.per});
  if (ag_needs_grad(X, NULL, NULL)) ag_record(out, softmax_backward, X, NULL, NULL);
  return out;
}

/* ---------- sequence mask ---------- */

/* dst = src (rows x keys), then each row's entries from its valid length on set to v. Rows are
 * short (a few keys): one copy of the whole block and short fills beat a copy per row. */
static void copy_then_fill(float *restrict dst, const float *restrict src, const Lens *L,
                           long rows, int keys, float v) {
  memcpy(dst, src, sizeof(float) * (size_t)rows * (size_t)keys);
  for (long r = 0; r < rows; r++)
    for (int j = L->len[r / L->per]; j < keys; j++) dst[r * keys + j] = v;
}

static void sequence_mask_backward(Tensor *out) {
  Tensor *x = out->in[0];
  const Lens *L = out->aux;
  const float *g = out->grad;
  bool fresh; /* fresh: store the kept entries' gradient and zeros for the masked ones */
  float *dx = tensor_grad_fresh(x, &fresh);
  int keys = last_dim(out);
  long rows = num_rows(out);
  if (fresh) {
    copy_then_fill(dx, g, L, rows, keys, 0.0f);
    return;
  }
  for (long r = 0; r < rows; r++) {
    int n = L->len[r / L->per];
    for (int j = 0; j < n; j++) dx[r * keys + j] += g[r * keys + j];
  }
}

Tensor *t_sequence_mask(Tensor *X, Tensor *valid_lens, float value) {
  need_cpu("t_sequence_mask", "X", X);
  if (!valid_lens) return t_copy(X);
  Lens L = resolve_lens("t_sequence_mask", X, valid_lens);
  Tensor *out = tensor_new(X->ndim, X->shape);
  out->name = "sequence_mask";
  copy_then_fill(out->data, X->data, &L, num_rows(X), last_dim(X), value);
  if (ag_needs_grad(X, NULL, NULL)) {
    Lens *saved = arena_alloc(sizeof *saved);
    *saved = L;
    out->aux = saved;
    ag_record(out, sequence_mask_backward, X, NULL, NULL);
  }
  return out;
}

/* ---------- cross-entropy ---------- */

/* What the fused backward needs, per row: the label, w / sum(exp), and the exponentials. */
typedef struct {
  int *label;
  float *w;     /* weight (1 without weights) */
  float *scale; /* w / sum_j exp(x_j - max) */
  float *e;     /* (rows, V): exp(x_j - max) */
} CeSaved;

/* d loss_r / d x_rj = w_r * (softmax_j - [j == label_r]). */
static void cross_entropy_backward(Tensor *out) {
  Tensor *logits = out->in[0];
  const CeSaved *s = out->aux;
  const float *g = out->grad;
  bool fresh; /* fresh: every row is stored, padding rows as zeros */
  float *dx = tensor_grad_fresh(logits, &fresh);
  int V = last_dim(logits);
  long rows = out->size;
#pragma omp parallel for schedule(static) if (logits->size >= PAR_MIN_ELEMS)
  for (long r = 0; r < rows; r++) {
    float *dr = dx + r * V;
    if (s->w[r] == 0) { /* padding: no gradient */
      if (fresh) memset(dr, 0, sizeof(float) * (size_t)V);
      continue;
    }
    const float *er = s->e + r * V;
    float c = g[r] * s->scale[r];
    if (fresh)
      for (int j = 0; j < V; j++) dr[j] = c * er[j];
    else
      for (int j = 0; j < V; j++) dr[j] += c * er[j];
    dr[s->label[r]] -= g[r] * s->w[r];
  }
}

/* labels / weights must have logits' leading dims ((1) when logits is a single row (V)). */
static void check_token_shape(const char *what, const Tensor *t, const Tensor *logits) {
  char st[64], sl[64];
  need_cpu("t_cross_entropy", what, t);
  bool ok = logits->ndim == 1 ? (t->ndim == 1 && t->shape[0] == 1)
                              : (t->ndim == logits->ndim - 1 &&
                                 memcmp(t->shape, logits->shape, sizeof(int) * (size_t)t->ndim) == 0);
  if (!ok)
    tensor_error("t_cross_entropy", "%s has shape %s but logits are %s: %s needs the logits' "
                 "shape without its last (vocabulary) dim", what, shape_str(t, st, sizeof st),
                 shape_str(logits, sl, sizeof sl), what);
}

Tensor *t_cross_entropy(Tensor *logits, Tensor *labels, Tensor *weights) {
  const char *op = "t_cross_entropy";
  need_cpu(op, "logits", logits);
  check_token_shape("labels", labels, logits);
  if (weights) check_token_shape("weights", weights, logits);
  int V = last_dim(logits);
  long rows = labels->size;

  CeSaved s = {arena_alloc(sizeof(int) * (size_t)(rows ? rows : 1)),
               arena_alloc(sizeof(float) * (size_t)(rows ? rows : 1)),
               arena_alloc(sizeof(float) * (size_t)(rows ? rows : 1)),
               arena_alloc(sizeof(float) * (size_t)(logits->size ? logits->size : 1))};
  for (long r = 0; r < rows; r++) {
    float v = labels->data[r];
    if (!(v >= 0 && v < (float)V && v == floorf(v)))
      tensor_error(op, "labels[%ld] = %g is not a class index in [0, %d) (the logits' last dim)",
                   r, (double)v, V);
    s.label[r] = (int)v;
    s.w[r] = weights ? weights->data[r] : 1.0f;
  }

  Tensor *out = tensor_new(labels->ndim, labels->shape);
  out->name = "cross_entropy";
#pragma omp parallel for schedule(static) if (logits->size >= PAR_MIN_ELEMS)
  for (long r = 0; r < rows; r++) {
    const float *xr = logits->data + r * V;
    if (s.w[r] == 0) { /* padding costs nothing and is exactly 0 */
      out->data[r] = 0;
      continue;
    }
    float m = row_max(xr, V);
    float sum = exp_shifted(xr, m, s.e + r * V, V);
    out->data[r] = (m + logf(sum) - xr[s.label[r]]) * s.w[r];
    s.scale[r] = s.w[r] / sum;
  }
  if (ag_needs_grad(logits, NULL, NULL)) {
    CeSaved *saved = arena_alloc(sizeof *saved);
    *saved = s;
    out->aux = saved;
    ag_record(out, cross_entropy_backward, logits, NULL, NULL);
  }
  return out;
}

/* ---------- mean squared error ---------- */

static void mse_backward(Tensor *out) {
  Tensor *p = out->in[0], *t = out->in[1];
  float c = 2.0f * out->grad[0] / (float)p->size;
  float *dp = p->requires_grad ? tensor_grad(p) : NULL;
  float *dt = t->requires_grad ? tensor_grad(t) : NULL;
  for (long i = 0; i < p->size; i++) {
    float d = c * (p->data[i] - t->data[i]);
    if (dp) dp[i] += d;
    if (dt) dt[i] -= d;
  }
}

Tensor *t_mse(Tensor *pred, Tensor *target) {
  need_cpu("t_mse", "pred", pred);
  need_cpu("t_mse", "target", target);
  if (!tensor_same_shape(pred, target)) {
    char a[64], b[64];
    tensor_error("t_mse", "pred %s and target %s must have the same shape (no broadcasting)",
                 shape_str(pred, a, sizeof a), shape_str(target, b, sizeof b));
  }
  double s = 0;
  for (long i = 0; i < pred->size; i++) {
    double d = (double)pred->data[i] - target->data[i];
    s += d * d;
  }
  Tensor *out = tensor_new(1, (int[]){1});
  out->name = "mse";
  out->data[0] = (float)(s / (double)pred->size);
  if (ag_needs_grad(pred, target, NULL)) ag_record(out, mse_backward, pred, target, NULL);
  return out;
}
