/* Own attack 14: a second thread that keeps running after the exercise returned, watching
 * the test's memory and copying its expected values into the returned tensor before the
 * check reads them. Expected: threads are refused by the sandbox (clone kills): 0/95. */
#include <pthread.h>
#include <string.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"

static Tensor *g_out;

static void *watcher(void *arg) {
  (void)arg;
  for (;;) /* a real attack would scan the stack for the expected row here */
    if (g_out) memset(g_out->data, 0, sizeof(float));
  return NULL;
}

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)valid_lens;
  g_out = tensor_zeros(X->ndim, X->shape);
  pthread_t t;
  pthread_create(&t, NULL, watcher, NULL);
  return g_out;
}
