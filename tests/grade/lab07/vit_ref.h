/* vit_ref.h — double-precision pieces of lab07's graded references, shared by test_vit.c and
 * test_vit_mlp_head.c. Reference build only (GRADE_REF): the student's runner computes no
 * expected value (tests/grade/grade.h). */
#ifndef AL_GRADE_VIT_REF_H
#define AL_GRADE_VIT_REF_H

#if GRADE_REF
#include "../../../chapters/07_vit/vit.h"

/* y (rows, out) = x (rows, in) W (in, out) + b */
static inline void lin_ref(const double *x, int rows, const Linear *l, double *y) {
  for (int r = 0; r < rows; r++)
    for (int o = 0; o < l->out; o++) {
      double s = l->b ? l->b->data[o] : 0;
      for (int i = 0; i < l->in; i++) s += x[r * l->in + i] * l->W->data[i * l->out + o];
      y[r * l->out + o] = s;
    }
}
#endif

#endif
