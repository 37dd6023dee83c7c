/* vgpu.h — the virtual GPU's device side: memory, launches, counters (used by vgpu-device). */
#ifndef VGPU_H
#define VGPU_H

#include <stdint.h>
#include <stdio.h>

#include "ptx.h"

/* ---- device memory (mem.c): allocations never share or reuse addresses, so an access past
 * one allocation's end, or into a freed one, is found by lookup, never lands in a neighbour */
typedef struct {
  uint64_t base, size;
  uint8_t *data; /* NULL once freed */
  uint8_t *init; /* a byte per byte: written since allocation (initcheck) */
} dalloc;
typedef struct {
  dalloc *a;
  int n, cap;
  uint64_t next;
  uint64_t bytes_live;
  uint64_t limit; /* bytes: cudaMalloc beyond fails (0: 2 GiB) */
} devmem;
enum { VGPU_POISON = 0xff }; /* fresh memory: every float a NaN, every int -1 */
uint64_t mem_alloc(devmem *m, uint64_t size);
int mem_free(devmem *m, uint64_t addr);   /* 0, or -1 if addr is not a live allocation's base */
dalloc *mem_find(devmem *m, uint64_t addr); /* the allocation holding addr (live or freed) */
dalloc *mem_range(devmem *m, uint64_t addr, uint64_t len); /* live and holding [addr, +len) */
void mem_destroy(devmem *m);

/* ---- counters: what Nsight Compute would report, per launch and summed */
typedef struct {
  uint64_t warp_insts, thread_insts;
  uint64_t gld_req, gld_sectors, gst_req, gst_sectors;
  uint64_t shld_req, shst_req, shld_wavefronts, shst_wavefronts, shld_conflicts, shst_conflicts;
  uint64_t atom_req, atom_ops; /* warp-instructions and lanes of atom/red (global and shared) */
  uint64_t local_req;
  uint64_t memcheck, initcheck, racecheck, synccheck;
} counters;
void counters_add(counters *sum, const counters *c);
void counters_print(FILE *f, const counters *c);

enum order { ORDER_IN, ORDER_REVERSED, ORDER_RANDOM };
typedef struct {
  int order;
  uint64_t seed;
  int initcheck, racecheck;
  int max_reports; /* per launch */
  uint64_t max_warp_insts; /* per launch: the watchdog */
  FILE *log;       /* sanitizer reports */
  FILE *sites;     /* VGPU_STATS: a site line per source line with memory traffic, or NULL */
} vgpu_opts;

typedef struct {
  uint32_t x, y, z;
} vdim3;

/* Runs one launch to its end. Returns 0, or a cudaError_t value (launch refused or kernel
 * fault) with a message in err. */
int vgpu_launch(devmem *mem, const module *m, const kernel *k, vdim3 grid, vdim3 block,
                uint32_t dyn_shared, const uint8_t *params, const vgpu_opts *o, counters *c,
                char *err, size_t errn);

#endif
