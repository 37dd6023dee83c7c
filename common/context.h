/* context.h — inside an autograd context (context.c), for the two files built on it: the tape
 * (autograd.c) records into and walks the context's tape, and the device tables (backend.c)
 * hand the context's arenas each device's memory. Everything else goes through tensor.h.
 *
 * Layering of common/'s core (each file calls only files below it, so no two call each other):
 *   util.c, rng.c      fatal errors, checked allocation, the generator
 *   error.c            tensor_error and its catch, shape_str
 *   context.c          the activation arenas and the autograd contexts that hold them
 *   cpu/               the CPU kernels, gemm.c among them (host scratch from the arena)
 *   backend.c          the kernel table of each device (the CPU's is cpu/cpu_backend.c)
 *   tensor.c           tensors: devices, creation, host copies, printing
 *   autograd.c         the tape: recording, gradients, the backward walk
 *   ops/, nn.c, ...    the op fronts and everything above them
 * tests/suites/layering.sh checks it on the object files. */
#ifndef AL_CONTEXT_H
#define AL_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "tensor.h"

/* Gradient buffers handed back during backward (ag_set_release_grads), for the step's later
 * gradients to reuse; emptied with the arena. Best fit by size: the blocks of a network repeat
 * the same few shapes. */
#define FREE_GRADS 512
typedef struct {
  float *p;
  long n;     /* floats */
  Device dev; /* whose memory */
} FreeGrad;

/* Requests of this many bytes and more get arena blocks of their own (arena_release takes them
 * back); the tape hands such a node's buffers back to the arena, smaller ones to free_grads. */
#define ARENA_BIG (1u << 20)

/* An arena of one device: a list of chunks, allocation bumps a pointer in the current chunk;
 * big requests get blocks of their own (context.c says why). */
typedef struct Chunk {
  struct Chunk *next;
  size_t cap, used;
  unsigned char *mem;
} Chunk;
typedef struct {
  void *p;
  size_t cap;
} BigBlock;
typedef struct {
  Chunk *first, *cur;
  size_t used_total, peak;
  BigBlock *big; /* [0, big_used): handed out this step; then free ones */
  size_t big_used, big_n, big_cap;
} Arena;

/* Everything a forward and backward pass writes besides the tensors: the activation arenas, the
 * tape and the gradient switches. One context serves the program; a thread that trains a twin of
 * the model beside it uses its own (ag_context_use). Other threads (the ops' OpenMP workers)
 * never allocate or record, and see the main context. */
struct AgContext {
  Arena arena[DEV_COUNT]; /* one per device */
  bool grad_on;
  Tensor **tape;
  size_t tape_len, tape_cap;
  bool release_grads;
  FreeGrad free_grads[FREE_GRADS];
  int nfree_grads;
};

extern AgContext ag_main_context;
extern _Thread_local AgContext *ag_thread_context; /* NULL: the main context */
/* This thread's context. */
static inline AgContext *ag_ctx(void) {
  return ag_thread_context ? ag_thread_context : &ag_main_context;
}

/* Where the arenas of device d get their chunks, and whom they tell of each piece they hand out
 * (backend_register passes the device table's alloc, free and carved). The CPU's is host memory
 * (xaligned_alloc, free), as in cpu/cpu_backend.c, and no one to tell. */
void arena_set_device_memory(Device d, void *(*alloc)(size_t bytes), void (*release)(void *p),
                             void (*carved)(void *p, size_t bytes));

#endif
