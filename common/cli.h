/* cli.h — the flags every lab takes, plus a table of lab-specific ones, and the training
 * progress line in the book's style. */
#ifndef AL_CLI_H
#define AL_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

typedef enum { OPT_FLAG, OPT_INT, OPT_FLOAT, OPT_STR } OptType;

typedef struct CliOpt {
  const char *name;   /* "--w0" */
  OptType type;
  void *dest;         /* bool*, int*, float*, const char** */
  const char *help;   /* one line */
} CliOpt;

typedef struct LabArgs {
  uint64_t seed;      /* --seed (default 42); also seeds g_rng in cli_parse */
  const char *out;    /* --out DIR (default out/labNN) */
  const char *device; /* --device cpu|cuda (default cpu) */
  Device dev;         /* the same, as the device every tensor of the lab is created on */
  int epochs;         /* --epochs N (default -1: the preset's) */
  const char *preset; /* --preset NAME (default NULL: the lab's default) */
  const char *data_dir; /* --data-dir DIR */
} LabArgs;

/* Parse argv. lab is "lab03"; summary one line for --help; extra is a table ending with a
 * {NULL} entry (may be NULL). --help prints usage and exits 0; an unknown flag or a bad value
 * prints what was wrong and the usage line, exits 2. Creates the --out directory. Seeds g_rng.
 * --device cuda in a CPU-only build is a clear error. */
void cli_parse(int argc, char **argv, const char *lab, const char *summary, LabArgs *args,
               const CliOpt *extra);

/* "epoch 120/250, loss 0.042, 51234.5 tokens/sec on cpu": rewritten in place (\r) when stdout
 * is a terminal, one line per call otherwise. rate <= 0 omits the rate. unit e.g. "tokens/sec". */
void progress_report(int epoch, int epochs, double loss, double rate, const char *unit,
                     const char *device);
/* Ends an in-place progress line with a newline (no-op when not on a terminal). */
void progress_done(void);

/* "what: (2, 3, 4)" on stdout: the book's `X.shape` prints. */
struct Tensor;
void print_shape(const char *what, const struct Tensor *t);

#endif
