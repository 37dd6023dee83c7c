/* cuda_start_problem (cuda/backend.cu): the one line a run starts with when the machine's card
 * cannot run this build, fed the numbers a card and a driver would give (no GPU needed): it
 * names both sides (the card's sm_XY or the driver's CUDA version, and the build's) and what
 * to do, and fits the buffer the labs print it from (common/cli.c: 400 bytes). */
#include <string.h>

#include "../../common/backend.h"
#include "../test.h"

/* the longest name NVIDIA gives a card today is about 40 characters */
static const char *long_card = "NVIDIA GeForce RTX 5090 Laptop GPU (long)";

static void check_line(const char *s) {
  CHECK(strchr(s, '\n') == NULL);
  CHECK(strlen(s) < 400);
  CHECK_STR_CONTAINS(s, "; or run with --device cpu");
}

TEST(cuda_start_driver_older_than_runtime) {
  char s[512];
  /* Colab: a 550 driver (CUDA 12.4) and a kit built by CUDA 13.0 */
  cuda_start_problem(s, sizeof s, CUDA_START_DRIVER, "", 0, 0, 12040, 13000, "75 80 90");
  CHECK_STR_CONTAINS(s, "driver runs CUDA 12.4 at most");
  CHECK_STR_CONTAINS(s, "this build is CUDA 13.0's");
  CHECK_STR_CONTAINS(s, "cudaErrorInsufficientDriver");
  CHECK_STR_CONTAINS(s, "this machine's own nvcc");
  check_line(s);
  cuda_start_problem(s, sizeof s, CUDA_START_DRIVER, "", 0, 0, 11080, 12010, "75 80 90");
  CHECK_STR_CONTAINS(s, "CUDA 11.8 at most");
  CHECK_STR_CONTAINS(s, "CUDA 12.1's");
}

TEST(cuda_start_no_code_for_the_card) {
  char s[512];
  /* a T4 (7.5) meets a build for Ampere and Hopper only */
  cuda_start_problem(s, sizeof s, CUDA_START_NO_CODE, "Tesla T4", 7, 5, 12040, 12040, "80 90");
  CHECK_STR_CONTAINS(s, "the Tesla T4 is sm_75");
  CHECK_STR_CONTAINS(s, "CUDA_ARCH=\"80 90\" only");
  CHECK_STR_CONTAINS(s, "cudaErrorNoKernelImageForDevice");
  CHECK_STR_CONTAINS(s, "make CUDA_ARCH=75");
  check_line(s);
  cuda_start_problem(s, sizeof s, CUDA_START_NO_CODE, long_card, 12, 0, 13000, 13000, "75 80 90");
  CHECK_STR_CONTAINS(s, "is sm_120");
  CHECK_STR_CONTAINS(s, "make CUDA_ARCH=120");
  check_line(s);
}

TEST(cuda_start_ptx_too_new_for_the_driver) {
  char s[512];
  cuda_start_problem(s, sizeof s, CUDA_START_PTX, long_card, 12, 0, 12040, 13000, "75 80 90");
  CHECK_STR_CONTAINS(s, "(sm_120) has no code in this build (CUDA_ARCH=\"75 80 90\")");
  CHECK_STR_CONTAINS(s, "driver (CUDA 12.4) cannot compile the build's PTX (CUDA 13.0's");
  CHECK_STR_CONTAINS(s, "cudaErrorUnsupportedPtxVersion");
  CHECK_STR_CONTAINS(s, "make CUDA_ARCH=120");
  check_line(s);
}
