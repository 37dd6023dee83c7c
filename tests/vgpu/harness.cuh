/* harness.cuh — what a solution's .cu needs from the kit (cuda_stream, the launch check) and
 * small helpers for its test driver: random inputs, device copies, a max-error check.
 * Included after the solution, so al_cuda.h's declarations come first. */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

cudaStream_t cuda_stream(void) { return 0; }
void cuda_fail(const char *what, const char *err_name, const char *err_text, const char *file,
               int line) {
  printf("FAIL %s: %s (%s) at %s:%d\n", what, err_name, err_text, file, line);
  exit(1);
}
void cuda_check_launch(const char *kernel, const char *file, int line) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) cuda_fail(kernel, cudaGetErrorName(e), cudaGetErrorString(e), file, line);
}

static int failures;
static unsigned long long rng = 12345;
static float uniform(float lo, float hi) { /* a fixed LCG: the same inputs every run */
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (float)((rng >> 40) & 0xffffff) / 16777216.0f;
}
static std::vector<float> randoms(size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (auto &x : v) x = uniform(lo, hi);
  return v;
}
template <class T> static T *to_device(const std::vector<T> &h) {
  T *d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <class T> static std::vector<T> to_host(const T *d, size_t n) {
  std::vector<T> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
/* max |got - want| / (1 + |want|) within tol */
static void check(const char *what, const std::vector<float> &got, const std::vector<double> &want,
                  double tol) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); i++) {
    double e = std::fabs(got[i] - want[i]) / (1 + std::fabs(want[i]));
    if (!(e <= worst)) worst = e; /* NaN sticks */
  }
  bool ok = worst <= tol;
  printf("%s %s (max relative error %.3g, tolerance %.3g, %zu values)\n", ok ? "ok" : "FAIL",
         what, worst, tol, want.size());
  if (!ok) failures++;
}
