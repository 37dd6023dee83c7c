/* nocuda.c — the CUDA entry points of a CPU-only build (no nvcc, or NO_CUDA=1). */
#include <stdio.h>

#include "../common/backend.h"
#include "profile.h"

bool cuda_open(char *err, size_t errlen) {
  snprintf(err, errlen,
           "this build has no CUDA backend (nvcc was not found at build time, or NO_CUDA=1); "
           "run with --device cpu");
  return false;
}
bool cuda_blas_load(char *err, size_t errlen) { return cuda_open(err, errlen); }
CudaCopyCounts cuda_copy_counts(void) { return (CudaCopyCounts){0, 0}; }
const char *cuda_device_name(void) { return "none"; }
bool cuda_profile_start(void) { return false; } /* the emulator's counters only */
int cuda_profile_stop(CudaKernelProfile *out, int max) { return 0; }
int cuda_permute0213_profile(PermuteKernel which, int A, int B, int C, int D,
                             CudaKernelProfile *out) {
  (void)which, (void)A, (void)B, (void)C, (void)D, (void)out;
  return -2;
}
