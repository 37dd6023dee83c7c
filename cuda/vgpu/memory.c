/* memory.c — ld/st/atom/red of one warp-instruction: addresses by state space, memcheck
 * (bounds of every allocation, alignment), initcheck (reads of never-written bytes), racecheck
 * (shared words touched by two warps in one barrier interval, one of them writing), and the
 * counters Nsight Compute keeps per warp-instruction: global requests and 32-byte sectors,
 * shared requests, wavefronts and bank conflicts. */
#include <string.h>

#include "exec.h"

enum { E_ILLEGAL_ADDRESS = 700, E_MISALIGNED = 716 };

static const char *space_name(int s) {
  static const char *const n[] = {"?", "generic", "__global__", "__shared__", "local",
                                  "param", "__constant__"};
  return n[s];
}

static uint64_t eff_addr(warp *w, const operand *a, int lane) {
  uint64_t v = a->reg >= 0 ? w->r[(size_t)a->reg * 32 + (size_t)lane] : 0;
  return v + (a->has_sym ? a->symoff : 0) + (uint64_t)a->imm;
}

/* The space a generic address falls in, and the address within it. */
static int classify(int space, uint64_t *addr) {
  if (space != SP_GENERIC) return space;
  if (*addr - VGPU_SHARED_WIN < VGPU_WIN_SIZE) { *addr -= VGPU_SHARED_WIN; return SP_SHARED; }
  if (*addr - VGPU_LOCAL_WIN < VGPU_WIN_SIZE) { *addr -= VGPU_LOCAL_WIN; return SP_LOCAL; }
  return SP_GLOBAL;
}

static void oob_global(launch *L, warp *w, int lane, const instr *ins, uint64_t addr,
                       unsigned size, int write) {
  dalloc *a = mem_find(L->mem, addr);
  char why[200] = "not inside any allocation";
  if (a && !a->data) snprintf(why, sizeof why, "inside a freed allocation of %llu bytes at 0x%llx",
                              (unsigned long long)a->size, (unsigned long long)a->base);
  else if (a) snprintf(why, sizeof why, "%llu bytes into an allocation of %llu bytes",
                       (unsigned long long)(addr - a->base), (unsigned long long)a->size);
  else {
    for (int i = L->mem->n - 1; i >= 0; i--) {
      dalloc *b = &L->mem->a[i];
      if (b->base <= addr && b->data) {
        snprintf(why, sizeof why, "%llu bytes past the end of an allocation of %llu bytes at 0x%llx",
                 (unsigned long long)(addr - b->base - b->size), (unsigned long long)b->size,
                 (unsigned long long)b->base);
        break;
      }
    }
  }
  L->c->memcheck++;
  fault(L, w, lane, ins, E_ILLEGAL_ADDRESS, "memcheck: invalid __global__ %s of %u bytes at 0x%llx (%s)",
        write ? "write" : "read", size, (unsigned long long)addr, why);
}

/* Where lane's access of size bytes at addr (in space) lands; NULL after a fault. */
static uint8_t *target(launch *L, warp *w, int lane, const instr *ins, int space, uint64_t addr,
                       unsigned size, int write, uint8_t **init) {
  *init = NULL;
  if (addr & (size - 1)) { /* sizes are powers of two: 1 .. 32 bytes */
    fault(L, w, lane, ins, E_MISALIGNED, "memcheck: misaligned %s %s of %u bytes at 0x%llx",
          space_name(space), write ? "write" : "read", size, (unsigned long long)addr);
    return NULL;
  }
  uint64_t lim = 0;
  switch (space) {
  case SP_GLOBAL: case SP_CONST: {
    dalloc *a = mem_range(L->mem, addr, size);
    if (!a) { oob_global(L, w, lane, ins, addr, size, write); return NULL; }
    *init = a->init + (addr - a->base);
    return a->data + (addr - a->base);
  }
  case SP_SHARED: lim = L->shared_bytes; break;
  case SP_LOCAL: lim = L->k->local_bytes; break;
  case SP_PARAM: lim = write ? 0 : L->k->param_bytes; break;
  }
  if (addr + size > lim || addr + size < addr) {
    L->c->memcheck++;
    fault(L, w, lane, ins, E_ILLEGAL_ADDRESS,
          "memcheck: invalid %s %s of %u bytes at offset %llu (the block has %llu bytes there)",
          space_name(space), write ? "write" : "read", size, (unsigned long long)addr,
          (unsigned long long)lim);
    return NULL;
  }
  if (space == SP_SHARED) { *init = L->shared_init + addr; return L->shared + addr; }
  if (space == SP_LOCAL)
    return L->local + (size_t)(w->id * 32 + lane) * L->k->local_bytes + addr;
  return (uint8_t *)L->params + addr;
}

static int distinct_sorted(uint64_t *v, int n) { /* insertion sort, then count distinct */
  for (int i = 1; i < n; i++) {
    uint64_t x = v[i];
    int j = i - 1;
    while (j >= 0 && v[j] > x) { v[j + 1] = v[j]; j--; }
    v[j + 1] = x;
  }
  int d = 0;
  for (int i = 0; i < n; i++) if (!i || v[i] != v[i - 1]) v[d++] = v[i];
  return d;
}

