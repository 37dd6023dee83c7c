/* Own attack 13: a timer whose signal fires while the test computes its expected values, so
 * that student code runs after the exercise returned (and could copy the expected values
 * into the returned tensor before the check reads it). Expected: setitimer and alarm are
 * refused by the sandbox (killed): 0/95. */
#include <signal.h>
#include <sys/time.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)valid_lens;
  struct itimerval it = {.it_value = {0, 1000}};
  setitimer(ITIMER_REAL, &it, NULL);
  return tensor_zeros(X->ndim, X->shape);
}
