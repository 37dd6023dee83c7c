/* cases_shape.c — the shape ops (cuda/shape.cu) against the CPU (cpu/cpu_shape.c), through the
 * fronts of ops/shape.c: permute and transpose (3-D and 4-D, innermost dim kept or moved),
 * concat and cat2 along every dim, slice, repeat_interleave, patchify (lab07's MNIST-sized
 * (2, 1, 28, 28) with patch 7 and a (1, 3, 96, 96) image with patch 16) and copy.
 *
 * Most cases use an input twice, so its gradient already exists when the second backward runs:
 * the first writes it fresh (PW_STORE, copy_rows' store), the second adds (PW_ADD, add). */
#include "cuda_check.h"

/* ---------- permute / transpose ---------- */

typedef struct {
  int ndim, shape[4], perm[4];
} PermCase;
static const PermCase perms[] = {
    {1, {1}, {0}},
    {2, {33, 31}, {1, 0}},
    {3, {2, 3, 4}, {2, 0, 1}},
    {3, {1, 31, 33}, {0, 2, 1}},
    {3, {5, 7, 11}, {1, 2, 0}},
    {4, {2, 3, 5, 7}, {0, 2, 1, 3}},   /* transpose_qkv: innermost dim stays */
    {4, {2, 10, 4, 8}, {0, 2, 1, 3}},  /* lab06: (batch, steps, heads, dim / heads) */
    {4, {3, 1, 2, 5}, {3, 2, 1, 0}},
    {4, {4, 3, 7, 2}, {1, 3, 0, 2}},
};
enum { N_PERM = sizeof perms / sizeof perms[0] };

static Tensor *run_permute(CcRun *r) {
  const PermCase *c = &perms[r->variant];
  const int *s = c->shape, *p = c->perm;
  if (c->ndim == 4)
    cc_shape(r, "(%d, %d, %d, %d) perm (%d, %d, %d, %d)", s[0], s[1], s[2], s[3], p[0], p[1],
             p[2], p[3]);
  else
    cc_shape(r, "%d-D (%d, ...) perm (%d, ...)", c->ndim, s[0], p[0]);
  Tensor *x = cc_input(r, c->ndim, s, 81, -1, 1, true);
  /* twice: the first backward stores into x's fresh gradient, the second adds */
  return t_add(t_permute(x, p), t_scale(t_permute(x, p), 2.0f));
}

static const int tr_shapes[][4] = {{1, 1, 33, 31}, {2, 3, 5, 7}, {4, 8, 10, 1}, {1, 2, 1, 13}};
enum { N_TR = sizeof tr_shapes / sizeof tr_shapes[0] };
static Tensor *run_transpose(CcRun *r) {
  const int *s = tr_shapes[r->variant];
  cc_shape(r, "(%d, %d, %d, %d): dims -1, -2 and 0, 2", s[0], s[1], s[2], s[3]);
  Tensor *x = cc_input(r, 4, s, 82, -1, 1, true);
  Tensor *a = t_transpose(t_transpose(x, -1, -2), 0, 2), *b = t_transpose(t_transpose(x, -1, -2), 0, 2);
  return t_add(a, t_scale(b, 2.0f));
}

/* ---------- concat, slice ---------- */

/* three inputs sharing every dim but `dim`, which is 1, 2, 3 (0 for the first shape's dim) */
static const int cat_shapes[][4] = {{1, 1, 1, 0}, {3, 5, 7, 0}, {3, 5, 7, 1},
                                    {3, 5, 7, 2}, {4, 10, 32, 2}, {2, 31, 33, 1}};
enum { N_CAT = sizeof cat_shapes / sizeof cat_shapes[0] };

static Tensor *run_concat(CcRun *r) {
  const int *s = cat_shapes[r->variant], d = s[3];
  cc_shape(r, "3 x (%d, %d, %d) with dim %d of sizes 1, 2, 3", s[0], s[1], s[2], d);
  Tensor *xs[3];
  for (int k = 0; k < 3; k++) {
    int sh[3] = {s[0], s[1], s[2]};
    sh[d] = k + 1;
    xs[k] = cc_input(r, 3, sh, 83 + (unsigned)k, -1, 1, true);
  }
  return t_concat(xs, 3, d);
}
static Tensor *run_cat2(CcRun *r) {
  const int *s = cat_shapes[r->variant], d = s[3];
  cc_shape(r, "(%d, %d, %d) with itself and another, dim %d", s[0], s[1], s[2], d);
  Tensor *a = cc_input(r, 3, s, 86, -1, 1, true), *b = cc_input(r, 3, s, 87, -1, 1, true);
  /* a twice: its gradient is stored by the first run, added by the second */
  return t_cat2(t_cat2(a, b, d), a, d);
}

