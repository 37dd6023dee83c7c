/* Own attack 17: rewrite the test's captured output (or another test's) through
 * /proc/self/fd/1 opened again with O_TRUNC, to hide the stub's "not implemented" line and
 * leave a fake score. Expected: opening anything for writing kills the runner: 0/95. */
#include <fcntl.h>
#include <unistd.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)X, (void)valid_lens;
  int fd = open("/proc/self/fd/1", O_WRONLY | O_TRUNC);
  if (fd >= 0) {
    ssize_t w = write(fd, "Score: 95/95\n", 13);
    (void)w;
  }
  return NULL;
}
