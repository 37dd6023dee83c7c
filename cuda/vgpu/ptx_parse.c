/* ptx_parse.c — PTX text to kernels of decoded instructions (ptx.h).
 * What it reads: .version/.target/.address_size (ignored), .file/.loc (line info), module
 * .global/.const variables with initializers, module and kernel .shared (static, and one
 * .extern .shared array: dynamic shared memory), kernel .local arrays, .reg declarations
 * (%r<N> ranges and single names), .entry with its .param list, labels, instructions with
 * guards. .section blocks (DWARF) and .pragma are skipped; .func (a device function that was
 * not inlined) makes its callers' `call` unsupported. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);

typedef struct {
  char *name;
  int base, count; /* count 0: a single register */
} regdecl;

typedef struct { /* parser state */
  module *m;
  const char *s;    /* cursor */
  int lineno;       /* of the PTX file */
  int loc_file, loc_line;
  kernel *k;        /* kernel being parsed, or NULL */
  regdecl *regs;
  int nregs, capregs;
  symbol *ksyms;    /* the kernel's params, locals, shared */
  int nksyms;
  char **labels;
  int *label_pc;
  int nlabels;
  int capcode;
  int (*sites)[4]; /* inlining: file, line -> the file, line it was inlined at */
  int nsites;
  sym_alloc_fn alloc;
  void *ctx;
  char *err;
  size_t errn;
} parser;

