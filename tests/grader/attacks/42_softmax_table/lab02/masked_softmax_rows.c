/* Attack 42 (issue 35): exercise 2.5 is plain loops, yet the kit's softmax is one table lookup
 * away (backend_of(DEV_CPU)->softmax). Refused: a plain-loop exercise may call the C library
 * only (tests/grade/c_only.txt, check_submission.sh). */
#include <string.h>
#include "lab02/lab02.h"
#include "../../common/backend.h"
int masked_softmax_rows(const float *X, const int *valid_lens, int lens_ndim, int batch,
                        int queries, int keys, float *Y) {
  (void)valid_lens, (void)lens_ndim;
  backend_of(DEV_CPU)->softmax(X, Y, (long)batch * queries, keys);
  return 0;
}
int masked_softmax_rows_backward(const float *Y, const float *dY, int batch, int queries,
                                 int keys, float *dX) {
  backend_of(DEV_CPU)->softmax_grad(Y, dY, dX, (long)batch * queries, keys, true);
  return 0;
}
