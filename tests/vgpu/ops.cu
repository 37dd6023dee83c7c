/* ops.cu — the interpreter's arithmetic against the host's: one __host__ __device__ function
 * computes ~60 results per input (integer division, shifts, conversions with rounding and
 * saturation, float and double arithmetic, NaN/inf/-0/denormal cases, narrow loads and sign
 * extension); the device's bits must equal the host's (IEEE and C define each of them), and
 * the transcendental ones (expf, logf, sinf, ...) must agree within a few ulp. Built with
 * -fmad=false so nvcc does not fuse a * b + c where the host does not. */
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <cuda_runtime.h>

enum { NEXACT = 64, NAPPROX = 8, N = 96 };

struct In { float f, g; double d, e; int i, j; unsigned u, v; long long l; int8_t c; int16_t s; };

__host__ __device__ static uint32_t fbits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
__host__ __device__ static uint32_t dlo(double x) { uint64_t u; memcpy(&u, &x, 8); return (uint32_t)u; }
__host__ __device__ static uint32_t dhi(double x) { uint64_t u; memcpy(&u, &x, 8); return (uint32_t)(u >> 32); }
__host__ __device__ static int popc(unsigned x) {
#ifdef __CUDA_ARCH__
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}
__host__ __device__ static int clz(unsigned x) {
#ifdef __CUDA_ARCH__
  return __clz(x);
#else
  return x ? __builtin_clz(x) : 32;
#endif
}
__host__ __device__ static bool small(float x) { return x > -2e9f && x < 2e9f; } /* (int) defined */

__host__ __device__ static void compute(const In &a, uint32_t *o, float *ap) {
  int k = 0;
  int jd = a.j == 0 ? 7 : a.j; unsigned vd = a.v == 0 ? 3 : a.v;
  if (a.i == INT32_MIN && jd == -1) jd = 5;
  o[k++] = (uint32_t)(a.i / jd); o[k++] = (uint32_t)(a.i % jd);
  o[k++] = a.u / vd; o[k++] = a.u % vd;
  o[k++] = (uint32_t)(a.i >> (a.v & 31)); o[k++] = a.u >> (a.v & 31); o[k++] = a.u << (a.v & 31);
  o[k++] = (uint32_t)((long long)a.i * a.j >> 32); o[k++] = (uint32_t)((unsigned long long)a.u * a.v >> 32);
  o[k++] = (uint32_t)(a.i < a.j ? a.i : a.j); o[k++] = a.u > a.v ? a.u : a.v;
  o[k++] = (uint32_t)popc(a.u); o[k++] = (uint32_t)clz(a.u);
  o[k++] = (a.u & ~(0xffu << 5)) | ((a.v << 5) & (0xffu << 5)); /* a bit-field insert */
  o[k++] = (uint32_t)((int)(a.u << 3) >> 27);                    /* a signed extract */
  o[k++] = (uint32_t)(a.l / (a.j == 0 ? 3 : a.j)); o[k++] = (uint32_t)((unsigned long long)a.l >> 40);
  o[k++] = (uint32_t)a.c; o[k++] = (uint32_t)a.s; o[k++] = (uint32_t)(uint8_t)a.c; o[k++] = (uint32_t)(a.c * a.s);
  o[k++] = fbits(a.f + a.g); o[k++] = fbits(a.f - a.g); o[k++] = fbits(a.f * a.g); o[k++] = fbits(a.f / a.g);
  o[k++] = fbits(sqrtf(fabsf(a.f))); o[k++] = fbits(fmaf(a.f, a.g, 1.5f)); o[k++] = fbits(fminf(a.f, a.g));
  o[k++] = fbits(fmaxf(a.f, a.g)); o[k++] = fbits(floorf(a.f)); o[k++] = fbits(ceilf(a.f));
  o[k++] = fbits(truncf(a.f)); o[k++] = fbits(rintf(a.f)); o[k++] = fbits(fabsf(a.f));
  o[k++] = fbits(copysignf(a.g, a.f)); o[k++] = fbits(1.0f / a.f); o[k++] = fbits(-a.g);
  o[k++] = (a.f < a.g) | (a.f <= a.g) << 1 | (a.f == a.g) << 2 | (a.f != a.g) << 3 | (a.f > a.g) << 4 |
           (!(a.f >= a.g)) << 5 | (isnan(a.f) ? 1 : 0) << 6 | (isinf(a.g) ? 1 : 0) << 7;
  o[k++] = small(a.f) ? (uint32_t)(int)a.f : 0; o[k++] = small(a.f) ? (uint32_t)lrintf(a.f) : 0;
  o[k++] = small(a.f) && a.f >= 0 ? (uint32_t)a.f : 0;
  o[k++] = fbits((float)a.i); o[k++] = fbits((float)a.u); o[k++] = fbits((float)a.l);
  o[k++] = fbits((float)a.d); o[k++] = dhi((double)a.f); o[k++] = dlo((double)a.f);
  o[k++] = dhi(a.d + a.e); o[k++] = dlo(a.d * a.e); o[k++] = dhi(a.d / a.e); o[k++] = dlo(a.d / a.e);
  o[k++] = dlo(sqrt(fabs(a.d))); o[k++] = dlo(fma(a.d, a.e, 0.25)); o[k++] = dhi((double)a.l);
  o[k++] = dlo((double)a.i); o[k++] = (uint32_t)(a.d < a.e) | (uint32_t)(a.d != a.d) << 1;
  o[k++] = fbits(a.f * 0.5f + a.g); o[k++] = fbits(fminf(fmaxf(a.f, 0.0f), 1.0f));
  o[k++] = (uint32_t)(a.i < 0 ? -a.i : a.i); o[k++] = (uint32_t)(a.i ^ a.j) | (uint32_t)~a.i;
  o[k++] = a.f > 0 ? 1u : a.f < 0 ? 2u : 3u; o[k++] = fbits(a.f > a.g ? a.f : a.g * 2.0f);
  while (k < NEXACT) o[k++] = 0;
  int m = 0;
  float f = fminf(fabsf(a.f), 80.0f), g = fminf(fabsf(a.g), 1000.0f);
  ap[m++] = expf(f); ap[m++] = logf(g + 1.0f); ap[m++] = sinf(g); ap[m++] = cosf(g);
  ap[m++] = powf(1.5f, f / 4.0f); ap[m++] = tanhf(a.f); ap[m++] = exp2f(-f); ap[m++] = rsqrtf(g + 1.0f);
}

