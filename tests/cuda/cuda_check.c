/* cuda_check — every op forward and backward on the CPU and on the CUDA device, compared; one
 * line per op with the largest difference over its shapes and its tolerance; with --time, each
 * op timed on both devices.
 *
 *   build/solutions/cuda_check_emu   the kernels in the emulator (cuda/emu.h): make test runs it,
 *                                    also under ASan+UBSan and under ThreadSanitizer
 *   build/solutions/cuda_check       the nvcc build: on a GPU; where there is none it says
 *                                    "skip: no CUDA device (...)" and counts it as skipped
 * Options: --family NAME (repeatable), --time, --profile (the emulator's memory counters per
 * kernel for each op: see cuda/README.md). Ends with "N passed, N failed, N skipped". */
#include "cuda_check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/rng.h"
#include "../../cuda/profile.h"

Tensor *cc_tensor(CcRun *r, int ndim, const int *shape, const float *h) {
  Device old = tensor_default_device();
  tensor_set_default_device(r->dev);
  Tensor *t = tensor_from(ndim, shape, h);
  tensor_set_default_device(old);
  return t;
}

Tensor *cc_input(CcRun *r, int ndim, const int *shape, unsigned seed, float lo, float hi,
                 bool grad) {
  long n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  float *h = malloc(sizeof(float) * (size_t)(n ? n : 1));
  Rng g;
  rng_init(&g, seed * 7919u + (unsigned)r->variant);
  for (long i = 0; i < n; i++) h[i] = rng_uniform(&g, lo, hi);
  Tensor *t = cc_tensor(r, ndim, shape, h);
  free(h);
  if (grad) {
    t->requires_grad = true;
    if (r->n_in < CC_MAX_INPUTS) r->in[r->n_in++] = t;
  }
  return t;
}

Tensor *cc_ints(CcRun *r, int ndim, const int *shape, unsigned seed, int lo, int hi) {
  long n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  float *h = malloc(sizeof(float) * (size_t)(n ? n : 1));
  Rng g;
  rng_init(&g, seed * 7919u + (unsigned)r->variant);
  for (long i = 0; i < n; i++) h[i] = (float)(lo + rng_int(&g, hi - lo + 1));
  Tensor *t = cc_tensor(r, ndim, shape, h);
  free(h);
  return t;
}

void cc_shape(CcRun *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->shape, sizeof r->shape, fmt, ap);
  va_end(ap);
}

/* ---------- one case, one shape, on one device ---------- */

typedef struct {
  float *out;                 /* the output, on the host */
  long n_out;
  float *grad[CC_MAX_INPUTS]; /* each compared input's gradient, on the host (NULL: none) */
  long n_grad[CC_MAX_INPUTS];
  int n_in;
  char shape[96];
  int out_shape[T_MAXDIM], out_ndim;
} Result;

static float *host_copy(Device d, const float *p, long n) {
  float *h = malloc(sizeof(float) * (size_t)(n ? n : 1));
  if (n) backend_of(d)->to_host(h, p, sizeof(float) * (size_t)n);
  return h;
}

static void result_free(Result *res) {
  free(res->out);
  for (int i = 0; i < res->n_in; i++) free(res->grad[i]);
}

/* Run the case; the output's gradient is w, uniform in [-1, 1) from a fixed seed. */
static Result run_on(const CcCase *c, int variant, Device d) {
  Result res = {0};
  CcRun r = {.dev = d, .variant = variant};
  Tensor *out = c->run(&r);
  res.out = host_copy(d, out->data, out->size);
  res.n_out = out->size;
  res.out_ndim = out->ndim;
  memcpy(res.out_shape, out->shape, sizeof out->shape);
  memcpy(res.shape, r.shape, sizeof r.shape);
  res.n_in = r.n_in;
  if (out->requires_grad && r.n_in > 0) {
    CcRun wr = {.dev = d, .variant = variant};
    Tensor *w = cc_input(&wr, out->ndim, out->shape, 99, -1, 1, false);
    ag_backward(t_sum_all(t_mul(out, w)));
    for (int i = 0; i < r.n_in; i++)
      if (r.in[i]->grad) {
        res.grad[i] = host_copy(d, r.in[i]->grad, r.in[i]->size);
        res.n_grad[i] = r.in[i]->size;
      }
  }
  ag_step_reset();
  return res;
}

