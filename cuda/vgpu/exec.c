/* exec.c — a launch on the virtual GPU: blocks in the chosen order, each block's warps of 32
 * lanes, one warp-instruction at a time.
 *
 * Divergence: every lane keeps its own pc; a warp issues the instruction at the lowest pc among
 * its running lanes, for the lanes at that pc (lowest-pc-first). nvcc lays out a branch's
 * reconvergence point after both sides, so lanes that branched apart meet again there, and a
 * loop's early leavers wait past its end while the rest iterate: the order a card's
 * reconvergence stack gives for the structured code nvcc emits.
 * Barriers: a warp runs until each of its lanes has exited or reached bar.sync; when every
 * warp of the block is there, the barrier opens (racecheck's interval ends). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"

int mem_exec(launch *L, warp *w, const instr *ins, uint32_t mask);   /* memory.c */
int warp_exec(launch *L, warp *w, const instr *ins, uint32_t mask);  /* warp.c */

static void where(launch *L, warp *w, int lane, const instr *ins, char *buf, size_t n) {
  uint32_t t = (uint32_t)(w->id * 32 + lane);
  uint32_t bx = L->block.x, by = L->block.y;
  snprintf(buf, n, "kernel %s, block (%u,%u,%u), thread (%u,%u,%u), at %s:%d", L->k->pretty,
           L->ctaid.x, L->ctaid.y, L->ctaid.z, t % bx, t / bx % by, t / (bx * by),
           ptx_file(L->m, ins->file), ins->line);
}

