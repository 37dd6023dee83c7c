/* backend.h — the seam between what an op means and how a device computes it.
 *
 *   common/ops/    the op fronts: argument and shape checks, output allocation, the tape. Once,
 *                  for every device.
 *   common/cpu/    the CPU kernels: the loops, on raw buffers.
 *   cuda/          the CUDA kernels, with the same signatures.
 *
 * A front never dereferences tensor data. It computes sizes and plans on the host (tensor
 * headers always live in host memory) and calls the kernel of its tensors' device through a
 * Backend table:   KERNEL(x->device, softmax, x->data, out->data, rows, keys);
 * Every pointer a kernel gets is memory of that device (or a small host-side plan struct,
 * which a GPU launcher passes by value); sizes are plain integers. Index tensors (labels,
 * valid lengths, token ids) are the one thing a front reads, on the host (host_read: the host
 * copy a tensor sent from the host keeps, else an explicit copy back), to check them before any
 * kernel runs; the kernels get them as ints converted on the device (index_ints). A kernel
 * never touches the tape and never calls tensor_error: every check happens in the front. (CPU
 * kernels may take host scratch from the activation arena; a device kernel takes its scratch
 * from the front, via dev_alloc.)
 *
 * Backward kernels write gradients with `fresh` semantics where the op says so: fresh means the
 * gradient buffer was just allocated and not zeroed, so the kernel stores (=) every element
 * instead of adding (+=) — see tensor_grad_fresh in tensor.h.
 */
#ifndef AL_BACKEND_H
#define AL_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------- plans: host-side descriptions a front hands to a kernel ---------- */

/* A broadcast binary op seen as `rows` rows of `len[0]` contiguous output elements; an
 * odometer over the outer merged dims moves each operand by its strides (ops/elementwise.c). */
enum { ARG_A = 0, ARG_B = 1 };
typedef struct Broadcast {
  int ndim, shape[T_MAXDIM]; /* the broadcast output shape */
  int nd;                    /* merged dims; dim 0 is the contiguous row, 1..nd-1 the outer */
  long len[T_MAXDIM];        /* their sizes: len[0] = n, the row length */
  long stride[2][T_MAXDIM];  /* per operand: elements to step per index, 0 where repeated */
  long rows;                 /* product of the outer lens */
} Broadcast;

typedef enum { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV } BinaryOp;
typedef enum {
  UN_SCALE, /* s * x (also neg: s = -1) */
  UN_ADD_SCALAR,
  UN_EXP,
  UN_LOG,
  UN_SQUARE,
  UN_TANH,
  UN_SIGMOID,
  UN_RELU,
  UN_GELU,
  UN_RECIPROCAL /* 1 / x: forward only, a helper of t_div's backward */
} UnaryOp;

/* What permute_walk does at each element: gather (forward), add or store (backward). */
typedef enum { PW_GATHER, PW_ADD, PW_STORE } PermuteMode;

/* The recurrent cell kinds of the fused rnn_cell kernel (lab 03). */
typedef enum { CELL_GRU = 0, CELL_LSTM = 1 } CellKind;

/* ---------- the table ---------- */

