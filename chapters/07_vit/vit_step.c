/* vit_step.c — how a ViT training batch is executed: the whole batch at once, or in two halves
 * whose gradients add up to the batch's, side by side on two threads (the second half on a twin
 * of the model) or one after the other.
 *
 * Why halves: a small model's ops are too small to split over two threads, so two halves side
 * by side keep both cores busy; a large model splits its products instead, and for it halves
 * gain nothing and cost a second arena and gradient block (the measurements are in
 * docs/performance.md). The same rule on every path (one thread, two, a device) keeps a run's
 * numbers the same on each. */
#include <stdlib.h>
#include <string.h>

#include "../../common/exercise.h"
#include "../../common/step.h"
#include "../../common/util.h"
#include "vit_step.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* A second model for the second thread: its parameters read the model's values; its
 * gradients, tape, arena and dropout generator are its own. */
typedef struct ViTTwin {
  ViT net;
  ParamSet ps;
  AgContext *ctx;
  Rng rng;
} ViTTwin;

struct ViTStep {
  ViT *m;
  ParamSet *ps;
  ViTForwardFn forward;
  ViTLossFn loss;
  ViTTwin *twin; /* NULL where it does not pay */
  float *X, *y;  /* the batch, copied off the arena, which the halves may rewind */
  size_t cap_x, cap_y; /* floats X and y hold */
  StepLosses losses;   /* the halves' losses, read once a step */
  int parts, half, bs;  /* the batch begun: 1 part, or 2 of half and bs - half images */
};

/* Whether a batch of bs images trains in two halves: a model small enough that its ops do not
 * fill two threads (see the top of the file). The CPU preset's blocks do 1.1 M multiply-adds
 * per image, the book preset's 233 M; the line is drawn between them. */
static bool in_halves(const ViT *m, int bs) {
  const double n = (double)m->patch_embedding.num_patches + 1, h = m->num_hiddens;
  const double macs = m->num_blks * n * (4 * h * h + 2 * h * m->blks[0].mlp.dense1.out);
  return bs >= 64 && macs < 16e6;
}

typedef struct {
  ViTTwin *t;
  const ViT *m;
} TwinOf;

static void build_twin(void *arg) {
  TwinOf *of = arg;
  ViT_init_like(&of->t->net, &of->t->ps, of->m);
}

/* A twin pays where OpenMP grants exactly two threads (with more, the ops' own threads use
 * them all) and the model trains in halves; off the CPU it cannot share the values. */
static ViTTwin *twin_new(ViT *m, ParamSet *ps) {
#ifdef _OPENMP
  const bool two = omp_get_max_threads() == 2;
#else
  const bool two = false;
#endif
  if (!two || !in_halves(m, 64)) return NULL;
  paramset_pack(ps); /* a model built on a device is on it once packed */
  if (ps->device != DEV_CPU) return NULL;
  ViTTwin *t = xcalloc(1, sizeof *t);
  /* its init draws from a generator of its own (the values are replaced by the model's), so
   * the program's stream does not move */
  TwinOf of = {t, m};
  Rng gen;
  rng_init(&gen, 0);
  twin_build(&gen, build_twin, &of);
  paramset_share_values(&t->ps, ps);
  t->ctx = ag_context_new();
  return t;
}

static void twin_free(ViTTwin *t) {
  if (!t) return;
  ViT_free(&t->net);
  paramset_free(&t->ps);
  ag_context_free(t->ctx);
  free(t);
}

ViTStep *vit_step_new(ViT *m, ParamSet *ps, ViTForwardFn forward, ViTLossFn loss) {
  ViTStep *s = xcalloc(1, sizeof *s);
  *s = (ViTStep){m, ps, forward, loss, twin_new(m, ps), NULL, NULL, 0, 0, {DEV_CPU, NULL}, 0, 0, 0};
  paramset_pack(ps); /* a model built on a device is on it once packed */
  step_losses_init(&s->losses, ps->device);
  return s;
}

