/* device.c — vgpu-device: the virtual GPU as a process of its own. It holds the device memory and
 * the PTX (read from its own environment, VGPU_PTX), serves the requests of proto.h on the socket
 * given as argv[1] (a file descriptor number), and keeps the counts a host cannot forge:
 * launches, copies by direction and bytes, atomics, sanitizer reports.
 *
 * Environment (the device's own): VGPU_PTX=a.ptx[:b.ptx...]  VGPU_ORDER=in|reversed|random[:SEED]
 * VGPU_INITCHECK=0|1 (1)  VGPU_RACECHECK=0|1 (1)  VGPU_STATS=file (a line per launch + totals)
 * VGPU_LOG=file (sanitizer reports; stderr by default)  VGPU_PTXAS=path of ptxas (registers a
 * thread, for the launch limit)  VGPU_MAX_WARP_INSTS=n (watchdog)  VGPU_MEM_LIMIT=bytes. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto.h"
#include "vgpu.h"

typedef struct device device;
struct device {
  module *mods;
  int nmods;
  devmem mem;
  vgpu_opts o;
  counters total;
  int sticky;
  FILE *stats;
  uint64_t sym_bytes, blas_calls;
  uint64_t launches, h2d, h2d_bytes, d2h, d2h_bytes, d2d, d2d_bytes, memsets, mallocs, frees;
};

static int read_all(int fd, void *buf, size_t n) {
  for (char *p = buf; n;) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r; n -= (size_t)r;
  }
  return 0;
}

static int write_all(int fd, const void *buf, size_t n) {
  for (const char *p = buf; n;) {
    ssize_t r = write(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r; n -= (size_t)r;
  }
  return 0;
}

static int reply(int fd, int err, uint64_t val, const void *payload, uint32_t len) {
  vq_rep r = {err, len, val};
  return write_all(fd, &r, sizeof r) || (len && write_all(fd, payload, len)) ? -1 : 0;
}

static uint64_t alloc_sym(uint64_t size, const uint8_t *init, void *ctx) {
  device *dev = ctx;
  devmem *m = &dev->mem;
  dev->sym_bytes += size;
  uint64_t a = mem_alloc(m, size);
  dalloc *d = mem_find(m, a);
  if (d) { /* PTX: a .global/.const variable without an initializer starts as zeros */
    if (init) memcpy(d->data, init, size); else memset(d->data, 0, size);
    memset(d->init, 1, size);
  }
  return a;
}

static const kernel *find_kernel(device *d, const char *name, const module **mod) {
  for (int i = 0; i < d->nmods; i++)
    for (int j = 0; j < d->mods[i].nkernels; j++)
      if (!strcmp(d->mods[i].kernels[j].name, name)) { *mod = &d->mods[i]; return &d->mods[i].kernels[j]; }
  return NULL;
}

/* ptxas -v's register count of each kernel (VGPU_PTXAS=path of ptxas; unset: not checked).
 * Run without a shell: the PTX path is an argument, never command text. */
static void read_registers(module *m, const char *ptxas) {
  int fds[2];
  if (pipe(fds)) return;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    dup2(fds[1], 1);
    close(fds[0]);
    execl(ptxas, "ptxas", "-v", "--gpu-name", "sm_80", "-o", "/dev/null", m->path, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  FILE *f = fdopen(fds[0], "r");
  char line[1024], fn[512] = "";
  while (f && fgets(line, sizeof line, f)) {
    char *q = strstr(line, "Compiling entry function '");
    int regs;
    if (q && sscanf(q + 26, "%511[^']", fn) == 1) continue;
    if ((q = strstr(line, "Used ")) && sscanf(q + 5, "%d registers", &regs) == 1)
      for (int i = 0; i < m->nkernels; i++)
        if (!strcmp(m->kernels[i].name, fn)) m->kernels[i].regs = regs;
  }
  if (f) fclose(f);
  waitpid(pid, NULL, 0);
}

static void load_ptx(device *d) {
  const char *list = getenv("VGPU_PTX");
  if (!list) return;
  char *copy = strdup(list), *save = NULL;
  for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
    d->mods = realloc(d->mods, (size_t)(d->nmods + 1) * sizeof *d->mods);
    char err[1024];
    if (ptx_load(&d->mods[d->nmods], p, alloc_sym, d, err, sizeof err)) {
      fprintf(stderr, "vgpu-device: %s\n", err);
      ptx_free(&d->mods[d->nmods]);
      continue;
    }
    if (getenv("VGPU_PTXAS") && *getenv("VGPU_PTXAS")) read_registers(&d->mods[d->nmods], getenv("VGPU_PTXAS"));
    d->nmods++;
  }
  free(copy);
}

