/* Attack 1 (issue 15): forge the grader's records from inside the exercise. The old harness
 * judged in the test's own process: pointing fd 3 at a private pipe, calling the harness's
 * grade_fail() to learn the record format and the nonce, then writing a passing verdict gave
 * full marks. Now the runner only reports values: this stub writes well-formed records that
 * claim every check of the masked_softmax tests held (got = want, shapes right) and an end
 * record, then leaves with _exit(0). Expected: 0 points (the values are not the reference's). */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"
#include "../../tests/grade/record.h"

static void put(const void *p, size_t n) {
  ssize_t w = write(REC_CHAN_FD, p, n);
  (void)w;
}

static void forge(uint32_t kind, int line, double value, uint32_t n) {
  static double vals[4096];
  for (uint32_t i = 0; i < n; i++) vals[i] = value;
  const char *file = "tests/grade/lab02/test_masked_softmax.c", *msg = "forged";
  CheckHeader h = {kind, (uint32_t)line, n, n, (uint32_t)strlen(file), (uint32_t)strlen(msg), 1, 1};
  RecHeader rh = {REC_CHECK, (uint32_t)(sizeof h + h.file_len + h.msg_len + 2 * n * sizeof(double))};
  put(&rh, sizeof rh);
  put(&h, sizeof h);
  put(file, h.file_len);
  put(msg, h.msg_len);
  put(vals, n * sizeof(double)); /* got = want: "it matched" */
  put(vals, n * sizeof(double));
}

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)valid_lens;
  /* (the old trick, a private pipe on fd 3 to read the nonce back, needs none now: records
   * carry no secret, and the format is in record.h) */
  long n = X ? (long)X->shape[0] * X->shape[1] * X->shape[2] : 16;
  for (int line = 30; line < 180; line++) forge(CHK_CLOSE, line, 1.0 / 5, (uint32_t)n);
  forge(CHK_NEAR, 150, 0, 1);
  RecHeader done = {REC_DONE, 0};
  put(&done, sizeof done);
  _exit(0);
}