typedef struct {
  int shape[3], dim, start, end;
} SliceCase;
static const SliceCase slices[] = {
    {{1, 1, 1}, 0, 0, 1},  {{5, 33, 7}, 1, 3, 20}, {{5, 33, 7}, 2, -4, -1},
    {{31, 2, 3}, 0, 7, 31}, {{4, 10, 32}, -1, 8, 24}, {{2, 3, 4}, 1, 1, 1},
};
enum { N_SLICE = sizeof slices / sizeof slices[0] };
static Tensor *run_slice(CcRun *r) {
  const SliceCase *c = &slices[r->variant];
  cc_shape(r, "(%d, %d, %d)[dim %d: %d to %d]", c->shape[0], c->shape[1], c->shape[2], c->dim,
           c->start, c->end);
  Tensor *x = cc_input(r, 3, c->shape, 88, -1, 1, true);
  return t_add(t_slice(x, c->dim, c->start, c->end), t_slice(x, c->dim, c->start, c->end));
}

/* ---------- repeat_interleave ---------- */

typedef struct {
  int ndim, shape[3], reps, dim;
} RepCase;
static const RepCase reps[] = {
    {1, {1}, 1, 0},     {1, {31}, 2, 0},     {3, {2, 3, 5}, 3, 1},
    {3, {4, 7, 1}, 5, 2}, {2, {33, 3}, 4, 0}, {1, {64}, 4, 0}, /* lab04: valid_lens x heads */
    {2, {300, 3}, 2, 0}, /* 1800 outputs outgrow a capped grid */
};
enum { N_REP = sizeof reps / sizeof reps[0] };
static Tensor *run_repeat_interleave(CcRun *r) {
  const RepCase *c = &reps[r->variant];
  cc_shape(r, "%d-D (%d, ...) x %d along dim %d", c->ndim, c->shape[0], c->reps, c->dim);
  Tensor *x = cc_input(r, c->ndim, c->shape, 89, -1, 1, true);
  return t_repeat_interleave(x, c->reps, c->dim);
}

/* ---------- patchify ---------- */

static const int patch_shapes[][5] = {
    {1, 1, 1, 1, 1}, {2, 1, 28, 28, 7}, {1, 3, 96, 96, 16}, {3, 2, 9, 15, 3}, {1, 5, 4, 4, 4}};
enum { N_PATCH = sizeof patch_shapes / sizeof patch_shapes[0] };
static Tensor *run_patchify(CcRun *r) {
  const int *s = patch_shapes[r->variant];
  cc_shape(r, "(%d, %d, %d, %d) patch %d", s[0], s[1], s[2], s[3], s[4]);
  Tensor *x = cc_input(r, 4, s, 90, -1, 1, true);
  return t_patchify(x, s[4]);
}

/* ---------- copy ---------- */

static const int copy_sizes[] = {1, 31, 33, 997, 64 * 10 * 32};
enum { N_COPY = sizeof copy_sizes / sizeof copy_sizes[0] };
static Tensor *run_copy(CcRun *r) {
  int n = copy_sizes[r->variant];
  cc_shape(r, "(%d)", n);
  Tensor *x = cc_input(r, 1, &n, 91, -1, 1, true);
  return t_add(t_copy(x), t_copy(x));
}

/* Every kernel here moves floats, and each backward adds a gradient's terms in the CPU's order
 * (the upstream gradients, w and 2w, are exact on both devices): results are bit-identical. */
#define SHAPE_WHY "copies, and adds in the same order as the CPU: exact"
const CcCase cases_shape[] = {
    {"permute (3-D, 4-D)", N_PERM, run_permute, 0.0f, SHAPE_WHY},
    {"transpose", N_TR, run_transpose, 0.0f, SHAPE_WHY},
    {"concat", N_CAT, run_concat, 0.0f, SHAPE_WHY},
    {"cat2 (an input twice)", N_CAT, run_cat2, 0.0f, SHAPE_WHY},
    {"slice", N_SLICE, run_slice, 0.0f, SHAPE_WHY},
    {"repeat_interleave", N_REP, run_repeat_interleave, 0.0f, SHAPE_WHY},
    {"patchify", N_PATCH, run_patchify, 0.0f, SHAPE_WHY},
    {"copy", N_COPY, run_copy, 0.0f, SHAPE_WHY},
    {0},
};
