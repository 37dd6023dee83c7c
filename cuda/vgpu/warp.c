/* warp.c — the warp-wide instructions: shfl.sync, vote.sync, match.sync. Every lane named in
 * the member mask must be executing the same instruction (converged); a lane that is not
 * (diverged, exited, past the block) is a synccheck fault rather than a guessed value. */
#include <string.h>

#include "exec.h"

/* 1 if every lane of member is executing ins. Otherwise, while a lane of member still runs
 * elsewhere in the warp, the lanes here wait for it (parked at this pc: 0, no fault); when none
 * can arrive any more (exited, at a barrier, waiting elsewhere), a synccheck fault. */
int converged(launch *L, warp *w, const instr *ins, uint32_t act, uint32_t member) {
  if ((member & act) == member) return 1;
  uint32_t running = 0;
  for (int l = 0; l < 32; l++) if (w->st[l] == L_RUN && !(act >> l & 1)) running |= 1u << l;
  if (member & running) {
    int pc = (int)(ins - L->k->code);
    for (int l = 0; l < 32; l++) if (act >> l & 1) { w->st[l] = L_WAIT; w->pc[l] = pc; }
    return 0;
  }
  int lane = __builtin_ctz(member & ~act);
  L->c->synccheck++;
  fault(L, w, __builtin_ctz(act ? act : 1), ins, 719,
        "synccheck: %s with member mask 0x%08x, but lane %d is not executing it (diverged or "
        "exited): every lane of the mask must reach the same warp-synchronous call", ins->text,
        member, lane);
  return 0;
}

/* shfl.sync.mode.b32 d[|p], a, b, c, membermask (PTX ISA semantics of b, c and the segment) */
static int shfl(launch *L, warp *w, const instr *ins, uint32_t act) {
  uint64_t val[32];
  for (int l = 0; l < 32; l++) val[l] = w->r[(size_t)(ins->o[1].kind == OK_REG ? ins->o[1].reg : 0) * 32 + (size_t)l];
  if (ins->o[1].kind == OK_IMM) for (int l = 0; l < 32; l++) val[l] = (uint64_t)ins->o[1].imm;
  if (ins->o[1].kind != OK_REG && ins->o[1].kind != OK_IMM) return -1;
  for (int l = 0; l < 32; l++) {
    if (!(act >> l & 1)) continue;
    uint32_t member = (uint32_t)operand_value(L, w, &ins->o[4], l);
    if (!converged(L, w, ins, act, member)) return 0;
    uint32_t b = (uint32_t)operand_value(L, w, &ins->o[2], l) & 31;
    uint32_t c = (uint32_t)operand_value(L, w, &ins->o[3], l);
    int cval = (int)(c & 31), seg = (int)((c >> 8) & 31);
    int max_lane = (l & seg) | (cval & ~seg), min_lane = l & seg, j, ok;
    switch (ins->sub) {
    case S_UP: j = l - (int)b; ok = j >= max_lane; break;
    case S_DOWN: j = l + (int)b; ok = j <= max_lane; break;
    case S_BFLY: j = l ^ (int)b; ok = j <= max_lane; break;
    default: j = min_lane | ((int)b & ~seg); ok = j <= max_lane;
    }
    if (!ok) j = l;
    if (!(member >> j & 1) || !(act >> j & 1)) {
      L->c->synccheck++;
      fault(L, w, l, ins, 719, "synccheck: shfl reads lane %d, which is not in the member mask 0x%08x or not active", j, member);
      return 0;
    }
    set_reg(w, ins->o[0].reg, l, val[j], (ptype){T_B, 32});
    if (ins->o[0].nvec == 2) set_reg(w, ins->o[0].vreg[1], l, (uint64_t)ok, (ptype){T_PRED, 1});
  }
  return 0;
}

/* vote.sync.{all,any,uni}.pred d, p, membermask; vote.sync.ballot.b32 d, p, membermask */
static int vote(launch *L, warp *w, const instr *ins, uint32_t act) {
  for (int l = 0; l < 32; l++) {
    if (!(act >> l & 1)) continue;
    uint32_t member = (uint32_t)operand_value(L, w, &ins->o[2], l), ballot = 0;
    if (!converged(L, w, ins, act, member)) return 0;
    for (int j = 0; j < 32; j++)
      if ((member >> j & 1) && (operand_value(L, w, &ins->o[1], j) & 1)) ballot |= 1u << j;
    uint64_t r;
    switch (ins->sub) {
    case S_ALL: r = ballot == member; break;
    case S_ANY: r = ballot != 0; break;
    case S_UNI: r = ballot == 0 || ballot == member; break;
    default: r = ballot;
    }
    set_reg(w, ins->o[0].reg, l, r, ins->sub == S_BALLOT ? (ptype){T_B, 32} : (ptype){T_PRED, 1});
  }
  return 0;
}

/* match.any.sync.b32/b64 d, a, membermask; match.all.sync d[|p], a, membermask */
static int match(launch *L, warp *w, const instr *ins, uint32_t act) {
  int bits = ins->t.bits;
  for (int l = 0; l < 32; l++) {
    if (!(act >> l & 1)) continue;
    uint32_t member = (uint32_t)operand_value(L, w, &ins->o[2], l), same = 0;
    if (!converged(L, w, ins, act, member)) return 0;
    uint64_t mine = zext(operand_value(L, w, &ins->o[1], l), bits);
    for (int j = 0; j < 32; j++)
      if ((member >> j & 1) && zext(operand_value(L, w, &ins->o[1], j), bits) == mine) same |= 1u << j;
    int all = same == member;
    uint64_t r = ins->sub == S_ANY ? same : all ? member : 0;
    set_reg(w, ins->o[0].reg, l, r, (ptype){T_B, 32});
    if (ins->o[0].nvec == 2) set_reg(w, ins->o[0].vreg[1], l, (uint64_t)all, (ptype){T_PRED, 1});
  }
  return 0;
}

int warp_exec(launch *L, warp *w, const instr *ins, uint32_t act) {
  if (!act) return 0;
  if (ins->op == OP_SHFL) return ins->nops == 5 ? shfl(L, w, ins, act) : -1;
  if (ins->op == OP_VOTE) return ins->nops == 3 ? vote(L, w, ins, act) : -1;
  return ins->nops == 3 ? match(L, w, ins, act) : -1;
}
