/* lab04_kernels.h — the kernel exercises of lab 04 (the kernel track: cuda/README.md, "Kernel
 * exercises"). Declarations only, usable from C and from a .cu file (compiled by nvcc for a GPU
 * and as host C++ against the emulator, cuda/emu.h). Every pointer here is device memory: host
 * code never reads it. */
#ifndef LAB04_KERNELS_H
#define LAB04_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Exercises 4.4 and 4.5 — transpose_qkv's permute on the device (labs/lab04/permute_kernel.cu):
 * x (A, B, C, D) -> y (A, C, B, D), the permute {0, 2, 1, 3} of transpose_qkv (A batch, B steps,
 * C heads, D = num_hiddens / heads) and of transpose_output (B heads, C steps):
 *   y[a][c][b][j] = x[a][b][c][j]          accumulate = 0
 *   y[a][c][b][j] += x[a][b][c][j]         accumulate = 1 (a backward adding into a gradient)
 * A, B, C, D >= 1 (the front checked them); x and y do not overlap. Return 0 once the kernel is
 * launched, -1 if not implemented.
 * 4.4: the naive kernel, one thread per row of D floats. 4.5: tiled through shared memory, reads
 * and writes both coalesced, padded against bank conflicts. The kit calls both with D <= 1024
 * (longer rows go to its own kernel, coalesced on them as it is). */
int permute0213_naive_cuda(const float *x, float *y, int A, int B, int C, int D, int accumulate);
int permute0213_tiled_cuda(const float *x, float *y, int A, int B, int C, int D, int accumulate);

#ifdef __cplusplus
}
#endif
#endif