static void options(device *d) {
  const char *s = getenv("VGPU_ORDER");
  d->o.order = ORDER_IN;
  if (s && !strncmp(s, "reversed", 8)) d->o.order = ORDER_REVERSED;
  if (s && !strncmp(s, "random", 6)) {
    d->o.order = ORDER_RANDOM;
    d->o.seed = s[6] == ':' ? strtoull(s + 7, NULL, 0) : 1;
  }
  d->o.initcheck = !(s = getenv("VGPU_INITCHECK")) || atoi(s);
  d->o.racecheck = !(s = getenv("VGPU_RACECHECK")) || atoi(s);
  d->o.max_reports = 20;
  d->o.max_warp_insts = (s = getenv("VGPU_MAX_WARP_INSTS")) ? strtoull(s, NULL, 0) : 200000000ull;
  if ((s = getenv("VGPU_MEM_LIMIT"))) d->mem.limit = strtoull(s, NULL, 0);
  d->o.log = stderr;
  if ((s = getenv("VGPU_LOG")) && *s) d->o.log = fopen(s, "a");
  if (!d->o.log) d->o.log = stderr;
  if ((s = getenv("VGPU_STATS")) && *s) d->stats = fopen(s, "w");
  d->o.sites = d->stats;
}

static int do_params(device *d, int fd, const char *name) {
  const module *m;
  const kernel *k = find_kernel(d, name, &m);
  if (!k) {
    fprintf(d->o.log, "vgpu: no kernel %s in the device's PTX (VGPU_PTX)\n", name);
    return reply(fd, 98, 0, NULL, 0); /* cudaErrorInvalidDeviceFunction */
  }
  uint32_t buf[1 + 2 * 64];
  if (k->nparams > 64) return reply(fd, 1, 0, NULL, 0);
  buf[0] = (uint32_t)k->nparams;
  for (int i = 0; i < k->nparams; i++) { buf[1 + 2 * i] = k->params[i].offset; buf[2 + 2 * i] = k->params[i].size; }
  return reply(fd, 0, 0, buf, (uint32_t)(4 + 8 * k->nparams));
}

static int do_launch(device *d, int fd, const uint8_t *p, uint32_t len) {
  vq_launch h;
  if (len < sizeof h) return reply(fd, 1, 0, NULL, 0);
  memcpy(&h, p, sizeof h);
  if ((uint64_t)sizeof h + h.name_len + h.param_len != len || !h.name_len) return reply(fd, 1, 0, NULL, 0);
  char *name = strndup((const char *)p + sizeof h, h.name_len);
  const uint8_t *params = p + sizeof h + h.name_len;
  const module *m;
  const kernel *k = find_kernel(d, name, &m);
  int rc = 0;
  if (!k) rc = 98;
  else if (h.param_len != k->param_bytes) rc = 1;
  char err[2048] = "";
  counters c = {0};
  if (!rc && !d->sticky) {
    rc = vgpu_launch(&d->mem, m, k, (vdim3){h.grid[0], h.grid[1], h.grid[2]},
                     (vdim3){h.block[0], h.block[1], h.block[2]}, h.dyn_shared, params, &d->o, &c,
                     err, sizeof err);
    d->launches++;
    counters_add(&d->total, &c);
    if (d->stats) {
      fprintf(d->stats, "launch kernel=%s grid=%u,%u,%u block=%u,%u,%u dyn_shared=%u rc=%d ", name,
              h.grid[0], h.grid[1], h.grid[2], h.block[0], h.block[1], h.block[2], h.dyn_shared, rc);
      counters_print(d->stats, &c);
      fputc('\n', d->stats);
      fflush(d->stats);
    }
    if (rc && *err && rc != 700 && rc != 702 && rc != 716 && rc != 719 && rc != 999) fprintf(d->o.log, "vgpu: %s\n", err);
    if (rc == 700 || rc == 702 || rc == 716 || rc == 719 || rc == 999) d->sticky = rc; /* the context is lost */
  }
  free(name);
  return reply(fd, d->sticky ? d->sticky : rc, 0, NULL, 0);
}

