/* fuzz_zip — the zip reader (common/data.c zip_read_member) on arbitrary archives: it must
 * return 0 with a buffer of the size it reports, or -1 with a message; never crash, leak, or
 * allocate more than the archive can hold. */
#include "../../common/data.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  atexit(fuzz_remove_file);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_file(data, size, ".zip");
  const char *members[] = {"fra-eng/fra.txt", "fra.txt"};
  for (int i = 0; i < 2; i++) {
    unsigned char *buf = NULL;
    size_t len = 12345;
    char err[512];
    int rc = zip_read_member(path, members[i], &buf, &len, err, sizeof err);
    if (rc == 0) {
      if (!buf || buf[len] != '\0') abort(); /* NUL-terminated at the reported length */
      /* a member inflates at most ~1032:1, and a stored one is no larger than the archive */
      if (len > size * 1032u + 1024u) abort();
    } else {
      if (buf || len != 0 || strlen(err) == 0) abort(); /* -1: nothing returned, a message */
    }
    free(buf);
  }
  return 0;
}
