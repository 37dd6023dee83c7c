/* Attack 5 (issue 15): a top-level asm fragment in the .init section, which glibc runs before
 * constructors and main() (check_submission.sh looks only for .init_array and friends). In
 * the old grader it ran in the scoring process and registered a 500-point test. Now it runs
 * in the confined runner, and the list of tests comes from the reference runner. Expected:
 * 0/95 (no 500-point test). */

#include "lab02/lab02.h"

#include "../../common/exercise.h"
/* the runner's registry, declared here as tests/grade/grade.h has it (a submission may include
 * only the exercise headers and the system's) */
typedef void (*GradedFn)(void);
void graded_register(const char *name, int points, const char *desc, GradedFn fn,
                     const char *file);

static void bonus(void) {}

__attribute__((used)) static void early(void) {
  graded_register("lab02_bonus_init", 500, "free points", bonus, "tests/grade/lab02/bonus.c");
}

__asm__(".pushsection .init,\"ax\",@progbits\n\tsub $8, %rsp\n\tcall early\n\tadd $8, %rsp\n\t.popsection");

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)X, (void)valid_lens;
  EXERCISE_TODO("2.1", "masked_softmax");
  return NULL;
}