/* A copy's line in VGPU_STATS: the grader's evidence of what moved when (after how many
 * launches), e.g. inputs read back to the host before any kernel ran. */
static void log_copy(device *d, const char *dir, uint64_t dst, uint64_t src, uint64_t n) {
  if (d->stats)
    fprintf(d->stats, "copy dir=%s dst=0x%llx src=0x%llx bytes=%llu after_launches=%llu\n", dir,
            (unsigned long long)dst, (unsigned long long)src, (unsigned long long)n,
            (unsigned long long)d->launches);
}

/* cuBLAS's sgemm, as the device's own library call (libvgpu_cublas forwards it here): every
 * matrix checked against its allocation, products summed in float with fmaf. */
static int do_gemm(device *d, int fd, const uint8_t *p, uint32_t len) {
  vq_gemm g;
  if (len != sizeof g) return reply(fd, 1, 0, NULL, 0);
  memcpy(&g, p, sizeof g);
  int ar = g.transa ? g.k : g.m, ac = g.transa ? g.m : g.k, br = g.transb ? g.n : g.k,
      bc = g.transb ? g.k : g.n;
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 1 || g.lda < (ar > 1 ? ar : 1) ||
      g.ldb < (br > 1 ? br : 1) || g.ldc < (g.m > 1 ? g.m : 1))
    return reply(fd, 7, 0, NULL, 0); /* CUBLAS_STATUS_INVALID_VALUE */
  d->blas_calls++;
  for (int b = 0; b < g.batch; b++) {
    uint64_t A = g.A + 4 * (uint64_t)(b * g.sa), B = g.B + 4 * (uint64_t)(b * g.sb),
             C = g.C + 4 * (uint64_t)(b * g.sc);
    dalloc *da = mem_range(&d->mem, A, 4 * ((uint64_t)g.lda * (ac ? ac - 1 : 0) + (uint64_t)ar));
    dalloc *db = mem_range(&d->mem, B, 4 * ((uint64_t)g.ldb * (bc ? bc - 1 : 0) + (uint64_t)br));
    dalloc *dc = mem_range(&d->mem, C, 4 * ((uint64_t)g.ldc * (g.n ? g.n - 1 : 0) + (uint64_t)g.m));
    if ((g.m && g.n && (!dc || (g.k && (!da || !db))))) {
      fprintf(d->o.log, "vgpu: cublasSgemm: a matrix is outside its allocation\n");
      return reply(fd, 14, 0, NULL, 0); /* CUBLAS_STATUS_INTERNAL_ERROR */
    }
    if (!g.m || !g.n) continue;
    const float *a = (const float *)(da ? da->data + (A - da->base) : NULL);
    const float *bb = (const float *)(db ? db->data + (B - db->base) : NULL);
    float *c = (float *)(dc->data + (C - dc->base));
    for (int j = 0; j < g.n; j++)
      for (int i = 0; i < g.m; i++) {
        float s = 0.0f;
        for (int t = 0; t < g.k; t++) {
          float x = g.transa ? a[t + (size_t)i * g.lda] : a[i + (size_t)t * g.lda];
          float y = g.transb ? bb[j + (size_t)t * g.ldb] : bb[t + (size_t)j * g.ldb];
          s = fmaf(x, y, s);
        }
        float *o = &c[i + (size_t)j * g.ldc];
        *o = g.beta == 0.0f ? g.alpha * s : g.alpha * s + g.beta * *o; /* beta 0: C not read */
      }
    memset(dc->init + (C - dc->base), 1, 4 * ((uint64_t)g.ldc * (g.n - 1) + (uint64_t)g.m));
  }
  return reply(fd, 0, 0, NULL, 0);
}

