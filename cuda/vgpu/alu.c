/* alu.c — the arithmetic of one warp-instruction, lane by lane. Built with -frounding-math and
 * -ffp-contract=off: an instruction's rounding mode (.rn/.rz/.rm/.rp) is set with fesetround
 * around it, and a mul followed by an add stays two roundings, as PTX says (ptxas may fuse
 * them on a card: last-bit differences, see README). The .approx functions (ex2, lg2, rcp,
 * sqrt, rsqrt, sin, cos) are computed correctly rounded: within the card's stated error. */
#include <fenv.h>
#include <math.h>
#include <string.h>

#include "exec.h"

static float f32(uint64_t v) { float f; uint32_t u = (uint32_t)v; memcpy(&f, &u, 4); return f; }
static double f64(uint64_t v) { double d; memcpy(&d, &v, 8); return d; }
static uint64_t bf32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static uint64_t bf64(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static float ftz(float f) { return fpclassify(f) == FP_SUBNORMAL ? copysignf(0.0f, f) : f; }

static int set_round(int rnd) {
  int old = fegetround();
  switch (rnd) {
  case R_RZ: case R_RZI: fesetround(FE_TOWARDZERO); break;
  case R_RM: case R_RMI: fesetround(FE_DOWNWARD); break;
  case R_RP: case R_RPI: fesetround(FE_UPWARD); break;
  default: fesetround(FE_TONEAREST);
  }
  return old;
}

/* ---- floating point ---- */
/* PTX min/max: a NaN operand gives the other one; -0 is below +0 */
static double fmin_ptx(double a, double b) {
  if (a == 0 && b == 0) return signbit(a) ? a : b;
  return fmin(a, b);
}
static double fmax_ptx(double a, double b) {
  if (a == 0 && b == 0) return signbit(a) ? b : a;
  return fmax(a, b);
}
static uint64_t fop32(const instr *ins, float a, float b, float c) {
  int z = ins->flags & F_FTZ;
  if (z) { a = ftz(a); b = ftz(b); c = ftz(c); }
  float r;
  switch (ins->op) {
  case OP_ADD: r = a + b; break;
  case OP_SUB: r = a - b; break;
  case OP_MUL: r = a * b; break;
  case OP_MAD: case OP_FMA: r = fmaf(a, b, c); break;
  case OP_DIV: r = a / b; break;
  case OP_NEG: r = -a; break;
  case OP_ABS: r = fabsf(a); break;
  case OP_MIN: r = (float)fmin_ptx(a, b); break;
  case OP_MAX: r = (float)fmax_ptx(a, b); break;
  case OP_EX2: r = exp2f(a); break;
  case OP_LG2: r = log2f(a); break;
  case OP_RCP: r = 1.0f / a; break;
  case OP_SQRT: r = sqrtf(a); break;
  case OP_RSQRT: r = 1.0f / sqrtf(a); break;
  case OP_SIN: r = sinf(a); break;
  case OP_COS: r = cosf(a); break;
  case OP_COPYSIGN: r = copysignf(b, a); break;
  default: r = NAN;
  }
  if (ins->flags & F_SAT) r = !(r > 0.0f) ? 0.0f : r > 1.0f ? 1.0f : r /* NaN, -0 -> +0 */;
  if (z) r = ftz(r);
  return bf32(r);
}

static uint64_t fop64(const instr *ins, double a, double b, double c) {
  double r;
  switch (ins->op) {
  case OP_ADD: r = a + b; break;
  case OP_SUB: r = a - b; break;
  case OP_MUL: r = a * b; break;
  case OP_MAD: case OP_FMA: r = fma(a, b, c); break;
  case OP_DIV: r = a / b; break;
  case OP_NEG: r = -a; break;
  case OP_ABS: r = fabs(a); break;
  case OP_MIN: r = fmin_ptx(a, b); break;
  case OP_MAX: r = fmax_ptx(a, b); break;
  case OP_RCP: r = 1.0 / a; break;
  case OP_SQRT: r = sqrt(a); break;
  case OP_RSQRT: r = 1.0 / sqrt(a); break;
  case OP_EX2: r = exp2(a); break;
  case OP_LG2: r = log2(a); break;
  case OP_COPYSIGN: r = copysign(b, a); break;
  default: r = NAN;
  }
  if (ins->flags & F_SAT) r = !(r > 0.0) ? 0.0 : r > 1.0 ? 1.0 : r;
  return bf64(r);
}

/* ---- integers ---- */
__extension__ typedef __int128 i128; /* mul.hi.s64/u64 */
__extension__ typedef unsigned __int128 u128;
static uint64_t iop(const instr *ins, uint64_t ua, uint64_t ub, uint64_t uc, int *bad) {
  int bits = ins->t.bits, sg = ins->t.kind == T_S;
  int64_t a = sext(ua, bits), b = sext(ub, bits), c = sext(uc, bits);
  uint64_t za = zext(ua, bits), zb = zext(ub, bits);
  switch (ins->op) {
  case OP_ADD: return za + zb;
  case OP_SUB: return za - zb;
  case OP_MUL: case OP_MAD: {
    uint64_t r;
    if (ins->flags & F_WIDE) r = sg ? (uint64_t)(a * b) : za * zb;
    else if (ins->flags & F_HI) {
      if (bits == 64) {
        r = sg ? (uint64_t)(((i128)a * b) >> 64)
               : (uint64_t)(((u128)za * zb) >> 64);
      } else {
        r = sg ? (uint64_t)((a * b) >> bits) : (za * zb) >> bits;
      }
    } else r = za * zb;
    if (ins->op == OP_MAD) r += (ins->flags & F_WIDE) ? (uint64_t)sext(uc, 2 * bits) : (uint64_t)c;
    return r;
  }
  case OP_DIV: case OP_REM:
    if (zb == 0) return ~0ull; /* undefined in PTX; the card gives all ones for div */
    if (sg) {
      if (b == -1) return ins->op == OP_DIV ? (uint64_t)(-(uint64_t)a) : 0;
      return (uint64_t)(ins->op == OP_DIV ? a / b : a % b);
    }
    return ins->op == OP_DIV ? za / zb : za % zb;
  case OP_NEG: return -za;
  case OP_ABS: return a < 0 ? -(uint64_t)a : (uint64_t)a;
  case OP_MIN: return sg ? (uint64_t)(a < b ? a : b) : (za < zb ? za : zb);
  case OP_MAX: return sg ? (uint64_t)(a > b ? a : b) : (za > zb ? za : zb);
  case OP_AND: return ua & ub;
  case OP_OR: return ua | ub;
  case OP_XOR: return ua ^ ub;
  case OP_NOT: return ins->t.kind == T_PRED ? !ua : ~ua;
  case OP_CNOT: return za == 0;
  case OP_SHL: return zb >= (uint64_t)bits ? 0 : za << zb;
  case OP_SHR:
    if (sg) return (uint64_t)(a >> (zext(ub, 32) >= (uint64_t)bits ? bits - 1 : (int)zb));
    return zext(ub, 32) >= (uint64_t)bits ? 0 : za >> zb;
  case OP_POPC: return (uint64_t)__builtin_popcountll(za);
  case OP_CLZ: return za ? (uint64_t)(__builtin_clzll(za) - (64 - bits)) : (uint64_t)bits;
  case OP_BREV: {
    uint64_t r = 0;
    for (int i = 0; i < bits; i++) if (za >> i & 1) r |= 1ull << (bits - 1 - i);
    return r;
  }
  case OP_BFE: {
    unsigned pos = (unsigned)(ub & 0xff), len = (unsigned)(uc & 0xff);
    uint64_t r = 0;
    int sbit = len == 0 ? 0 : sg ? (int)((pos + len - 1 >= (unsigned)bits) ? za >> (bits - 1) & 1
                                                                          : za >> (pos + len - 1) & 1) : 0;
    for (unsigned i = 0; i < (unsigned)bits; i++) {
      int bit = i < len ? (pos + i < (unsigned)bits ? (int)(za >> (pos + i) & 1) : sbit) : sbit;
      r |= (uint64_t)bit << i;
    }
    return r;
  }
  default: *bad = 1; return 0;
  }
}

static int cmp_int(int c, int64_t a, int64_t b, uint64_t ua, uint64_t ub, int sg) {
  switch (c) {
  case C_EQ: return ua == ub;
  case C_NE: return ua != ub;
  case C_LT: return sg ? a < b : ua < ub;
  case C_LE: return sg ? a <= b : ua <= ub;
  case C_GT: return sg ? a > b : ua > ub;
  case C_GE: return sg ? a >= b : ua >= ub;
  case C_LO: return ua < ub;
  case C_LS: return ua <= ub;
  case C_HI: return ua > ub;
  case C_HS: return ua >= ub;
  default: return -1;
  }
}

static int cmp_float(int c, double a, double b) {
  int un = isnan(a) || isnan(b);
  switch (c) {
  case C_EQ: return !un && a == b;
  case C_NE: return !un && a != b;
  case C_LT: return !un && a < b;
  case C_LE: return !un && a <= b;
  case C_GT: return !un && a > b;
  case C_GE: return !un && a >= b;
  case C_EQU: return un || a == b;
  case C_NEU: return un || a != b;
  case C_LTU: return un || a < b;
  case C_LEU: return un || a <= b;
  case C_GTU: return un || a > b;
  case C_GEU: return un || a >= b;
  case C_NUM: return !un;
  case C_NAN: return un;
  default: return -1;
  }
}

static int setp(launch *L, warp *w, const instr *ins, int lane) {
  uint64_t ua = operand_value(L, w, &ins->o[1], lane), ub = operand_value(L, w, &ins->o[2], lane);
  int r;
  if (ins->t.kind == T_F) {
    double a = ins->t.bits == 32 ? f32(ua) : f64(ua), b = ins->t.bits == 32 ? f32(ub) : f64(ub);
    if (ins->t.bits == 32 && (ins->flags & F_FTZ)) { a = ftz((float)a); b = ftz((float)b); }
    r = cmp_float(ins->cmp, a, b);
  } else {
    int bits = ins->t.bits;
    r = cmp_int(ins->cmp, sext(ua, bits), sext(ub, bits), zext(ua, bits), zext(ub, bits),
                ins->t.kind == T_S);
  }
  if (r < 0) return -1;
  int q = !r;
  if (ins->boolop != S_NONE) {
    if (ins->nops < 4) return -1;
    int c = (int)(operand_value(L, w, &ins->o[3], lane) & 1) ^ ins->o[3].neg;
    if (ins->boolop == S_AND) { r = r && c; q = q && c; }
    if (ins->boolop == S_OR) { r = r || c; q = q || c; }
    if (ins->boolop == S_XOR) { r = r ^ c; q = q ^ c; }
  }
  ptype p = {T_PRED, 1};
  set_reg(w, ins->o[0].reg, lane, (uint64_t)r, p);
  if (ins->o[0].nvec == 2) set_reg(w, ins->o[0].vreg[1], lane, (uint64_t)q, p);
  return 0;
}

/* cvt.dst.src: integer widths, float <-> float, int <-> float, with rounding and saturation */
static uint64_t cvt(const instr *ins, uint64_t v, int *bad) {
  ptype d = ins->t, s = ins->t2;
  int fi = ins->rnd >= R_RNI;
  if (s.kind != T_F && d.kind != T_F) {
    int64_t x = s.kind == T_S ? sext(v, s.bits) : (int64_t)zext(v, s.bits);
    if ((ins->flags & F_SAT) && d.bits < 64) {
      int64_t lo = d.kind == T_S ? -(1ll << (d.bits - 1)) : 0;
      int64_t hi = d.kind == T_S ? (1ll << (d.bits - 1)) - 1 : (int64_t)((1ull << d.bits) - 1);
      if (s.kind != T_S && zext(v, s.bits) > (uint64_t)hi) x = hi;
      x = x < lo ? lo : x > hi ? hi : x;
    }
    return (uint64_t)x;
  }
  if (s.kind == T_F && d.kind == T_F) {
    double x = s.bits == 32 ? f32(v) : f64(v);
    if (s.bits == 32 && (ins->flags & F_FTZ)) x = ftz((float)x);
    if (fi) {
      switch (ins->rnd) {
      case R_RNI: x = nearbyint(x); break; /* round-half-even under FE_TONEAREST */
      case R_RZI: x = trunc(x); break;
      case R_RMI: x = floor(x); break;
      default: x = ceil(x);
      }
    }
    if (ins->flags & F_SAT) x = !(x > 0) ? 0.0 : x > 1 ? 1 : x /* NaN, -0 -> +0 */;
    if (d.bits == 64) return bf64(x);
    float f = (float)x; /* rounds in the mode set by the caller */
    return bf32((ins->flags & F_FTZ) ? ftz(f) : f);
  }
  if (d.kind == T_F) { /* integer to float */
    if (s.kind == T_S) {
      int64_t x = sext(v, s.bits);
      return d.bits == 32 ? bf32((float)x) : bf64((double)x);
    }
    uint64_t x = zext(v, s.bits);
    return d.bits == 32 ? bf32((float)x) : bf64((double)x);
  }
  /* float to integer: round as asked (.rzi default for C), saturate, NaN -> 0 */
  double x = s.bits == 32 ? f32(v) : f64(v);
  if (isnan(x)) return 0;
  switch (ins->rnd) {
  case R_RNI: x = nearbyint(x); break;
  case R_RMI: x = floor(x); break;
  case R_RPI: x = ceil(x); break;
  case R_RZI: x = trunc(x); break;
  default: *bad = 1; return 0;
  }
  if (d.kind == T_S) {
    double lo = -ldexp(1.0, d.bits - 1), hi = ldexp(1.0, d.bits - 1) - 1;
    if (x <= lo) return (uint64_t)(int64_t)lo;
    if (x >= hi) return d.bits == 64 ? (uint64_t)INT64_MAX : (uint64_t)(int64_t)hi;
    return (uint64_t)(int64_t)x;
  }
  double hi = ldexp(1.0, d.bits) - 1;
  if (x <= 0) return 0;
  if (x >= hi) return d.bits == 64 ? UINT64_MAX : (uint64_t)hi;
  return (uint64_t)x;
}

static uint64_t bfi(uint64_t a, uint64_t b, uint64_t c, uint64_t e, int bits) {
  unsigned pos = (unsigned)(c & 0xff), len = (unsigned)(e & 0xff);
  uint64_t f = b;
  for (unsigned i = 0; i < len && pos + i < (unsigned)bits; i++) {
    uint64_t bit = 1ull << (pos + i);
    f = (a >> i & 1) ? f | bit : f & ~bit;
  }
  return f;
}

static uint64_t cvta(launch *L, const instr *ins, uint64_t a, int *bad) {
  (void)L;
  uint64_t win = ins->space == SP_SHARED ? VGPU_SHARED_WIN : ins->space == SP_LOCAL ? VGPU_LOCAL_WIN : 0;
  if (ins->space != SP_GLOBAL && !win) { *bad = 1; return 0; }
  return ins->to ? a - win : a + win;
}

/* mov with vectors: {a, b} packs into one register, one register unpacks into {a, b} */
static void mov_vec(launch *L, warp *w, const instr *ins, int lane) {
  const operand *d = &ins->o[0], *s = &ins->o[1];
  if (s->kind == OK_VEC) {
    int eb = ins->t.bits / s->nvec;
    uint64_t v = 0;
    for (int i = 0; i < s->nvec; i++)
      v |= zext(s->vreg[i] >= 0 ? w->r[(size_t)s->vreg[i] * 32 + (size_t)lane] : 0, eb) << (i * eb);
    set_reg(w, d->reg, lane, v, ins->t);
  } else {
    int eb = ins->t.bits / d->nvec;
    uint64_t v = operand_value(L, w, s, lane);
    ptype et = {T_B, (uint8_t)eb};
    for (int i = 0; i < d->nvec; i++) set_reg(w, d->vreg[i], lane, v >> (i * eb), et);
  }
}

static int one_lane(launch *L, warp *w, const instr *ins, int lane) {
  int bad = 0;
  uint64_t a = ins->nops > 1 ? operand_value(L, w, &ins->o[1], lane) : 0;
  uint64_t b = ins->nops > 2 ? operand_value(L, w, &ins->o[2], lane) : 0;
  uint64_t c = ins->nops > 3 ? operand_value(L, w, &ins->o[3], lane) : 0;
  uint64_t r;
  ptype t = ins->t;
  switch (ins->op) {
  case OP_MOV:
    if (ins->o[0].kind == OK_VEC || ins->o[1].kind == OK_VEC) { mov_vec(L, w, ins, lane); return 0; }
    r = a;
    break;
  case OP_SETP: return setp(L, w, ins, lane);
  case OP_SELP: r = (c & 1) ^ ins->o[3].neg ? a : b; break;
  case OP_CVT: r = cvt(ins, a, &bad); break;
  case OP_CVTA: r = cvta(L, ins, a, &bad); break;
  case OP_BFI: r = bfi(a, b, c, operand_value(L, w, &ins->o[4], lane), t.bits); break;
  case OP_MEMBAR: return 0;
  default:
    if (t.kind == T_F && t.bits == 32) r = fop32(ins, f32(a), f32(b), f32(c));
    else if (t.kind == T_F && t.bits == 64) r = fop64(ins, f64(a), f64(b), f64(c));
    else if (t.kind == T_PRED) {
      a ^= ins->o[1].neg; b ^= ins->o[2].neg;
      r = iop(ins, a & 1, b & 1, c, &bad) & 1;
    } else r = iop(ins, a, b, c, &bad);
    if ((ins->flags & F_WIDE) && t.kind != T_F) t.bits = (uint8_t)(2 * t.bits);
  }
  if (bad) return -1;
  if (ins->op == OP_CVT) t = ins->t;
  if (ins->op == OP_POPC || ins->op == OP_CLZ) t = (ptype){T_U, 32};
  set_reg(w, ins->o[0].reg, lane, r, t);
  return 0;
}

/* The operand's value in every lane of mask. */
static void gather(launch *L, warp *w, const operand *o, uint32_t mask, uint64_t *v) {
  if (o->kind == OK_REG) {
    const uint64_t *r = &w->r[(size_t)o->reg * 32];
    for (int l = 0; l < 32; l++) v[l] = r[l] ^ o->neg;
  } else if (o->kind == OK_IMM) {
    for (int l = 0; l < 32; l++) v[l] = (uint64_t)o->imm;
  } else {
    for (int l = 0; l < 32; l++) v[l] = mask >> l & 1 ? operand_slow(L, w, o, l) : 0;
  }
}

/* The commonest forms, one dispatch a warp-instruction: f32 add/sub/mul/fma without ftz or
 * saturation in the default rounding; 32/64-bit integer add/sub/mul.lo/shl/and/or/xor; mov.
 * 0 if done, -1 to take the general path. */
static int fast(launch *L, warp *w, const instr *ins, uint32_t mask) {
  int op = ins->op, n = ins->nops;
  if (ins->o[0].kind != OK_REG || ins->o[0].nvec || (ins->flags & ~F_LO) || ins->rnd > R_RN) return -1;
  uint64_t a[32], b[32], c[32], *d = &w->r[(size_t)ins->o[0].reg * 32];
  if (op == OP_MOV) {
    if (n != 2 || ins->o[1].kind == OK_VEC) return -1;
    gather(L, w, &ins->o[1], mask, a);
    for (int l = 0; l < 32; l++) if (mask >> l & 1) set_reg(w, ins->o[0].reg, l, a[l], ins->t);
    return 0;
  }
  if (ins->t.kind == T_F && ins->t.bits == 32) {
    if (!(op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_FMA || op == OP_MAD)) return -1;
    gather(L, w, &ins->o[1], mask, a);
    gather(L, w, &ins->o[2], mask, b);
    if (op == OP_FMA || op == OP_MAD) gather(L, w, &ins->o[3], mask, c);
    for (int l = 0; l < 32; l++) {
      if (!(mask >> l & 1)) continue;
      float x = f32(a[l]), y = f32(b[l]), r;
      switch (op) {
      case OP_ADD: r = x + y; break;
      case OP_SUB: r = x - y; break;
      case OP_MUL: r = x * y; break;
      default: r = fmaf(x, y, f32(c[l]));
      }
      d[l] = bf32(r);
    }
    return 0;
  }
  if ((ins->t.kind == T_S || ins->t.kind == T_U || ins->t.kind == T_B) &&
      (ins->t.bits == 32 || ins->t.bits == 64) && (op == OP_ADD || op == OP_SUB ||
      (op == OP_MUL && (ins->flags & F_LO)) || op == OP_SHL || op == OP_AND || op == OP_OR || op == OP_XOR)) {
    gather(L, w, &ins->o[1], mask, a);
    gather(L, w, &ins->o[2], mask, b);
    int bits = ins->t.bits;
    for (int l = 0; l < 32; l++) {
      if (!(mask >> l & 1)) continue;
      uint64_t x = a[l], y = b[l], r;
      switch (op) {
      case OP_ADD: r = x + y; break;
      case OP_SUB: r = x - y; break;
      case OP_MUL: r = x * y; break;
      case OP_SHL: r = zext(y, 32) >= (uint64_t)bits ? 0 : x << zext(y, 32); break;
      case OP_AND: r = x & y; break;
      case OP_OR: r = x | y; break;
      default: r = x ^ y;
      }
      set_reg(w, ins->o[0].reg, l, r, ins->t);
    }
    return 0;
  }
  return -1;
}

int alu_exec(launch *L, warp *w, const instr *ins, uint32_t mask) {
  if (!fast(L, w, ins, mask)) return 0;
  int directed = ins->rnd != R_NONE && ins->rnd != R_RN && ins->rnd != R_RNI;
  int old = directed ? set_round(ins->rnd) : 0;
  int rc = 0;
  for (int lane = 0; lane < 32 && !rc; lane++)
    if (mask >> lane & 1) rc = one_lane(L, w, ins, lane);
  if (directed) fesetround(old);
  return rc;
}
