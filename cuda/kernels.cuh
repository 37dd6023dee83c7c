/* kernels.cuh — each family file of cuda/ fills its entries of the CUDA Backend table; backend.cu
 * calls them all. The launchers have the signatures of backend.h (raw device pointers, sizes,
 * host-side plan structs passed by value to the kernels). */
#ifndef AL_CUDA_KERNELS_CUH
#define AL_CUDA_KERNELS_CUH

#include "al_cuda.h"

void cuda_register_elementwise(Backend *be); /* elementwise.cu */
void cuda_register_matmul(Backend *be);      /* matmul.cu */
void cuda_register_reduce(Backend *be);      /* reduce.cu */
void cuda_register_softmax(Backend *be);     /* softmax.cu */
void cuda_register_nn(Backend *be);          /* nn.cu */
void cuda_register_shape(Backend *be);       /* shape.cu */
void cuda_register_optim(Backend *be);       /* optim.cu */
void cuda_register_fused(Backend *be);       /* fused.cu: additive_scores */
void cuda_register_rnn(Backend *be);         /* rnn.cu: rnn_cell */
void cuda_register_attention(Backend *be);   /* attention.cu: fused attention forward */
/* exercises.cu: the kernel exercises' launchers (labs/ or solutions/), after the families */
void cuda_register_exercises(Backend *be);

/* The one call into cuBLAS (matmul.cu): count products C[b] = alpha op(A[b]) op(B[b]) + beta C[b]
 * in gemm.h's row-major conventions; `entry` names the caller in an error. */
void cuda_blas_product(const char *entry, bool transA, bool transB, int m, int n, int k,
                       float alpha, const float *A, int lda, long strideA, const float *B, int ldb,
                       long strideB, float beta, float *C, int ldc, long strideC, int count);

#endif
