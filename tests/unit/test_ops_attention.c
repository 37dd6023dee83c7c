/* Tests of ops/attention.c: t_attention_fused against the composed ops it fuses (bmm_nt, scale,
 * sequence_mask with -inf, softmax, bmm — d2l's DotProductAttention without dropout), forward
 * and gradients, for no mask, 1-D and 2-D valid lengths (with a 0: a row of zeros); a
 * finite-difference check of its backward; and its shape errors. */
#include <math.h>

#include "../../common/ops.h"
#include "../../common/rng.h"
#include "../test.h"

static Tensor *composed(Tensor *Q, Tensor *K, Tensor *V, Tensor *lens) {
  Tensor *S = t_scale(t_bmm_nt(Q, K), 1.0f / sqrtf((float)Q->shape[2])); /* (B, Tq, Tk) */
  if (lens) S = t_sequence_mask(S, lens, -INFINITY);
  return t_bmm(t_softmax(S), V); /* (B, Tq, dv) */
}

/* Forward and every input's gradient (through loss = sum(out * R)) of the two paths. */
static void compare(int B, int Tq, int Tk, int d, int dv, Tensor *lens) {
  Tensor *in[2][3];
  for (int p = 0; p < 2; p++) {
    rng_seed(11);
    in[p][0] = tensor_randn(SHAPE(B, Tq, d), 0, 1);  /* Q */
    in[p][1] = tensor_randn(SHAPE(B, Tk, d), 0, 1);  /* K */
    in[p][2] = tensor_randn(SHAPE(B, Tk, dv), 0, 1); /* V */
    for (int i = 0; i < 3; i++) in[p][i]->requires_grad = true;
  }
  rng_seed(12);
  Tensor *R = tensor_randn(SHAPE(B, Tq, dv), 0, 1);
  Tensor *a = t_attention_fused(in[0][0], in[0][1], in[0][2], lens);
  Tensor *b = composed(in[1][0], in[1][1], in[1][2], lens);
  CHECK_INT(a->ndim, 3);
  CHECK_INT(a->shape[2], dv);
  /* float32: the two paths sum the same products in different orders (a few ulps of 1) */
  CHECK_CLOSE(a->data, b->data, a->size, 1e-5, 1e-5);
  /* one backward through both (a backward ends the step: the arena is rewound after it) */
  ag_backward(t_add(t_sum_all(t_mul(a, R)), t_sum_all(t_mul(b, R))));
  for (int i = 0; i < 3; i++)
    CHECK_CLOSE(in[0][i]->grad, in[1][i]->grad, in[0][i]->size, 1e-5, 1e-5);
}

TEST(attention_fused_equals_composed) {
  compare(2, 3, 5, 4, 6, NULL);
  compare(2, 3, 5, 4, 4, tensor_from(1, (int[]){2}, (float[]){2, 0}));              /* 1-D */
  compare(2, 3, 5, 8, 3, tensor_from(2, (int[]){2, 3}, (float[]){1, 2, 3, 0, 5, 9})); /* 2-D */
  compare(1, 1, 1, 1, 1, NULL);
  compare(3, 33, 37, 8, 8, NULL); /* past one 32-query tile and one 32-key tile of the kernel */
}

TEST(attention_fused_zero_length_row_is_zeros) {
  Tensor *Q = tensor_randn(SHAPE(1, 2, 3), 0, 1), *K = tensor_randn(SHAPE(1, 4, 3), 0, 1);
  Tensor *V = tensor_randn(SHAPE(1, 4, 2), 0, 1);
  Tensor *O = t_attention_fused(Q, K, V, tensor_from(2, (int[]){1, 2}, (float[]){0, 1}));
  CHECK_CLOSE(O->data, ((float[]){0, 0}), 2, 0, 0); /* row 0: no key at all */
  /* row 1: one key, weight exactly 1: V's first row */
  CHECK_CLOSE(O->data + 2, V->data, 2, 1e-6, 0);
}

static Tensor *f_attention(Tensor **in, void *ctx) {
  return t_attention_fused(in[0], in[1], in[2], ctx);
}

TEST(attention_fused_gradcheck) {
  for (int masked = 0; masked < 2; masked++) { /* fresh tensors: a check rewinds the arena */
    Tensor *in[3] = {tensor_randn(SHAPE(2, 3, 4), 0, 1), tensor_randn(SHAPE(2, 5, 4), 0, 1),
                     tensor_randn(SHAPE(2, 5, 3), 0, 1)};
    /* 2-D lengths with a 0 (that row's gradient is 0) and one past the keys (no mask) */
    Tensor *lens = masked ? tensor_from(2, (int[]){2, 3}, (float[]){1, 3, 6, 2, 0, 4}) : NULL;
    GRADCHECK(f_attention, in, 3, lens);
  }
}

TEST(attention_fused_shape_errors) {
  Tensor *Q = tensor_randn(SHAPE(2, 3, 4), 0, 1), *K = tensor_randn(SHAPE(2, 5, 4), 0, 1);
  Tensor *V = tensor_randn(SHAPE(2, 5, 3), 0, 1);
  CHECK_ERROR(t_attention_fused(Q, tensor_randn(SHAPE(2, 5, 3), 0, 1), V, NULL), "K's d");
  CHECK_ERROR(t_attention_fused(Q, K, tensor_randn(SHAPE(2, 4, 3), 0, 1), NULL), "number of keys");
  CHECK_ERROR(t_attention_fused(Q, K, V, tensor_from(1, (int[]){3}, (float[]){1, 1, 1})),
              "valid_lens has shape (3)");
  CHECK_ERROR(t_attention_fused(NULL, K, V, NULL), "Q is NULL");
}