__global__ void ops_kernel(const In *in, uint32_t *o, float *ap, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) compute(in[i], o + i * NEXACT, ap + i * NAPPROX);
}

int main() {
  const float fs[] = {0.0f, -0.0f, 1.0f, -1.5f, 2.5f, 3.5f, -2.5f, 1e-40f, -1e-42f, 1e30f, -3e38f,
                      INFINITY, -INFINITY, NAN, 0.1f, 16777217.0f, 7.75f, -1e9f, 123456.7f, 0.5f};
  const int is[] = {0, 1, -1, 7, -7, INT32_MIN, INT32_MAX, 123456789, -98765, 31, 32, 65536};
  static In in[N];
  unsigned long long r = 42;
  for (int t = 0; t < N; t++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    In &a = in[t];
    a.f = fs[t % 20]; a.g = fs[(t * 7 + (int)(r >> 60)) % 20];
    a.d = (double)a.f * 1.000000001 + (t % 3 ? 0.1 : -1e-300); a.e = (double)a.g - 0.3;
    a.i = is[t % 12]; a.j = is[(t / 12 + (int)(r >> 61)) % 12];
    a.u = (unsigned)(r >> 16); a.v = (unsigned)(r >> 33) % 40;
    a.l = (long long)(r >> 3) * (t % 2 ? -1 : 1); a.c = (int8_t)(r >> 20); a.s = (int16_t)(r >> 28);
  }
  static uint32_t want[N * NEXACT], got[N * NEXACT];
  static float awant[N * NAPPROX], agot[N * NAPPROX];
  for (int t = 0; t < N; t++) compute(in[t], want + t * NEXACT, awant + t * NAPPROX);
  In *din; uint32_t *dout; float *dap;
  cudaMalloc(&din, sizeof in); cudaMalloc(&dout, sizeof got); cudaMalloc(&dap, sizeof agot);
  cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice);
  ops_kernel<<<3, 32>>>(din, dout, dap, N);
  cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost);
  cudaMemcpy(agot, dap, sizeof agot, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int t = 0; t < N; t++)
    for (int q = 0; q < NEXACT; q++)
      if (got[t * NEXACT + q] != want[t * NEXACT + q] && bad++ < 10)
        printf("FAIL input %d (f %g g %g i %d j %d u %u v %u), result %d: device 0x%08x, host 0x%08x\n",
               t, in[t].f, in[t].g, in[t].i, in[t].j, in[t].u, in[t].v, q, got[t * NEXACT + q], want[t * NEXACT + q]);
  printf("%s exact: %d of %d results differ\n", bad ? "FAIL" : "ok", bad, N * NEXACT);
  int abad = 0;
  for (int t = 0; t < N * NAPPROX; t++) {
    float w = awant[t], g = agot[t];
    if (!(std::fabs(g - w) <= 4e-6f * std::fabs(w) + 1e-30f) && !(std::isnan(g) && std::isnan(w)) && abad++ < 5)
      printf("FAIL approx %d (input %d, function %d): device %.9g, host %.9g\n", t, t / NAPPROX, t % NAPPROX, g, w);
  }
  printf("%s approx: %d of %d results beyond 4e-6 relative\n", abad ? "FAIL" : "ok", abad, N * NAPPROX);
  return bad || abad || cudaDeviceSynchronize() != cudaSuccess;
}
