/* Own attack 12: run code in the middle of the test's own code through a signal handler.
 * The exercise installs a SIGSEGV handler and returns a tensor whose data the test cannot
 * read; the handler would then get control inside the test's checks (and could patch their
 * registers). A constructor could install it before main() too. Expected: the runner resets
 * every handler before the test and refuses new ones (EPERM), so the read crashes: 0/95. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"

static void on_segv(int sig) {
  (void)sig;
  printf("HACKED: handler ran inside the test\n");
}

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)valid_lens;
  struct sigaction sa = {.sa_handler = on_segv};
  int rc = sigaction(SIGSEGV, &sa, NULL);
  printf("sigaction: %d\n", rc);
  Tensor *Y = tensor_zeros(X->ndim, X->shape);
  Y->data = (float *)(uintptr_t)64; /* the test's read faults here */
  return Y;
}
