/* cli.h — the flags every lab takes, plus a table of lab-specific ones, and the training
 * progress line in the book's style. */
#ifndef AL_CLI_H
#define AL_CLI_H

#include <stdbool.h>
#include <limits.h> /* INT_MAX for CliLabInfo.epochs_max */
#include <stddef.h>
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

/* What a lab tells cli_parse about itself, before calling it (cli_lab_info): its presets and
 * the --epochs it accepts. A lab that never calls cli_lab_info has no presets and does not
 * train, so --preset and --epochs are errors there (and --help leaves them out). */
typedef struct CliLabInfo {
  const char *const *presets; /* NULL-terminated names; presets[0] is the default */
  const char *presets_note;   /* optional: what the presets are, for --help */
  int epochs_min, epochs_max; /* the --epochs range; epochs_max 0: the lab does not train */
  const char *epochs_why;     /* optional: why the range, said with a range error */
  int epochs_default;         /* for --help */
} CliLabInfo;
void cli_lab_info(const CliLabInfo *info);

/* Parse argv. lab is "lab03"; summary one line for --help; extra is a table ending with a
 * {NULL} entry (may be NULL). --help prints usage and exits 0; an unknown flag, a bad value, an
 * unknown preset or a --data-dir that is no directory prints "error: lab03: what was wrong" and
 * the usage line, exits 2. Creates the --out directory. Seeds g_rng. Makes stdout line-buffered
 * (progress is live in a pipe or a file too) and announces the data files the lab reads.
 * --device cuda where the device cannot be opened (no GPU, no driver, a CPU-only build) prints
 * one line, "error: lab03: --device cuda: why; run with --device cpu", and exits 2. */
void cli_parse(int argc, char **argv, const char *lab, const char *summary, LabArgs *args,
               const CliOpt *extra);

/* cli_parse's parsing alone, with no side effect (nothing printed, created or exited): 0, 1 when
 * --help was asked for, -1 with the message (without the "error: lab: " prefix) in err, or -2
 * (message in err) when the flags were right but --device cuda could not be opened.
 * For tests and the flag-parser fuzzer. */
int cli_parse_args(int argc, char **argv, const char *lab, LabArgs *args, const CliOpt *extra,
                   char *err, size_t errlen);

/* A file the lab will write at the end (--save FILE): its directory must exist and be
 * writable, checked now, before any training; else "error: lab03: --save FILE: ..." and
 * exit 2. NULL path: nothing to check. */
void cli_check_output_file(const char *flag, const char *path);

/* "epoch 120/250, loss 0.042, 51234.5 tokens/sec on cpu": rewritten in place (\r) when stdout
 * is a terminal, one line per call otherwise, flushed either way (a pipe or a log file sees
 * it at once). rate <= 0 omits the rate. unit e.g. "tokens/sec". */
void progress_report(int epoch, int epochs, double loss, double rate, const char *unit,
                     const char *device);
/* Ends an in-place progress line with a newline (no-op when not on a terminal). */
void progress_done(void);

/* "what: (2, 3, 4)" on stdout: the book's `X.shape` prints. */
struct Tensor;
void print_shape(const char *what, const struct Tensor *t);

#endif
