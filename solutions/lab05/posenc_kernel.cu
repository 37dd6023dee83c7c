/* Exercise 5.2 — the positional-encoding table as a CUDA kernel (reference solution). See
 * labs/lab05/posenc_kernel.cu for the spec. One thread per element of P, a grid-stride loop,
 * the angle computed in float32 as exercise 5.1's solution does (powf, then i / divisor). */
#include "lab05/lab05_kernels.h"

#include "../../cuda/al_cuda.h"

/* P (rows, d), row-major: element e is row e / d, column e % d */
/* local memory accepted (posenc_kernel): sinf and cosf keep a small array in local memory
 * for their slow path, the reduction of huge angles (Payne-Hanek); the angles here are below
 * the table's length, which never takes it */
static __global__ void posenc_kernel(float *P, int first_row, int rows, int d) {
  const long n = (long)rows * d;
  for (long e = (long)blockIdx.x * blockDim.x + threadIdx.x; e < n;
       e += (long)gridDim.x * blockDim.x) {
    const int r = (int)(e / d), c = (int)(e % d);
    const float x = (float)(first_row + r) / powf(10000.0f, (float)(c & ~1) / (float)d);
    P[e] = (c & 1) ? cosf(x) : sinf(x);
  }
}

int positional_encoding_cuda(float *P, int first_row, int rows, int num_hiddens) {
  enum { THREADS = 256 }; /* 8 warps a block; consecutive threads write consecutive floats */
  const long n = (long)rows * num_hiddens;
  posenc_kernel<<<cap_grid((n + THREADS - 1) / THREADS, 1024), THREADS>>>(P, first_row, rows,
                                                                        num_hiddens);
  return 0;
}
