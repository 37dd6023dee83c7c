/* Attack 4 (issue 15): code that runs at load time through an IFUNC resolver on an exercise's
 * name (nm type 'i'). In the old grader it ran inside the scoring process before main() and
 * registered a 500-point test. Now it runs in a confined runner, and the list of tests comes
 * from the reference runner. Expected: 0/95 (no 500-point test), the stubs' zero. */
#include "lab02/lab02.h"

#include "../../common/exercise.h"
/* the runner's registry, declared here as tests/grade/grade.h has it (a submission may include
 * only the exercise headers and the system's) */
typedef void (*GradedFn)(void);
void graded_register(const char *name, int points, const char *desc, GradedFn fn,
                     const char *file);

static void bonus(void) {}

static Tensor *stub(Tensor *X, Tensor *valid_lens) {
  (void)X, (void)valid_lens;
  EXERCISE_TODO("2.1", "masked_softmax");
  return NULL;
}

static Tensor *(*resolve(void))(Tensor *, Tensor *) {
  graded_register("lab02_bonus", 500, "free points", bonus, "tests/grade/lab02/bonus.c");
  return stub;
}

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) __attribute__((ifunc("resolve")));
