/* Own attack 15: patch the runner's own code. grade_observe_ (the harness function behind
 * EXPECT_CLOSE) is in the same process; making its page writable and executable and
 * overwriting it would let every check report "got = want"; or map fresh executable memory
 * (MAP_FIXED over the harness's code, or code of its own). mprotect() itself is on
 * check_submission.sh's list, so this uses mmap and pkey_mprotect. Expected: a static runner
 * needs no new executable memory, so the sandbox kills any mmap/mprotect with PROT_EXEC:
 * 0/95. */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"
/* the harness function, declared here as tests/grade/grade.h has it (a submission may include
 * only the exercise headers and the system's) */
void grade_observe_(const char *file, int line, int kind, const float *a, const float *b,
                    long n);

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)valid_lens;
  uintptr_t page = (uintptr_t)&grade_observe_ & ~(uintptr_t)4095;
  void *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  (void)jit;
  if (pkey_mprotect((void *)page, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, -1) == 0) {
    static const unsigned char ret1[] = {0xb8, 1, 0, 0, 0, 0xc3}; /* mov eax, 1; ret */
    memcpy((void *)&grade_observe_, ret1, sizeof ret1);
  }
  return tensor_zeros(X->ndim, X->shape);
}
