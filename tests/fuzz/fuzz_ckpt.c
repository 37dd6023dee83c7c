/* fuzz_ckpt — checkpoint_load (common/checkpoint.c) on arbitrary files, into a small model of two
 * tensors. A file is accepted only when everything checks out, and then the model holds its
 * numbers; otherwise -1 with a message and the model untouched. With AL_FUZZ_SEED_OUT=FILE the
 * harness instead saves its model there with checkpoint_save (a real seed) and exits. */
#include "../../common/nn.h"
#include "../../common/seq2seq.h"
#include "fuzz_common.h"

#define TAG "fuzz model w (3, 4) b (4)"
static ParamSet g_ps;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  param_new(&g_ps, "w", 2, (const int[]){3, 4});
  param_new(&g_ps, "b", 1, (const int[]){4});
  for (int i = 0; i < g_ps.n; i++)
    for (long k = 0; k < g_ps.items[i]->size; k++) g_ps.items[i]->data[k] = 0.25f * (float)(k + i);
  const char *seed = getenv("AL_FUZZ_SEED_OUT");
  if (seed) {
    char err[512];
    if (checkpoint_save(&g_ps, TAG, seed, err, sizeof err) != 0) {
      fprintf(stderr, "%s\n", err);
      exit(1);
    }
    exit(0);
  }
  atexit(fuzz_remove_file);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_file(data, size, ".ckpt");
  float before[16];
  memcpy(before, g_ps.items[0]->data, 12 * sizeof(float));
  memcpy(before + 12, g_ps.items[1]->data, 4 * sizeof(float));
  char err[512] = "";
  int rc = checkpoint_load(&g_ps, TAG, path, err, sizeof err);
  if (rc != 0) {
    if (!err[0]) abort();
    /* a refused file leaves the model as it was (compare bits: NaN != NaN) */
    if (memcmp(before, g_ps.items[0]->data, 12 * sizeof(float)) != 0 ||
        memcmp(before + 12, g_ps.items[1]->data, 4 * sizeof(float)) != 0)
      abort();
  }
  return 0;
}
