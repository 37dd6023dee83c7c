/* ptx_decode.c — a dotted PTX opcode ("fma.rn.f32", "ld.global.v4.f32") to an instr's op and
 * modifiers. Each op accepts only the modifier classes listed for it in table[]; any other
 * token makes the instruction unsupported, so a form this interpreter does not model is refused
 * instead of being run with a modifier ignored. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "ptx.h"

enum { /* modifier classes */
  K_TYPE = 1, K_RND = 2, K_FTZ = 4, K_SAT = 8, K_APPROX = 16, K_SPACE = 32, K_VEC = 64,
  K_CMP = 128, K_SUB = 256, K_HILO = 512, K_UNI = 1024, K_NC = 2048, K_SYNC = 4096, K_TO = 8192,
  K_ORDER = 16384, K_ALIGNED = 32768, K_BOOL = 65536, K_FULL = 131072, K_CC = 262144,
  K_WARP = 524288
};

static const struct {
  const char *name;
  enum op op;
  unsigned classes;
} table[] = {
    {"mov", OP_MOV, K_TYPE},
    {"ld", OP_LD, K_TYPE | K_SPACE | K_VEC | K_NC | K_ORDER},
    {"ldu", OP_LD, K_TYPE | K_SPACE | K_VEC},
    {"st", OP_ST, K_TYPE | K_SPACE | K_VEC | K_ORDER},
    {"cvta", OP_CVTA, K_TYPE | K_SPACE | K_TO},
    {"cvt", OP_CVT, K_TYPE | K_RND | K_FTZ | K_SAT},
    {"add", OP_ADD, K_TYPE | K_RND | K_FTZ | K_SAT | K_CC},
    {"sub", OP_SUB, K_TYPE | K_RND | K_FTZ | K_SAT | K_CC},
    {"mul", OP_MUL, K_TYPE | K_RND | K_FTZ | K_SAT | K_HILO},
    {"mad", OP_MAD, K_TYPE | K_RND | K_FTZ | K_SAT | K_HILO},
    {"fma", OP_FMA, K_TYPE | K_RND | K_FTZ | K_SAT},
    {"div", OP_DIV, K_TYPE | K_RND | K_FTZ | K_APPROX | K_FULL},
    {"rem", OP_REM, K_TYPE},
    {"neg", OP_NEG, K_TYPE | K_FTZ},
    {"abs", OP_ABS, K_TYPE | K_FTZ},
    {"min", OP_MIN, K_TYPE | K_FTZ},
    {"max", OP_MAX, K_TYPE | K_FTZ},
    {"and", OP_AND, K_TYPE},
    {"or", OP_OR, K_TYPE},
    {"xor", OP_XOR, K_TYPE},
    {"not", OP_NOT, K_TYPE},
    {"cnot", OP_CNOT, K_TYPE},
    {"shl", OP_SHL, K_TYPE},
    {"shr", OP_SHR, K_TYPE},
    {"setp", OP_SETP, K_TYPE | K_CMP | K_FTZ | K_BOOL},
    {"selp", OP_SELP, K_TYPE},
    {"bra", OP_BRA, K_UNI},
    {"ret", OP_RET, K_UNI},
    {"exit", OP_EXIT, 0},
    {"bar", OP_BAR, K_SYNC | K_ALIGNED | K_WARP},
    {"barrier", OP_BAR, K_SYNC | K_ALIGNED},
    {"shfl", OP_SHFL, K_TYPE | K_SUB | K_SYNC},
    {"vote", OP_VOTE, K_TYPE | K_SUB | K_SYNC},
    {"match", OP_MATCH, K_TYPE | K_SUB | K_SYNC},
    {"atom", OP_ATOM, K_TYPE | K_SPACE | K_SUB | K_ORDER},
    {"red", OP_RED, K_TYPE | K_SPACE | K_SUB | K_ORDER},
    {"ex2", OP_EX2, K_TYPE | K_APPROX | K_FTZ},
    {"lg2", OP_LG2, K_TYPE | K_APPROX | K_FTZ},
    {"rcp", OP_RCP, K_TYPE | K_APPROX | K_FTZ | K_RND},
    {"sqrt", OP_SQRT, K_TYPE | K_APPROX | K_FTZ | K_RND},
    {"rsqrt", OP_RSQRT, K_TYPE | K_APPROX | K_FTZ},
    {"sin", OP_SIN, K_TYPE | K_APPROX | K_FTZ},
    {"cos", OP_COS, K_TYPE | K_APPROX | K_FTZ},
    {"bfi", OP_BFI, K_TYPE},
    {"bfe", OP_BFE, K_TYPE},
    {"popc", OP_POPC, K_TYPE},
    {"clz", OP_CLZ, K_TYPE},
    {"brev", OP_BREV, K_TYPE},
    {"copysign", OP_COPYSIGN, K_TYPE},
    {"membar", OP_MEMBAR, K_ORDER},
    {"fence", OP_MEMBAR, K_ORDER},
    {"mul24", OP_MUL24, K_TYPE | K_HILO},
    {"mad24", OP_MAD24, K_TYPE | K_HILO},
};

