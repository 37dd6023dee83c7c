/* readcheck — exercise common/data.c from the command line (used by tests/suites/data_errors.sh).
 *   readcheck zip ARCHIVE MEMBER   read one member of a zip archive
 *   readcheck gz FILE              read a gzip (or plain) file
 * Prints "ok <bytes> <crc32>" and exits 0, or prints the one-line error to stderr and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/data.h"

int main(int argc, char **argv) {
  unsigned char *buf = NULL;
  size_t len = 0;
  char err[512];
  int rc;
  if (argc == 4 && strcmp(argv[1], "zip") == 0) {
    rc = zip_read_member(argv[2], argv[3], &buf, &len, err, sizeof err);
  } else if (argc == 3 && strcmp(argv[1], "gz") == 0) {
    rc = gz_read_all(argv[2], &buf, &len, err, sizeof err);
  } else {
    fprintf(stderr, "usage: readcheck zip ARCHIVE MEMBER | readcheck gz FILE\n");
    return 2;
  }
  if (rc != 0) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  printf("ok %zu %08x\n", len, crc32_update(0, buf, len));
  free(buf);
  return 0;
}