/* A fault stops the launch (as a card's kernel dies on an illegal address). */
void fault(launch *L, warp *w, int lane, const instr *ins, int err, const char *fmt, ...) {
  if (L->failed) return;
  char msg[512], at[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  where(L, w, lane, ins, at, sizeof at);
  snprintf(L->err, L->errn, "%s, %s", msg, at);
  L->failed = err;
  if (L->o->log) fprintf(L->o->log, "vgpu: %s\n", L->err);
}

/* A report (initcheck, racecheck) is logged and counted; the launch goes on. */
void report(launch *L, warp *w, int lane, const instr *ins, const char *fmt, ...) {
  if (L->reports++ >= L->o->max_reports || !L->o->log) return;
  char msg[512], at[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  where(L, w, lane, ins, at, sizeof at);
  fprintf(L->o->log, "vgpu: %s, %s\n", msg, at);
}

static uint64_t sreg_value(launch *L, warp *w, int id, int lane) {
  uint32_t t = (uint32_t)(w->id * 32 + lane), bx = L->block.x, by = L->block.y;
  switch (id) {
  case SR_TID_X: return t % bx;
  case SR_TID_Y: return t / bx % by;
  case SR_TID_Z: return t / (bx * by);
  case SR_NTID_X: return bx;
  case SR_NTID_Y: return by;
  case SR_NTID_Z: return L->block.z;
  case SR_CTAID_X: return L->ctaid.x;
  case SR_CTAID_Y: return L->ctaid.y;
  case SR_CTAID_Z: return L->ctaid.z;
  case SR_NCTAID_X: return L->grid.x;
  case SR_NCTAID_Y: return L->grid.y;
  case SR_NCTAID_Z: return L->grid.z;
  case SR_LANEID: return (uint64_t)lane;
  case SR_WARPID: return (uint64_t)w->id;
  case SR_NWARPID: return (uint64_t)L->nwarps;
  case SR_LANEMASK_LT: return (1ull << lane) - 1;
  case SR_LANEMASK_LE: return (2ull << lane) - 1;
  case SR_LANEMASK_GT: return ~((2ull << lane) - 1) & 0xffffffffull;
  case SR_LANEMASK_GE: return ~((1ull << lane) - 1) & 0xffffffffull;
  case SR_LANEMASK_EQ: return 1ull << lane;
  case SR_SMID: return 0;
  default: return L->c->warp_insts; /* %clock, %clock64: the device's instruction count */
  }
}

uint64_t operand_slow(launch *L, warp *w, const operand *o, int lane) {
  switch (o->kind) {
  case OK_IMM: return (uint64_t)o->imm;
  case OK_SREG: return sreg_value(L, w, o->reg, lane);
  case OK_SYM: return o->symoff;
  default: return 0;
  }
}

/* The warp's next issue: the lowest pc among running lanes, and the lanes at it. */
static int next_pc(warp *w, uint32_t *mask) {
  for (int round = 0; round < 2; round++) {
    int pc = -1;
    uint32_t m = 0;
    for (int l = 0; l < 32; l++) {
      if (w->st[l] != L_RUN) continue;
      if (pc < 0 || w->pc[l] < pc) { pc = w->pc[l]; m = 1u << l; }
      else if (w->pc[l] == pc) m |= 1u << l;
    }
    *mask = m;
    if (pc >= 0) return pc;
    int parked = 0; /* nothing else can run: lanes waiting at a shfl/vote/__syncwarp retry it */
    for (int l = 0; l < 32; l++) if (w->st[l] == L_WAIT) { w->st[l] = L_RUN; parked = 1; }
    if (!parked) return -1;
  }
  return -1;
}

static uint32_t guard_mask(const warp *w, const instr *ins, uint32_t mask) {
  if (ins->guard < 0) return mask;
  uint32_t m = 0;
  for (int l = 0; l < 32; l++)
    if ((mask >> l & 1) && ((w->r[(size_t)ins->gpred * 32 + (size_t)l] & 1) ^ ins->gneg)) m |= 1u << l;
  return m;
}

/* bar.warp.sync (__syncwarp): the lanes of its mask (those not exited) meet here; lanes that
 * arrive first wait for the others (converged(), warp.c). Starts a racecheck interval. */
static int warp_sync(launch *L, warp *w, const instr *ins, uint32_t act) {
  if (!act) return 0;
  uint32_t member = (uint32_t)operand_value(L, w, &ins->o[0], __builtin_ctz(act)), gone = 0;
  for (int l = 0; l < 32; l++) if (w->st[l] == L_EXIT || w->st[l] == L_NONE) gone |= 1u << l;
  uint32_t need = member & ~gone, waiting = 0;
  for (int l = 0; l < 32; l++) /* lanes waiting at another __syncwarp have arrived (sm_70+) */
    if (w->st[l] == L_WAIT && L->k->code[w->pc[l]].op == OP_BAR) waiting |= 1u << l;
  if (!(need & ~(act | waiting))) {
    for (int l = 0; l < 32; l++)
      if (waiting & need & (1u << l)) { w->st[l] = L_RUN; w->pc[l]++; }
    w->epoch++;
    return 0;
  }
  converged(L, w, ins, act, need); /* parks these lanes while the others run, or faults */
  return 0;
}

/* One warp-instruction. */
static void step(launch *L, warp *w, int pc, uint32_t mask) {
  const kernel *k = L->k;
  if (pc >= k->ncode) { /* a branch to a label after the last instruction: the end */
    for (int l = 0; l < 32; l++) if (mask >> l & 1) w->st[l] = L_EXIT;
    return;
  }
  const instr *ins = &k->code[pc];
  uint32_t act = guard_mask(w, ins, mask);
  static int trace = -1;
  if (trace < 0) trace = getenv("VGPU_TRACE") != NULL;
  if (trace && w->id == 0)
    fprintf(stderr, "pc %d %s mask %08x act %08x r0=%llx\n", pc, ins->text, mask, act,
            (unsigned long long)(ins->nops && ins->o[0].kind == OK_REG ? w->r[(size_t)ins->o[0].reg * 32] : 0));
  if (++L->c->warp_insts > L->o->max_warp_insts) {
    fault(L, w, __builtin_ctz(mask), ins, 702, "watchdog: the launch ran more than %llu "
          "warp-instructions (an endless loop?); VGPU_MAX_WARP_INSTS raises the limit",
          (unsigned long long)L->o->max_warp_insts);
    return;
  }
  L->c->thread_insts += (uint64_t)__builtin_popcount(act);
  int rc = 0;
  for (int l = 0; l < 32; l++) if (mask >> l & 1) w->pc[l] = pc + 1;
  switch (ins->op) {
  case OP_BRA:
    for (int l = 0; l < 32; l++) if (act >> l & 1) w->pc[l] = (int)ins->o[0].imm;
    break;
  case OP_RET: case OP_EXIT:
    for (int l = 0; l < 32; l++) if (act >> l & 1) w->st[l] = L_EXIT;
    break;
  case OP_BAR:
    if (ins->flags & F_WARP) { rc = warp_sync(L, w, ins, act); break; }
    for (int l = 0; l < 32; l++) if (act >> l & 1) w->st[l] = L_BAR;
    break;
  case OP_NOP: break;
  case OP_LD: case OP_ST: case OP_ATOM: case OP_RED: rc = act ? mem_exec(L, w, ins, act) : 0; break;
  case OP_SHFL: case OP_VOTE: case OP_MATCH: rc = warp_exec(L, w, ins, act); break;
  default: rc = act ? alu_exec(L, w, ins, act) : 0;
  }
  if (rc && !L->failed)
    fault(L, w, __builtin_ctz(mask), ins, 999, "unsupported PTX instruction %s (this form)",
          ins->text);
  if (pc + 1 >= k->ncode)
    for (int l = 0; l < 32; l++) if ((mask >> l & 1) && w->st[l] == L_RUN && w->pc[l] >= k->ncode) w->st[l] = L_EXIT;
}

static void run_warp(launch *L, warp *w) {
  uint32_t mask;
  int pc;
  while (!L->failed && (pc = next_pc(w, &mask)) >= 0) step(L, w, pc, mask);
}

static void race_reset(launch *L) {
  if (!L->race_w) return;
  size_t n = L->shared_bytes / 4 + 1;
  memset(L->race_w, 0xff, n * 4);
  memset(L->race_r, 0xff, n * 4);
}

static void run_block(launch *L) {
  for (int i = 0; i < L->nwarps; i++) {
    warp *w = &L->warps[i];
    for (int l = 0; l < 32; l++) {
      w->pc[l] = 0;
      w->st[l] = (uint32_t)(i * 32 + l) < L->nthreads ? L_RUN : L_NONE;
    }
  }
  memset(L->shared, VGPU_POISON, L->shared_bytes);
  memset(L->shared_init, 0, L->shared_bytes);
  if (L->local) memset(L->local, VGPU_POISON, (size_t)L->k->local_bytes * L->nthreads);
  race_reset(L);
  for (;;) {
    for (int i = 0; i < L->nwarps && !L->failed; i++) run_warp(L, &L->warps[i]);
    if (L->failed) return;
    int waiting = 0;
    for (int i = 0; i < L->nwarps; i++)
      for (int l = 0; l < 32; l++)
        if (L->warps[i].st[l] == L_BAR) { L->warps[i].st[l] = L_RUN; waiting = 1; }
    if (!waiting) return;
    race_reset(L);
  }
}

static int check_limits(launch *L, char *err, size_t errn) {
  vdim3 g = L->grid, b = L->block;
  uint64_t threads = (uint64_t)b.x * b.y * b.z;
  uint64_t shared = (uint64_t)L->k->shared_static + L->dyn_shared;
  if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z || g.x > 2147483647u || g.y > 65535 || g.z > 65535) {
    snprintf(err, errn, "launch of %s refused: grid (%u,%u,%u) (each dimension >= 1; x < 2^31, y and z <= 65535)", L->k->pretty, g.x, g.y, g.z);
    return 9; /* cudaErrorInvalidConfiguration */
  }
  if (threads > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64) {
    snprintf(err, errn, "launch of %s refused: block (%u,%u,%u) is %llu threads (at most 1024; z <= 64)", L->k->pretty, b.x, b.y, b.z, (unsigned long long)threads);
    return 9;
  }
  if (shared > 48 * 1024) {
    snprintf(err, errn, "launch of %s refused: %u bytes of static + %u of dynamic shared memory = %llu > 49152 (48 KB without the opt-in)", L->k->pretty, L->k->shared_static, L->dyn_shared, (unsigned long long)shared);
    return 1; /* cudaErrorInvalidValue */
  }
  uint64_t regs = (uint64_t)(L->k->regs * 32 + 255) / 256 * 256 * (uint64_t)((threads + 31) / 32);
  if (regs > 65536) { /* registers go to warps in units of 256 */
    snprintf(err, errn, "launch of %s refused (too many resources requested): %d registers a thread (ptxas) x %llu threads needs %llu of the 65536 registers a block may have", L->k->pretty, L->k->regs, (unsigned long long)threads, (unsigned long long)regs);
    return 701; /* cudaErrorLaunchOutOfResources */
  }
  if (L->k->local_bytes > 512 * 1024) {
    snprintf(err, errn, "launch of %s refused: %u bytes of local memory a thread (at most 512 KB)", L->k->pretty, L->k->local_bytes);
    return 1;
  }
  if (L->k->unsupported >= 0) {
    const instr *ins = &L->k->code[L->k->unsupported];
    snprintf(err, errn, "unsupported PTX instruction %s at %s:%d (kernel %s)", ins->text, ptx_file(L->m, ins->file), ins->line, L->k->pretty);
    return 801; /* cudaErrorNotSupported */
  }
  return 0;
}

static uint64_t xorshift(uint64_t *s) {
  *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
  return *s;
}

/* Block i of the order; random orders are a shuffled table (at most 2^24 blocks). */
static uint32_t *block_order(const vgpu_opts *o, uint64_t n) {
  if (o->order != ORDER_RANDOM || n > (1u << 24)) return NULL;
  uint32_t *ord = malloc(n * sizeof *ord);
  for (uint64_t i = 0; i < n; i++) ord[i] = (uint32_t)i;
  uint64_t s = o->seed ? o->seed : 0x9e3779b97f4a7c15ull;
  for (uint64_t i = n; i > 1; i--) {
    uint64_t j = xorshift(&s) % i;
    uint32_t t = ord[i - 1]; ord[i - 1] = ord[j]; ord[j] = t;
  }
  return ord;
}

static uint64_t nth_block(const vgpu_opts *o, const uint32_t *ord, uint64_t n, uint64_t i) {
  if (ord) return ord[i];
  return o->order == ORDER_REVERSED ? n - 1 - i : i;
}

static const launch *sort_ctx;
static int by_line(const void *a, const void *b) {
  const instr *x = &sort_ctx->k->code[*(const int *)a], *y = &sort_ctx->k->code[*(const int *)b];
  if (x->file != y->file) return x->file - y->file;
  if (x->line != y->line) return x->line - y->line;
  int sx = sort_ctx->sites[*(const int *)a].shared, sy = sort_ctx->sites[*(const int *)b].shared;
  if (sx != sy) return sx - sy;
  return (x->op == OP_ST) - (y->op == OP_ST);
}

/* The launch's memory traffic by source line and kind (global/shared load/store), as
 * Nsight Compute's source view attributes it: where the sectors and conflicts come from. */
static void print_sites(const launch *L) {
  int n = 0, *idx = malloc((size_t)L->k->ncode * sizeof *idx);
  for (int i = 0; i < L->k->ncode; i++) if (L->sites[i].req) idx[n++] = i;
  sort_ctx = L;
  qsort(idx, (size_t)n, sizeof *idx, by_line);
  for (int a = 0, b; a < n; a = b) {
    const instr *x = &L->k->code[idx[a]];
    site s = {0};
    for (b = a; b < n && by_line(&idx[a], &idx[b]) == 0; b++) {
      const site *t = &L->sites[idx[b]];
      s.req += t->req; s.sectors += t->sectors; s.wavefronts += t->wavefronts; s.conflicts += t->conflicts;
    }
    int sh = L->sites[idx[a]].shared;
    fprintf(L->o->sites, "site kernel=%s at=%s:%d kind=%s_%s requests=%llu %s=%llu", L->k->name,
            ptx_file(L->m, x->file), x->line, sh ? "shared" : "global", x->op == OP_ST ? "store" : "load",
            (unsigned long long)s.req, sh ? "wavefronts" : "sectors",
            (unsigned long long)(sh ? s.wavefronts : s.sectors));
    if (sh) fprintf(L->o->sites, " conflicts=%llu", (unsigned long long)s.conflicts);
    fputc('\n', L->o->sites);
  }
  free(idx);
}

int vgpu_launch(devmem *mem, const module *m, const kernel *k, vdim3 grid, vdim3 block,
                uint32_t dyn_shared, const uint8_t *params, const vgpu_opts *o, counters *c,
                char *err, size_t errn) {
  launch L = {.mem = mem, .m = m, .k = k, .grid = grid, .block = block, .dyn_shared = dyn_shared,
              .params = params, .o = o, .c = c, .err = err, .errn = errn};
  int rc = check_limits(&L, err, errn);
  if (rc) return rc;
  L.nthreads = block.x * block.y * block.z;
  L.nwarps = (int)((L.nthreads + 31) / 32);
  uint32_t dyn_at = (k->shared_static + k->dyn_align - 1) / k->dyn_align * k->dyn_align;
  L.shared_bytes = dyn_shared ? dyn_at + dyn_shared : k->shared_static;
  L.shared = malloc(L.shared_bytes + 1);
  L.shared_init = malloc(L.shared_bytes + 1);
  if (o->racecheck) {
    size_t n = L.shared_bytes / 4 + 1;
    L.race_w = malloc(n * 4); L.race_r = malloc(n * 4);
    L.race_wpc = calloc(n, 4); L.race_rpc = calloc(n, 4);
    L.race_wlane = calloc(n, 4); L.race_wepoch = calloc(n, 4);
  }
  if (k->local_bytes) L.local = malloc((size_t)k->local_bytes * L.nthreads);
  L.warps = calloc((size_t)L.nwarps, sizeof *L.warps);
  L.sites = calloc((size_t)k->ncode + 1, sizeof *L.sites);
  for (int i = 0; i < L.nwarps; i++) {
    L.warps[i].id = i;
    L.warps[i].r = calloc((size_t)(k->nregs + 1) * 32, 8);
  }
  uint64_t nblocks = (uint64_t)grid.x * grid.y * grid.z;
  uint32_t *ord = block_order(o, nblocks);
  for (uint64_t i = 0; i < nblocks && !L.failed; i++) {
    uint64_t b = nth_block(o, ord, nblocks, i);
    L.ctaid = (vdim3){(uint32_t)(b % grid.x), (uint32_t)(b / grid.x % grid.y),
                      (uint32_t)(b / ((uint64_t)grid.x * grid.y))};
    run_block(&L);
  }
  free(ord);
  if (o->sites) print_sites(&L);
  free(L.sites);
  for (int i = 0; i < L.nwarps; i++) free(L.warps[i].r);
  free(L.warps); free(L.local); free(L.shared); free(L.shared_init);
  free(L.race_w); free(L.race_r); free(L.race_wpc); free(L.race_rpc);
  free(L.race_wlane); free(L.race_wepoch);
  return L.failed;
}

void counters_add(counters *s, const counters *c) {
  const uint64_t *a = (const uint64_t *)c;
  uint64_t *d = (uint64_t *)s;
  for (size_t i = 0; i < sizeof *c / 8; i++) d[i] += a[i];
}

void counters_print(FILE *f, const counters *c) {
  fprintf(f, "warp_insts=%llu thread_insts=%llu gld_requests=%llu gld_sectors=%llu "
             "gst_requests=%llu gst_sectors=%llu shld_requests=%llu shst_requests=%llu "
             "shld_wavefronts=%llu shst_wavefronts=%llu shld_conflicts=%llu shst_conflicts=%llu "
             "atom_requests=%llu atom_ops=%llu local_requests=%llu memcheck=%llu initcheck=%llu "
             "racecheck=%llu synccheck=%llu",
          (unsigned long long)c->warp_insts, (unsigned long long)c->thread_insts,
          (unsigned long long)c->gld_req, (unsigned long long)c->gld_sectors,
          (unsigned long long)c->gst_req, (unsigned long long)c->gst_sectors,
          (unsigned long long)c->shld_req, (unsigned long long)c->shst_req,
          (unsigned long long)c->shld_wavefronts, (unsigned long long)c->shst_wavefronts,
          (unsigned long long)c->shld_conflicts, (unsigned long long)c->shst_conflicts,
          (unsigned long long)c->atom_req, (unsigned long long)c->atom_ops,
          (unsigned long long)c->local_req, (unsigned long long)c->memcheck,
          (unsigned long long)c->initcheck, (unsigned long long)c->racecheck,
          (unsigned long long)c->synccheck);
}
