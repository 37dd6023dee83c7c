/* ptx.h — the virtual GPU's view of a PTX module: kernels as arrays of decoded instructions.
 * The parser (ptx_parse.c, ptx_decode.c) is strict: an instruction or modifier it does not know
 * becomes OP_UNSUPPORTED with its text and line, and a launch of a kernel holding one is refused
 * with "unsupported PTX instruction X at file:line" (never a guess). */
#ifndef VGPU_PTX_H
#define VGPU_PTX_H

#include <stddef.h>
#include <stdint.h>

/* State spaces. GENERIC addresses are 64-bit: global addresses as they are, shared and local
 * ones inside the windows below (what cvta produces). */
enum space { SP_NONE, SP_GENERIC, SP_GLOBAL, SP_SHARED, SP_LOCAL, SP_PARAM, SP_CONST };
#define VGPU_SHARED_WIN 0x0000100000000000ull /* generic address of shared offset 0 */
#define VGPU_LOCAL_WIN 0x0000200000000000ull  /* generic address of local offset 0 */
#define VGPU_WIN_SIZE 0x0000010000000000ull

/* Scalar types: the kind and the width in bits. */
enum tkind { T_NONE, T_B, T_U, T_S, T_F, T_PRED };
typedef struct {
  uint8_t kind, bits;
} ptype;

enum opkind { OK_NONE, OK_REG, OK_IMM, OK_SREG, OK_SYM, OK_ADDR, OK_VEC, OK_LABEL };
/* special registers (%tid.x ...) */
enum sreg {
  SR_TID_X, SR_TID_Y, SR_TID_Z, SR_NTID_X, SR_NTID_Y, SR_NTID_Z, SR_CTAID_X, SR_CTAID_Y,
  SR_CTAID_Z, SR_NCTAID_X, SR_NCTAID_Y, SR_NCTAID_Z, SR_LANEID, SR_WARPID, SR_LANEMASK_LT,
  SR_LANEMASK_LE, SR_LANEMASK_GT, SR_LANEMASK_GE, SR_LANEMASK_EQ, SR_NWARPID, SR_SMID,
  SR_CLOCK, SR_CLOCK64
};

typedef struct {
  uint8_t kind;  /* enum opkind */
  uint8_t neg;   /* !%p */
  uint8_t nvec;  /* OK_VEC: element count (regs in vreg[]) */
  uint8_t space; /* OK_SYM/OK_ADDR on a symbol: the symbol's space */
  int32_t reg;   /* OK_REG, OK_ADDR base register (-1: none), OK_SREG id */
  int32_t vreg[4];
  int64_t imm; /* OK_IMM bits (floats as their bit pattern), OK_ADDR offset, OK_LABEL pc */
  uint64_t symoff; /* OK_SYM / OK_ADDR with a symbol: the symbol's address in its space */
  int has_sym;
  char *sym; /* while parsing: the symbol's name, resolved at the kernel's end */
} operand;

enum op {
  OP_UNSUPPORTED, OP_NOP, OP_MOV, OP_LD, OP_ST, OP_CVTA, OP_CVT, OP_ADD, OP_SUB, OP_MUL, OP_MAD,
  OP_FMA, OP_DIV, OP_REM, OP_NEG, OP_ABS, OP_MIN, OP_MAX, OP_AND, OP_OR, OP_XOR, OP_NOT, OP_CNOT,
  OP_SHL, OP_SHR, OP_SETP, OP_SELP, OP_BRA, OP_RET, OP_EXIT, OP_BAR, OP_SHFL, OP_VOTE, OP_MATCH,
  OP_ATOM, OP_RED, OP_EX2, OP_LG2, OP_RCP, OP_SQRT, OP_RSQRT, OP_SIN, OP_COS, OP_BFI, OP_BFE,
  OP_POPC, OP_CLZ, OP_BREV, OP_COPYSIGN, OP_MEMBAR, OP_TESTP, OP_PRMT, OP_TANH, OP_MUL24,
  OP_MAD24, OP_SLCT
};

