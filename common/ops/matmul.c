/* ops/matmul.c — matrix products: t_matmul, t_bmm, t_bmm_nt, t_linear.
 *
 * Every product (forward and backward) is one gemm / gemm_batched kernel call on the row-major
 * buffers, except t_linear's backward, whose two products are one linear_grad call (the CPU's
 * leaves out the zero rows of dY); the backward passes use gemm's transpose flags instead of
 * materialising transposes. With C = A B:   dA += dC B^T,   dB += A^T dC   (beta = 1
 * accumulates into existing grads; beta = 0 when the gradient buffer is fresh, which gemm then
 * writes without reading). */
#include <string.h>

#include "front.h"

/* t's gradient buffer and the beta that adds into it: 0 when it is fresh (uninitialized), 1
 * otherwise. Fetched before each gemm call, never inside its argument list: with t_bmm(x, x)
 * the second fetch must see the buffer the first product wrote. */
static float *grad_beta(Tensor *t, float *beta) {
  bool fresh;
  float *g = tensor_grad_fresh(t, &fresh);
  *beta = fresh ? 0.0f : 1.0f;
  return g;
}

/* ---------- t_matmul: (m,k) @ (k,n) -> (m,n) ---------- */

static void matmul_backward(Tensor *out) {
  Tensor *a = out->in[0], *b = out->in[1];
  int m = out->iarg[0], n = out->iarg[1], k = out->iarg[2];
  const float *dC = out->grad;
  const Device dev = out->device;
  float beta;
  if (a->requires_grad) { /* dA (m,k) += dC (m,n) @ B^T (n,k) */
    float *dA = grad_beta(a, &beta);
    KERNEL(dev, gemm, false, true, m, k, n, 1.0f, dC, n, b->data, n, beta, dA, k);
  }
  if (b->requires_grad) { /* dB (k,n) += A^T (k,m) @ dC (m,n) */
    float *dB = grad_beta(b, &beta);
    KERNEL(dev, gemm, true, false, k, n, m, 1.0f, a->data, k, dC, n, beta, dB, n);
  }
}

Tensor *t_matmul(Tensor *a, Tensor *b) {
  char sa[64], sb[64];
  need("t_matmul", "a", a), need("t_matmul", "b", b);
  if (a->ndim != 2 || b->ndim != 2)
    tensor_error("t_matmul", "needs two 2-D matrices, got %s and %s; use t_bmm for batches "
                 "of matrices and t_linear for (..., in) @ (in, out)",
                 shape_str(a, sa, sizeof sa), shape_str(b, sb, sizeof sb));
  if (a->shape[1] != b->shape[0])
    tensor_error("t_matmul", "inner dimensions differ: %s @ %s (columns of the first must equal "
                 "rows of the second)", shape_str(a, sa, sizeof sa), shape_str(b, sb, sizeof sb));
  tensor_same_device("t_matmul", a, b, NULL);
  int m = a->shape[0], k = a->shape[1], n = b->shape[1];
  Tensor *out = new_on(a, 2, (int[]){m, n}, "matmul"); /* (m, n) */
  KERNEL(a->device, gemm, false, false, m, n, k, 1.0f, a->data, k, b->data, n, 0.0f, out->data,
         n);
  if (ag_needs_grad(a, b, NULL)) {
    out->iarg[0] = m;
    out->iarg[1] = n;
    out->iarg[2] = k;
    ag_record(out, matmul_backward, a, b, NULL);
  }
  return out;
}

/* ---------- t_bmm: (B,m,k) @ (B,k,n) -> (B,m,n); t_bmm_nt: (B,m,k) @ (B,n,k)^T -> (B,m,n) ----
 * One implementation; iarg[4] says whether the second operand is stored transposed (the
 * attention scores Q K^T read K as it is instead of materialising K^T). */

static void bmm_backward(Tensor *out) {
  Tensor *a = out->in[0], *b = out->in[1];
  int B = out->iarg[0], m = out->iarg[1], n = out->iarg[2], k = out->iarg[3];
  bool nt = out->iarg[4];
  int ldb = nt ? k : n; /* b is (B, k, n), or (B, n, k) when nt */
  const float *dC = out->grad;
  const Device dev = out->device;
  float beta;
  if (a->requires_grad) { /* dA[i] (m,k) += dC[i] (m,n) @ op(B[i])^T (n,k) */
    float *dA = grad_beta(a, &beta);
    KERNEL(dev, gemm_batched, false, !nt, m, k, n, 1.0f, dC, n, (long)m * n, b->data, ldb,
           (long)k * n, beta, dA, k, (long)m * k, B);
  }
  if (b->requires_grad) {
    float *dB = grad_beta(b, &beta);
    if (nt) /* dB[i] (n,k) += dC[i]^T (n,m) @ A[i] (m,k) */
      KERNEL(dev, gemm_batched, true, false, n, k, m, 1.0f, dC, n, (long)m * n, a->data, k,
             (long)m * k, beta, dB, k, (long)n * k, B);
    else /* dB[i] (k,n) += A[i]^T (k,m) @ dC[i] (m,n) */
      KERNEL(dev, gemm_batched, true, false, k, n, m, 1.0f, a->data, k, (long)m * k, dC, n,
             (long)m * n, beta, dB, n, (long)k * n, B);
  }
}

