/* context.c — the activation arenas, and the autograd contexts that hold them with the tape and
 * the gradient switches. Layer: calls only util.c; the device tables (backend.c, above it) hand
 * it each device's memory (arena_set_device_memory), so it never calls up into them. The map of
 * the layers is in context.h.
 *
 * An arena is a list of chunks; allocation bumps a pointer in the current chunk. A reset
 * rewinds to the first chunk but keeps every chunk, so after the first step the training loop
 * allocates nothing. One arena per device: tensor headers and host scratch use the CPU's
 * (arena_alloc); tensor data uses its device's (dev_alloc). */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "util.h"

AgContext ag_main_context = {.grad_on = true};
_Thread_local AgContext *ag_thread_context;

AgContext *ag_context_new(void) {
  AgContext *c = xcalloc(1, sizeof *c);
  c->grad_on = true;
  return c;
}
void ag_context_use(AgContext *c) { ag_thread_context = c; }

/* ---------- device memory ---------- */

typedef struct {
  void *(*alloc)(size_t bytes);
  void (*release)(void *p);
  void (*carved)(void *p, size_t bytes); /* NULL, or told each piece dev_alloc hands out */
} DeviceMemory;
static DeviceMemory g_memory[DEV_COUNT] = {[DEV_CPU] = {xaligned_alloc, free, NULL}};

void arena_set_device_memory(Device d, void *(*alloc)(size_t bytes), void (*release)(void *p),
                             void (*carved)(void *p, size_t bytes)) {
  g_memory[d] = (DeviceMemory){alloc, release, carved};
}

static void *device_memory(Device d, size_t bytes) {
  if (!g_memory[d].alloc) die("no memory for device %d: its table is not registered", (int)d);
  return g_memory[d].alloc(bytes); /* never NULL: dies when out of memory */
}

/* ---------- the arena ---------- */

#define ARENA_ALIGN 64
#define ARENA_CHUNK (8u << 20)

static Chunk *chunk_new(Device d, size_t cap) {
  Chunk *c = xmalloc(sizeof *c);
  c->next = NULL;
  c->cap = cap;
  c->used = 0;
  c->mem = device_memory(d, cap);
  return c;
}

/* Big requests (a ViT's 4736 x 2048 activations are 39 MB) get blocks of their own, kept across
 * steps: at a reset every block becomes free, and a request takes the smallest free block that
 * fits it (and is less than twice its size). Bumped through the chunks, a big request that did
 * not fit a chunk's tail skipped that tail and, where the next chunk was smaller, made another:
 * the book ViT preset held 1.35 GB of chunks for an 812 MB peak. */
static void *arena_alloc_big(Device d, size_t need) {
  Arena *A = &ag_ctx()->arena[d];
  size_t best = A->big_n;
  for (size_t i = A->big_used; i < A->big_n; i++)
    if (A->big[i].cap >= need && A->big[i].cap / 2 < need &&
        (best == A->big_n || A->big[i].cap < A->big[best].cap))
      best = i;
  if (best == A->big_n) { /* none fits: a new block */
    if (A->big_n == A->big_cap) {
      A->big_cap = A->big_cap ? 2 * A->big_cap : 64;
      A->big = xrealloc(A->big, A->big_cap * sizeof *A->big);
    }
    A->big[A->big_n++] = (BigBlock){device_memory(d, need), need};
  }
  BigBlock b = A->big[best];
  A->big[best] = A->big[A->big_used];
  A->big[A->big_used++] = b;
  A->used_total += need;
  if (A->used_total > A->peak) A->peak = A->used_total;
  return b.p;
}

bool arena_release(void *p) {
  for (int d = 0; p && d < DEV_COUNT; d++) {
    Arena *A = &ag_ctx()->arena[d];
    for (size_t i = 0; i < A->big_used; i++)
      if (A->big[i].p == p) {
        BigBlock b = A->big[i];
        A->big[i] = A->big[--A->big_used]; /* the last one handed out takes its place */
        A->big[A->big_used] = b;           /* and b joins the free ones */
        A->used_total -= b.cap;
        return true;
      }
  }
  return false;
}

void *dev_alloc(Device d, size_t bytes) {
  Arena *A = &ag_ctx()->arena[d];
  size_t need = (bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (need == 0) need = ARENA_ALIGN;
  if (need >= ARENA_BIG) {
    void *p = arena_alloc_big(d, need);
    if (g_memory[d].carved) g_memory[d].carved(p, bytes);
    return p;
  }
  if (!A->first) A->first = A->cur = chunk_new(d, need > ARENA_CHUNK ? need : ARENA_CHUNK);
  while (A->cur->used + need > A->cur->cap) {
    if (A->cur->next && A->cur->next->cap >= need) {
      A->cur = A->cur->next;
      A->cur->used = 0;
      continue;
    }
    if (A->cur->next) { /* next chunk too small for this request: insert a big one */
      Chunk *c = chunk_new(d, need > ARENA_CHUNK ? need : ARENA_CHUNK);
      c->next = A->cur->next;
      A->cur->next = c;
    } else {
      A->cur->next = chunk_new(d, need > ARENA_CHUNK ? need : ARENA_CHUNK);
    }
    A->cur = A->cur->next;
    A->cur->used = 0;
  }
  void *p = A->cur->mem + A->cur->used;
  A->cur->used += need;
  A->used_total += need;
  if (A->used_total > A->peak) A->peak = A->used_total;
  if (g_memory[d].carved) g_memory[d].carved(p, bytes);
  return p;
}

void *arena_alloc(size_t bytes) { return dev_alloc(DEV_CPU, bytes); }

void *arena_calloc(size_t bytes) {
  void *p = arena_alloc(bytes);
  memset(p, 0, bytes);
  return p;
}

size_t arena_used(void) {
  size_t n = 0;
  for (int d = 0; d < DEV_COUNT; d++) n += ag_ctx()->arena[d].used_total;
  return n;
}
size_t arena_peak(void) {
  size_t n = 0;
  for (int d = 0; d < DEV_COUNT; d++) n += ag_ctx()->arena[d].peak;
  return n;
}

static void arena_reset(void) {
  for (int d = 0; d < DEV_COUNT; d++) {
    Arena *A = &ag_ctx()->arena[d];
    if (A->first) {
      A->cur = A->first;
      A->cur->used = 0;
    }
    A->used_total = 0;
    A->big_used = 0;
  }
}

void arena_free_all(void) {
  for (int d = 0; d < DEV_COUNT; d++) {
    Arena *A = &ag_ctx()->arena[d];
    for (Chunk *c = A->first, *n; c; c = n) {
      n = c->next;
      g_memory[d].release(c->mem);
      free(c);
    }
    A->first = A->cur = NULL;
    for (size_t i = 0; i < A->big_n; i++) g_memory[d].release(A->big[i].p);
    free(A->big);
    A->big = NULL;
    A->big_used = A->big_n = A->big_cap = 0;
    A->used_total = 0;
  }
}

/* ---------- the context's life ---------- */

void ag_step_reset(void) {
  ag_ctx()->tape_len = 0;
  ag_ctx()->nfree_grads = 0;
  arena_reset();
}

void tensor_shutdown(void) {
  AgContext *c = ag_ctx();
  c->nfree_grads = 0;
  free(c->tape);
  c->tape = NULL;
  c->tape_len = c->tape_cap = 0;
  arena_free_all();
}

void ag_context_free(AgContext *c) {
  if (!c) return;
  AgContext *was = ag_thread_context;
  ag_thread_context = c;
  tensor_shutdown();
  ag_thread_context = was;
  free(c);
}
