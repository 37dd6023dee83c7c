/* ops/elementwise.c — elementwise ops: the four arithmetic ops with NumPy broadcasting, scalar
 * ops and activations, each with its backward. The loops are in cpu/cpu_elementwise.c.
 *
 * Broadcasting. Shapes are aligned from the right; in each dim the sizes must be equal or one
 * of them 1 (a missing leading dim counts as 1), and the output takes the larger size.
 * Rather than computing an index per element, an op first builds a Broadcast plan (backend.h):
 * it drops the output dims of size 1, merges neighbouring dims that both operands walk
 * contiguously (or both repeat), and so views the output as `rows` rows of `n` contiguous
 * elements. Within a row each operand steps by 1, or by 0 when it is repeated along the row;
 * between rows an odometer over at most three outer dims moves each operand by its own strides.
 * The common cases collapse to plain loops:
 *   same shape          (B,T,H) + (B,T,H)  one row of B*T*H, both operands step 1
 *   scalar operand      (B,T,H) * (1)      one row, the scalar steps 0
 *   leading-dim repeat  (B,T,H) + (H)      B*T rows of H; b starts every row at offset 0
 *   e.g. attention      (B,Q,1,H) + (B,1,K,H)  B*Q*K rows of H
 * so the kernel's inner loops are index-free and vectorize.
 *
 * Backward. The gradient of a broadcast input is the output gradient summed over the dims the
 * input was repeated along; the binary_grad kernel walks the same plan to do that sum. */
#include "front.h"

/* ---------- the broadcast plan ---------- */

static Broadcast broadcast_plan(const char *op, const Tensor *a, const Tensor *b) {
  Broadcast bc = {0};
  bc.ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
  long step_a = 1, step_b = 1; /* row-major strides of a and b, built from the right */
  for (int d = bc.ndim - 1; d >= 0; d--) {
    int ia = d - (bc.ndim - a->ndim), ib = d - (bc.ndim - b->ndim);
    int na = ia >= 0 ? a->shape[ia] : 1, nb = ib >= 0 ? b->shape[ib] : 1;
    if (na != nb && na != 1 && nb != 1) {
      char s1[64], s2[64];
      tensor_error(op, "shapes %s and %s do not broadcast: aligned from the right, sizes %d "
                   "and %d differ and neither is 1; reshape an input (t_view) so that each "
                   "pair of sizes is equal or one of them is 1",
                   shape_str(a, s1, sizeof s1), shape_str(b, s2, sizeof s2), na, nb);
    }
    int n = na == 1 ? nb : na;
    bc.shape[d] = n;
    long sa = na == 1 ? 0 : step_a, sb = nb == 1 ? 0 : step_b;
    step_a *= na;
    step_b *= nb;
    if (n == 1) continue; /* a size-1 output dim moves nothing */
    int k = bc.nd - 1;    /* the merged dim just inside this one */
    bool continues = k >= 0 && sa == bc.stride[ARG_A][k] * bc.len[k] &&
                     sb == bc.stride[ARG_B][k] * bc.len[k];
    if (continues) {
      bc.len[k] *= n; /* both operands continue the inner dim's walk: merge */
    } else {
      bc.len[bc.nd] = n;
      bc.stride[ARG_A][bc.nd] = sa;
      bc.stride[ARG_B][bc.nd] = sb;
      bc.nd++;
    }
  }
  if (bc.nd == 0) { /* a one-element output: a single row of one */
    bc.len[0] = 1;
    bc.nd = 1;
  }
  bc.rows = 1;
  for (int k = 1; k < bc.nd; k++) bc.rows *= bc.len[k];
  return bc;
}

static Tensor *binary_forward(const char *op, BinaryOp kind, BackwardFn backward, Tensor *a,
                              Tensor *b) {
  need(op, "an input", a);
  need(op, "an input", b);
  tensor_same_device(op, a, b, NULL);
  Broadcast bc = broadcast_plan(op, a, b);
  Tensor *out = new_on(a, bc.ndim, bc.shape, op);
  KERNEL(a->device, binary, kind, &bc, a->data, b->data, out->data);
  if (ag_needs_grad(a, b, NULL)) ag_record(out, backward, a, b, NULL);
  return out;
}

/* The gradient buffer of operand x. An operand of the output's size is not broadcast, so its
 * gradient may be stored rather than added when nothing reached it yet (*store); a broadcast
 * one sums several output elements into each of its own and needs a zeroed buffer. The
 * gradient of a is fetched (and so allocated) before b's: with t_add(x, x), b's then adds. */
static float *grad_of(Tensor *x, const Tensor *out, bool *store) {
  if (x->size == out->size) return tensor_grad_fresh(x, store);
  *store = false;
  return tensor_grad(x);
}

