/* tensor.h — the one tensor type of attention-lab, its memory, and reverse-mode autograd.
 *
 * A Tensor is float32, row-major, 1 to 4 dims, with a device tag. Two lifetimes:
 *   - parameters (param_new in nn.h): malloc'd, live for the program, own a persistent .grad;
 *   - activations (everything an op returns): carved from one arena that ag_step_reset()
 *     rewinds every training step, so the training loop does no per-op malloc.
 *
 * Autograd: an op whose inputs require grad appends its output to the tape and remembers a
 * backward function. ag_backward(loss) walks the tape in reverse; gradients accumulate (+=).
 * Errors (shape mismatch, bad argument) go through tensor_error(), which names the op and the
 * shapes; by default it prints and exits(1), tests can catch it (see tensor_catch_errors).
 *
 * One header, four files, each section below naming its own: error.c (errors), context.c (the
 * arenas and autograd contexts), tensor.c (tensors), autograd.c (the tape); the devices' kernel
 * tables are backend.h's. Their layering (no file calls one above it) is in context.h.
 */
#ifndef AL_TENSOR_H
#define AL_TENSOR_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define T_MAXDIM 4

/* tensor.h and backend.h are also read by the CUDA kernel files (C++) */
#ifdef __cplusplus
#define AL_NORETURN [[noreturn]]
#else
#define AL_NORETURN _Noreturn
#endif

/* Where a tensor's data lives. DEV_TEST is a device only tests install (backend_register): it
 * computes with the CPU kernels but keeps its memory closed to the host outside kernel calls and
 * copies, so host code that reads device data crashes in the tests. */
typedef enum { DEV_CPU = 0, DEV_CUDA = 1, DEV_TEST = 2, DEV_COUNT } Device;

typedef struct Tensor Tensor;
typedef void (*BackwardFn)(Tensor *out);

struct Tensor {
  float *data;   /* size floats (device memory when device == DEV_CUDA) */
  float *grad;   /* NULL until a gradient reaches it; same size as data */
  int ndim;
  int shape[T_MAXDIM];
  long size;     /* product of shape */
  Device device;
  bool requires_grad;
  bool is_param; /* lives outside the arena; grad persists across steps */
  const char *name;   /* parameter name, or the op that produced it */
  /* autograd record (set by the op that created this tensor) */
  BackwardFn backward;
  Tensor *in[3];       /* inputs the backward pushes gradient to */
  int iarg[6];         /* small integer arguments saved for backward */
  float farg[2];       /* small float arguments saved for backward */
  void *aux;           /* op-specific saved buffer (arena memory) */
  /* Off the CPU: a host copy of data, kept when the data came from the host (tensor_to from
   * the CPU, tensor_copy_from_host) so that host_read (index checks, masks built from a batch)
   * need not copy it back. NULL otherwise, and for parameters, whose data the optimizer
   * changes in place. */
  const float *host;
};
/* Tensors of up to this many elements keep that host copy: index tensors are small; a batch of
 * images is not worth a second host copy every step. */
#define TENSOR_HOST_COPY_MAX 65536

