/* Exercise 2.5 — masked softmax as a plain C loop (reference solution; the spec is in
 * labs/lab02/masked_softmax_rows.c). Three passes per row: the max over the valid keys, the
 * shifted exponentials and their sum, the scaling and the zero tail. An empty row (len 0) skips
 * the first two and is written as zeros, so -inf - -inf never happens. */
#include <math.h>

#include "lab02/lab02.h"

int masked_softmax_rows(const float *X, const int *valid_lens, int lens_ndim, int batch,
                        int queries, int keys, float *Y) {
  for (int b = 0; b < batch; b++)
    for (int i = 0; i < queries; i++) {
      const long r = (long)b * queries + i;
      const float *x = X + r * keys; /* (keys) */
      float *y = Y + r * keys;       /* (keys) */
      int len = !valid_lens ? keys : lens_ndim == 1 ? valid_lens[b] : valid_lens[r];
      float m = -INFINITY;
      for (int j = 0; j < len; j++) m = fmaxf(m, x[j]);
      float sum = 0.0f;
      for (int j = 0; j < len; j++) {
        y[j] = expf(x[j] - m); /* <= 1: no overflow */
        sum += y[j];
      }
      const float inv = len > 0 ? 1.0f / sum : 0.0f;
      for (int j = 0; j < len; j++) y[j] *= inv;
      for (int j = len; j < keys; j++) y[j] = 0.0f;
    }
  return 0;
}

int masked_softmax_rows_backward(const float *Y, const float *dY, int batch, int queries,
                                 int keys, float *dX) {
  const long rows = (long)batch * queries;
  for (long r = 0; r < rows; r++) {
    const float *y = Y + r * keys, *dy = dY + r * keys; /* (keys) */
    float *dx = dX + r * keys;                          /* (keys) */
    float dot = 0.0f;
    for (int j = 0; j < keys; j++) dot += dy[j] * y[j];
    for (int j = 0; j < keys; j++) dx[j] = y[j] * (dy[j] - dot);
  }
  return 0;
}