static const char *const types[] = {"b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64",
                                    "s8", "s16", "s32", "s64", "f32", "f64", "pred"};
static int parse_type(const char *t, ptype *out) {
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (!strcmp(t, types[i])) {
      if (i == 14) { out->kind = T_PRED; out->bits = 1; return 0; }
      static const uint8_t kinds[] = {T_B, T_B, T_B, T_B, T_U, T_U, T_U, T_U,
                                      T_S, T_S, T_S, T_S, T_F, T_F};
      static const uint8_t bits[] = {8, 16, 32, 64, 8, 16, 32, 64, 8, 16, 32, 64, 32, 64};
      out->kind = kinds[i]; out->bits = bits[i];
      return 0;
    }
  return -1;
}

static int lookup(const char *t, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (!strcmp(t, names[i])) return i;
  return -1;
}

static const char *const rnds[] = {"", "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"};
static const char *const cmps[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi",
                                   "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
static const char *const spaces[] = {"", "", "global", "shared", "local", "param", "const"};
static const char *const orders[] = {"relaxed", "acquire", "release", "acq_rel", "volatile",
                                     "weak", "cta", "gpu", "sys", "sc", "cluster"};

/* One modifier token; 0 if it belongs to a class the op accepts. */
static int modifier(instr *ins, unsigned cl, const char *t, int *ntypes) {
  int i;
  ptype ty;
  if ((cl & K_TYPE) && !parse_type(t, &ty)) {
    if (*ntypes == 0) ins->t = ty; else if (*ntypes == 1) ins->t2 = ty; else return -1;
    ++*ntypes;
    return 0;
  }
  if ((cl & K_RND) && (i = lookup(t, rnds, 9)) > 0) { ins->rnd = (uint8_t)i; return 0; }
  if ((cl & K_FTZ) && !strcmp(t, "ftz")) { ins->flags |= F_FTZ; return 0; }
  if ((cl & K_SAT) && !strcmp(t, "sat")) { ins->flags |= F_SAT; return 0; }
  if ((cl & K_APPROX) && !strcmp(t, "approx")) { ins->flags |= F_APPROX; return 0; }
  if ((cl & K_FULL) && !strcmp(t, "full")) { ins->flags |= F_FULL; return 0; }
  if ((cl & K_CC) && !strcmp(t, "cc")) { ins->flags |= F_CC; return 0; }
  if ((cl & K_SPACE) && (i = lookup(t, spaces, 7)) > 1) { ins->space = (uint8_t)i; return 0; }
  if ((cl & K_VEC) && (!strcmp(t, "v2") || !strcmp(t, "v4"))) {
    ins->vec = (uint8_t)(t[1] - '0');
    return 0;
  }
  if ((cl & K_HILO) && !strcmp(t, "hi")) { ins->flags |= F_HI; return 0; }
  if ((cl & K_HILO) && !strcmp(t, "lo")) { ins->flags |= F_LO; return 0; }
  if ((cl & K_HILO) && !strcmp(t, "wide")) { ins->flags |= F_WIDE; return 0; }
  if ((cl & K_CMP) && ins->cmp == 0xff && (i = lookup(t, cmps, 18)) >= 0) {
    ins->cmp = (uint8_t)i;
    return 0;
  }
  if ((cl & K_BOOL) && ins->cmp != 0xff) {
    if (!strcmp(t, "and")) { ins->boolop = S_AND; return 0; }
    if (!strcmp(t, "or")) { ins->boolop = S_OR; return 0; }
    if (!strcmp(t, "xor")) { ins->boolop = S_XOR; return 0; }
  }
  if ((cl & K_UNI) && !strcmp(t, "uni")) { ins->flags |= F_UNI; return 0; }
  if ((cl & K_NC) && !strcmp(t, "nc")) { ins->flags |= F_NC; return 0; }
  if ((cl & K_SYNC) && !strcmp(t, "sync")) return 0;
  if ((cl & K_ALIGNED) && !strcmp(t, "aligned")) return 0;
  if ((cl & K_WARP) && !strcmp(t, "warp")) { ins->flags |= F_WARP; return 0; }
  if ((cl & K_TO) && !strcmp(t, "to")) { ins->to = 1; return 0; }
  if ((cl & K_ORDER) && lookup(t, orders, 11) >= 0) return 0;
  if (cl & K_SUB) {
    static const char *const subs[] = {"",    "bfly", "down", "up",  "idx", "all", "any",
                                       "uni", "ballot", "add", "min", "max", "exch", "cas",
                                       "and", "or",   "xor", "inc", "dec"};
    static const uint8_t ids[] = {S_NONE, S_BFLY, S_DOWN, S_UP, S_IDX, S_ALL, S_ANY,
                                  S_UNI, S_BALLOT, S_ADD, S_MIN, S_MAX, S_EXCH, S_CAS,
                                  S_AND, S_OR, S_XOR, S_INC, S_DEC};
    if ((i = lookup(t, subs, 19)) > 0 && ins->sub == S_NONE) { ins->sub = ids[i]; return 0; }
  }
  return -1;
}

/* Checks of combinations the executor relies on. */
static int valid(const instr *ins, int ntypes) {
  switch (ins->op) {
  case OP_CVT: return ntypes == 2 ? 0 : -1;
  case OP_SETP: return ins->cmp != 0xff && ntypes == 1 ? 0 : -1;
  case OP_SHFL: return ins->sub >= S_BFLY && ins->sub <= S_IDX ? 0 : -1;
  case OP_VOTE: return ins->sub >= S_ALL && ins->sub <= S_BALLOT ? 0 : -1;
  case OP_MATCH: return ins->sub == S_ANY || ins->sub == S_ALL ? 0 : -1;
  case OP_ATOM: case OP_RED: return ins->sub >= S_ADD && ntypes == 1 ? 0 : -1;
  case OP_BRA: case OP_RET: case OP_EXIT: case OP_BAR: case OP_MEMBAR: return 0;
  case OP_MUL24: case OP_MAD24: return -1; /* not modelled */
  default: return ntypes == 1 ? 0 : -1;
  }
}

int ptx_decode_opcode(instr *ins, const char *opcode) {
  char buf[128];
  if (strlen(opcode) >= sizeof buf) return -1;
  strcpy(buf, opcode);
  char *save = NULL, *tok = strtok_r(buf, ".", &save);
  if (!tok) return -1;
  ins->vec = 1;
  ins->cmp = 0xff;
  for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
    if (strcmp(tok, table[i].name)) continue;
    ins->op = (uint16_t)table[i].op;
    int ntypes = 0;
    while ((tok = strtok_r(NULL, ".", &save)))
      if (modifier(ins, table[i].classes, tok, &ntypes)) { ins->op = OP_UNSUPPORTED; return -1; }
    if (ins->op == OP_LD || ins->op == OP_ST || ins->op == OP_ATOM || ins->op == OP_RED)
      if (ins->space == SP_NONE) ins->space = SP_GENERIC;
    if (valid(ins, ntypes)) { ins->op = OP_UNSUPPORTED; return -1; }
    return 0;
  }
  ins->op = OP_UNSUPPORTED;
  return -1;
}

int ptx_sreg(const char *n) {
  static const char *const names[] = {
      "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y",
      "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid", "%warpid",
      "%lanemask_lt", "%lanemask_le", "%lanemask_gt", "%lanemask_ge", "%lanemask_eq",
      "%nwarpid", "%smid", "%clock", "%clock64"};
  return lookup(n, names, (int)(sizeof names / sizeof *names));
}
