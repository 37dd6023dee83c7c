/* profile.h — the emulator's memory counters per kernel, for C callers (tests/cuda/cuda_check.c
 * --profile). Counted by the emulator (cuda/emu.cpp) while profiling is on; the nvcc build has no
 * counters (use Nsight Compute on a GPU): cuda_profile_start then returns false. */
#ifndef AL_CUDA_PROFILE_H
#define AL_CUDA_PROFILE_H

#include <stdbool.h>

typedef struct {
  const char *kernel;
  long launches, threads;
  long ld_req, ld_sectors;  /* global loads: warp requests, 32-byte sectors they touch */
  long st_req, st_sectors;  /* global stores (and the sectors of atomics) */
  long atomics;             /* atomic requests */
  long sh_req, sh_wavefronts; /* shared memory: requests, wavefronts (req + bank-conflict replays) */
  double flops;             /* counted for cuBLAS's products only */
} CudaKernelProfile;

#ifdef __cplusplus
extern "C" {
#endif
/* Start counting (and forget what was counted); false where there are no counters. */
bool cuda_profile_start(void);
/* The counters per kernel since the start (at most max; returns how many), and stop. */
int cuda_profile_stop(CudaKernelProfile *out, int max);
/* The kernels launched so far with a grid from cap_grid that no launch's work outgrew (their
 * grid-stride loops never took a second trip; at most max names); -1 where the device does
 * not know (the nvcc build). */
int cuda_grid_never_capped(const char **kernels, int max);
/* lab 04's permute {0, 2, 1, 3}, x (A, B, C, D) -> y (A, C, B, D), once on fresh device memory
 * by one kernel, its counters summed into *out (lab04 --device cuda prints them beside each
 * other): exercise 4.4's kernel, 4.5's, or the kit's own (shape.cu). Returns 0; -1 when that
 * exercise is not implemented; -2 where there are no counters (the nvcc build; a CPU-only
 * build, cuda/nocuda.c). */
typedef enum { PERMUTE_BY_NAIVE, PERMUTE_BY_TILED, PERMUTE_BY_KIT } PermuteKernel;
int cuda_permute0213_profile(PermuteKernel which, int A, int B, int C, int D,
                             CudaKernelProfile *out);
#ifdef __cplusplus
}
#endif

#endif
