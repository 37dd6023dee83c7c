/* lab05_kernels.h — the kernel exercises of lab 05 (the kernel track: cuda/README.md, "Kernel
 * exercises"). Declarations only, usable from C and from a .cu file (compiled by nvcc for a GPU
 * and as host C++ against the emulator, cuda/emu.h). Every pointer named "device" is GPU
 * memory: host code never reads it. */
#ifndef LAB05_KERNELS_H
#define LAB05_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Exercise 5.2 — the positional-encoding table on the device (labs/lab05/posenc_kernel.cu):
 * P, device memory (rows, num_hiddens), gets rows first_row .. first_row + rows - 1 of the table
 * of exercise 5.1:
 *   P[r, 2j]     = sin(i / 10000^(2j / d)),   i = first_row + r,  d = num_hiddens
 *   P[r, 2j + 1] = cos(i / 10000^(2j / d))    (an odd d: the last column is a sine)
 * rows >= 1, num_hiddens >= 1, first_row >= 0 (the front checked them). Returns 0 once the
 * kernel is launched, -1 if not implemented. */
int positional_encoding_cuda(float *P, int first_row, int rows, int num_hiddens);

#ifdef __cplusplus
}
#endif
#endif
