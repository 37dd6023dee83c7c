/* record.h — what a test runner sends the grader, shared by runner.c (the child, which holds
 * student code) and grader.c (the parent, which never does).
 *
 * The runner sends observations, never verdicts: for every EXPECT a CHECK record with the
 * values the test looked at (got), and a DONE record when the test function returned. Only the
 * reference runner (the tests built with -DGRADE_REFERENCE and linked with solutions/, a
 * process that never holds student code) also sends the values its code expected (want) and
 * the tolerances; a student's runner holds no expected values at all (grade.h). The grader
 * decides: it compares the student's got values with the want values and tolerances of the
 * reference run of the same test (grader.c, judge()). A record the student forges can
 * therefore only carry wrong numbers, and nothing in the student's process can copy the
 * right ones.
 *
 * Stream: RecHeader, then len bytes of payload. Native byte order: both ends are built
 * together on one machine. */
#ifndef AL_GRADE_RECORD_H
#define AL_GRADE_RECORD_H

#include <stdint.h>
#include <string.h>

#define REC_CHAN_FD 3             /* the runner's end of the channel */
#define REC_MAX_PAYLOAD (8u << 20) /* one check's values: 1M doubles at most */

/* REC_NOTE: the text of the CHECK record just before it (an EXPECT's message, formatted only
 * after the check's value went out, so that nothing the formatting runs can change it). */
enum { REC_CHECK = 1, REC_DONE = 2, REC_VMPEAK = 3, REC_SYSCALL = 4, REC_NOTE = 5 };

typedef struct {
  uint32_t type, len;
} RecHeader;

/* Kinds of check, one per EXPECT macro of grade.h, and what got/want hold (want: in the
 * reference run's records only; a student's runner sends n_want = 0). */
enum {
  CHK_CLOSE = 1,   /* got[n], want[n]: |got - want| <= atol + rtol*|want| element-wise */
  CHK_NEAR = 2,    /* got[1], want[1]: |got - want| <= atol */
  CHK_SHAPE = 3,   /* got[1 + ndim], want[1 + ndim]: ndim, then the dims; equal */
  CHK_NOTNULL = 4, /* got[1] (1 = not NULL), want[1] = 1 */
  CHK_BOOL = 5,    /* EXPECT(cond): got[1] (1 = true), want[1] = 1 */
  CHK_FAIL = 6,    /* grade_fail(): a failure by itself; no values */
  CHK_DROPOUT = 7, /* got[n], want[n]: every got is 0 or 2*want, some of each */
  CHK_AGREE = 8,   /* got[2n]: two outputs of the run's own, a then b, |a - b| <= atol + rtol*|b| */
  CHK_SANITY = 9,  /* reference run only: got[1] (1 = true), a check of the test's own setup */
  CHK_COUNTERS = 10, /* got[CNT_N]: the CUDA emulator's memory counters of the student's kernel;
                      * want[CNT_N]: the reference kernel's; atol: a factor (0: information
                      * only), rtol: the CNT_* metrics that must be within factor x want */
  CHK_INPUT = 11,  /* reference run only: got[n], the input the next value check's output is
                    * computed from (GRADE_INPUT); never judged, read by the feedback's hints */
};

/* CHK_COUNTERS: the counters' order (tests/grade/kernel_test.h, KtCounters) ... */
enum {
  CNT_LAUNCHES, CNT_LD_REQ, CNT_LD_SECT, CNT_ST_REQ, CNT_ST_SECT, CNT_ATOMICS, CNT_SH_REQ,
  CNT_SH_CONFLICTS, CNT_KB, CNT_H100_US, CNT_N
};
/* ... and the metrics a test can give points for (bits of rtol) */
enum {
  CNT_SECTORS = 1,    /* global memory sectors, loads + stores: coalescing, reading once */
  CNT_LD_SECTORS = 2, /* global load sectors */
  CNT_ST_SECTORS = 4, /* global store sectors */
  CNT_CONFLICTS = 8,  /* shared-memory bank-conflict replays */
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