typedef struct Backend {
  const char *name; /* "cpu", "cuda", ... */

  /* memory: bytes of this device's memory; copies to, from and within it */
  void *(*alloc)(size_t bytes);      /* 64-byte aligned; never NULL (dies when out of memory) */
  void (*free)(void *p);
  void (*to_host)(void *dst, const void *src, size_t bytes);
  void (*from_host)(void *dst, const void *src, size_t bytes);
  void (*copy)(void *dst, const void *src, size_t bytes); /* within the device */
  void (*zero)(void *p, size_t bytes);
  /* Called around every kernel call (NULL for none): a test device opens its memory here. */
  void (*enter)(void);
  void (*leave)(void);
  /* Told each piece of its memory the arena hands out (NULL for none): the CUDA emulator then
   * checks kernels against each tensor's exact bounds. */
  void (*carved)(void *p, size_t bytes);
  /* Told where each training step ends (NULL for none): the emulated CUDA device prints the
   * step's counters (launches, copies, host waits). */
  void (*step_end)(long const_sends); /* const_sends: constants sent during the step */

  /* elementwise (cpu/cpu_elementwise.c) */
  void (*fill)(float *x, float v, long n);
  void (*acc)(float *dst, const float *src, long n); /* dst += src */
  void (*binary)(BinaryOp op, const Broadcast *bc, const float *a, const float *b, float *out);
  /* gx (+)= scale * g * y summed over the dims operand x (ARG_A/ARG_B) is repeated along; y NULL
   * means 1; store: gx = ... (only for an operand of the output's size) */
  void (*binary_grad)(const Broadcast *bc, int x, float *gx, const float *g, const float *y,
                      float scale, bool store);
  void (*div_grad_b)(float *gb, const float *ga_sum, const float *b, long n); /* gb -= s/b^2 */
  void (*unary)(UnaryOp op, float s, const float *x, float *y, long n);
  void (*unary_grad)(UnaryOp op, float s, const float *g, const float *x, const float *y,
                     float *gx, long n, bool fresh);

  /* matrix products (cpu/cpu_matmul.c): gemm.h's row-major conventions */
  void (*gemm)(bool transA, bool transB, int m, int n, int k, float alpha, const float *A,
               int lda, const float *B, int ldb, float beta, float *C, int ldc);
  void (*gemm_batched)(bool transA, bool transB, int m, int n, int k, float alpha,
                       const float *A, int lda, long strideA, const float *B, int ldb,
                       long strideB, float beta, float *C, int ldc, long strideC, int count);
  void (*bias_rows)(float *Y, const float *b, int rows, int n);      /* every row of Y = b */
  void (*bias_grad)(float *db, const float *dY, int rows, int n);    /* db += column sums */
  /* t_linear's backward: dx (rows, in) = dx_beta dx + dY W^T and dW (in, out) = dW_beta dW +
   * x^T dY, dY (rows, out); dx or dW NULL when not wanted (the CPU's skips dY's zero rows) */
  void (*linear_grad)(const float *x, const float *W, const float *dY, float *dx, float dx_beta,
                      float *dW, float dW_beta, int rows, int in, int nout);

  /* reductions (cpu/cpu_reduce.c): a viewed as (outer, n, inner) */
  void (*reduce)(const float *a, float *out, long outer, long n, long inner, float scale);
  void (*reduce_grad)(float *ga, const float *g, long outer, long n, long inner, float scale);
  void (*reduce_all)(const float *a, long n, float scale, float *out1);
  void (*reduce_all_grad)(float *ga, const float *g1, float scale, long n, bool fresh);

  /* softmax family and losses (cpu/cpu_softmax.c); sequence_mask's len: one int per `per`
   * rows */
  void (*softmax)(const float *x, float *y, long rows, int keys);
  void (*softmax_grad)(const float *y, const float *g, float *dx, long rows, int keys, bool fresh);
  void (*log_softmax)(const float *x, float *y, long rows, int n);
  void (*log_softmax_grad)(const float *y, const float *g, float *dx, long rows, int n,
                           bool fresh);
  void (*sequence_mask)(float *dst, const float *src, const int *len, long per, long rows,
                        int keys, float v);
  void (*sequence_mask_grad)(float *dx, const float *g, const int *len, long per, long rows,
                             int keys, bool fresh);
  /* out[r] = w[r] * (logsumexp(x_r) - x_r[label[r]]); keeps e = exp(x - max) and
   * scale[r] = w[r] / sum(e_r) for the backward; w NULL means 1 */
  void (*cross_entropy)(const float *x, const int *label, const float *w, float *e,
                        float *scale, float *out, long rows, int V);
  void (*cross_entropy_grad)(float *dx, const float *g, const float *e, const float *scale,
                             const int *label, const float *w, long rows, int V, bool fresh);
  void (*mse)(const float *p, const float *t, long n, float *out1);
  void (*mse_grad)(float *dp, float *dt, const float *g1, const float *p, const float *t, long n);

  /* normalization, embedding, dropout (cpu/cpu_nn.c); gamma/beta may be NULL (1 and 0) */
  void (*layer_norm)(const float *x, const float *gamma, const float *beta, float *y,
                     float *stats, long rows, int D, float eps);
  void (*layer_norm_grad)(const float *x, const float *gamma, const float *stats, const float *g,
                          float *dx, float *dgamma, float *dbeta, long rows, int D, bool fresh);
  void (*batch_norm)(const float *x, const float *gamma, const float *beta, float *run_mean,
                     float *run_var, float *y, float *mean_rstd, long N, int C, bool training,
                     float momentum, float eps);
  void (*batch_norm_grad)(const float *x, const float *gamma, const float *mean_rstd,
                          const float *g, float *dx, float *dgamma, float *dbeta, long N, int C,
                          bool training);
  void (*embedding)(const float *W, const int *idx, float *out, long n, int D);
  void (*embedding_grad)(float *dW, const int *idx, const float *g, long n, int D);
  void (*dropout)(const float *x, float *y, uint8_t *keep, long n, uint32_t s0, uint32_t s1,
                  uint32_t thr, float scale);
  void (*dropout_grad)(float *dx, const float *g, const uint8_t *keep, float scale, long n,
                       bool fresh);

  /* shape ops (cpu/cpu_shape.c) */
  void (*permute)(float *in, float *outp, const int *oshape, const long *sstride,
                  PermuteMode mode);
  /* rows of `n` floats: dst[r * dstride + j] (+)= src[r * sstride + j] */
  void (*copy_rows)(float *dst, long dstride, const float *src, long sstride, long rows, long n,
                    bool add);
  void (*repeat_interleave)(const float *x, float *out, long outer, int n, int reps, long inner);
  void (*repeat_interleave_grad)(float *dx, const float *g, long outer, int n, int reps,
                                 long inner);
  void (*patchify)(float *img, float *patches, const int *shape, int p, bool backward);
  /* out[i] = min((int)x[i], max): an index tensor (labels, ids, valid lengths), already checked
   * by its front on the host, as the int array its kernels take, converted on the device */
  void (*index_ints)(const float *x, int *out, long n, int max);

  /* optimizers (cpu/cpu_optim.c), each over one parameter block */
  void (*sgd)(float *w, const float *g, float lr, long n);
  void (*adam)(float *w, const float *g, float *m, float *v, long n, float b1, float b2,
               float step, float inv_sqrt_bc2, float eps);
  /* d2l's grad_clipping over a gradient block: g *= max_norm / ||g|| where ||g|| > max_norm;
   * ||g|| is written to *norm (one float of this device's memory: nothing comes back to the
   * host, so the step need not wait for it) */
  void (*clip_grad)(float *g, long n, float max_norm, float *norm);

  /* the chapters' fused kernels (cpu/cpu_fused.c, cpu/cpu_rnn.c) */
  void (*additive_scores)(const float *q, const float *kp, const float *w, float *out, float *T,
                          int B, int Q, int K, int h);
  void (*additive_scores_grad)(const float *g, const float *T, const float *w, float *dq,
                               float *dk, float *dw, int B, int Q, int K, int h);
  /* one GRU/LSTM step (lab 03): gx (B, G) this step's input projections, Hp/Cp (B, H) (Cp NULL
   * for the GRU), b_hh may be NULL; out (B, H), or (B, 2H) = [h' | c'] for the LSTM; act (B, G)
   * and extra (B, H) are kept for the backward, dgh (B, G) is its scratch. rnn_cell's W_hh may
   * be NULL when Hp is known to be zero (a sequence's first step): gh is then b_hh alone */
  void (*rnn_cell)(CellKind kind, const float *gx, const float *Hp, const float *Cp,
                   const float *W_hh, const float *b_hh, float *act, float *extra, float *out,
                   int B, int H);
  void (*rnn_cell_grad)(CellKind kind, const float *dout, const float *act, const float *extra,
                        const float *Hp, const float *Cp, const float *W_hh, float *dgh,
                        float *dgx, float *dC, float *dH, float *dW_hh, float *db_hh, int B,
                        int H);
  /* scaled dot-product attention in one pass (cpu/cpu_attention.c, cuda/attention.cu; front
   * t_attention_fused): O[b, i] = sum_j softmax_j(scale * Q[b, i] . K[b, j]) V[b, j] over the
   * keys j < len[(b * Tq + i) / per] (len NULL: every key); a row with no key left is zeros.
   * Q (B, Tq, d), K (B, Tk, d), V (B, Tk, dv), O (B, Tq, dv) */
  void (*attention)(const float *Q, const float *K, const float *V, const int *len, long per,
                    float *O, int B, int Tq, int Tk, int d, int dv, float scale);

  /* the chapters' tables: rows [row0, row0 + rows) of lab 05's sinusoidal positional encoding
   * into P (rows, d) (t_positional_encoding). NULL on the CPU, whose table is exercise 5.1's
   * host array; the CUDA table's is exercise 5.2's kernel (cuda/exercises.cu) */
  void (*positional_encoding)(float *P, int row0, int rows, int d);
} Backend;

