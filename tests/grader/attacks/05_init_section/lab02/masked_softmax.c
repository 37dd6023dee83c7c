/* Attack 5 (issue 15): a top-level asm fragment in the .init section, which glibc runs before
 * constructors and main() (check_submission.sh looks only for .init_array and friends). In
 * the old grader it ran in the scoring process and registered a 500-point test. Now it runs
 * in the confined runner; it also tries to write a results.json of its own. Expected: 0/95. */
#include <fcntl.h>
#include <unistd.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"
#include "../../tests/grade/grade.h"

static void bonus(void) {}

__attribute__((used)) static void early(void) {
  graded_register("lab02_bonus_init", 500, "free points", bonus, "tests/grade/lab02/bonus.c");
  int fd = open("/tmp/results.json", O_WRONLY | O_CREAT | O_TRUNC, 0644); /* the sandbox kills */
  if (fd >= 0) close(fd);
}

__asm__(".pushsection .init,\"ax\",@progbits\n\tsub $8, %rsp\n\tcall early\n\tadd $8, %rsp\n\t.popsection");

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)X, (void)valid_lens;
  EXERCISE_TODO("2.1", "masked_softmax");
  return NULL;
}
