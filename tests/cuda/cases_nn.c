/* cases_nn.c — layer norm, batch norm, embedding and dropout (cuda/nn.cu) against the CPU
 * (cpu/cpu_nn.c), through the fronts of ops/nn.c.
 *
 * Shapes: D = 1, 2, 7 (layer norm's thread-per-row kernels), 16, 31, 32, 33, 256 (warp per row),
 * lab06's (64, 10, 32) and the (2, 2) demo; rows below and above 64, so both the plain
 * (thread per column) and the split column sums run for dgamma/dbeta and batch norm. Cases
 * named "dx added" use x twice, so x's gradient already exists when the op's backward runs
 * (the += path; otherwise the fresh, store path). */
#include "cuda_check.h"

#include <stdlib.h>

#include "../../common/rng.h"
#include "../../common/util.h"
#include "lab05/lab05.h"

/* ---------- layer norm ---------- */

/* (rows..., D): the last dim is D */
/* the last three outgrow a grid capped at 2 or 3 blocks (make test's AL_CUDA_EMU_GRID_CAP):
 * 1100 rows for the thread-per-row kernels, 800 columns for the thread-per-column sums, 100
 * columns (4 blocks of 32) for the split column sums */
static const int ln_shapes[][3] = {{1, 3, 1},  {1, 5, 2},   {1, 70, 7},  {1, 33, 31},
                                   {1, 9, 32}, {2, 40, 33}, {1, 4, 256}, {64, 10, 32},
                                   {1, 1, 33},  {1, 66, 16}, {1, 1100, 7}, {1, 3, 800},
                                   {1, 80, 100}};
enum { N_LN = sizeof ln_shapes / sizeof ln_shapes[0] };

static Tensor *ln_case(CcRun *r, bool affine, bool twice) {
  const int *s = ln_shapes[r->variant];
  cc_shape(r, "(%d, %d, %d)%s", s[0], s[1], s[2], affine ? " with gamma, beta" : "");
  Tensor *x = cc_input(r, 3, s, 41, -2, 2, true);
  Tensor *gamma = affine ? cc_input(r, 1, &s[2], 42, 0.5f, 1.5f, true) : NULL;
  Tensor *beta = affine ? cc_input(r, 1, &s[2], 43, -1, 1, true) : NULL;
  Tensor *y = t_layer_norm(x, gamma, beta, 1e-5f);
  return twice ? t_add(y, x) : y;
}
static Tensor *run_ln(CcRun *r) { return ln_case(r, true, false); }
static Tensor *run_ln_plain(CcRun *r) { return ln_case(r, false, false); }
static Tensor *run_ln_twice(CcRun *r) { return ln_case(r, true, true); }

/* ---------- batch norm ---------- */

/* (N..., C): the last dim is C, the features; the leading dims are the batch */
/* the last two outgrow a capped grid: 800 features a thread each, 100 features in blocks of 32 */
static const int bn_shapes[][3] = {{1, 2, 2},  {1, 3, 1},   {1, 33, 31}, {1, 64, 1},
                                   {2, 40, 33}, {64, 10, 32}, {1, 100, 70}, {1, 3, 800},
                                   {1, 80, 100}};
enum { N_BN = sizeof bn_shapes / sizeof bn_shapes[0] };

/* The output is y flattened, then running_mean and running_var as the kernel left them (so the
 * running statistics' update is compared too); only y carries a gradient. */
