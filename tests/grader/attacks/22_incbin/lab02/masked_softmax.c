/* Attack 22 (issue 25, route 7): the assembler reads files too. Under the old Gradescope recipe
 * the root `make grade` compiled this, and .incbin put a hidden test's object (or the reference
 * runner) into the submission, where a visible test's output printed it. Expected: refused
 * (inline assembly); and the compile runs as nobody, who cannot read /autograder/ref anyway. */
#include "lab02/lab02.h"
#include "../../common/exercise.h"

__asm__(".section .rodata\n.global attack22_blob\nattack22_blob:\n"
        ".incbin \"../../build/solutions/grade-run\"\n.previous");

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)X, (void)valid_lens;
  EXERCISE_TODO("2.1", "masked_softmax");
  return NULL;
}
