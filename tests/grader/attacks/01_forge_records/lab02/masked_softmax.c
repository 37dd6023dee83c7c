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
/* the channel's record format, copied from tests/grade/record.h (a submission may include only
 * the exercise headers and the system's) */
#include <stdint.h>
/* record.h — what a test runner sends the grader, shared by runner.c (the child, which holds
 * student code) and grader.c (the parent, which never does).
 *
 * The runner sends observations, never verdicts: for every EXPECT a CHECK record with the
 * values the test looked at (got) and the values its own code expected (want), and a DONE
 * record when the test function returned. The grader decides: it compares the student's got
 * values with the want values and tolerances of a trusted reference run of the same test
 * (grader.c, judge()). A record the student forges can therefore only carry wrong numbers.
 *
 * Stream: RecHeader, then len bytes of payload. Native byte order: both ends are built
 * together on one machine. */
#ifndef AL_GRADE_RECORD_H
#define AL_GRADE_RECORD_H


#define REC_CHAN_FD 3             /* the runner's end of the channel */
#define REC_MAX_PAYLOAD (8u << 20) /* one check's values: 1M doubles at most */

enum { REC_CHECK = 1, REC_DONE = 2, REC_VMPEAK = 3, REC_SYSCALL = 4 };

typedef struct {
  uint32_t type, len;
} RecHeader;

/* Kinds of check, one per EXPECT macro of grade.h, and what got/want hold. */
enum {
  CHK_CLOSE = 1,   /* got[n], want[n]: |got - want| <= atol + rtol*|want| element-wise */
  CHK_NEAR = 2,    /* got[1], want[1]: |got - want| <= atol */
  CHK_SHAPE = 3,   /* got[1 + ndim], want[1 + ndim]: ndim, then the dims; equal */
  CHK_NOTNULL = 4, /* got[1] (1 = not NULL), want[1] = 1 */
  CHK_BOOL = 5,    /* EXPECT(cond): got[1] (1 = true), want[1] = 1 */
  CHK_FAIL = 6,    /* grade_fail(): a failure by itself; no values */
  CHK_DROPOUT = 7, /* got[n], want[n]: every got is 0 or 2*want, some of each */
};

/* A CHECK payload: this header, then file (file_len bytes), message (msg_len bytes),
 * got (n_got doubles), want (n_want doubles). message is what the test says about the check
 * ("what" of EXPECT_CLOSE, the formatted text of EXPECT and grade_fail). */
typedef struct {
  uint32_t kind, line, n_got, n_want, file_len, msg_len;
  double atol, rtol;
} CheckHeader;

/* "tests/grade/lab02/test_x.c" out of whatever path the compiler was given (runner and grader
 * name a test's file the same way) */
static inline const char *short_path(const char *file) {
  const char *p = strstr(file, "tests/");
  return p ? p : file;
}

#endif


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