void vit_step_free(ViTStep *s) {
  if (!s) return;
  twin_free(s->twin);
  step_losses_free(&s->losses);
  free(s->X);
  free(s->y);
  free(s);
}

const ParamSet *vit_step_twin_params(const ViTStep *s) { return s->twin ? &s->twin->ps : NULL; }

/* Images [lo, hi) of a batch of bs on model m: forward, loss, and the backward of that loss
 * scaled to its share of the batch's mean. The part's mean loss goes to slot `part` of the
 * step's losses. */
static void part_backward(ViTStep *s, ViT *m, const float *X, const float *y, int lo, int hi,
                          int bs, int C, int S, int part) {
  const int n = hi - lo;
  const size_t img = (size_t)C * S * S;
  Tensor *Xh = tensor_new_on(DEV_CPU, 4, (const int[]){n, C, S, S}); /* (n, C, S, S) */
  Tensor *yh = tensor_new_on(DEV_CPU, 1, (const int[]){n});          /* (n) */
  memcpy(Xh->data, X + (size_t)lo * img, sizeof(float) * (size_t)n * img);
  memcpy(yh->data, y + lo, sizeof(float) * (size_t)n);
  Tensor *in[2] = {Xh, yh};
  tensor_to_packed(in, 2, m->head.W->device); /* the images and labels: one copy */
  Tensor *logits = NEED(s->forward(m, in[0], true), "training the ViT"); /* (n, k) */
  Tensor *loss = s->loss(logits, in[1]); /* (1) */
  step_losses_put(&s->losses, part, loss);
  /* only the parameters' gradients are read after it: each activation's gradient buffer is
   * reused once its node is done (a large share of the book preset's peak memory) */
  ag_set_release_grads(true);
  ag_backward(n == bs ? loss : t_scale(loss, (float)n / (float)bs));
  ag_set_release_grads(false);
}

/* What each half needs (twin_parts_run). */
typedef struct {
  ViTStep *s;
  ViT *m[2]; /* the model, and its twin (or the model again) for the second half */
  int half, bs, C, S;
} Halves;

static void half_backward(int part, void *arg) {
  Halves *h = arg;
  part_backward(h->s, h->m[part], h->s->X, h->s->y, part ? h->half : 0, part ? h->bs : h->half,
                h->bs, h->C, h->S, part);
}

void vit_step_begin(ViTStep *s, const float *X, const float *y, int bs, int C, int S) {
  s->bs = bs;
  if (!in_halves(s->m, bs)) {
    s->parts = 1, s->half = bs;
    part_backward(s, s->m, X, y, 0, bs, bs, C, S, 0);
    return;
  }
  const size_t img = (size_t)C * S * S;
  if ((size_t)bs * img > s->cap_x) { /* the batch, off the arena */
    free(s->X);
    s->cap_x = (size_t)bs * img;
    s->X = xmalloc(sizeof(float) * s->cap_x);
  }
  if ((size_t)bs > s->cap_y) {
    free(s->y);
    s->cap_y = (size_t)bs;
    s->y = xmalloc(sizeof(float) * s->cap_y);
  }
  memcpy(s->X, X, sizeof(float) * (size_t)bs * img);
  memcpy(s->y, y, sizeof(float) * (size_t)bs);
  ViTTwin *t = s->twin;
  s->parts = 2, s->half = bs / 2;
  Halves h = {s, {s->m, t ? &t->net : s->m}, s->half, bs, C, S};
  twin_parts_run(half_backward, &h, s->ps, t ? &t->ps : NULL, t ? t->ctx : NULL,
                 t ? &t->rng : NULL);
}

float vit_step_end(ViTStep *s) {
  float l[2];
  step_losses_read(&s->losses, s->parts, l); /* the step's one read of the device */
  if (s->parts == 1) return l[0];
  return (l[0] * (float)s->half + l[1] * (float)(s->bs - s->half)) / (float)s->bs;
}

float vit_step_backward(ViTStep *s, const float *X, const float *y, int bs, int C, int S) {
  vit_step_begin(s, X, y, bs, C, S);
  return vit_step_end(s);
}
