/* fuzz_common.h — what the libFuzzer harnesses share: the readers under test take a path, so
 * each input is written to one scratch file per process first. */
#ifndef AL_FUZZ_COMMON_H
#define AL_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A scratch file of this process (created once, removed at exit) holding data[0..size). */
static const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix) {
  static char path[256];
  if (!path[0]) {
    const char *d = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/al_fuzz_%d%s", d && *d ? d : "/tmp", (int)getpid(), suffix);
  }
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  if (fclose(f) != 0) abort();
  return path;
}

static void fuzz_remove_file(void) {
  char path[256];
  const char *d = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/al_fuzz_%d", d && *d ? d : "/tmp", (int)getpid());
  /* the suffixes the harnesses use */
  const char *sfx[] = {".zip", ".gz", ".ckpt", ".json", ".json.tmp"};
  for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
    char p[300];
    snprintf(p, sizeof p, "%s%s", path, sfx[i]);
    unlink(p);
  }
}

#endif
