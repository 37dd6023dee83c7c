/* fuzz_cli — the flag parser (cli_parse_args) on arbitrary argument lists: the input is split
 * at NUL bytes into argv; its first byte picks the lab profile (presets, --epochs range). It
 * must return 0, 1 (--help) or -1 with a message, and every value it stores must be one it
 * validated. */
#include "../../common/cli.h"
#include <math.h>

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  static const char *const presets[] = {"d2l-0.17", "d2l-1.0", NULL};
  CliLabInfo profiles[3] = {
      {0},                                              /* no presets, no training */
      {presets, "note", 1, INT_MAX, "why", 0},          /* lab03/06 */
      {NULL, NULL, 0, 1024, "the loss table", 5},       /* lab01 */
  };
  cli_lab_info(&profiles[data[0] % 3]);
  char *buf = malloc(size);
  memcpy(buf, data + 1, size - 1);
  buf[size - 1] = '\0';
  char *argv[66] = {"./labfuzz"};
  int argc = 1;
  for (size_t i = 0; i < size - 1 && argc < 64;) {
    argv[argc++] = buf + i;
    i += strlen(buf + i) + 1;
  }
  argv[argc] = NULL;
  int steps = 3;
  float lr = 0.5f;
  const char *name = NULL;
  bool flag = false;
  const CliOpt extra[] = {{"--steps", OPT_INT, &steps, "steps (default: the preset's)"},
                          {"--lr", OPT_FLOAT, &lr, "learning rate"},
                          {"--translate", OPT_STR, &name, "a sentence"},
                          {"--no-heldout", OPT_FLAG, &flag, "a switch"},
                          {NULL, 0, NULL, NULL}};
  LabArgs a;
  char err[512];
  int rc = cli_parse_args(argc, argv, "labfuzz", &a, extra, err, sizeof err);
  if (rc == -1) {
    if (!err[0]) abort();
  } else if (rc == -2) { /* --device cuda could not be opened (this build is CPU-only) */
    if (!err[0] || strcmp(a.device, "cuda") != 0) abort();
  } else if (rc == 0) {
    const CliLabInfo *p = &profiles[data[0] % 3];
    if (a.epochs != -1 && (a.epochs < p->epochs_min || a.epochs > p->epochs_max)) abort();
    if (a.preset) {
      int known = 0;
      for (int k = 0; p->presets && p->presets[k]; k++) known |= !strcmp(a.preset, p->presets[k]);
      if (!known) abort();
    }
    if (strcmp(a.device, "cpu") != 0 && strcmp(a.device, "cuda") != 0) abort();
    if (!isfinite(lr)) abort();
    if (name && !*name) abort(); /* an empty value is refused */
  } else if (rc != 1) {
    abort();
  }
  free(buf);
  return 0;
}
