/* proto.h — the bus between a host process (runtime.c) and vgpu-device (device.c): one request,
 * one reply, over a socket. Only device addresses, sizes and bytes cross it. */
#ifndef VGPU_PROTO_H
#define VGPU_PROTO_H

#include <stdint.h>

enum {
  VQ_MALLOC = 1, /* a = size -> val = address */
  VQ_FREE,       /* a = address */
  VQ_H2D,        /* a = dst, payload = bytes */
  VQ_D2H,        /* a = src, b = count -> payload */
  VQ_D2D,        /* a = dst, b = src, c = count */
  VQ_MEMSET,     /* a = dst, b = byte, c = count */
  VQ_PARAMS,     /* payload = kernel name -> payload = uint32 count, then (offset, size) pairs */
  VQ_LAUNCH,     /* payload = vq_launch, name, parameter bytes */
  VQ_SYNC,       /* -> err: the sticky error of a faulted kernel, or 0 */
  VQ_SGEMM,      /* payload = vq_gemm: cuBLAS's sgemm (column-major), done by the device */
  VQ_BYE
};

typedef struct { /* C_i = alpha op(A_i) op(B_i) + beta C_i, i < batch, column-major as cuBLAS */
  int32_t transa, transb, m, n, k, batch;
  int32_t lda, ldb, ldc, pad;
  float alpha, beta;
  uint64_t A, B, C;
  int64_t sa, sb, sc; /* strides between batch entries, in elements */
} vq_gemm;

typedef struct {
  uint32_t op, len; /* len: payload bytes that follow */
  uint64_t a, b, c;
} vq_req;

typedef struct {
  int32_t err;
  uint32_t len;
  uint64_t val;
} vq_rep;

typedef struct {
  uint32_t grid[3], block[3];
  uint32_t dyn_shared, name_len, param_len, pad;
} vq_launch;

#define VGPU_MAX_PAYLOAD (1u << 31)

#endif
