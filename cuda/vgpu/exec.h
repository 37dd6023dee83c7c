/* exec.h — internals shared by exec.c (warps, memory, sanitizers) and alu.c (arithmetic). */
#ifndef VGPU_EXEC_H
#define VGPU_EXEC_H

#include <stddef.h>

#include "vgpu.h"

/* L_NONE: past the block's last thread; L_WAIT: at a warp-synchronous instruction, waiting for
 * lanes of its mask that still run elsewhere (they converge there, as on Volta and later) */
enum lane_state { L_RUN, L_BAR, L_EXIT, L_NONE, L_WAIT };

typedef struct {
  uint64_t *r;     /* registers: r[reg * 32 + lane] */
  int pc[32];
  uint8_t st[32];
  int id;          /* warp index in its block */
  uint32_t epoch;  /* __syncwarp count: racecheck's intra-warp interval */
} warp;

typedef struct { /* one memory instruction's counts (source-line attribution) */
  uint64_t req, sectors, wavefronts, conflicts;
  int shared; /* the space its addresses fell in */
} site;

typedef struct {
  devmem *mem;
  const module *m;
  const kernel *k;
  vdim3 grid, block, ctaid;
  uint32_t nthreads, shared_bytes, dyn_shared;
  const uint8_t *params;
  const vgpu_opts *o;
  counters *c;
  site *sites; /* per pc */
  uint8_t *shared, *shared_init;
  int32_t *race_w, *race_r; /* per shared word: writer / reader warp (-1 none, -2 several) */
  int32_t *race_wpc, *race_rpc;
  int32_t *race_wlane;   /* per shared word: the thread that last wrote it */
  uint32_t *race_wepoch; /* and its warp's __syncwarp count then */
  uint8_t *local;
  warp *warps;
  int nwarps;
  int failed;   /* cudaError_t of a fault; the launch stops */
  int reports;
  char *err;
  size_t errn;
} launch;

/* alu.c: runs one non-memory, non-control instruction for the lanes in mask; 0 or -1 */
int alu_exec(launch *L, warp *w, const instr *ins, uint32_t mask);
int converged(launch *L, warp *w, const instr *ins, uint32_t act, uint32_t member);
uint64_t operand_slow(launch *L, warp *w, const operand *o, int lane);
static inline uint64_t operand_value(launch *L, warp *w, const operand *o, int lane) {
  if (o->kind == OK_REG) return w->r[(size_t)o->reg * 32 + (size_t)lane] ^ o->neg;
  return operand_slow(L, w, o, lane);
}
/* exec.c */
void fault(launch *L, warp *w, int lane, const instr *ins, int err, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void report(launch *L, warp *w, int lane, const instr *ins, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static inline int64_t sext(uint64_t v, int bits) {
  return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}
static inline uint64_t zext(uint64_t v, int bits) {
  return bits >= 64 ? v : v & ((1ull << bits) - 1);
}

static inline void set_reg(warp *w, int reg, int lane, uint64_t v, ptype t) {
  if (reg < 0) return; /* "_" sink */
  if (t.kind == T_PRED) v = v != 0;
  else if (t.kind == T_S) v = (uint64_t)sext(v, t.bits);
  else v = zext(v, t.bits);
  w->r[(size_t)reg * 32 + (size_t)lane] = v;
}

#endif