static Tensor *bn_case(CcRun *r, bool training, bool affine, bool running) {
  const int *s = bn_shapes[r->variant];
  cc_shape(r, "(%d, %d, %d) %s%s", s[0], s[1], s[2], training ? "training" : "eval",
           affine ? ", gamma, beta" : "");
  Tensor *x = cc_input(r, 3, s, 51, -2, 3, true);
  Tensor *gamma = affine ? cc_input(r, 1, &s[2], 52, 0.5f, 1.5f, true) : NULL;
  Tensor *beta = affine ? cc_input(r, 1, &s[2], 53, -1, 1, true) : NULL;
  Tensor *rm = running ? cc_input(r, 1, &s[2], 54, -0.5f, 0.5f, false) : NULL;
  Tensor *rv = running ? cc_input(r, 1, &s[2], 55, 0.5f, 2.0f, false) : NULL;
  Tensor *y = t_batch_norm(x, gamma, beta, rm, rv, training, 0.1f, 1e-5f);
  Tensor *flat = t_reshape(y, 1, (int[]){-1});
  return running ? t_concat((Tensor *[]){flat, rm, rv}, 3, 0) : flat;
}
static Tensor *run_bn_train(CcRun *r) { return bn_case(r, true, true, true); }
static Tensor *run_bn_train_bare(CcRun *r) { return bn_case(r, true, false, false); }
static Tensor *run_bn_eval(CcRun *r) { return bn_case(r, false, true, true); }
static Tensor *run_bn_eval_bare(CcRun *r) { return bn_case(r, false, false, true); }

/* ---------- embedding ---------- */

/* vocab V, dim D, ids (a, b) in [0, V): few rows, many ids, so ids repeat */
static const int emb_shapes[][4] = {{1, 1, 1, 3},  {7, 31, 5, 13}, {3, 33, 1, 40},
                                    {50, 32, 64, 10}, {11, 1, 2, 17}};
enum { N_EMB = sizeof emb_shapes / sizeof emb_shapes[0] };

static Tensor *run_embedding(CcRun *r) {
  const int *s = emb_shapes[r->variant];
  cc_shape(r, "W (%d, %d), ids (%d, %d)", s[0], s[1], s[2], s[3]);
  Tensor *W = cc_input(r, 2, s, 61, -1, 1, true);
  Tensor *ids = cc_ints(r, 2, s + 2, 62, 0, s[0] - 1);
  return t_embedding(W, ids);
}

/* ---------- dropout ---------- */

static const int drop_sizes[] = {1, 31, 33, 997, 64 * 10 * 32};
enum { N_DROP = sizeof drop_sizes / sizeof drop_sizes[0] };

/* The mask comes from one draw of g_rng (ops/nn.c): reseed it, so both devices draw the same
 * seed, and put the generator back afterwards. */
static Tensor *dropout_case(CcRun *r, float p, bool training, bool twice) {
  int n = drop_sizes[r->variant];
  cc_shape(r, "(%d), p = %g%s", n, (double)p, training ? "" : ", eval");
  Tensor *x = cc_input(r, 1, &n, 71, -2, 2, true);
  Rng saved = g_rng;
  rng_seed(1234u + (unsigned)r->variant);
  Tensor *y = t_dropout(x, p, training);
  g_rng = saved;
  return twice ? t_add(y, x) : y;
}
static Tensor *run_dropout_01(CcRun *r) { return dropout_case(r, 0.1f, true, false); }
static Tensor *run_dropout_05(CcRun *r) { return dropout_case(r, 0.5f, true, false); }
static Tensor *run_dropout_twice(CcRun *r) { return dropout_case(r, 0.5f, true, true); }
static Tensor *run_dropout_eval(CcRun *r) { return dropout_case(r, 0.5f, false, false); }

/* ---------- positional encoding (lab 05; the kernel is exercise 5.2's, cuda/exercises.cu) ---------- */

/* (max_len, d, offset, steps): rows [offset, offset + steps) of a (max_len, d) table; odd d; the
 * last two outgrow a grid capped at 2 blocks of 256 (steps * d > 512) */
static const int pe_shapes[][4] = {{1, 1, 0, 1},      {10, 7, 3, 5},     {40, 31, 9, 31},
                                   {100, 33, 99, 1},  {1000, 32, 0, 100}, {1000, 257, 900, 100}};
enum { N_PE = sizeof pe_shapes / sizeof pe_shapes[0] };

