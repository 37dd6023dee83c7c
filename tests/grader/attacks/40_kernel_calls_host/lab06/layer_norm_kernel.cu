/* Attack 40: a kernel exercise that calls the kit's host code. In the emulator a launcher is
 * host C++ in the runner, which links the kit's CPU backend for the composition tests; this
 * "kernel" copies its input to the host and lets backend_of(DEV_CPU)->layer_norm (the CPU op
 * of AddNorm) compute it, then copies back; the backward takes the table itself, cpu_backend. nvcc would build the launcher (it is host code),
 * but no kernel does the work: without a check every lab06_layer_norm_kernel test scores.
 * Expected: check_submission.sh refuses the object (a kernel exercise may reference only
 * device functions and the CUDA API: tests/grade/device_symbols.txt), naming backend_of and cpu_backend; the
 * file is graded as the stub, 0 points. */
#include <stdlib.h>

#include "lab06/lab06_kernels.h"

#include "../../common/backend.h"
#include "../../cuda/al_cuda.h"

static float *to_host(const float *d, size_t n) {
  if (!d) return NULL;
  float *h = (float *)malloc(n * sizeof(float));
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  return h;
}

static void to_device(float *d, float *h, size_t n) {
  if (d && h) cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
  free(h);
}

int layer_norm_cuda(const float *x, const float *gamma, const float *beta, float *y,
                    float *stats, long rows, int D, float eps) {
  const size_t n = (size_t)rows * D;
  float *hx = to_host(x, n), *hg = to_host(gamma, D), *hb = to_host(beta, D);
  float *hy = to_host(y, n), *hs = to_host(stats, 2 * (size_t)rows);
  backend_of(DEV_CPU)->layer_norm(hx, hg, hb, hy, hs, rows, D, eps);
  to_device(y, hy, n);
  to_device(stats, hs, 2 * (size_t)rows);
  free(hx), free(hg), free(hb);
  return 0;
}

int layer_norm_grad_cuda(const float *x, const float *gamma, const float *stats, const float *g,
                         float *dx, float *dgamma, float *dbeta, long rows, int D, int fresh) {
  const size_t n = (size_t)rows * D;
  float *hx = to_host(x, n), *hgam = to_host(gamma, D), *hs = to_host(stats, 2 * (size_t)rows);
  float *hg = to_host(g, n), *hdx = to_host(dx, n), *hdg = to_host(dgamma, D);
  float *hdb = to_host(dbeta, D);
  cpu_backend.layer_norm_grad(hx, hgam, hs, hg, hdx, hdg, hdb, rows, D, fresh != 0);
  to_device(dx, hdx, n);
  to_device(dgamma, hdg, D);
  to_device(dbeta, hdb, D);
  free(hx), free(hgam), free(hs), free(hg);
  return 0;
}
