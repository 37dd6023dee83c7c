/* Attack 10 (issue 15): bytes that are not UTF-8 but passed the old grader's check into
 * results.json: a surrogate (ED A0 80), an overlong NUL (E0 80 80), a code point past
 * U+10FFFF (F4 90 80 80), plus C0 AF and FF. Expected: results.json stays valid UTF-8 JSON
 * (each bad byte becomes U+FFFD); 0/95. */
#include <stdio.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)X, (void)valid_lens;
  printf("surrogate [\xed\xa0\x80] overlong [\xe0\x80\x80] too big [\xf4\x90\x80\x80] "
         "[\xc0\xaf] [\xff] fine [\xc3\xa9]\n");
  fflush(stdout);
  EXERCISE_TODO("2.1", "masked_softmax");
  return NULL;
}
