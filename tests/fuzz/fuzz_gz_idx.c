/* fuzz_gz_idx — the gzip and IDX readers (gz_read_all, idx_read, idx_parse) on arbitrary
 * files, gzip or plain. idx_read allocates only what a valid header promises (capped at
 * GZ_MAX_BYTES) and gz_read_all stops at GZ_MAX_BYTES. */
#include "../../common/data.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  atexit(fuzz_remove_file);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_file(data, size, ".gz");
  char err[512];
  for (int nd = 1; nd <= 3; nd += 2) {
    int dims[3];
    unsigned char *buf = NULL;
    const unsigned char *pay = NULL;
    int rc = idx_read(path, nd, dims, &buf, &pay, err, sizeof err);
    if (rc == 0) {
      size_t count = 1;
      for (int i = 0; i < nd; i++) {
        if (dims[i] < 1) abort();
        count *= (size_t)dims[i];
      }
      if (!pay || pay != buf + 4 + 4 * nd) abort();
      volatile unsigned char last = pay[count - 1]; /* the whole payload is there (ASan) */
      (void)last;
    } else if (buf || pay || !err[0]) {
      abort();
    }
    free(buf);
  }
  unsigned char *all = NULL;
  size_t len = 0;
  if (gz_read_all(path, &all, &len, err, sizeof err) == 0) {
    if (len > GZ_MAX_BYTES || all[len] != '\0') abort();
    int dims[3];
    const unsigned char *pay;
    idx_parse(all, len, 3, dims, &pay, "fuzz", err, sizeof err);
    idx_parse(all, len, 1, dims, &pay, "fuzz", err, sizeof err);
  }
  free(all);
  return 0;
}
