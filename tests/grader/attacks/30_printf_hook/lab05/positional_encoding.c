/* Attack 30 (issue 25, route 4): code that runs after the call returns. The exercise computes
 * nothing; it registers a printf handler for %d (register_printf_specifier), which the test's
 * next formatted message runs. The handler looks through the heap after the student's table P
 * for the expected table (row 0 of a positional encoding is 0, 1, 0, 1, ...; row 1 starts with
 * sin(1)) and copies it into P. Against tests that compute their expected values in the
 * student's process and format a message before sending the observation, this scores
 * lab05_pe_table and lab05_pe_table_odd (4 points). Expected: a student's runner holds no
 * expected values and formats nothing between the call and the check, so nothing is found
 * (and the handler never even runs): P stays NaN, wrong answer, 0/95. */
#include <fcntl.h>
#include <math.h>
#include <printf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab05/lab05.h"

static float *g_P;
static int g_L, g_d;

/* End of the mapping of /proc/self/maps that holds addr (0 when none). */
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
    unsigned long lo = 0, hi = 0;
    char *p = line;
    lo = strtoul(p, &p, 16);
    if (*p == '-') hi = strtoul(p + 1, NULL, 16);
    if (addr >= lo && addr < hi) return hi;
    char *nl = strchr(line, '\n');
    if (!nl) break;
    line = nl + 1;
  }
  return 0;
}

static void steal(void) {
  if (!g_P) return;
  const long n = (long)g_L * g_d;
  float row1 = (float)sin(1.0);
  uintptr_t end = mapping_end((uintptr_t)g_P);
  for (const float *c = g_P + n; end && (uintptr_t)(c + n) <= end; c++) {
    int ok = 1;
    for (int j = 0; j < g_d && ok; j++) ok = c[j] == (j % 2 ? 1.0f : 0.0f);
    if (ok && c[g_d] == row1) {
      memcpy(g_P, c, (size_t)n * sizeof *c);
      return;
    }
  }
}

/* %d, printed by hand (no printf here: that would call this handler again) */
static int print_d(FILE *stream, const struct printf_info *info, const void *const *args) {
  (void)info;
  steal();
  char tmp[24];
  int v = **(const int *const *)args, k = 0;
  unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
  do tmp[k++] = (char)('0' + u % 10); while (u /= 10);
  if (v < 0) tmp[k++] = '-';
  for (int i = k - 1; i >= 0; i--) fputc(tmp[i], stream);
  return k;
}

static int arginfo_d(const struct printf_info *info, size_t n, int *types, int *size) {
  (void)info;
  if (n > 0) {
    types[0] = PA_INT;
    size[0] = sizeof(int);
  }
  return 1;
}

int positional_encoding_table(float *P, int max_len, int num_hiddens) {
  g_P = P, g_L = max_len, g_d = num_hiddens;
  register_printf_specifier('d', print_d, arginfo_d);
  return 0;
}
