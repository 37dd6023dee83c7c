/* ops/recompute.c — trading a second pass for memory: an activation's values are handed back
 * after the forward and rebuilt just before the one backward that reads them. No kernel of its
 * own: the rebuild is the caller's ops again, and the gradient passes on with the acc kernel. */
#include "front.h"

typedef struct {
  Tensor *x;           /* the activation whose values are rebuilt */
  RecomputeFn rebuild;
  void *ctx;
} Recompute;

static size_t g_min_bytes = 8u << 20;

size_t t_recompute_set_min(size_t bytes) {
  const size_t old = g_min_bytes;
  g_min_bytes = bytes;
  return old;
}

/* Runs just before y's backward (the node sits right after y on the tape): x's values again,
 * then y's gradient. */
static void recompute_backward(Tensor *out) {
  const Recompute *r = out->aux;
  const bool on = ag_grad_enabled();
  ag_set_grad_enabled(false); /* the rebuild is values only: its ops are not on the tape */
  Tensor *v = r->rebuild(r->ctx);
  ag_set_grad_enabled(on);
  if (!v || v->device != r->x->device || !tensor_same_shape(v, r->x)) {
    char sv[64] = "NULL", sx[64];
    if (v) shape_str(v, sv, sizeof sv);
    tensor_error("t_recompute", "the rebuild returned %s for an activation of shape %s (on %s): "
                 "it must compute the same tensor again", sv, shape_str(r->x, sx, sizeof sx),
                 device_name(r->x->device));
  }
  r->x->data = v->data;
  KERNEL(out->device, acc, tensor_grad(out->in[0]), out->grad, out->size);
}

Tensor *t_recompute(Tensor *y, Tensor *x, RecomputeFn rebuild, void *ctx) {
  need("t_recompute", "y", y);
  need("t_recompute", "x", x);
  if (x->is_param)
    tensor_error("t_recompute", "x is the parameter %s: only activations are rebuilt", x->name);
  if (!ag_needs_grad(y, NULL, NULL) || sizeof(float) * (size_t)x->size < g_min_bytes)
    return y;
  if (!arena_release(x->data)) return y; /* a small block stays: nothing to gain */
  x->data = NULL; /* until recompute_backward rebuilds it */
  Tensor *out = t_detach(y); /* y's values, the same buffer, on the tape below */
  out->name = "recompute";
  Recompute *r = arena_alloc(sizeof *r);
  *r = (Recompute){x, rebuild, ctx};
  out->aux = r;
  ag_record(out, recompute_backward, y, NULL, NULL);
  return out;
}
