/* Attack 41: a kernel exercise that finds the kit's host code by name at run time. The
 * launchers of 2.6 look up backend_of with dlsym (no kit symbol in the object's undefined
 * list) and run the CPU backend's softmax row by row over each row's valid keys. In a dynamic
 * runner this scores every lab02_masked_softmax_kernel test; in the static, stripped one the
 * lookup finds nothing. Expected: check_submission.sh refuses the object for calling dlsym, a
 * host function of the C library that no kernel can call (tests/grade/device_symbols.txt); the
 * file is graded as the stub, 0 points. */
#include <dlfcn.h>
#include <string.h>

#include "lab02/lab02_kernels.h"

#include "../../common/backend.h"
#include "../../cuda/al_cuda.h"

typedef const Backend *(*BackendOf)(Device);

static const Backend *cpu(void) {
  BackendOf f = (BackendOf)dlsym(RTLD_DEFAULT, "backend_of");
  return f ? f(DEV_CPU) : NULL;
}

int masked_softmax_cuda(const float *x, float *y, const int *len, long per, long rows, int keys) {
  const Backend *be = cpu();
  if (!be) return -1;
  for (long r = 0; r < rows; r++) {
    int n = len ? len[r / per] : keys;
    memset(y + r * keys, 0, keys * sizeof(float));
    if (n > 0) be->softmax(x + r * keys, y + r * keys, 1, n);
  }
  return 0;
}

int masked_softmax_cuda_backward(const float *y, const float *g, float *dx, long rows, int keys,
                                 bool fresh) {
  const Backend *be = cpu();
  if (!be) return -1;
  be->softmax_grad(y, g, dx, rows, keys, fresh);
  return 0;
}
