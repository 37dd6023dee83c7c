/* autograd.c — the tape: ops record their outputs (ag_record), gradient buffers are made on
 * first use (tensor_grad), and ag_backward walks the tape newest-first. Layer: calls context.c
 * (the tape and the arenas it records into), backend.c (the device tables) and tensor.c; none of
 * them calls back (the map of the layers is in context.h). */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "context.h"
#include "util.h"

void ag_set_grad_enabled(bool on) { ag_ctx()->grad_on = on; }
bool ag_grad_enabled(void) { return ag_ctx()->grad_on; }
size_t ag_tape_len(void) { return ag_ctx()->tape_len; }
void ag_set_release_grads(bool on) { ag_ctx()->release_grads = on; }

bool ag_needs_grad(const Tensor *a, const Tensor *b, const Tensor *c) {
  if (!ag_ctx()->grad_on) return false;
  return (a && a->requires_grad) || (b && b->requires_grad) || (c && c->requires_grad);
}

void ag_record(Tensor *out, BackwardFn fn, Tensor *a, Tensor *b, Tensor *c) {
  AgContext *x = ag_ctx();
  out->requires_grad = true;
  out->backward = fn;
  out->in[0] = a;
  out->in[1] = b;
  out->in[2] = c;
  if (x->tape_len == x->tape_cap) {
    x->tape_cap = x->tape_cap ? 2 * x->tape_cap : 4096;
    x->tape = xrealloc(x->tape, x->tape_cap * sizeof *x->tape);
  }
  x->tape[x->tape_len++] = out;
}

/* A view's gradient is its base's buffer: nothing to push back. */
static void view_backward(Tensor *out) { (void)out; }

void ag_record_view(Tensor *out, Tensor *x) { ag_record(out, view_backward, x, NULL, NULL); }

/* ---------- gradient buffers ---------- */

/* The smallest gradient buffer of device d handed back during this backward that holds n
 * floats, taken out of the pool; NULL when none does. */
static float *reuse_grad(Device d, long n) {
  AgContext *x = ag_ctx();
  int best = -1;
  for (int i = 0; i < x->nfree_grads; i++)
    if (x->free_grads[i].dev == d && x->free_grads[i].n >= n &&
        (best < 0 || x->free_grads[i].n < x->free_grads[best].n))
      best = i;
  if (best < 0) return NULL;
  float *p = x->free_grads[best].p;
  x->free_grads[best] = x->free_grads[--x->nfree_grads];
  return p;
}

/* A new gradient buffer for t: zeroed, or (zero false) left as it is for a caller that stores
 * every element. Parameters keep theirs across steps (device memory of their own), so theirs is
 * always zeroed; an activation's comes from the pool or the arena. */
static float *grad_alloc(Tensor *t, bool zero) {
  const Backend *be = backend_of(t->device);
  size_t bytes = sizeof(float) * (size_t)(t->size ? t->size : 1);
  float *g;
  if (t->is_param) {
    g = be->alloc(bytes);
    zero = true;
  } else {
    g = ag_ctx()->nfree_grads ? reuse_grad(t->device, (long)(bytes / sizeof(float))) : NULL;
    if (!g) g = dev_alloc(t->device, bytes);
  }
  if (zero) be->zero(g, bytes);
  return g;
}

float *tensor_grad(Tensor *t) {
  if (!t->grad)
    t->grad = t->backward == view_backward ? tensor_grad(t->in[0]) : grad_alloc(t, true);
  return t->grad;
}

float *tensor_grad_fresh(Tensor *t, bool *fresh) {
  *fresh = false;
  if (!t->grad) {
    if (t->backward == view_backward) {
      t->grad = tensor_grad_fresh(t->in[0], fresh);
    } else {
      t->grad = grad_alloc(t, false);
      *fresh = !t->is_param;
    }
  }
  return t->grad;
}

/* ---------- backward ---------- */

/* t's backward has run and its consumers (later on the tape) all ran before it: nothing adds to
 * or reads t's gradient or its values again. A view's buffers are its base's, which is still to
 * come. Big buffers go back to the arena (any later allocation may reuse them), small gradients
 * to the gradient pool. */
static void release_node(Tensor *t) {
  AgContext *x = ag_ctx();
  long n = t->size ? t->size : 1;
  if ((size_t)n * sizeof(float) >= ARENA_BIG) {
    arena_release(t->grad);
  } else if (x->nfree_grads < FREE_GRADS) {
    x->free_grads[x->nfree_grads++] = (FreeGrad){t->grad, n, t->device};
  }
  t->grad = NULL;
  if (arena_release(t->data)) t->data = NULL; /* a big block; small values stay (the loop reads
                                               * the loss after backward) */
}

void ag_backward_with(Tensor *out, const float *seed) {
  float *g = tensor_grad(out);
  /* add the seed into the gradient (device memory): a given seed (host memory) is uploaded; the
   * default, all ones, is made on the device (no copy) */
  const float *s;
  if (seed) {
    s = dev_upload(out->device, seed, sizeof(float) * (size_t)(out->size ? out->size : 1));
  } else {
    float *ones = dev_alloc(out->device, sizeof(float) * (size_t)(out->size ? out->size : 1));
    KERNEL(out->device, fill, ones, 1.0f, out->size);
    s = ones;
  }
  KERNEL(out->device, acc, g, s, out->size);
  /* Walk the tape newest-first; a node no gradient reached has nothing to push. */
  AgContext *x = ag_ctx();
  for (size_t i = x->tape_len; i-- > 0;) {
    Tensor *t = x->tape[i];
    if (!t->grad || !t->backward) continue;
    t->backward(t);
    if (x->release_grads && t->backward != view_backward && !t->is_param) release_node(t);
  }
}

void ag_backward(Tensor *loss) {
  if (loss->size != 1) {
    char s[64];
    tensor_error("ag_backward", "the loss must have one element, got shape %s; "
                 "reduce it first (t_sum_all / t_mean_all)", shape_str(loss, s, sizeof s));
  }
  ag_backward_with(loss, NULL);
}