/* Global: one request, and the distinct 32-byte sectors its lanes touch. */
static void count_global(launch *L, const instr *ins, const uint64_t *addr, uint32_t mask, unsigned size, int st) {
  uint64_t s[64];
  int n = 0;
  for (int l = 0; l < 32; l++)
    if (mask >> l & 1) { s[n++] = addr[l] >> 5; if ((addr[l] + size - 1) >> 5 != addr[l] >> 5) s[n++] = (addr[l] + size - 1) >> 5; }
  int d = distinct_sorted(s, n);
  if (st) { L->c->gst_req++; L->c->gst_sectors += (uint64_t)d; }
  else { L->c->gld_req++; L->c->gld_sectors += (uint64_t)d; }
  site *t = &L->sites[ins - L->k->code];
  t->req++;
  t->sectors += (uint64_t)d;
}

/* Shared: 32 banks of 4-byte words. An access of 8 (16) bytes a lane is served in 2 (4) phases
 * of 16 (8) lanes; in each phase a bank serves one distinct word per wavefront (lanes reading
 * the same word share it). Conflicts = wavefronts beyond one a phase. */
static void count_shared(launch *L, const instr *ins, const uint64_t *addr, uint32_t mask, unsigned size, int st) {
  unsigned words = size < 4 ? 1 : size / 4, per = 32 / words;
  uint64_t wave = 0, ideal = 0;
  for (unsigned ph = 0; ph < words; ph++) {
    uint64_t v[128];
    int n = 0;
    for (unsigned l = ph * per; l < (ph + 1) * per; l++)
      if (mask >> l & 1)
        for (unsigned j = 0; j < words; j++) v[n++] = (addr[l] >> 2) + j;
    if (!n) continue;
    int d = distinct_sorted(v, n), count[32] = {0}, most = 0;
    for (int i = 0; i < d; i++) if (++count[v[i] & 31] > most) most = count[v[i] & 31];
    wave += (uint64_t)most;
    ideal++;
  }
  if (st) { L->c->shst_req++; L->c->shst_wavefronts += wave; L->c->shst_conflicts += wave - ideal; }
  else { L->c->shld_req++; L->c->shld_wavefronts += wave; L->c->shld_conflicts += wave - ideal; }
  site *t = &L->sites[ins - L->k->code];
  t->req++;
  t->shared = 1;
  t->wavefronts += wave;
  t->conflicts += wave - ideal;
}

/* racecheck: 0, or 1 once a hazard is reported for this warp-instruction */
static int race(launch *L, warp *w, int lane, const instr *ins, uint64_t off, unsigned size, int wr) {
  if (!L->race_w) return 0;
  int pc = (int)(ins - L->k->code);
  for (uint64_t wd = off / 4; wd <= (off + size - 1) / 4; wd++) {
    int32_t *wo = &L->race_w[wd], *ro = &L->race_r[wd];
    int other_w = *wo != -1 && *wo != w->id, other_r = *ro != -1 && *ro != w->id;
    int tid = w->id * 32 + lane; /* another lane of this warp wrote it since its last __syncwarp */
    int lane_w = *wo == w->id && L->race_wlane[wd] != tid && L->race_wepoch[wd] == w->epoch;
    if (other_w || (wr && other_r) || lane_w) {
      const instr *o = &L->k->code[other_w || lane_w ? L->race_wpc[wd] : L->race_rpc[wd]];
      L->c->racecheck++;
      report(L, w, lane, ins, "racecheck: %s of __shared__ word at offset %llu races with a %s by "
             "%s at %s:%d with no %s between", wr ? "write" : "read", (unsigned long long)wd * 4,
             other_w || lane_w ? "write" : "read", lane_w ? "another lane of the same warp" : "another warp",
             ptx_file(L->m, o->file), o->line, lane_w ? "__syncwarp() or barrier" : "barrier");
      return 1;
    }
    if (wr) { L->race_wlane[wd] = tid; L->race_wepoch[wd] = w->epoch; }
    int32_t *mine = wr ? wo : ro;
    *mine = *mine == -1 || *mine == w->id ? w->id : -2;
    (wr ? L->race_wpc : L->race_rpc)[wd] = pc;
  }
  return 0;
}

