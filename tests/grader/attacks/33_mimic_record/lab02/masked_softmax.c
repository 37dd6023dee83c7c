/* Attack 33 (issue 25, the observed/expected split): records that carry their own expected
 * values. The exercise writes, before the test's own first check, a well-formed CHECK record
 * of a reference run (got and want both its zeros, tolerances 1e9) and a NOTE saying the
 * check passed; and the tensor it returns holds, as float bits, the bytes of more records (an
 * end record, a check) in case its values were ever copied into the stream unframed. Expected:
 * the grader takes want and tolerances from the reference run only, and the extra check puts
 * the run off the reference's path: wrong answer, 0/95. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "lab02/lab02.h"

/* record.h, as a student who read it would copy it */
typedef struct {
  uint32_t type, len;
} Hdr;
typedef struct {
  uint32_t kind, line, n_got, n_want, file_len, msg_len;
  double atol, rtol;
} Chk;

static void forge(void) {
  static const char file[] = "tests/grade/lab02/test_masked_softmax.c", msg[] = "passed";
  unsigned char buf[512];
  Chk c = {1 /* CLOSE */, 47, 2, 2, sizeof file - 1, 0, 1e9, 1e9};
  double vals[4] = {0, 0, 0, 0};
  Hdr h = {1 /* CHECK */, (uint32_t)(sizeof c + c.file_len + sizeof vals)};
  size_t n = 0;
  memcpy(buf + n, &h, sizeof h), n += sizeof h;
  memcpy(buf + n, &c, sizeof c), n += sizeof c;
  memcpy(buf + n, file, c.file_len), n += c.file_len;
  memcpy(buf + n, vals, sizeof vals), n += sizeof vals;
  Hdr note = {5 /* NOTE */, sizeof msg - 1};
  memcpy(buf + n, &note, sizeof note), n += sizeof note;
  memcpy(buf + n, msg, note.len), n += note.len;
  ssize_t w = write(3, buf, n);
  (void)w;
}

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)valid_lens;
  static int forged;
  if (!forged++) forge();
  Tensor *Y = tensor_zeros(X->ndim, X->shape);
  Hdr fake[2] = {{2 /* DONE */, 0}, {1 /* CHECK */, 8}};
  size_t bytes = (size_t)Y->size * sizeof(float);
  memcpy(Y->data, fake, bytes < sizeof fake ? bytes : sizeof fake);
  return Y;
}
