/* Graded tests of the fake lab 99 (see fake_lab.h). grading.sh runs them with --timeout 1
 * --mem 256 and checks the outcome of every test in results.json. */
#include "../grade/grade.h"
#include "fake_lab.h"

GRADED_TEST(lab99_square_first, 2, "plain exercise before the hostile ones") {
  EXPECT_NEAR(fake_square(3), 9, 0, "fake_square(3)");
}

GRADED_TEST(lab99_exit_zero, 1, "exercise calls exit(0)") {
  EXPECT_NEAR(fake_exit_zero(3), 9, 0, "fake_exit_zero(3)");
}

GRADED_TEST(lab99_underscore_exit, 1, "exercise calls _exit(0)") {
  EXPECT_NEAR(fake_underscore_exit(3), 9, 0, "fake_underscore_exit(3)");
}

GRADED_TEST(lab99_print_pass, 1, "exercise prints PASS and a full score") {
  EXPECT_NEAR(fake_print_pass(3), 9, 0, "fake_print_pass(3)");
}

GRADED_TEST(lab99_flood, 1, "exercise floods stdout and stderr") {
  EXPECT_NEAR(fake_flood(3), 9, 0, "fake_flood(3)");
}
GRADED_TIMEOUT(lab99_flood, 10) /* 200k failing writes past the output cap take a while */

GRADED_TEST(lab99_write_results, 1, "exercise writes results.json") {
  EXPECT_NEAR(fake_write_results(3), 9, 0, "fake_write_results(3)");
}

GRADED_TEST(lab99_segfault, 1, "exercise segfaults") {
  EXPECT_NEAR(fake_segfault(3), 9, 0, "fake_segfault(3)");
}

GRADED_TEST(lab99_recurse, 1, "exercise overflows the stack") {
  EXPECT_NEAR(fake_recurse(3), 9, 0, "fake_recurse(3)");
}

GRADED_TEST(lab99_abort, 1, "exercise aborts") {
  EXPECT_NEAR(fake_abort(3), 9, 0, "fake_abort(3)");
}

GRADED_TEST(lab99_loop, 1, "exercise loops forever") {
  EXPECT_NEAR(fake_loop(3), 9, 0, "fake_loop(3)");
}

GRADED_TEST(lab99_alloc, 1, "exercise allocates without bound") {
  EXPECT_NEAR(fake_alloc(3), 9, 0, "fake_alloc(3)");
}

GRADED_TEST(lab99_forge_verdict, 1, "exercise writes a fake verdict on every descriptor") {
  EXPECT_NEAR(fake_forge_verdict(3), 9, 0, "fake_forge_verdict(3)");
}

GRADED_TEST(lab99_grandchild, 1, "exercise leaves a child process holding the pipes") {
  EXPECT_NEAR(fake_grandchild(3), 9, 0, "fake_grandchild(3)");
}

GRADED_TEST(lab99_poison, 1, "exercise tries to break the tests after it") {
  EXPECT_NEAR(fake_poison(3), 9, 0, "fake_poison(3)");
}

GRADED_TEST(lab99_interpose, 1, "exercise replaces write() to rewrite the records") {
  EXPECT_NEAR(fake_interpose(3), 9, 0, "fake_interpose(3)");
}

GRADED_TEST(lab99_stub, 1, "exercise is still the stub") {
  EXPECT_NEAR(fake_stub(3), 9, 0, "fake_stub(3)");
}

GRADED_TEST(lab99_wrong, 1, "exercise is off by one") {
  EXPECT_NEAR(fake_wrong(4), 16, 0, "fake_wrong(4)");
}

GRADED_TEST(lab99_row_sums, 2, "tensor exercise: shape and values") {
  Tensor *x = tensor_from(SHAPE(2, 3), (const float[]){1, 2, 3, 4, 5, 6});
  Tensor *y = fake_row_sums(x);
  EXPECT_NOT_NULL(y, "fake_row_sums");
  if (!EXPECT_SHAPE(y, "row sums", 2)) return;
  EXPECT_CLOSE(y->data, ((const float[]){6, 15}), 2, 0, 0, "row sums");
}

/* Feedback: a wrong tensor's first wrong entry as (b, i, j), and a hint only for a pattern. */
static void matrix_check(int pattern) {
  Tensor *y = fake_matrix(pattern);
  EXPECT_NOT_NULL(y, "fake_matrix");
  if (!EXPECT_SHAPE(y, "fake_matrix", 2, 3, 3)) return;
#if GRADE_REF
  float want[18];
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        want[(b * 3 + i) * 3 + j] = (float)(1 + b + 0.5 * i - 0.3 * j * j + 0.1 * i * j);
#endif
  EXPECT_CLOSE(y->data, want, 18, 1e-6, 1e-6, "fake_matrix");
}
GRADED_TEST(lab99_hint_transposed, 1, "feedback: a transposed answer") { matrix_check(0); }
GRADED_TEST(lab99_hint_scaled, 1, "feedback: an answer off by a factor") { matrix_check(1); }
GRADED_TEST(lab99_hint_zeros, 1, "feedback: an answer of zeros") { matrix_check(2); }
GRADED_TEST(lab99_hint_none, 1, "feedback: a wrong answer with no pattern") { matrix_check(3); }

GRADED_TEST(lab99_hint_input, 1, "feedback: the output is the input") {
  Tensor *x = tensor_from(SHAPE(2, 3), (const float[]){1, -2, 3, 0.5f, 5, -6});
  Tensor *y = fake_double(x);
  EXPECT_NOT_NULL(y, "fake_double");
  if (!EXPECT_SHAPE(y, "fake_double(x (2, 3))", 2, 3)) return;
  GRADE_INPUT(x->data, 6, "x");
#if GRADE_REF
  float want[6];
  for (int i = 0; i < 6; i++) want[i] = 2 * x->data[i];
#endif
  EXPECT_CLOSE(y->data, want, 6, 0, 0, "fake_double(x)");
}

GRADED_TEST(lab99_slow, 1, "slow but within its own time limit") {
  EXPECT_NEAR(fake_slow(3), 9, 0, "fake_slow(3)");
}
GRADED_TIMEOUT(lab99_slow, 5)

GRADED_TEST(lab99_square_last, 2, "plain exercise after the hostile ones") {
  EXPECT_NEAR(fake_square(4), 16, 0, "fake_square(4)");
}