static int serve(device *d, int fd, const vq_req *q, const uint8_t *p) {
  dalloc *a;
  if (d->sticky && q->op != VQ_BYE && q->op != VQ_FREE) return reply(fd, d->sticky, 0, NULL, 0);
  switch (q->op) {
  case VQ_MALLOC: {
    uint64_t addr = mem_alloc(&d->mem, q->a);
    d->mallocs += addr != 0;
    return reply(fd, addr ? 0 : 2, addr, NULL, 0);
  }
  case VQ_FREE: d->frees++; return reply(fd, mem_free(&d->mem, q->a) ? 1 : 0, 0, NULL, 0);
  case VQ_H2D:
    if (!(a = mem_range(&d->mem, q->a, q->len))) return reply(fd, 1, 0, NULL, 0);
    memcpy(a->data + (q->a - a->base), p, q->len);
    memset(a->init + (q->a - a->base), 1, q->len);
    d->h2d++; d->h2d_bytes += q->len;
    log_copy(d, "h2d", q->a, 0, q->len);
    return reply(fd, 0, 0, NULL, 0);
  case VQ_D2H:
    if (q->b > VGPU_MAX_PAYLOAD || !(a = mem_range(&d->mem, q->a, q->b))) return reply(fd, 1, 0, NULL, 0);
    d->d2h++; d->d2h_bytes += q->b;
    log_copy(d, "d2h", 0, q->a, q->b);
    return reply(fd, 0, 0, a->data + (q->a - a->base), (uint32_t)q->b);
  case VQ_D2D: {
    dalloc *s = mem_range(&d->mem, q->b, q->c);
    if (!(a = mem_range(&d->mem, q->a, q->c)) || !s) return reply(fd, 1, 0, NULL, 0);
    memmove(a->data + (q->a - a->base), s->data + (q->b - s->base), q->c);
    memmove(a->init + (q->a - a->base), s->init + (q->b - s->base), q->c);
    d->d2d++; d->d2d_bytes += q->c;
    log_copy(d, "d2d", q->a, q->b, q->c);
    return reply(fd, 0, 0, NULL, 0);
  }
  case VQ_MEMSET:
    if (!(a = mem_range(&d->mem, q->a, q->c))) return reply(fd, 1, 0, NULL, 0);
    memset(a->data + (q->a - a->base), (int)q->b, q->c);
    memset(a->init + (q->a - a->base), 1, q->c);
    d->memsets++;
    log_copy(d, "memset", q->a, q->b, q->c);
    return reply(fd, 0, 0, NULL, 0);
  case VQ_PARAMS: {
    char *name = strndup((const char *)p, q->len);
    int rc = do_params(d, fd, name);
    free(name);
    return rc;
  }
  case VQ_LAUNCH: return do_launch(d, fd, p, q->len);
  case VQ_SYNC: return reply(fd, d->sticky, 0, NULL, 0);
  case VQ_SGEMM: return do_gemm(d, fd, p, q->len);
  default: return reply(fd, 1, 0, NULL, 0);
  }
}

static void totals(device *d) {
  if (!d->stats) return;
  uint64_t leaked = d->mem.bytes_live - d->sym_bytes; /* module variables are not leaks */
  fprintf(d->stats, "total launches=%llu h2d_copies=%llu h2d_bytes=%llu d2h_copies=%llu "
          "d2h_bytes=%llu d2d_copies=%llu d2d_bytes=%llu memsets=%llu mallocs=%llu frees=%llu "
          "live_bytes=%llu blas_calls=%llu sticky_error=%d ", (unsigned long long)d->launches,
          (unsigned long long)d->h2d, (unsigned long long)d->h2d_bytes, (unsigned long long)d->d2h,
          (unsigned long long)d->d2h_bytes, (unsigned long long)d->d2d, (unsigned long long)d->d2d_bytes,
          (unsigned long long)d->memsets, (unsigned long long)d->mallocs, (unsigned long long)d->frees,
          (unsigned long long)leaked, (unsigned long long)d->blas_calls, d->sticky);
  counters_print(d->stats, &d->total);
  fputc('\n', d->stats);
  fclose(d->stats);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: vgpu-device FD (started by the vgpu runtime, libvgpu)\n");
    return 2;
  }
  int fd = atoi(argv[1]);
  device d = {0};
  options(&d);
  load_ptx(&d);
  uint8_t *buf = NULL;
  size_t cap = 0;
  for (;;) {
    vq_req q;
    if (read_all(fd, &q, sizeof q)) break; /* the host went away */
    if (q.len > cap) { cap = q.len; buf = realloc(buf, cap); }
    if (q.len && read_all(fd, buf, q.len)) break;
    if (q.op == VQ_BYE) { reply(fd, 0, 0, NULL, 0); break; }
    if (serve(&d, fd, &q, buf)) break;
  }
  totals(&d);
  free(buf);
  for (int i = 0; i < d.nmods; i++) ptx_free(&d.mods[i]);
  free(d.mods);
  mem_destroy(&d.mem);
  return 0;
}
