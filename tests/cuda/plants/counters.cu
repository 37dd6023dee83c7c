/* The profiler's counters on kernels whose ideal is known by hand (cuda_plants_emu --counters):
 *  - a coalesced copy: a warp's 32 consecutive floats are 128 bytes, 4 sectors of 32 bytes per
 *    request, loads and stores;
 *  - a stride-32 read: every lane's float in a sector of its own, 32 sectors per request;
 *  - a 32 x 32 transpose through shared memory: a warp writes a row of the tile (32 banks, no
 *    conflict) and reads a column. Unpadded, a column's 32 words are 32 floats apart, all in
 *    one bank: 32 wavefronts (31 replays) per read. Padded to 33 floats a row, the column
 *    spreads over the 32 banks: none;
 *  - one warp's 32 doubles in shared memory: 256 bytes fill the banks twice, 2 wavefronts,
 *    their least: no replay; 32 floats at a stride of 2: two words in each of 16 banks, a
 *    2-way conflict, 1 replay per request.
 * Prints "ok/FAIL counters/NAME: ..." and "N passed, N failed, 0 skipped". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plant.h"

static __global__ void copy_kernel(const float *x, float *y, long n) {
  for (long i = first_index(); i < n; i += grid_stride()) y[i] = x[i];
}
static __global__ void stride32_kernel(const float *x, float *y, long n) {
  for (long i = first_index(); i < n; i += grid_stride()) y[i] = x[i * 32];
}
enum { T = 32 };
/* in (T, T) -> out (T, T) transposed; pad: the tile's row length is T + pad */
static __global__ void transpose_kernel(const float *in, float *out, int pad) {
  SHARED_ARRAY(float, tile, T * (T + 1));
  int tx = threadIdx.x, ty = threadIdx.y, ld = T + pad;
  tile[ty * ld + tx] = in[ty * T + tx];
  __syncthreads();
  out[ty * T + tx] = tile[tx * ld + ty];
}

/* out (32): the doubles written and read back reversed; then floats at a stride of 2 */
static __global__ void shared_width_kernel(float *out) {
  SHARED_ARRAY(double, d, 32);
  SHARED_ARRAY(float, f, 64);
  int t = threadIdx.x;
  d[t] = t;
  f[2 * t] = (float)t;
  __syncthreads();
  out[t] = (float)d[31 - t] + f[2 * (31 - t)];
}

/* The warp votes, __shfl_up_sync, __syncwarp and the integer atomics (emu.cpp), on values known
 * by hand; one warp, lane l's predicate l % 3 == 0. ints (42), zeros first:
 * [0] max of 7 l mod 31, [1] min of -l, [2] lanes whose atomicCAS(0 -> l + 1) found 0, [3] a
 * count by atomicAdd, [4] the ballot, [5] any(l == 31), [6] all(l < 32), [7] any(l > 40),
 * [8] atomicSub, [10 + l] lane l's __shfl_up_sync of l by 1 */
static __global__ void intrinsics_kernel(int *ints) {
  const int l = threadIdx.x;
  const unsigned b = __ballot_sync(0xffffffffu, l % 3 == 0);
  const int any = __any_sync(0xffffffffu, l == 31), all = __all_sync(0xffffffffu, l < 32);
  const int none = __any_sync(0xffffffffu, l > 40);
  const int up = __shfl_up_sync(0xffffffffu, l, 1);
  atomicMax(&ints[0], 7 * l % 31);
  atomicMin(&ints[1], -l);
  atomicAdd(&ints[2], atomicCAS(&ints[9], 0, l + 1) == 0);
  atomicAdd(&ints[3], 1);
  atomicSub(&ints[8], 2);
  ints[10 + l] = up;
  __syncwarp();
  if (l == 0) ints[4] = (int)b, ints[5] = any, ints[6] = all, ints[7] = none;
}

static int passed, failed;
static void expect(const char *name, double got, double want, const char *what) {
  bool ok = got == want;
  printf("%s counters/%s: %s %.2f (ideal by hand: %.0f)\n", ok ? "ok" : "FAIL", name, what, got,
         want);
  if (ok) passed++;
  else failed++;
}

