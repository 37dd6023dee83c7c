/* kernel_test.h — what a graded test of a kernel exercise (the kernel track; cuda/README.md,
 * "Kernel exercises") uses besides grade.h: device memory of the CUDA emulator, the grid cap,
 * and the emulator's memory counters. Kit code (kernel_test.cpp, compiled against cuda/emu.h),
 * linked into every runner with the emulator; C.
 *
 * A kernel test calls the student's launcher (labNN_kernels.h) on device memory from here,
 * copies the result back and sends it with EXPECT_CLOSE; the expected values come from the CPU
 * op or the formula, under #if GRADE_REF (grade.h). The student's kernel runs under the
 * emulator's checks (memcheck, initcheck, racecheck, synccheck): a finding stops the test there
 * (0 points) and the grader shows the emulator's report. Output buffers come from kt_alloc
 * unwritten, so a kernel that reads them before writing is an initcheck finding. */
#ifndef AL_GRADE_KERNEL_TEST_H
#define AL_GRADE_KERNEL_TEST_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* n floats of fresh device memory (NaN, unwritten for initcheck); kt_upload: holding
 * host[0..n). Never NULL (an emulator failure stops the test). */
float *kt_alloc(long n);
float *kt_upload(const float *host, long n);
int *kt_upload_ints(const int *host, long n);
void kt_download(float *host, const float *dev, long n);
void kt_free(void *dev);
/* Every launch through cap_grid from now on gets at most `blocks` blocks (make test's
 * AL_CUDA_EMU_GRID_CAP): a grid-stride loop must loop. 0: the launcher's own cap. */
void kt_grid_cap(long blocks);

/* The student's launcher did the work on the device (KT_LAUNCHER below): kt_watch_begin before
 * the call; kt_watch_end after it returns 1, or 0 with why in msg: it launched no kernel, copied
 * a test buffer (kt_alloc/kt_upload*) to the host or wrote one from the host with cudaMemcpy
 * (loops on the host), or kept more device memory after a repeated call of `launcher` than
 * after its first (a leak: every training step calls it). */
void kt_watch_begin(void);
int kt_watch_end(const char *launcher, char *msg, int size);

/* The emulator's memory counters of the kernels launched between kt_profile_begin and
 * kt_profile_end, summed (cuda/README.md, "The profiler"). */
typedef struct {
  double launches, ld_req, ld_sectors, st_req, st_sectors, atomics, sh_req, sh_conflicts;
  double kb_moved; /* the sectors' bytes, loads and stores, / 1024 */
  double h100_us;  /* the bytes at the H100's 3.35 TB/s: an estimate, not a measurement */
} KtCounters;
enum { KT_NCOUNTERS = 10 }; /* = CNT_N of record.h, in its order */
void kt_profile_begin(void);
KtCounters kt_profile_end(void);
/* The counters as KT_NCOUNTERS doubles, in KtCounters' order (what a test sends). */
void kt_counters_values(const KtCounters *c, double *out);

#ifndef __cplusplus
#include "grade.h"
_Static_assert((int)KT_NCOUNTERS == (int)CNT_N, "KtCounters and record.h's CNT_* differ");

/* EXPECT_COUNTERS(c, what): the counters c (KtCounters) of the student's kernel go into the
 * grade output beside the reference kernel's, measured the same way in the reference run:
 * information, never a failure. EXPECT_COUNTERS_WITHIN(c, metrics, factor, what): the same, and
 * a check that fails when a metric (CNT_SECTORS, CNT_LD_SECTORS, CNT_ST_SECTORS, CNT_CONFLICTS
 * of record.h, or-ed) of the student's kernel is more than factor times the reference's: the
 * points a coalesced permute or a fused attention that reads K and V once earns. Measured in
 * the student's process, like every value it sends: the grade refuses a .cu that calls the
 * emulator's profiler (check_submission.sh), but these are evidence, as the values are. */
/* rc = KT_LAUNCHER(launcher(args...), "launcher"): the call, watched (kt_watch_end); a launcher
 * that returned 0 without doing its work on the device fails a check saying why. */
#define KT_LAUNCHER(call, name) kt_launcher_(__FILE__, __LINE__, (kt_watch_begin(), (call)), (name))
static inline int kt_launcher_(const char *file, int line, int rc, const char *name) {
  char msg[512];
  const int on_device = kt_watch_end(name, msg, (int)sizeof msg);
  if (rc == 0) grade_expect_(file, line, on_device, "%s: %s", name, msg);
  return rc;
}

#define EXPECT_COUNTERS(c, what)                                                             \
  kt_expect_counters_(__FILE__, __LINE__, &(c), 0, 0, GRADE_WHAT(what))
#define EXPECT_COUNTERS_WITHIN(c, metrics, factor, what)                                     \
  kt_expect_counters_(__FILE__, __LINE__, &(c), (metrics), (factor), GRADE_WHAT(what))
static inline void kt_expect_counters_(const char *file, int line, const KtCounters *c,
                                       int metrics, double factor, const char *what) {
  double v[KT_NCOUNTERS];
  kt_counters_values(c, v);
  grade_counters_(file, line, v, KT_NCOUNTERS, factor, metrics, what);
}
#endif

#ifdef __cplusplus
}
#endif
#endif
