/* Attack 3 (issue 15): a header named like the system's at the top of the submission, which
 * the old build's -Ilabs put in front of <math.h> for every test and chapter file, and which
 * passes the real one on with #include_next. exp() becoming 1 makes the tests' own expected
 * softmax uniform. Expected: refused before anything links (score 0, the reason in
 * results.json); no include path of a graded build reaches the submission anyway. */
#include_next <math.h>
#undef exp
#define exp(x) 1.0