/* The largest |b - a| / (1 + |a|); a NaN or inf on one side only is an infinite error. */
static double max_err(const float *a, const float *b, long n) {
  double worst = 0;
  for (long i = 0; i < n; i++) {
    if (isnan(a[i]) || isnan(b[i]) || isinf(a[i]) || isinf(b[i])) {
      if (!((isnan(a[i]) && isnan(b[i])) || a[i] == b[i])) return INFINITY;
      continue;
    }
    double e = fabs((double)b[i] - a[i]) / (1.0 + fabs((double)a[i]));
    if (e > worst) worst = e;
  }
  return worst;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Seconds per forward + backward of the case's largest shape on d (at least 0.05 s measured). */
static double time_on(const CcCase *c, Device d) {
  int v = c->variants - 1;
  Result warm = run_on(c, v, d);
  result_free(&warm);
  int reps = 0;
  double t0 = now(), t;
  do {
    Result res = run_on(c, v, d); /* ends in a copy to the host: the device is done */
    result_free(&res);
    reps++;
    t = now() - t0;
  } while (t < 0.05 && reps < 1000);
  return t / reps;
}

/* ---------- --profile: the emulator's memory counters of one forward + backward ---------- */

/* The published figures of an H100 SXM: HBM3 bandwidth and dense FP32 rate. The estimate is a
 * roofline (the slower of moving the sectors' bytes and doing the counted flops), without
 * launch overhead (a few microseconds a launch) or caches: an estimate, not a measurement. */
#define H100_BYTES_PER_S 3.35e12
#define H100_FLOPS 67e12

static void profile_case(const char *family, const CcCase *c) {
  static bool said;
  if (!cuda_profile_start()) {
    if (!said) printf("note: no memory counters on this device (the emulator counts them: "
                      "cuda_check_emu --profile; on a GPU use Nsight Compute)\n");
    said = true;
    return;
  }
  /* the shape that moves the most bytes */
  CudaKernelProfile k[64], best[64];
  int nbest = 0;
  double most = -1;
  char shape[96] = "";
  for (int v = 0; v < c->variants; v++) {
    if (v > 0) cuda_profile_start();
    Result r = run_on(c, v, DEV_CUDA);
    int n = cuda_profile_stop(k, 64);
    if (n > 64) n = 64;
    double bytes = 0;
    for (int i = 0; i < n; i++) bytes += (double)(k[i].ld_sectors + k[i].st_sectors);
    if (bytes > most) {
      most = bytes;
      nbest = n;
      memcpy(best, k, sizeof k[0] * (size_t)n);
      memcpy(shape, r.shape, sizeof shape);
    }
    result_free(&r);
  }
  /* the harness's loss sum(out * w) and its backward run too: binary_kernel, reduce_all_kernel,
   * reduce_all_grad_kernel, binary_grad_kernel, fill_kernel, acc_kernel */
  printf("profile %s/%s, forward + backward at %s:\n", family, c->name, shape);
  printf("  %-34s %6s %8s %8s %8s %8s %7s %8s %9s %10s %12s\n", "kernel", "launch", "ld req",
         "sect/req", "st req", "sect/req", "atomics", "shm req", "conflicts", "KB moved",
         "H100 est us");
  for (int i = 0; i < nbest; i++) {
    const CudaKernelProfile *p = &best[i];
    double bytes = 32.0 * (double)(p->ld_sectors + p->st_sectors);
    double t = bytes / H100_BYTES_PER_S, tf = p->flops / H100_FLOPS;
    printf("  %-34.34s %6ld %8ld %8.1f %8ld %8.1f %7ld %8ld %9ld %10.1f %12.3f\n", p->kernel,
           p->launches, p->ld_req, p->ld_req ? (double)p->ld_sectors / p->ld_req : 0.0, p->st_req,
           p->st_req ? (double)p->st_sectors / p->st_req : 0.0, p->atomics, p->sh_req,
           p->sh_wavefronts - p->sh_req, bytes / 1024, 1e6 * (t > tf ? t : tf));
  }
}

/* ---------- the families ---------- */

typedef struct {
  const char *name;
  const CcCase *cases;
} Family;
static const Family families[] = {
    {"elementwise", cases_elementwise}, {"matmul", cases_matmul}, {"reduce", cases_reduce},
    {"softmax", cases_softmax},         {"nn", cases_nn},         {"shape", cases_shape},
    {"optim", cases_optim},             {"fused", cases_fused},   {"rnn", cases_rnn},
    {"attention", cases_attention},
};
enum { N_FAMILIES = sizeof families / sizeof families[0] };

int main(int argc, char **argv) {
  const char *only[N_FAMILIES];
  int n_only = 0;
  bool timing = false, profile = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--family") == 0 && i + 1 < argc && n_only < N_FAMILIES)
      only[n_only++] = argv[++i];
    else if (strcmp(argv[i], "--time") == 0)
      timing = true;
    else if (strcmp(argv[i], "--profile") == 0)
      profile = true;
    else {
      fprintf(stderr, "usage: %s [--family NAME]... [--time] [--profile]\n", argv[0]);
      return 2;
    }
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  char err[400]; /* cuda_open's line may name the card and both CUDA versions */
  if (!cuda_open(err, sizeof err)) {
    /* No GPU: the kernels cannot run, but cuBLAS must still load (the nvcc build dlopens it
     * when a device opens; a missing library would otherwise first show on a GPU machine). */
    char blas_err[256];
    bool blas = cuda_blas_load(blas_err, sizeof blas_err);
    printf("%s cublas_load: %s\n", blas ? "ok" : "FAIL", blas ? "libcublas loaded" : blas_err);
    printf("skip cuda_check: %s\n%d passed, %d failed, 1 skipped\n", err, blas, !blas);
    return blas ? 0 : 1;
  }
  printf("# CPU against %s (%s)\n", backend_of(DEV_CUDA)->name, cuda_device_name());
  int passed = 0, failed = 0, skipped = 0;
  for (int f = 0; f < N_FAMILIES; f++) {
    const Family *fam = &families[f];
    bool want = n_only == 0;
    for (int i = 0; i < n_only; i++) want |= strcmp(only[i], fam->name) == 0;
    if (!want) continue;
    if (!fam->cases[0].name) {
      printf("skip %s: no cases yet\n", fam->name);
      skipped++;
      continue;
    }
    for (const CcCase *c = fam->cases; c->name; c++) {
      double worst = 0;
      char worst_at[128] = "";
      bool shape_ok = true;
      for (int v = 0; v < c->variants; v++) {
        Result a = run_on(c, v, DEV_CPU), b = run_on(c, v, DEV_CUDA);
        double e = a.n_out == b.n_out ? max_err(a.out, b.out, a.n_out) : INFINITY;
        if (a.n_out != b.n_out || a.out_ndim != b.out_ndim ||
            memcmp(a.out_shape, b.out_shape, sizeof a.out_shape) != 0)
          shape_ok = false;
        const char *where = "forward";
        for (int i = 0; i < a.n_in; i++) {
          if (!a.grad[i] != !b.grad[i]) {
            e = INFINITY;
            where = "a gradient reached only one device";
            continue;
          }
          if (!a.grad[i]) continue;
          double eg = max_err(a.grad[i], b.grad[i], a.n_grad[i]);
          if (eg > e) {
            e = eg;
            where = "backward";
          }
        }
        if (e > worst || (v == 0 && e == 0)) {
          worst = e;
          snprintf(worst_at, sizeof worst_at, "%s %s", where, a.shape);
        }
        result_free(&a);
        result_free(&b);
      }
      bool ok = shape_ok && worst <= c->tol;
      printf("%s %s/%s: max diff %.2e at %s (tol %.0e: %s)%s\n", ok ? "ok" : "FAIL", fam->name,
             c->name, worst, worst_at, c->tol, c->why, shape_ok ? "" : " [output shapes differ]");
      if (ok)
        passed++;
      else
        failed++;
      if (timing) {
        double tc = time_on(c, DEV_CPU), tg = time_on(c, DEV_CUDA);
        printf("time %s/%s: cpu %.1f us, cuda %.1f us (%.1fx)\n", fam->name, c->name, tc * 1e6,
               tg * 1e6, tc / tg);
      }
      if (profile) profile_case(fam->name, c);
    }
  }
  /* Under a grid cap (make test's AL_CUDA_EMU_GRID_CAP), every kernel whose launcher caps its
   * grid must have met a shape larger than the grid, so its grid-stride loop took a second trip. */
  const char *never[64];
  int n_never = cuda_grid_never_capped(never, 64);
  if (n_never >= 0 && getenv("AL_CUDA_EMU_GRID_CAP")) {
    if (n_never == 0) {
      printf("ok grid-stride loops: every kernel with a capped grid outgrew it in some case "
             "(AL_CUDA_EMU_GRID_CAP=%s)\n", getenv("AL_CUDA_EMU_GRID_CAP"));
      passed++;
    } else {
      printf("FAIL grid-stride loops: no case outgrew the capped grid of");
      for (int i = 0; i < n_never && i < 64; i++) printf(" %s", never[i]);
      printf(" (AL_CUDA_EMU_GRID_CAP=%s): give a case a shape larger than the cap's threads\n",
             getenv("AL_CUDA_EMU_GRID_CAP"));
      failed++;
    }
  }
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
