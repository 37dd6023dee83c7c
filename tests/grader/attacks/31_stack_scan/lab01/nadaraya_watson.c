/* Attack 31 (issue 25, route 5): the expected values are in the student's address space. The
 * exercise computes no kernel at all: it finds its stack in /proc/self/maps and scans the
 * frames above its own for the test's expected attention weights (queries x keys floats in
 * [0, 1], every row summing to 1), copies them and pools the values with them. Against tests
 * that compute their expected values in the student's process before the call (as
 * lab01_nadaraya_watson_weights did), this scores that test (3 points). Expected: a student's
 * runner computes no expected value, the scan finds nothing, and the stub's answer stands
 * (not implemented, 0/95). */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab01/lab01.h"

#include "../../common/exercise.h"

/* End of the mapping that holds addr (0 when none). */
static uintptr_t mapping_end(uintptr_t addr) {
  static char buf[1 << 16];
  int fd = open("/proc/self/maps", O_RDONLY);
  if (fd < 0) return 0;
  size_t len = 0;
  ssize_t n;
  while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)n;
  close(fd);
  buf[len] = '\0';
  for (char *line = buf; *line;) {
    char *p = line;
    unsigned long lo = strtoul(p, &p, 16), hi = *p == '-' ? strtoul(p + 1, NULL, 16) : 0;
    if (addr >= lo && addr < hi) return hi;
    char *nl = strchr(line, '\n');
    if (!nl) break;
    line = nl + 1;
  }
  return 0;
}

/* rows x cols floats that look like attention weights: in [0, 1], rows summing to 1, not all
 * rows uniform. */
static int looks_like_weights(const float *w, int rows, int cols) {
  int uniform = 1;
  for (int i = 0; i < rows; i++) {
    double s = 0;
    for (int j = 0; j < cols; j++) {
      float v = w[i * cols + j];
      if (!(v >= 0.0f && v <= 1.0f)) return 0;
      s += v;
      uniform &= fabsf(v - 1.0f / (float)cols) < 1e-6f;
    }
    if (fabs(s - 1.0) > 1e-5) return 0;
  }
  return !uniform;
}

Tensor *nadaraya_watson(Tensor *x_train, Tensor *y_train, Tensor *queries, KernelFn kernel,
                        double width, Tensor **attention_weights, int *n_unsupported) {
  (void)kernel, (void)width;
  const int rows = (int)queries->size, cols = (int)x_train->size;
  volatile float here = 0;
  uintptr_t lo = (uintptr_t)&here, hi = mapping_end(lo);
  const float *found = NULL;
  for (uintptr_t a = (lo + 3) & ~(uintptr_t)3; hi && a + sizeof(float) * rows * cols <= hi && !found;
       a += sizeof(float))
    if (looks_like_weights((const float *)a, rows, cols)) found = (const float *)a;
  if (!found) {
    EXERCISE_TODO("1.2", "nadaraya_watson");
    return NULL;
  }
  Tensor *A = tensor_new(2, (int[]){rows, cols});
  memcpy(A->data, found, sizeof(float) * rows * cols);
  Tensor *y = tensor_new(1, (int[]){rows});
  for (int i = 0; i < rows; i++) {
    float acc = 0;
    for (int j = 0; j < cols; j++) acc += A->data[i * cols + j] * y_train->data[j];
    y->data[i] = acc;
  }
  if (attention_weights) *attention_weights = A;
  if (n_unsupported) *n_unsupported = 0;
  return y;
}