/* rounding / modifier flags */
enum {
  F_FTZ = 1, F_SAT = 2, F_APPROX = 4, F_HI = 8, F_LO = 16, F_WIDE = 32, F_UNI = 64, F_NC = 128,
  F_FULL = 256, F_CC = 512, F_WARP = 1024 /* bar.warp.sync */
};
enum rnd { R_NONE, R_RN, R_RZ, R_RM, R_RP, R_RNI, R_RZI, R_RMI, R_RPI };
enum cmp {
  C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE, C_LO, C_LS, C_HI, C_HS, C_EQU, C_NEU, C_LTU, C_LEU, C_GTU,
  C_GEU, C_NUM, C_NAN
};
/* sub-operations: shfl modes, vote modes, atomic ops, setp's boolean combiner */
enum subop {
  S_NONE, S_BFLY, S_UP, S_DOWN, S_IDX, S_ALL, S_ANY, S_UNI, S_BALLOT, S_ADD, S_MIN, S_MAX, S_EXCH,
  S_CAS, S_AND, S_OR, S_XOR, S_INC, S_DEC, S_MATCH_ANY, S_MATCH_ALL
};

typedef struct {
  uint16_t op;    /* enum op */
  uint8_t space;  /* ld/st/atom/cvta */
  uint8_t vec;    /* 1, 2, 4 */
  uint8_t rnd, cmp, sub, boolop; /* boolop: setp's .and/.or/.xor (S_AND...) or S_NONE */
  uint8_t to;     /* cvta.to */
  uint16_t flags;
  ptype t, t2;    /* type; cvt's source type */
  int8_t guard;   /* -1: none, else the predicate register is in gpred */
  uint8_t gneg;
  int32_t gpred;
  uint8_t nops;
  operand o[5];
  int32_t line, file; /* from .loc */
  char *text;         /* the opcode as written (for messages) */
} instr;

typedef struct {
  char *name;
  uint64_t offset; /* in its space (shared: in the kernel's layout; global/const: device addr) */
  uint64_t size;
  uint32_t align;
  uint8_t space;
  uint8_t *init; /* global/const initializer (size bytes) or NULL */
  int module_level;
} symbol;

typedef struct {
  uint32_t offset, size, align;
} param;

typedef struct {
  char *name;
  char *pretty; /* demangled (as a student wrote it), for messages */
  instr *code;
  int ncode;
  int nregs;
  param *params;
  int nparams;
  uint32_t param_bytes;
  uint32_t shared_static; /* bytes of static shared memory */
  uint32_t local_bytes;
  uint32_t dyn_align;     /* alignment of the extern shared array */
  int unsupported;        /* index of the first OP_UNSUPPORTED instruction, or -1 */
  int regs;               /* registers a thread, from ptxas -v (0: not known) */
  int line;               /* .loc of the entry */
  int file;
} kernel;

typedef struct {
  kernel *kernels;
  int nkernels;
  symbol *syms; /* module-level .global/.const/.shared (and per-kernel shared as added) */
  int nsyms;
  char **files; /* .file index -> path (index 0 unused) */
  int nfiles;
  char *path;
} module;

/* Parse a PTX file. Global/const symbols get their addresses from alloc(size, ctx) and their
 * initializers copied by the caller. Returns 0, or -1 with a message in err. */
typedef uint64_t (*sym_alloc_fn)(uint64_t size, const uint8_t *init, void *ctx);
int ptx_load(module *m, const char *path, sym_alloc_fn alloc, void *ctx, char *err, size_t errn);
void ptx_free(module *m);
const char *ptx_file(const module *m, int file);

/* ptx_decode.c: fills ins->op and its modifiers from the dotted opcode; 0 or -1 (unsupported) */
int ptx_decode_opcode(instr *ins, const char *opcode);
int ptx_sreg(const char *name);

#endif