/* x (2, steps, d) + the rows, as PositionalEncoding_forward adds them (the rows are a constant:
 * only x has a gradient). The host table is exercise 5.1's. */
static Tensor *run_pe(CcRun *r) {
  const int *s = pe_shapes[r->variant];
  cc_shape(r, "rows %d..%d of a (%d, %d) table", s[2], s[2] + s[3] - 1, s[0], s[1]);
  float *table = xmalloc(sizeof(float) * (size_t)s[0] * (size_t)s[1]); /* (max_len, d) */
  if (positional_encoding_table(table, s[0], s[1]) != 0) die("exercise 5.1 is a stub");
  Tensor *x = cc_input(r, 3, (int[]){2, s[3], s[1]}, 81, -1, 1, true);
  Tensor *y = t_add(x, t_positional_encoding(table, s[0], s[1], s[2], s[3], r->dev));
  free(table);
  return y;
}

/* Tolerances, each a property of the kernels:
 *  - layer norm: row sums in a different order (warp tree vs the CPU's 16 lanes) and FMA
 *    contraction; rstd (up to ~2 here) and the 1/D means carry ulps of the sums.
 *  - batch norm: sums in double on both devices (only the order differs), the rest the same
 *    float expressions: a few ulps after rstd.
 *  - embedding: the forward is a copy (exact); the gradient sums repeated rows in the
 *    hardware's atomic order against the CPU's id order (the emulator's atomics run in id order,
 *    so it is exact there): on a GPU, ulps of sums of ~13 terms (34 to 640 ids over 3 to 50
 *    rows), each rounding at most 6e-8 of the running sum, 13 of them under 1e-6, so 1e-5.
 *  - dropout: the same mask bits and one float multiply: bit-identical. */
#define LN_WHY "row sums in another order (warp tree vs 16 lanes) and FMA, scaled by rstd"
#define BN_WHY "double column sums in another order; the same float expressions elsewhere"
#define EMB_WHY "gradient rows summed in atomic order instead of id order: ulps of ~13 terms"
#define DROP_WHY "the same counter-based mask bits and one float multiply: exact"
/* the same float32 expressions; a GPU's powf/sinf/cosf differ from the host's by a few ulps of
 * the angle, below 1000 here (ulp 6e-5) */
#define PE_WHY "GPU powf/sinf/cosf: a few ulps of angles below 1000 (ulp 6e-5)"
const CcCase cases_nn[] = {
    {"layer_norm", N_LN, run_ln, 1e-5f, LN_WHY},
    {"layer_norm (no gamma, beta)", N_LN, run_ln_plain, 1e-5f, LN_WHY},
    {"layer_norm (dx added)", N_LN, run_ln_twice, 1e-5f, LN_WHY},
    {"batch_norm (training, running stats)", N_BN, run_bn_train, 1e-5f, BN_WHY},
    {"batch_norm (training, no gamma, beta, stats)", N_BN, run_bn_train_bare, 1e-5f, BN_WHY},
    {"batch_norm (eval)", N_BN, run_bn_eval, 1e-5f, BN_WHY},
    {"batch_norm (eval, no gamma, beta)", N_BN, run_bn_eval_bare, 1e-5f, BN_WHY},
    {"embedding (repeated ids)", N_EMB, run_embedding, 1e-5f, EMB_WHY},
    {"dropout (p = 0.1)", N_DROP, run_dropout_01, 0.0f, DROP_WHY},
    {"dropout (p = 0.5)", N_DROP, run_dropout_05, 0.0f, DROP_WHY},
    {"dropout (p = 0.5, dx added)", N_DROP, run_dropout_twice, 0.0f, DROP_WHY},
    {"dropout (eval: identity)", N_DROP, run_dropout_eval, 0.0f, DROP_WHY},
    {"positional_encoding (rows of the table, + x)", N_PE, run_pe, 3e-4f, PE_WHY},
    {0},
};
