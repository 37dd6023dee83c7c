/* cuda_check.h — the cases of tests/cuda: each op forward and backward on the CPU and on the
 * CUDA device (the emulator in `make test`, a GPU where there is one), compared.
 *
 * A case builds its inputs with cc_input (the same numbers on either device, from the seed),
 * runs the op through its front (common/ops.h) and returns the output. The harness then pulls a
 * random gradient back through it (loss = sum(out * w)), and compares the output and every
 * input's gradient between the devices. Each family's cases live in cases_<family>.c. */
#ifndef AL_CUDA_CHECK_H
#define AL_CUDA_CHECK_H

#include <stdbool.h>

#include "../../common/backend.h"
#include "../../common/ops.h"
#include "../../common/tensor.h"

enum { CC_MAX_INPUTS = 6 };
typedef struct {
  Device dev;
  int variant;                    /* which of the case's shapes */
  Tensor *in[CC_MAX_INPUTS];      /* inputs whose gradients are compared */
  int n_in;
  char shape[96];                 /* the case's shape, for the report: "(33, 31)" */
} CcRun;

typedef struct {
  const char *name;   /* the op: "softmax", "layer_norm", ... */
  int variants;       /* number of shapes it runs */
  Tensor *(*run)(CcRun *r); /* build inputs (cc_input), run the op on r->dev, return the output */
  float tol;          /* largest allowed |cuda - cpu| / (1 + |cpu|), forward and backward */
  const char *why;    /* one line: why that tolerance */
} CcCase;

/* A (ndim, shape) tensor on r->dev with uniform values in [lo, hi) from `seed` (the same values
 * on every device); grad: it requires grad and its gradient is compared. */
Tensor *cc_input(CcRun *r, int ndim, const int *shape, unsigned seed, float lo, float hi,
                 bool grad);
/* An integer tensor (labels, ids, valid lengths) with values in [lo, hi]; never differentiated. */
Tensor *cc_ints(CcRun *r, int ndim, const int *shape, unsigned seed, int lo, int hi);
/* A (ndim, shape) tensor on r->dev holding the host values h (copied). */
Tensor *cc_tensor(CcRun *r, int ndim, const int *shape, const float *h);
/* Record the shape string shown in the report. */
void cc_shape(CcRun *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* each family's table, terminated by a case with name NULL */
extern const CcCase cases_elementwise[], cases_matmul[], cases_reduce[], cases_softmax[],
    cases_nn[], cases_shape[], cases_optim[], cases_fused[], cases_rnn[], cases_attention[];

#endif