static Tensor *bmm_impl(const char *op, Tensor *a, Tensor *b, bool nt) {
  char sa[64], sb[64];
  need(op, "a", a), need(op, "b", b);
  if (a->ndim != 3 || b->ndim != 3)
    tensor_error(op, "needs two 3-D batches (B, m, k) and %s, got %s and %s; reshape with "
                 "t_view first", nt ? "(B, n, k)" : "(B, k, n)", shape_str(a, sa, sizeof sa),
                 shape_str(b, sb, sizeof sb));
  if (a->shape[0] != b->shape[0] || a->shape[2] != b->shape[nt ? 2 : 1])
    tensor_error(op, "shapes %s and %s do not fit %s: batch sizes and %s must match",
                 shape_str(a, sa, sizeof sa), shape_str(b, sb, sizeof sb),
                 nt ? "(B, m, k) @ (B, n, k)^T" : "(B, m, k) @ (B, k, n)",
                 nt ? "last dimensions" : "inner dimensions");
  tensor_same_device(op, a, b, NULL);
  int B = a->shape[0], m = a->shape[1], k = a->shape[2], n = b->shape[nt ? 1 : 2];
  Tensor *out = new_on(a, 3, (int[]){B, m, n}, nt ? "bmm_nt" : "bmm"); /* (B, m, n) */
  KERNEL(a->device, gemm_batched, false, nt, m, n, k, 1.0f, a->data, k, (long)m * k, b->data,
         nt ? k : n, (long)k * n, 0.0f, out->data, n, (long)m * n, B);
  if (ag_needs_grad(a, b, NULL)) {
    out->iarg[0] = B;
    out->iarg[1] = m;
    out->iarg[2] = n;
    out->iarg[3] = k;
    out->iarg[4] = nt;
    ag_record(out, bmm_backward, a, b, NULL);
  }
  return out;
}

Tensor *t_bmm(Tensor *a, Tensor *b) { return bmm_impl("t_bmm", a, b, false); }

Tensor *t_bmm_nt(Tensor *a, Tensor *b) { return bmm_impl("t_bmm_nt", a, b, true); }

/* ---------- t_linear: x (..., in) @ W (in, out) + b (out) -> (..., out) ----------
 * The leading dims of x are flattened into rows, so the whole layer is one GEMM. */

static void linear_backward(Tensor *out) {
  Tensor *x = out->in[0], *W = out->in[1], *b = out->in[2];
  int rows = out->iarg[0], in = out->iarg[1], nout = out->iarg[2];
  const float *dY = out->grad;
  const Device dev = out->device;
  float dx_beta = 0, dW_beta = 0;
  /* dx (rows,in) += dY (rows,out) @ W^T (out,in);  dW (in,out) += x^T (in,rows) @ dY (rows,out) */
  float *dx = x->requires_grad ? grad_beta(x, &dx_beta) : NULL;
  float *dW = W->requires_grad ? grad_beta(W, &dW_beta) : NULL;
  if (dx || dW)
    KERNEL(dev, linear_grad, x->data, W->data, dY, dx, dx_beta, dW, dW_beta, rows, in, nout);
  if (b && b->requires_grad) /* db (out) += column sums of dY */
    KERNEL(dev, bias_grad, tensor_grad(b), dY, rows, nout);
}

Tensor *t_linear(Tensor *x, Tensor *W, Tensor *b) {
  char sx[64], sw[64], sb[64];
  need("t_linear", "x", x), need("t_linear", "W", W);
  if (W->ndim != 2)
    tensor_error("t_linear", "the weight must be 2-D (in, out), got %s (input %s)",
                 shape_str(W, sw, sizeof sw), shape_str(x, sx, sizeof sx));
  if (x->shape[x->ndim - 1] != W->shape[0])
    tensor_error("t_linear", "input %s has last dim %d but the weight %s expects in = %d",
                 shape_str(x, sx, sizeof sx), x->shape[x->ndim - 1],
                 shape_str(W, sw, sizeof sw), W->shape[0]);
  if (b && (b->ndim != 1 || b->shape[0] != W->shape[1]))
    tensor_error("t_linear", "the bias must have shape (%d) to match the weight %s, got %s",
                 W->shape[1], shape_str(W, sw, sizeof sw), shape_str(b, sb, sizeof sb));
  tensor_same_device("t_linear", x, W, b);
  int in = W->shape[0], nout = W->shape[1];
  int rows = in ? (int)(x->size / in) : (int)shape_numel(x->ndim - 1, x->shape);
  int shape[T_MAXDIM];
  memcpy(shape, x->shape, sizeof shape);
  shape[x->ndim - 1] = nout;
  Tensor *out = new_on(x, x->ndim, shape, "linear"); /* (..., out) */
  /* seed every row with the bias and let the GEMM accumulate onto it (beta = 1) */
  if (b) KERNEL(x->device, bias_rows, out->data, b->data, rows, nout);
  KERNEL(x->device, gemm, false, false, rows, nout, in, 1.0f, x->data, in, W->data, nout,
         b ? 1.0f : 0.0f, out->data, nout);
  if (ag_needs_grad(x, W, b)) {
    out->iarg[0] = rows;
    out->iarg[1] = in;
    out->iarg[2] = nout;
    ag_record(out, linear_backward, x, W, b);
  }
  return out;
}
