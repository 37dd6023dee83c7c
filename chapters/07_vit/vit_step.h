/* vit_step.h — how lab07 executes a training batch's forward, loss and backward (vit_step.c).
 * The training loop calls vit_step_backward once per batch; vit_step_twin_params is for the
 * tests. */
#ifndef AL_VIT_STEP_H
#define AL_VIT_STEP_H

#include "vit.h"

/* The loss of a batch: logits (n, num_classes), labels y (n) -> the mean loss (1). */
typedef Tensor *(*ViTLossFn)(Tensor *logits, Tensor *y);

typedef struct ViTStep ViTStep;
/* Training steps of m (parameters ps) with the given forward pass and loss. */
ViTStep *vit_step_new(ViT *m, ParamSet *ps, ViTForwardFn forward, ViTLossFn loss);
void vit_step_free(ViTStep *s);
/* Forward, loss and backward of a host batch X (bs, C, S, S), labels y (bs): the gradients of
 * the batch's mean loss are added into ps's (zero them first). Returns that mean loss. The
 * activation arena may be rewound inside (X and y are read first). */
float vit_step_backward(ViTStep *s, const float *X, const float *y, int bs, int C, int S);
/* The same in two calls, so that the host can prepare the next batch while a device works on
 * this one: vit_step_begin runs (on a device: launches) forward, loss and backward, and has
 * copied X and y when it returns (the caller may overwrite them); vit_step_end returns the mean
 * loss, the step's one wait for the device. */
void vit_step_begin(ViTStep *s, const float *X, const float *y, int bs, int C, int S);
float vit_step_end(ViTStep *s);
/* The twin's parameters (values shared with the model's, gradients its own), NULL without one:
 * a twin is built where OpenMP grants exactly two threads and the model is small. */
const ParamSet *vit_step_twin_params(const ViTStep *s);

#endif