/* The table of a device; a device with none is a clear error naming it. */
const Backend *backend_of(Device d);
/* Whether this build (or a test) has a table for device d. */
bool backend_available(Device d);
/* Copy bytes from src on device `from` to dst on device `to` (through the host between two
 * devices that are not the CPU). */
void backend_copy(void *dst, Device to, const void *src, Device from, size_t bytes);
/* A training loop's step on device d ends here (the device's step_end, if it has one). */
void backend_step_end(Device d);
/* A constant was sent to device d (tensor_const_*): sent once for the program, it is counted
 * apart from the step's own copies. */
void backend_note_const_send(Device d);
/* Install a table for a device (tests install a second one on DEV_TEST). */
void backend_register(Device d, const Backend *be);
extern const Backend cpu_backend;

/* Call kernel `fn` of device `dev`, with the device's enter/leave hooks around it. */
#define KERNEL(dev, fn, ...)                                                                   \
  do {                                                                                         \
    const Backend *be_ = backend_of(dev);                                                      \
    if (!be_->fn) backend_missing(be_, #fn);                                                   \
    if (be_->enter) be_->enter();                                                              \
    be_->fn(__VA_ARGS__);                                                                      \
    if (be_->leave) be_->leave();                                                              \
  } while (0)
/* The same for a kernel that returns a value into `res`. */
#define KERNEL_RET(res, dev, fn, ...)                                                          \
  do {                                                                                         \
    const Backend *be_ = backend_of(dev);                                                      \
    if (!be_->fn) backend_missing(be_, #fn);                                                   \
    if (be_->enter) be_->enter();                                                              \
    (res) = be_->fn(__VA_ARGS__);                                                              \
    if (be_->leave) be_->leave();                                                              \
  } while (0)
AL_NORETURN void backend_missing(const Backend *be, const char *kernel);

/* ---------- device memory ---------- */
void *dev_alloc(Device d, size_t bytes);   /* the device's activation arena */
void *dev_calloc(Device d, size_t bytes);
/* A copy of n bytes of host memory on device d: the host pointer itself on the CPU. */
void *dev_upload(Device d, const void *host, size_t bytes);

/* ---------- the CUDA device (cuda/backend.cu; cuda/nocuda.c in a CPU-only build) ---------- */
/* Find a GPU, start cuBLAS and register the CUDA table for DEV_CUDA. false: err says why in one
 * line (no device, no driver: the CUDA error's name) and what to do (--device cpu). */
bool cuda_open(char *err, size_t errlen);
/* Load cuBLAS (cuda_open does it first; a CPU-only run never maps the library). false: err says
 * why. The GPU check calls it where there is no device, so the loader is tested there too. */
bool cuda_blas_load(char *err, size_t errlen);
/* Host<->device copies made through the CUDA table so far (the per-step copy test). */
typedef struct {
  long to_device, to_host;
} CudaCopyCounts;
CudaCopyCounts cuda_copy_counts(void);
const char *cuda_device_name(void);
/* The line cuda_open gives when the card cannot run this build, and what to do: the driver is
 * older than the build's runtime (CUDA refused it), the build has no machine code for the card
 * (and no PTX it may use), or the driver cannot compile the build's PTX. driver and runtime as
 * CUDA gives them (12040 = 12.4); archs as the Makefile's CUDA_ARCH ("75 80 90"). */
typedef enum { CUDA_START_DRIVER, CUDA_START_NO_CODE, CUDA_START_PTX } CudaStartProblem;
void cuda_start_problem(char *err, size_t errlen, CudaStartProblem what, const char *card,
                        int cc_major, int cc_minor, int driver, int runtime, const char *archs);

#ifdef __cplusplus
}
#endif
#endif