static EmuKernelProfile take_one(void) {
  EmuKernelProfile p[4];
  int n = emu_profile_take(p, 4);
  if (n != 1) {
    printf("FAIL counters: %d kernels profiled where one ran\n", n);
    failed++;
    EmuKernelProfile z = {};
    return z;
  }
  return p[0];
}

int counters_main(void) {
  long n = 256 * 8;
  float *x = plant_floats(n * 32, 1.0f), *y = plant_floats(n, 0.0f);
  emu_profile(true);
  LAUNCH(copy_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, x, y, n);
  EmuKernelProfile p = take_one();
  expect("copy loads", (double)p.ld_sectors / (p.ld_req ? p.ld_req : 1), 4, "sectors/request");
  expect("copy stores", (double)p.st_sectors / (p.st_req ? p.st_req : 1), 4, "sectors/request");
  expect("copy requests", (double)p.ld_req, n / 32, "load requests");
  LAUNCH(stride32_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, x, y, n);
  p = take_one();
  expect("stride-32 loads", (double)p.ld_sectors / (p.ld_req ? p.ld_req : 1), 32, "sectors/request");
  expect("stride-32 stores", (double)p.st_sectors / (p.st_req ? p.st_req : 1), 4, "sectors/request");
  float *in = plant_floats(T * T, 2.0f), *out = plant_floats(T * T, 0.0f);
  for (int pad = 0; pad <= 1; pad++) {
    LAUNCH_SYNC(transpose_kernel, 1, dim3(T, T), 0, in, out, pad);
    p = take_one();
    char name[64];
    snprintf(name, sizeof name, "transpose %s", pad ? "padded" : "unpadded");
    /* 32 warps, each one shared write request and one read request */
    expect(name, (double)p.sh_req, 2 * T, "shared requests");
    expect(name, (double)(p.sh_wavefronts - p.sh_req) / (double)T, pad ? 0 : 31,
           "bank-conflict replays per read request");
    expect(name, (double)p.ld_sectors / (p.ld_req ? p.ld_req : 1), 4, "global sectors/request");
  }
  LAUNCH_SYNC(shared_width_kernel, 1, 32, 0, out);
  p = take_one();
  expect("shared doubles and stride-2 floats", (double)p.sh_req, 4, "shared requests");
  expect("shared doubles and stride-2 floats", (double)(p.sh_wavefronts - p.sh_req), 2,
         "replays (none for the doubles, one per stride-2 request)");
  emu_profile(false);
  int *ints = (int *)plant_floats(42, 0.0f), h[42];
  LAUNCH_SYNC(intrinsics_kernel, 1, 32, 0, ints);
  float *hf = plant_to_host((const float *)ints, 42);
  memcpy(h, hf, sizeof h);
  free(hf);
  unsigned every3 = 0;
  for (int l = 0; l < 32; l += 3) every3 |= 1u << l;
  expect("intrinsics", h[0], 30, "atomicMax of 7 l mod 31");
  expect("intrinsics", h[1], -31, "atomicMin of -l");
  expect("intrinsics", h[2], 1, "lanes whose atomicCAS found 0 (one wins)");
  expect("intrinsics", h[3], 32, "atomicAdd count");
  expect("intrinsics", h[8], -64, "atomicSub of 2 by 32 lanes");
  expect("intrinsics", (unsigned)h[4] == every3, 1, "__ballot_sync(l % 3 == 0) is lanes 0, 3, .., 30");
  expect("intrinsics", h[5] * 4 + h[6] * 2 + h[7], 6, "__any_sync(l == 31), __all_sync(l < 32), not __any_sync(l > 40)");
  int ups = 0;
  for (int l = 0; l < 32; l++) ups += h[10 + l] == (l ? l - 1 : 0);
  expect("intrinsics", ups, 32, "lanes whose __shfl_up_sync(l, 1) is l - 1 (lane 0: its own)");
  printf("%d passed, %d failed, 0 skipped\n", passed, failed);
  return failed ? 1 : 0;
}
