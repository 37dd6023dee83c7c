/* Own attack 18 (found in review): move a page of the submission's own code over the
 * harness's with mremap(MREMAP_MAYMOVE | MREMAP_FIXED), which keeps the page executable, so
 * grade_observe_ would run student code. No PROT_EXEC request is ever made. Expected: the
 * sandbox kills mremap with MREMAP_FIXED (malloc needs only MREMAP_MAYMOVE): 0/95. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"
/* the harness function, declared here as tests/grade/grade.h has it (a submission may include
 * only the exercise headers and the system's) */
void grade_observe_(const char *file, int line, int kind, const float *a, const float *b,
                    long n);

__attribute__((aligned(4096), noinline)) static int always_pass(void) { return 1; }

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)valid_lens;
  uintptr_t target = (uintptr_t)&grade_observe_ & ~(uintptr_t)4095;
  mremap((void *)(uintptr_t)&always_pass, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED,
         (void *)target);
  return tensor_zeros(X->ndim, X->shape);
}