/* out = a OP b: a's gradient is g * ya, b's is g * yb (ya, yb: NULL for 1), times sa, sb. */
static void binary_backward(Tensor *out, const char *op, const float *ya, float sa,
                            const float *yb, float sb) {
  Tensor *a = out->in[0], *b = out->in[1];
  Broadcast bc = broadcast_plan(op, a, b);
  bool store;
  if (a->requires_grad) {
    float *ga = grad_of(a, out, &store);
    KERNEL(out->device, binary_grad, &bc, ARG_A, ga, out->grad, ya, sa, store);
  }
  if (b->requires_grad) {
    float *gb = grad_of(b, out, &store);
    KERNEL(out->device, binary_grad, &bc, ARG_B, gb, out->grad, yb, sb, store);
  }
}

static void add_backward(Tensor *out) { binary_backward(out, "t_add", NULL, 1, NULL, 1); }
static void sub_backward(Tensor *out) { binary_backward(out, "t_sub", NULL, 1, NULL, -1); }
static void mul_backward(Tensor *out) {
  binary_backward(out, "t_mul", out->in[1]->data, 1, out->in[0]->data, 1);
}

/* d(a/b)/da = 1/b; d(a/b)/db = -a/b^2. Within one element of b's gradient b is constant, so
 * grad_b[k] -= (sum of g * a over what b[k] touched) / b[k]^2: one scratch of b's size. */
static void div_backward(Tensor *out) {
  Tensor *a = out->in[0], *b = out->in[1];
  const Device dev = out->device;
  Broadcast bc = broadcast_plan("t_div", a, b);
  if (a->requires_grad) {
    float *inv_b = dev_alloc(dev, sizeof(float) * (size_t)b->size);
    KERNEL(dev, unary, UN_RECIPROCAL, 0.0f, b->data, inv_b, b->size);
    bool store;
    float *ga = grad_of(a, out, &store);
    KERNEL(dev, binary_grad, &bc, ARG_A, ga, out->grad, inv_b, 1.0f, store);
  }
  if (b->requires_grad) {
    float *ga_sum = dev_calloc(dev, sizeof(float) * (size_t)b->size);
    KERNEL(dev, binary_grad, &bc, ARG_B, ga_sum, out->grad, a->data, 1.0f, false);
    float *gb = tensor_grad(b);
    KERNEL(dev, div_grad_b, gb, ga_sum, b->data, b->size);
  }
}

Tensor *t_add(Tensor *a, Tensor *b) { return binary_forward("t_add", BIN_ADD, add_backward, a, b); }
Tensor *t_sub(Tensor *a, Tensor *b) { return binary_forward("t_sub", BIN_SUB, sub_backward, a, b); }
Tensor *t_mul(Tensor *a, Tensor *b) { return binary_forward("t_mul", BIN_MUL, mul_backward, a, b); }
Tensor *t_div(Tensor *a, Tensor *b) { return binary_forward("t_div", BIN_DIV, div_backward, a, b); }

/* ---------- unary ops ---------- */
/* Each forward fills an output of a's shape; each backward adds g * dy/dx into a's gradient
 * (the kernel uses the output where that is cheaper: exp, tanh, sigmoid, relu). iarg[0] holds
 * the UnaryOp, farg[0] its scalar. A unary op is recorded only when a requires grad. */

static void unary_backward(Tensor *out) {
  bool fresh;
  Tensor *x = out->in[0];
  float *gx = tensor_grad_fresh(x, &fresh);
  KERNEL(out->device, unary_grad, (UnaryOp)out->iarg[0], out->farg[0], out->grad, x->data,
         out->data, gx, out->size, fresh);
}

static Tensor *unary(const char *op, UnaryOp kind, float s, Tensor *a) {
  need(op, "an input", a);
  Tensor *out = new_on(a, a->ndim, a->shape, op);
  KERNEL(a->device, unary, kind, s, a->data, out->data, a->size);
  if (ag_needs_grad(a, NULL, NULL)) {
    out->iarg[0] = kind;
    out->farg[0] = s;
    ag_record(out, unary_backward, a, NULL, NULL);
  }
  return out;
}

Tensor *t_scale(Tensor *a, float s) { return unary("t_scale", UN_SCALE, s, a); }
Tensor *t_neg(Tensor *a) { return unary("t_neg", UN_SCALE, -1.0f, a); }
Tensor *t_add_scalar(Tensor *a, float s) { return unary("t_add_scalar", UN_ADD_SCALAR, s, a); }
Tensor *t_exp(Tensor *a) { return unary("t_exp", UN_EXP, 0, a); }
Tensor *t_log(Tensor *a) { return unary("t_log", UN_LOG, 0, a); }
Tensor *t_square(Tensor *a) { return unary("t_square", UN_SQUARE, 0, a); }
Tensor *t_tanh(Tensor *a) { return unary("t_tanh", UN_TANH, 0, a); }
Tensor *t_sigmoid(Tensor *a) { return unary("t_sigmoid", UN_SIGMOID, 0, a); }
Tensor *t_relu(Tensor *a) { return unary("t_relu", UN_RELU, 0, a); }
/* GELU(x) = x Phi(x), the exact erf form of torch.nn.GELU() (not the tanh approximation) */
Tensor *t_gelu(Tensor *a) { return unary("t_gelu", UN_GELU, 0, a); }
