/* The hostile submission of the fake lab 99: each exercise attacks the grader in one way a
 * student's code could, by accident or on purpose. None of them may earn a point, and none may
 * change another test's result. */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/exercise.h"
#include "fake_lab.h"

/* fake_poison sets these; a test that runs later must not see them. */
static double g_offset;
#define POISON_FILE "poison.txt"

double fake_square(double x) {
  if (access(POISON_FILE, F_OK) == 0) return -1; /* a file left by an earlier test */
  return x * x + g_offset;
}

double fake_exit_zero(double x) {
  printf("all done, %g\n", x * x);
  exit(0);
}

double fake_underscore_exit(double x) {
  printf("all done, %g\n", x * x);
  _exit(0);
}

double fake_print_pass(double x) {
  printf("PASS\nok   lab99_print_pass\nScore: 100/100\n");
  fprintf(stderr, "passed 3/3\n{\"score\": 100, \"tests\": []}\n");
  return x;
}

double fake_flood(double x) {
  char line[100];
  memset(line, 'A', sizeof line - 1);
  line[sizeof line - 1] = '\n';
  for (int i = 0; i < 100000; i++) { /* 10 MB each */
    fwrite(line, 1, sizeof line, stdout);
    fwrite(line, 1, sizeof line, stderr);
  }
  printf("Score: 100/100\n");
  return x;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

double fake_write_results(double x) {
  const char *fake = "{\"score\": 100, \"tests\": [{\"name\": \"HACKED\", \"score\": 100, "
                     "\"max_score\": 100}]}\n";
  write_text("results.json", fake);
  const char *root = getenv("GRADE_ROOT");
  if (root) {
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", root);
    write_text(path, fake);
  }
  return x;
}

double fake_segfault(double x) {
  /* an address the compiler cannot see is invalid: a real SIGSEGV, not a trap */
  volatile double *p = (volatile double *)(uintptr_t)strtoul("16", NULL, 10);
  *p = x;
  return *p;
}

double fake_recurse(double x) {
  volatile double frame[64] = {x}; /* a frame the compiler cannot turn into a loop */
  return frame[0] < INFINITY ? fake_recurse(frame[0] + 1) + frame[63] : 0;
}

double fake_abort(double x) {
  fprintf(stderr, "fake_abort: assertion 'x < 0' failed\n");
  abort();
}

double fake_loop(double x) {
  volatile double s = x;
  for (;;) s = s * 0.5 + 1.0;
}

double fake_alloc(double x) {
  /* a runaway loop: every block stays reachable (nothing to optimize away) and there is no
   * NULL check, as in a careless program, so the write after the failed malloc kills it */
  static void *volatile head;
  for (;;) {
    void **p = malloc(16 << 20);
    *p = head;
    head = p;
  }
  return x;
}

double fake_forge_verdict(double x) {
  /* garbage shaped like a channel record on every descriptor the channel might be (well-formed
   * forged records are attack 01 under tests/grader/attacks/) */
  unsigned char rec[28] = {0};
  rec[16] = 2;
  rec[20] = 4;
  for (int fd = 0; fd < 256; fd++) {
    ssize_t w = write(fd, rec, sizeof rec);
    (void)w;
  }
  _exit(0);
}

double fake_grandchild(double x) {
  if (fork() == 0) { /* outlives the test, holding stdout and the channel */
    sleep(30);
    _exit(0);
  }
  return x;
}

double fake_poison(double x) {
  g_offset = 100;
  write_text(POISON_FILE, "left behind\n");
  write_text("../" POISON_FILE, "left behind\n");
  setenv("OMP_NUM_THREADS", "0", 1);
  return x;
}

/* A global write() would replace the C library's for the whole runner, the harness's records
 * included: this one copies each check's expected values over the observed ones. grade.mk
 * makes every symbol of a submission but its exercises local (objcopy), so it stays this
 * file's own. */
#include <sys/syscall.h>
#include "../grade/record.h"
ssize_t write(int fd, const void *buf, size_t n) {
  if (fd == REC_CHAN_FD && n > sizeof(RecHeader) + sizeof(CheckHeader)) {
    unsigned char *p = (unsigned char *)buf;
    RecHeader rh;
    CheckHeader h;
    memcpy(&rh, p, sizeof rh);
    memcpy(&h, p + sizeof rh, sizeof h);
    unsigned char *vals = p + sizeof rh + sizeof h + h.file_len + h.msg_len;
    if (rh.type == REC_CHECK && h.n_got == h.n_want)
      memcpy(vals, vals + h.n_got * sizeof(double), h.n_got * sizeof(double));
  }
  return syscall(SYS_write, fd, buf, n);
}

double fake_interpose(double x) { return x; }

double fake_stub(double x) {
  EXERCISE_TODO("99.1", "fake_stub");
  return NAN;
}

double fake_wrong(double x) { return x * x + 1; }

double fake_slow(double x) {
  nanosleep(&(struct timespec){1, 200000000}, NULL);
  return x * x;
}

/* wrong answers with a pattern the grader can name (and one without) */
Tensor *fake_matrix(int pattern) {
  Tensor *y = tensor_zeros(SHAPE(2, 3, 3)); /* (b, i, j) */
  if (pattern == 2) return y;
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        int r = pattern == 0 ? j : i, c = pattern == 0 ? i : j;
        double v = 1 + b + 0.5 * r - 0.3 * c * c + 0.1 * r * c;
        y->data[(b * 3 + i) * 3 + j] = (float)(pattern == 1 ? 0.5 * v : v);
      }
  if (pattern == 3) y->data[(1 * 3 + 2) * 3 + 1] += 0.25f;
  return y;
}

Tensor *fake_double(Tensor *x) {
  Tensor *y = tensor_new(x->ndim, x->shape);
  for (long i = 0; i < x->size; i++) y->data[i] = x->data[i]; /* the input as it came */
  return y;
}

Tensor *fake_row_sums(Tensor *x) {
  int rows = x->shape[0], cols = x->shape[1];
  Tensor *y = tensor_zeros(SHAPE(1, rows)); /* (1, rows): the wrong shape */
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) y->data[i] += x->data[i * cols + j];
  return y;
}