static void load_store(launch *L, warp *w, const instr *ins, uint32_t mask) {
  int st = ins->op == OP_ST, raced = 0, uninit = 0;
  const operand *ao = &ins->o[st ? 0 : 1], *vo = &ins->o[st ? 1 : 0];
  unsigned es = ins->t.bits / 8, size = es * ins->vec;
  uint64_t addr[32];
  int space = SP_NONE;
  for (int l = 0; l < 32 && !L->failed; l++) {
    if (!(mask >> l & 1)) continue;
    addr[l] = eff_addr(w, ao, l);
    int sp = classify(ins->space == SP_GENERIC && ao->has_sym && ao->reg < 0 ? ao->space : ins->space, &addr[l]);
    if (space != SP_NONE && sp != space) { fault(L, w, l, ins, E_ILLEGAL_ADDRESS, "generic access whose lanes address different state spaces"); return; }
    space = sp;
    uint8_t *init, *p = target(L, w, l, ins, sp, addr[l], size, st, &init);
    if (!p) return;
    for (unsigned i = 0; i < ins->vec; i++) {
      int reg = vo->kind == OK_VEC ? vo->vreg[i] : vo->reg;
      if (st) {
        uint64_t v = vo->kind == OK_IMM ? (uint64_t)vo->imm : reg >= 0 ? w->r[(size_t)reg * 32 + (size_t)l] : 0;
        memcpy(p + i * es, &v, es);
      } else {
        uint64_t v = 0;
        memcpy(&v, p + i * es, es);
        set_reg(w, reg, l, v, ins->t);
      }
    }
    if (init && st) memset(init, 1, size);
    else if (init && L->o->initcheck && !uninit && memchr(init, 0, size)) {
      uninit = 1;
      L->c->initcheck++;
      report(L, w, l, ins, "initcheck: read of %u bytes of %s memory never written (at 0x%llx)",
             size, space_name(sp), (unsigned long long)addr[l]);
    }
    if (sp == SP_SHARED && !raced) raced = race(L, w, l, ins, addr[l], size, st);
  }
  if (space == SP_GLOBAL || space == SP_CONST) count_global(L, ins, addr, mask, size, st);
  else if (space == SP_SHARED) count_shared(L, ins, addr, mask, size, st);
  else if (space == SP_LOCAL) L->c->local_req++;
}

static uint64_t atom_op(const instr *ins, uint64_t old, uint64_t b, uint64_t c, int *bad) {
  int bits = ins->t.bits;
  if (ins->t.kind == T_F) {
    if (bits != 32 || (ins->sub != S_ADD && ins->sub != S_EXCH && ins->sub != S_MIN && ins->sub != S_MAX)) { *bad = 1; return 0; }
    float x, y;
    uint32_t u = (uint32_t)old, v = (uint32_t)b;
    memcpy(&x, &u, 4); memcpy(&y, &v, 4);
    float r = ins->sub == S_ADD ? x + y : ins->sub == S_MIN ? (y < x ? y : x) : ins->sub == S_MAX ? (y > x ? y : x) : y;
    memcpy(&u, &r, 4);
    return u;
  }
  int sg = ins->t.kind == T_S;
  int64_t so = sext(old, bits), sb = sext(b, bits);
  uint64_t zo = zext(old, bits), zb = zext(b, bits);
  switch (ins->sub) {
  case S_ADD: return zo + zb;
  case S_MIN: return sg ? (uint64_t)(sb < so ? sb : so) : (zb < zo ? zb : zo);
  case S_MAX: return sg ? (uint64_t)(sb > so ? sb : so) : (zb > zo ? zb : zo);
  case S_EXCH: return zb;
  case S_CAS: return zo == zb ? c : zo;
  case S_AND: return zo & zb;
  case S_OR: return zo | zb;
  case S_XOR: return zo ^ zb;
  case S_INC: return zo >= zb ? 0 : zo + 1;
  case S_DEC: return (zo == 0 || zo > zb) ? zb : zo - 1;
  default: *bad = 1; return 0;
  }
}

/* atom/red: lane by lane in lane order (a card's order within a warp is unspecified). */
static int atomic(launch *L, warp *w, const instr *ins, uint32_t mask) {
  int red = ins->op == OP_RED, bad = 0, space = SP_NONE;
  const operand *ao = &ins->o[red ? 0 : 1];
  unsigned size = ins->t.bits / 8;
  uint64_t addr[32];
  L->c->atom_req++;
  for (int l = 0; l < 32 && !L->failed; l++) {
    if (!(mask >> l & 1)) continue;
    L->c->atom_ops++;
    addr[l] = eff_addr(w, ao, l);
    space = classify(ins->space, &addr[l]);
    if (space != SP_GLOBAL && space != SP_SHARED) return -1;
    uint8_t *init, *p = target(L, w, l, ins, space, addr[l], size, 1, &init);
    if (!p) return 0;
    uint64_t old = 0, b = operand_value(L, w, &ins->o[red ? 1 : 2], l);
    uint64_t c = ins->sub == S_CAS ? operand_value(L, w, &ins->o[3], l) : 0;
    memcpy(&old, p, size);
    if (L->o->initcheck && memchr(init, 0, size)) {
      L->c->initcheck++;
      report(L, w, l, ins, "initcheck: atomic on %u bytes never written (at 0x%llx)", size, (unsigned long long)addr[l]);
    }
    uint64_t v = atom_op(ins, old, b, c, &bad);
    if (bad) return -1;
    memcpy(p, &v, size);
    memset(init, 1, size);
    if (!red) set_reg(w, ins->o[0].reg, l, old, ins->t);
  }
  return 0;
}

int mem_exec(launch *L, warp *w, const instr *ins, uint32_t mask) {
  if (ins->op == OP_ATOM || ins->op == OP_RED) return atomic(L, w, ins, mask);
  if (ins->t.bits < 8 || ins->t.kind == T_PRED) return -1;
  load_store(L, w, ins, mask);
  return 0;
}
