/* The unit-test runner: runs every registered TEST (or those whose name contains argv[1]),
 * each starting from an empty arena and tape, and ends with "N passed, N failed, N skipped". */
#include <stdarg.h>
#include <stdlib.h>

#include "../../common/rng.h"
#include "../test.h"

typedef struct {
  const char *name, *file;
  TestFn fn;
} TestCase;

static TestCase g_tests[1024];
static int g_ntests, g_cur_failures;
static const char *g_cur_name;
static char g_cur_skip[256]; /* why the current test skipped; "" when it ran */

void test_register(const char *name, TestFn fn, const char *file) {
  if (g_ntests == 1024) {
    fprintf(stderr, "too many tests\n");
    exit(2);
  }
  g_tests[g_ntests++] = (TestCase){name, file, fn};
}

void test_fail(const char *file, int line, const char *fmt, ...) {
  if (g_cur_failures < 8) { /* the first few say enough */
    va_list ap;
    va_start(ap, fmt);
    printf("    %s:%d: ", file, line);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
  }
  g_cur_failures++;
  (void)g_cur_name;
}

int test_failures(void) { return g_cur_failures; }

void test_skip(const char *fmt, ...) {
  if (g_cur_skip[0]) return; /* the first reason is the one that matters */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_cur_skip, sizeof g_cur_skip, fmt, ap);
  va_end(ap);
  if (!g_cur_skip[0]) snprintf(g_cur_skip, sizeof g_cur_skip, "(no reason given)");
}

void check_close_(const char *file, int line, const char *what, const float *got,
                  const float *want, long n, double atol, double rtol) {
  for (long i = 0; i < n; i++) {
    double g = got[i], w = want[i];
    if (!(fabs(g - w) <= atol + rtol * fabs(w))) {
      test_fail(file, line, "%s[%ld] = %.7g, expected %.7g (atol %.1g, rtol %.1g)", what, i, g,
                w, atol, rtol);
      return;
    }
  }
}

static int cmp_tests(const void *a, const void *b) {
  const TestCase *x = a, *y = b;
  int c = strcmp(x->file, y->file);
  return c ? c : 0;
}

int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : NULL;
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* stable order by file, registration order within a file */
  for (int i = 1; i < g_ntests; i++) { /* insertion sort keeps it stable */
    TestCase t = g_tests[i];
    int j = i - 1;
    while (j >= 0 && cmp_tests(&g_tests[j], &t) > 0) {
      g_tests[j + 1] = g_tests[j];
      j--;
    }
    g_tests[j + 1] = t;
  }
  /* AL_TEST_SEED=k: gradient checks weight their outputs with other random numbers (the tests'
   * inputs stay fixed: some are chosen to keep ReLU pre-activations off their kink) */
  const char *seed_env = getenv("AL_TEST_SEED");
  const unsigned long gc_seed = 99 + (seed_env ? strtoul(seed_env, NULL, 10) : 0);
  int passed = 0, failed = 0, skipped = 0;
  for (int i = 0; i < g_ntests; i++) {
    if (filter && !strstr(g_tests[i].name, filter) && !strstr(g_tests[i].file, filter)) continue;
    g_cur_failures = 0;
    g_cur_skip[0] = 0;
    g_cur_name = g_tests[i].name;
    rng_seed(1234);
    gradcheck_seed(gc_seed);
    ag_set_grad_enabled(true);
    g_tests[i].fn();
    ag_step_reset();
    if (g_cur_failures) {
      printf("FAIL %s (%s)\n", g_tests[i].name, g_tests[i].file);
      failed++;
    } else if (g_cur_skip[0]) {
      printf("skip %s: %s\n", g_tests[i].name, g_cur_skip);
      skipped++;
    } else {
      printf("ok   %s\n", g_tests[i].name);
      passed++;
    }
  }
  tensor_shutdown();
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
