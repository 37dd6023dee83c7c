/* lab02_kernels.h — the kernel exercise of lab 02 (the kernel track: cuda/README.md, "Kernel
 * exercises"). Declarations only, usable from C and from a .cu file (compiled by nvcc for a GPU
 * and as host C++ against the emulator, cuda/emu.h). Every pointer here is GPU memory: host
 * code never reads it. */
#ifndef LAB02_KERNELS_H
#define LAB02_KERNELS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exercise 2.6 — masked softmax, one warp per row (labs/lab02/masked_softmax_kernel.cu).
 * x, y: device memory (rows, keys). Row r keeps its first len[r / per] keys: len NULL keeps
 * all of them (the plain softmax); per = queries for the book's 1-D valid lengths (one per
 * example), per = 1 for 2-D (one per query); each length in [0, keys]. Row r of y is the
 * softmax of its kept keys, zeros after them; a row whose max is -inf (length 0, or every kept
 * score -inf) is all zeros. rows >= 1, keys >= 1, per >= 1. Returns 0 once the kernel is
 * launched, -1 if not implemented. --device cuda computes every softmax with it (len NULL). */
int masked_softmax_cuda(const float *x, float *y, const int *len, long per, long rows, int keys);
/* Its backward: dx (rows, keys) = y * (g - <g, y>) per row (g = dL/dy), stored when fresh,
 * added to dx otherwise. Returns 0 once launched, -1 if not implemented. */
int masked_softmax_cuda_backward(const float *y, const float *g, float *dx, long rows, int keys,
                                 bool fresh);

#ifdef __cplusplus
}
#endif
#endif
