/* A hidden test of the fake lab 99: graded after the handed-out ones, reported to students
 * only after the due date. */
#include "../../grade/grade.h"
#include "../fake_lab.h"

GRADED_TEST(lab99_hidden_square, 1, "hidden test of the plain exercise") {
  EXPECT_NEAR(fake_square(5), 25, 0, "fake_square(5)");
}