/* ---------- errors (error.c) ---------- */
/* Report an error: "op: message". Prints "error: ..." and exit(1), unless a catch is armed. */
AL_NORETURN void tensor_error(const char *op, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Tests: arm a catch. tensor_error() then stores the message and longjmps to *env. */
void tensor_catch_errors(jmp_buf *env);
const char *tensor_last_error(void);
/* Format a shape as "(2, 3, 4)" into buf; returns buf. */
char *shape_str(const Tensor *t, char *buf, size_t n);

/* ---------- arena (context.c) ---------- */
void *arena_alloc(size_t bytes);        /* 64-byte aligned, uninitialized */
void *arena_calloc(size_t bytes);       /* zeroed */
/* Give back, before the step ends, an allocation nothing will read again (say, an activation
 * that no backward reads): later allocations of the step may reuse it, so clear every pointer
 * to it. Only allocations of 1 MB and more are reclaimed (returns true); for smaller ones (and
 * NULL) it does nothing and returns false. */
bool arena_release(void *p);
size_t arena_used(void);                /* bytes in use now */
size_t arena_peak(void);                /* high-water mark */
void arena_free_all(void);              /* release every chunk (end of program) */

/* ---------- devices (tensor.c; device_name: backend.c) ---------- */
/* The device tensor_new and the creation functions below put new tensors on (default DEV_CPU);
 * a lab sets it from --device before it builds anything. Ops put outputs on their inputs'. */
void tensor_set_default_device(Device d);
Device tensor_default_device(void);
const char *device_name(Device d); /* "cpu", "cuda", "test" */
/* A copy of x on device d (x itself when it is there already); not recorded on the tape. */
Tensor *tensor_to(Tensor *x, Device d);
/* The host <-> device copies of t's data (size floats): the only way host code reads or
 * writes a tensor that may live off the host. */
void tensor_copy_from_host(Tensor *t, const float *src);
/* Host memory holding t's data, for host code that reads numbers (prints, figures, metrics):
 * t->data itself on the CPU, else a copy in the activation arena. Read-only. */
const float *host_read(const Tensor *t);
/* Send n host tensors to device d in one copy: each xs[i] is replaced by its copy on d, the
 * copies side by side in one block of d's memory (a training step sends its batch this way:
 * one copy, not one per tensor). Nothing moves on the CPU. */
void tensor_to_packed(Tensor **xs, int n, Device d);
/* A constant (rows, n) tensor whose every row is row[0..n) (causal valid lengths), on the
 * default device: off the CPU it is sent once (room for 256 rows or more) and then found by its
 * row, so a step does not send it again. Read-only: nothing may write it. On the CPU, a plain
 * tensor in the arena. */
Tensor *tensor_const_rows(int rows, int n, const float *row);
/* An op's inputs must share one device: a clear error naming the op and both devices. */
void tensor_same_device(const char *op, const Tensor *a, const Tensor *b, const Tensor *c);

/* ---------- creation, in the arena (tensor.c) ---------- */
Tensor *tensor_new(int ndim, const int *shape);                 /* uninitialized data */
Tensor *tensor_new_on(Device d, int ndim, const int *shape);
Tensor *tensor_zeros(int ndim, const int *shape);
Tensor *tensor_full(int ndim, const int *shape, float v);
Tensor *tensor_full_on(Device d, int ndim, const int *shape, float v); /* filled on d: no copy */
Tensor *tensor_from(int ndim, const int *shape, const float *src); /* copies src */
Tensor *tensor_arange(int n);                                   /* (n) 0..n-1 */
Tensor *tensor_rand(int ndim, const int *shape, float lo, float hi);   /* seeded rng */
Tensor *tensor_randn(int ndim, const int *shape, float mean, float std);
/* Variadic-shape helpers: tzeros(2, 3, 4) is tensor_zeros(3, (int[]){2, 3, 4}). */
#define T_NARGS_(_1, _2, _3, _4, N, ...) N
#define T_NARGS(...) T_NARGS_(__VA_ARGS__, 4, 3, 2, 1, 0)
#define SHAPE(...) T_NARGS(__VA_ARGS__), (const int[]){__VA_ARGS__}
#define tzeros(...) tensor_zeros(SHAPE(__VA_ARGS__))
#define tnew(...) tensor_new(SHAPE(__VA_ARGS__))

long shape_numel(int ndim, const int *shape);
bool tensor_same_shape(const Tensor *a, const Tensor *b);
/* Element access for small host code and tests (CPU tensors only, row-major index). */
float *tensor_at(Tensor *t, const int *idx);
/* Print like PyTorch: "tensor([[0.5, 0.5], ...])", 4 decimals; name may be NULL. */
void tensor_print(const Tensor *t, const char *name);
void tensor_fprint(FILE *f, const Tensor *t, const char *name, int decimals);
/* Fetch a host copy of the data into dst (size floats), from any device. */
void tensor_to_host(const Tensor *t, float *dst);
/* Tests: host_read copies back even where a host copy is kept (Tensor.host) and dies if the two
 * differ (also AL_CHECK_HOST_COPIES=1 in the environment). */
void tensor_check_host_copies(bool on);
/* Host memory to write t's values in, for code that computes them on the host (initializers,
 * tensor_rand): t->data itself on the CPU, else scratch in the activation arena. Then
 * tensor_stage_done(t, h) sends them to t (nothing to do on the CPU) and returns t. */
float *tensor_stage(Tensor *t);
Tensor *tensor_stage_done(Tensor *t, float *h);

/* ---------- autograd (autograd.c; the context's life: context.c) ---------- */
/* Whether ops record to the tape (default true). Use false for inference. */
void ag_set_grad_enabled(bool on);
bool ag_grad_enabled(void);
/* Called by ops: true when out should be recorded (grad enabled and an input requires grad). */
bool ag_needs_grad(const Tensor *a, const Tensor *b, const Tensor *c);
/* Called by ops: record out on the tape with its backward function and inputs. */
void ag_record(Tensor *out, BackwardFn fn, Tensor *a, Tensor *b, Tensor *c);
/* The gradient buffer of t, allocated (zeroed) on first use. */
float *tensor_grad(Tensor *t);
/* For a backward that stores every element of t's gradient: the same buffer, but when no
 * gradient has reached t yet it is allocated without zeroing and *fresh is set true — the
 * caller must then write (=) each element instead of adding (+=) into it. That saves zeroing
 * then re-reading every activation gradient (a tenth of a small Transformer's step). */
float *tensor_grad_fresh(Tensor *t, bool *fresh);
/* Record out as a view of x (same data, same element order, as t_reshape makes): out's
 * gradient buffer is x's own, so gradients reach x with no copy and the backward is empty. */
void ag_record_view(Tensor *out, Tensor *x);
/* Seed d(loss)/d(loss) = 1 (loss must have size 1) and run the tape backward. One backward
 * per tape: a second call before ag_step_reset() walks the earlier graph again (its nodes still
 * hold gradients) and double-counts. */
void ag_backward(Tensor *loss);
/* Same, seeding the output gradient with `seed` (size of out). */
void ag_backward_with(Tensor *out, const float *seed);
/* Training loops that keep only the parameters' gradients: with this on, ag_backward hands each
 * node's gradient buffer (and its values, when they are a big arena block) back as soon as that
 * node's backward has run (nothing reads them after), and later allocations of the step reuse
 * them, so the step's peak memory holds the gradients of a few layers instead of all of them.
 * The node's grad and data are NULL afterwards: leave it off (the default) to read
 * intermediate values or gradients after backward. */
void ag_set_release_grads(bool on);
/* A second autograd context: tape, activation arena and gradient switches for a thread that runs
 * its own forward and backward beside the main thread's (twin_parts_run). ag_context_use
 * makes it this thread's until ag_context_use(NULL); ag_context_free releases its memory (call
 * it where no thread uses it). */
typedef struct AgContext AgContext;
AgContext *ag_context_new(void);
void ag_context_use(AgContext *c);
void ag_context_free(AgContext *c);
/* End of a step: clear the tape and rewind the activation arena (parameters untouched). */
void ag_step_reset(void);
size_t ag_tape_len(void);
/* End of program: free the arena and the tape (keeps leak checkers quiet). */
void tensor_shutdown(void);

#endif