static int fail(parser *p, const char *fmt, ...) {
  int n = snprintf(p->err, p->errn, "%s:%d: ", p->m->path, p->lineno);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < p->errn) vsnprintf(p->err + n, p->errn - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

static void skip_space(parser *p) {
  for (;;) {
    while (isspace((unsigned char)*p->s)) { if (*p->s == '\n') p->lineno++; p->s++; }
    if (p->s[0] == '/' && p->s[1] == '/') { while (*p->s && *p->s != '\n') p->s++; continue; }
    if (p->s[0] == '/' && p->s[1] == '*') {
      p->s += 2;
      while (*p->s && !(p->s[0] == '*' && p->s[1] == '/')) { if (*p->s == '\n') p->lineno++; p->s++; }
      if (*p->s) p->s += 2;
      continue;
    }
    return;
  }
}

/* A statement: up to ';' (or '{' opening a block, or the end of line for line directives). */
static char *statement(parser *p, char *end) {
  const char *b = p->s;
  int line_dir = (!strncmp(b, ".loc", 4) && isspace((unsigned char)b[4])) || !strncmp(b, ".file", 5) || !strncmp(b, ".version", 8) ||
                 !strncmp(b, ".target", 7) || !strncmp(b, ".address_size", 13);
  int depth = 0, eq = 0;
  while (*p->s) {
    char c = *p->s;
    if (line_dir && c == '\n') break;
    if (c == '=') eq = 1;
    if (c == '{' && !eq && *b == '.') break; /* .entry/.section body */
    if (c == '{') depth++;
    if (c == '}' && depth) depth--;
    else if (c == '}') break;
    if (c == ';' && !depth) break;
    if (c == '\n') p->lineno++;
    p->s++;
  }
  *end = *p->s;
  if (*p->s == ';') p->s++;
  return strndup(b, (size_t)(p->s - b - (*end == ';')));
}

static char *trim(char *t) {
  while (isspace((unsigned char)*t)) t++;
  char *e = t + strlen(t);
  while (e > t && isspace((unsigned char)e[-1])) *--e = 0;
  return t;
}

/* ---- registers ---- */
static int reg_index(parser *p, const char *name) {
  for (int i = 0; i < p->nregs; i++) {
    regdecl *r = &p->regs[i];
    size_t n = strlen(r->name);
    if (strncmp(name, r->name, n)) continue;
    if (r->count == 0) { if (!name[n]) return r->base; continue; }
    const char *d = name + n;
    if (!*d || !isdigit((unsigned char)*d)) continue;
    char *e;
    long v = strtol(d, &e, 10);
    if (*e || v >= r->count) continue;
    return r->base + (int)v;
  }
  return -1;
}

static int declare_regs(parser *p, char *t) { /* ".reg .b32 %r<128>" or ".reg .b64 %SP, %SPL" */
  char *rest = t + 4;
  while (*rest && isspace((unsigned char)*rest)) rest++;
  while (*rest && !isspace((unsigned char)*rest)) rest++; /* the type */
  for (char *save = NULL, *n = strtok_r(rest, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
    n = trim(n);
    if (p->nregs == p->capregs) {
      p->capregs = p->capregs ? 2 * p->capregs : 16;
      p->regs = realloc(p->regs, (size_t)p->capregs * sizeof *p->regs);
    }
    regdecl *r = &p->regs[p->nregs++];
    char *lt = strchr(n, '<');
    r->base = p->k->nregs;
    if (lt) {
      r->count = atoi(lt + 1);
      *lt = 0;
    } else {
      r->count = 0;
    }
    r->name = strdup(n);
    p->k->nregs += r->count ? r->count : 1;
  }
  return 0;
}

/* ---- variables: ".shared .align 4 .b8 name[1024]" and friends ---- */
static int parse_var(parser *p, char *t, symbol *out) {
  memset(out, 0, sizeof *out);
  out->align = 1;
  char *init = strchr(t, '=');
  if (init) *init++ = 0;
  uint64_t elem = 1, count = 1;
  char *save = NULL;
  for (char *w = strtok_r(t, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
    if (!strcmp(w, ".extern") || !strcmp(w, ".visible") || !strcmp(w, ".weak")) continue;
    if (!strcmp(w, ".global")) out->space = SP_GLOBAL;
    else if (!strcmp(w, ".const")) out->space = SP_CONST;
    else if (!strcmp(w, ".shared")) out->space = SP_SHARED;
    else if (!strcmp(w, ".local")) out->space = SP_LOCAL;
    else if (!strcmp(w, ".align")) out->align = (uint32_t)atoi(strtok_r(NULL, " \t\n", &save));
    else if (w[0] == '.') {
      ptype ty;
      extern int ptx_type_bits(const char *);
      int bits = ptx_type_bits(w + 1);
      if (bits <= 0) return fail(p, "unsupported variable type %s", w);
      (void)ty;
      elem = (uint64_t)bits / 8;
    } else {
      char *br = strchr(w, '[');
      if (br) { count = br[1] == ']' ? 0 : strtoull(br + 1, NULL, 0); *br = 0; }
      out->name = strdup(w);
    }
  }
  if (!out->name) return fail(p, "variable without a name");
  if (out->align < elem) out->align = (uint32_t)elem;
  out->size = elem * count;
  if (init) {
    out->init = calloc(1, out->size ? out->size : 1);
    char *q = init;
    uint64_t i = 0;
    while (*q && i < count) {
      while (*q && !isdigit((unsigned char)*q) && *q != '-') q++;
      if (!*q) break;
      char *e;
      uint64_t v = strtoull(q, &e, 0);
      memcpy(out->init + i * elem, &v, elem); /* little-endian */
      i++;
      q = e;
    }
  }
  return 0;
}

int ptx_type_bits(const char *t) {
  if (!strcmp(t, "pred")) return 8;
  if ((t[0] == 'b' || t[0] == 'u' || t[0] == 's' || t[0] == 'f') && isdigit((unsigned char)t[1]))
    return atoi(t + 1);
  return -1;
}

static uint64_t align_up(uint64_t v, uint64_t a) { return a ? (v + a - 1) / a * a : v; }

static symbol *add_sym(symbol **arr, int *n, symbol s) {
  *arr = realloc(*arr, (size_t)(*n + 1) * sizeof **arr);
  (*arr)[*n] = s;
  return &(*arr)[(*n)++];
}

static int module_var(parser *p, char *t) {
  symbol s;
  if (parse_var(p, t, &s)) return -1;
  s.module_level = 1;
  if (s.space == SP_GLOBAL || s.space == SP_CONST) s.offset = p->alloc(s.size, s.init, p->ctx);
  add_sym(&p->m->syms, &p->m->nsyms, s);
  return 0;
}

static int kernel_var(parser *p, char *t) {
  symbol s;
  if (parse_var(p, t, &s)) return -1;
  kernel *k = p->k;
  if (s.space == SP_LOCAL) {
    s.offset = align_up(k->local_bytes, s.align);
    k->local_bytes = (uint32_t)(s.offset + s.size);
  } else if (s.space == SP_SHARED) {
    s.offset = align_up(k->shared_static, s.align);
    k->shared_static = (uint32_t)(s.offset + s.size);
  } else {
    return fail(p, "unsupported variable declaration in a kernel: %s", t);
  }
  add_sym(&p->ksyms, &p->nksyms, s);
  return 0;
}

/* ---- .entry name( .param .u64 name_param_0, ... ) ---- */
static int entry(parser *p, char *t) {
  module *m = p->m;
  m->kernels = realloc(m->kernels, (size_t)(m->nkernels + 1) * sizeof *m->kernels);
  kernel *k = &m->kernels[m->nkernels++];
  memset(k, 0, sizeof *k);
  k->unsupported = -1;
  k->dyn_align = 16;
  p->k = k;
  p->nregs = 0; p->nksyms = 0; p->nlabels = 0; p->capcode = 0;
  p->ksyms = NULL; p->labels = NULL; p->label_pc = NULL;
  char *name = strstr(t, ".entry") + 6;
  while (isspace((unsigned char)*name)) name++;
  char *lp = strchr(name, '(');
  char *params = lp ? lp + 1 : NULL;
  if (lp) *lp = 0;
  k->name = strdup(trim(name));
  int status = -1; /* libstdc++'s demangler (the device links it for this alone) */
  k->pretty = __cxa_demangle(k->name, NULL, NULL, &status);
  if (status != 0 || !k->pretty) { free(k->pretty); k->pretty = strdup(k->name); }
  if (!params) return 0;
  char *rp = strrchr(params, ')');
  if (rp) *rp = 0;
  uint32_t off = 0;
  for (char *save = NULL, *d = strtok_r(params, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
    char *dd = trim(d);
    if (strncmp(dd, ".param", 6)) return fail(p, "unexpected kernel parameter: %s", dd);
    char buf[512];
    snprintf(buf, sizeof buf, ".local %s", dd + 6); /* reuse parse_var's reading */
    symbol s;
    if (parse_var(p, buf, &s)) return -1;
    s.space = SP_PARAM;
    s.offset = off = (uint32_t)align_up(off, s.align);
    off += (uint32_t)s.size;
    k->params = realloc(k->params, (size_t)(k->nparams + 1) * sizeof *k->params);
    k->params[k->nparams++] = (param){(uint32_t)s.offset, (uint32_t)s.size, s.align};
    add_sym(&p->ksyms, &p->nksyms, s);
  }
  k->param_bytes = off;
  return 0;
}

/* ---- operands ---- */
static int parse_imm(const char *t, int64_t *out) {
  char *e;
  if ((t[0] == '0' && (t[1] == 'f' || t[1] == 'F' || t[1] == 'd' || t[1] == 'D')) &&
      isxdigit((unsigned char)t[2])) {
    *out = (int64_t)strtoull(t + 2, &e, 16);
  } else if (t[0] == '-' || isdigit((unsigned char)t[0])) {
    *out = t[0] == '-' ? strtoll(t, &e, 0) : (int64_t)strtoull(t, &e, 0);
  } else {
    return -1;
  }
  if (*e == 'U' || *e == 'u') e++;
  return *e ? -1 : 0;
}

static int parse_operand(parser *p, char *t, operand *o) {
  memset(o, 0, sizeof *o);
  o->reg = -1;
  t = trim(t);
  if (*t == '!') { o->neg = 1; t = trim(t + 1); }
  if (*t == '[') { /* [reg], [sym], [reg+imm], [sym+imm], [imm] */
    o->kind = OK_ADDR;
    char *e = strrchr(t, ']');
    if (!e) return fail(p, "bad address %s", t);
    *e = 0;
    char *in = trim(t + 1), *plus = strchr(in + 1, '+');
    if (plus) {
      *plus = 0;
      if (parse_imm(trim(plus + 1), &o->imm)) return fail(p, "bad address offset %s", plus + 1);
    }
    in = trim(in);
    if (*in == '%') {
      if ((o->reg = reg_index(p, in)) < 0) return fail(p, "unknown register %s", in);
    } else if (parse_imm(in, &o->imm) == 0) {
      if (plus) return fail(p, "bad address");
    } else {
      o->sym = strdup(in);
    }
    return 0;
  }
  if (*t == '{') {
    o->kind = OK_VEC;
    char *e = strchr(t, '}');
    if (!e) return fail(p, "bad vector %s", t);
    *e = 0;
    for (char *save = NULL, *r = strtok_r(t + 1, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
      if (o->nvec == 4) return fail(p, "vector longer than 4");
      r = trim(r);
      int idx = !strcmp(r, "_") ? -1 : reg_index(p, r);
      if (idx < 0 && strcmp(r, "_")) return fail(p, "unknown register %s", r);
      o->vreg[o->nvec++] = idx;
    }
    return 0;
  }
  char *bar = strchr(t, '|');
  if (bar) { /* "%r1|%p1": a value and a predicate (shfl) */
    *bar = 0;
    o->kind = OK_REG;
    o->nvec = 2;
    o->vreg[0] = o->reg = reg_index(p, trim(t));
    o->vreg[1] = reg_index(p, trim(bar + 1));
    if (o->reg < 0 || o->vreg[1] < 0) return fail(p, "unknown register in %s|%s", t, bar + 1);
    return 0;
  }
  if (*t == '%') {
    int sr = ptx_sreg(t);
    if (sr >= 0) { o->kind = OK_SREG; o->reg = sr; return 0; }
    o->kind = OK_REG;
    if ((o->reg = reg_index(p, t)) < 0) return fail(p, "unknown register %s", t);
    return 0;
  }
  if (parse_imm(t, &o->imm) == 0) { o->kind = OK_IMM; return 0; }
  o->kind = OK_SYM;
  o->sym = strdup(t);
  return 0;
}

/* Split operands at top-level commas (not inside {} or []). */
static int split_operands(char *s, char **out, int max) {
  int n = 0, depth = 0;
  char *b = s;
  for (char *c = s;; c++) {
    if (*c == '{' || *c == '[') depth++;
    if (*c == '}' || *c == ']') depth--;
    if ((*c == ',' && !depth) || !*c) {
      int end = !*c;
      *c = 0;
      if (n == max) return -1;
      if (*trim(b)) out[n++] = b;
      if (end) break;
      b = c + 1;
    }
  }
  return n;
}

static int instruction(parser *p, char *t) {
  kernel *k = p->k;
  if (k->ncode == p->capcode) {
    p->capcode = p->capcode ? 2 * p->capcode : 64;
    k->code = realloc(k->code, (size_t)p->capcode * sizeof *k->code);
  }
  instr *ins = &k->code[k->ncode];
  memset(ins, 0, sizeof *ins);
  ins->guard = -1;
  ins->line = p->loc_line;
  ins->file = p->loc_file;
  if (*t == '@') {
    t++;
    if (*t == '!') { ins->gneg = 1; t++; }
    char *sp = t;
    while (*sp && !isspace((unsigned char)*sp)) sp++;
    *sp = 0;
    if ((ins->gpred = reg_index(p, t)) < 0) return fail(p, "unknown predicate %s", t);
    ins->guard = 1;
    t = trim(sp + 1);
  }
  char *sp = t;
  while (*sp && !isspace((unsigned char)*sp)) sp++;
  char *args = *sp ? sp + 1 : sp;
  *sp = 0;
  ins->text = strdup(t);
  k->ncode++;
  if (ptx_decode_opcode(ins, t)) {
    if (k->unsupported < 0) k->unsupported = k->ncode - 1;
    return 0;
  }
  char *ops[6];
  int n = split_operands(args, ops, 6);
  if (n < 0 || n > 5) return fail(p, "too many operands: %s", t);
  ins->nops = (uint8_t)n;
  for (int i = 0; i < n; i++)
    if (parse_operand(p, ops[i], &ins->o[i])) return -1;
  return 0;
}

/* ---- the kernel's end: symbols and labels to addresses ---- */
static symbol *find(symbol *a, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(a[i].name, name)) return &a[i];
  return NULL;
}

static int resolve_sym(parser *p, operand *o, int is_branch) {
  kernel *k = p->k;
  if (is_branch) {
    for (int i = 0; i < p->nlabels; i++)
      if (!strcmp(p->labels[i], o->sym)) { o->kind = OK_LABEL; o->imm = p->label_pc[i]; return 0; }
    return fail(p, "unknown label %s in %s", o->sym, k->name);
  }
  symbol *s = find(p->ksyms, p->nksyms, o->sym);
  if (!s) {
    symbol *g = find(p->m->syms, p->m->nsyms, o->sym);
    if (!g) return fail(p, "unknown symbol %s in %s", o->sym, k->name);
    if (g->space != SP_SHARED) {
      s = g;
    } else { /* a module-level shared variable: placed in this kernel's layout on first use */
      symbol c = *g;
      c.name = strdup(g->name);
      c.init = NULL;
      if (g->size == 0) { /* extern: dynamic shared memory, after the static part (below) */
        c.offset = UINT64_MAX;
        if (c.align > k->dyn_align) k->dyn_align = c.align;
      } else {
        c.offset = align_up(k->shared_static, c.align);
        k->shared_static = (uint32_t)(c.offset + c.size);
      }
      s = add_sym(&p->ksyms, &p->nksyms, c);
    }
  }
  o->has_sym = 1;
  o->space = s->space;
  o->symoff = s->offset; /* extern shared patched in finish_kernel */
  return 0;
}

static int finish_kernel(parser *p) {
  kernel *k = p->k;
  for (int i = 0; i < k->ncode; i++) {
    instr *ins = &k->code[i];
    for (int j = 0; j < ins->nops; j++)
      if (ins->o[j].sym && resolve_sym(p, &ins->o[j], ins->op == OP_BRA)) return -1;
  }
  for (int i = 0; i < k->ncode; i++) { /* forms the executor does not model */
    instr *ins = &k->code[i];
    int bad = (ins->op == OP_BRA && (ins->nops != 1 || ins->o[0].kind != OK_LABEL)) ||
              (ins->op == OP_BAR && ins->nops != 1);
    if (bad) { ins->op = OP_UNSUPPORTED; if (k->unsupported < 0 || i < k->unsupported) k->unsupported = i; }
  }
  uint32_t dyn = (uint32_t)align_up(k->shared_static, k->dyn_align);
  for (int i = 0; i < k->ncode; i++)
    for (int j = 0; j < k->code[i].nops; j++) {
      operand *o = &k->code[i].o[j];
      if (o->has_sym && o->space == SP_SHARED && o->symoff == UINT64_MAX) o->symoff = dyn;
      free(o->sym);
      o->sym = NULL;
    }
  for (int i = 0; i < p->nksyms; i++) { free(p->ksyms[i].name); free(p->ksyms[i].init); }
  for (int i = 0; i < p->nlabels; i++) free(p->labels[i]);
  for (int i = 0; i < p->nregs; i++) free(p->regs[i].name);
  free(p->ksyms); free(p->labels); free(p->label_pc);
  p->ksyms = NULL; p->labels = NULL; p->label_pc = NULL;
  p->k = NULL;
  return 0;
}

static void skip_block(parser *p) { /* a .section { ... } */
  int depth = 0;
  for (; *p->s; p->s++) {
    if (*p->s == '\n') p->lineno++;
    if (*p->s == '{') depth++;
    if (*p->s == '}' && --depth == 0) { p->s++; return; }
  }
}

/* (file, line) inside an inlined function -> the site it was inlined at, as .loc said last */
static void inline_site(parser *p, int f, int l, int of, int ol) {
  for (int i = 0; i < p->nsites; i++)
    if (p->sites[i][0] == f && p->sites[i][1] == l) { p->sites[i][2] = of; p->sites[i][3] = ol; return; }
  p->sites = realloc(p->sites, (size_t)(p->nsites + 1) * sizeof *p->sites);
  int *e = p->sites[p->nsites++];
  e[0] = f; e[1] = l; e[2] = of; e[3] = ol;
}

static int outer_site(parser *p, int *f, int *l) {
  for (int i = 0; i < p->nsites; i++)
    if (p->sites[i][0] == *f && p->sites[i][1] == *l) {
      if (p->sites[i][2] == *f && p->sites[i][3] == *l) return 0;
      *f = p->sites[i][2]; *l = p->sites[i][3];
      return 1;
    }
  return 0;
}

static int directive(parser *p, char *t) {
  if (!strncmp(t, ".loc", 4) && isspace((unsigned char)t[4])) {
    sscanf(t + 4, "%d %d", &p->loc_file, &p->loc_line);
    /* code inlined from a header (an intrinsic, a kit helper) is reported at its outermost
     * call site: the line of the kernel's own file, through nested inlining */
    const char *in = strstr(t, "inlined_at");
    int f, l;
    if (in && sscanf(in + 10, "%d %d", &f, &l) == 2) {
      inline_site(p, p->loc_file, p->loc_line, f, l);
      for (int depth = 0; depth < 16 && outer_site(p, &f, &l); depth++) {
      }
      p->loc_file = f;
      p->loc_line = l;
    }
    return 0;
  }
  if (!strncmp(t, ".file", 5)) {
    int idx = atoi(t + 5);
    char *q1 = strchr(t, '"'), *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
    if (idx <= 0 || idx > 100000 || !q2) return fail(p, "bad .file");
    if (idx >= p->m->nfiles) {
      p->m->files = realloc(p->m->files, (size_t)(idx + 1) * sizeof *p->m->files);
      for (int i = p->m->nfiles; i <= idx; i++) p->m->files[i] = NULL;
      p->m->nfiles = idx + 1;
    }
    free(p->m->files[idx]);
    p->m->files[idx] = strndup(q1 + 1, (size_t)(q2 - q1 - 1));
    return 0;
  }
  if (!strncmp(t, ".reg", 4)) return p->k ? declare_regs(p, t) : fail(p, "module .reg");
  if (!strncmp(t, ".pragma", 7) || !strncmp(t, ".version", 8) || !strncmp(t, ".target", 7) ||
      !strncmp(t, ".address_size", 13) || !strncmp(t, ".maxntid", 8) ||
      !strncmp(t, ".reqntid", 8) || !strncmp(t, ".minnctapersm", 13) ||
      !strncmp(t, ".maxnreg", 8))
    return 0;
  if (strstr(t, ".entry")) return entry(p, t);
  if (strstr(t, ".func")) return fail(p, "device functions (.func) are not supported: %s", t);
  if (strstr(t, ".shared") || strstr(t, ".global") || strstr(t, ".const") || strstr(t, ".local"))
    return p->k ? kernel_var(p, t) : module_var(p, t);
  return fail(p, "unsupported PTX directive: %.60s", t);
}

static int add_label(parser *p, char *name) {
  p->labels = realloc(p->labels, (size_t)(p->nlabels + 1) * sizeof *p->labels);
  p->label_pc = realloc(p->label_pc, (size_t)(p->nlabels + 1) * sizeof *p->label_pc);
  p->labels[p->nlabels] = strdup(name);
  p->label_pc[p->nlabels++] = p->k->ncode;
  return 0;
}

static int one_statement(parser *p, char *t, int *depth) {
  if (!*t) return 0;
  if (*t == '.') return directive(p, t);
  if (!p->k || *depth < 1) return fail(p, "instruction outside a kernel: %.40s", t);
  return instruction(p, t);
}

static int parse_all(parser *p) {
  int depth = 0;
  for (;;) {
    skip_space(p);
    if (!*p->s) return depth ? fail(p, "unterminated block") : 0;
    if (*p->s == '{') { depth++; p->s++; continue; }
    if (*p->s == '}') {
      p->s++;
      if (--depth == 0 && p->k && finish_kernel(p)) return -1;
      continue;
    }
    const char *c = p->s; /* a label "name:" is a statement of its own */
    while (isalnum((unsigned char)*c) || *c == '_' || *c == '$' || *c == '.') c++;
    if (*c == ':' && c > p->s) {
      if (!p->k || depth < 1) return fail(p, "label outside a kernel");
      char *name = strndup(p->s, (size_t)(c - p->s));
      add_label(p, name);
      free(name);
      p->s = c + 1;
      continue;
    }
    char end;
    char *st = statement(p, &end);
    char *t = trim(st);
    int rc = 0;
    if (!strncmp(t, ".section", 8)) skip_block(p);
    else rc = one_statement(p, t, &depth);
    free(st);
    if (rc) return -1;
  }
}

int ptx_load(module *m, const char *path, sym_alloc_fn alloc, void *ctx, char *err, size_t errn) {
  memset(m, 0, sizeof *m);
  m->path = strdup(path);
  FILE *f = fopen(path, "rb");
  if (!f) { snprintf(err, errn, "cannot open PTX file %s", path); return -1; }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  size_t got = fread(text, 1, (size_t)n, f);
  fclose(f);
  text[got] = 0;
  parser p = {.m = m, .s = text, .lineno = 1, .alloc = alloc, .ctx = ctx, .err = err, .errn = errn};
  int rc = parse_all(&p);
  free(p.regs);
  free(p.sites);
  free(text);
  return rc;
}

const char *ptx_file(const module *m, int file) {
  return file > 0 && file < m->nfiles && m->files[file] ? m->files[file] : "?";
}

void ptx_free(module *m) {
  for (int i = 0; i < m->nkernels; i++) {
    kernel *k = &m->kernels[i];
    for (int j = 0; j < k->ncode; j++) free(k->code[j].text);
    free(k->code); free(k->params); free(k->name); free(k->pretty);
  }
  for (int i = 0; i < m->nsyms; i++) { free(m->syms[i].name); free(m->syms[i].init); }
  for (int i = 0; i < m->nfiles; i++) free(m->files[i]);
  free(m->kernels); free(m->syms); free(m->files); free(m->path);
  memset(m, 0, sizeof *m);
}
