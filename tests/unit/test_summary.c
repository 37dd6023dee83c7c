/* Tests of common/summary.c: paths build nested objects and arrays, members keep the order they
 * were first recorded in, a path recorded again is replaced in place, values are copies. */
#include <stdlib.h>
#include <unistd.h>

#include "../../common/summary.h"
#include "../test.h"

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

TEST(summary_paths_order_replacement_and_copies) {
  char dir[] = "/tmp/al_summary_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  Summary *S = summary_new("lab00", 7);
  Tensor *t = tensor_from(2, (const int[]){2, 2}, (const float[]){1, 2, 3, 4}); /* (2, 2) */
  summary_tensor(S, "a/t", t);
  t->data[0] = 99; /* recorded already: the file keeps 1 */
  summary_int(S, "a/n", 3);
  summary_str(S, "rows/0/name", "x");
  summary_num(S, "rows/1/v", 0.5);
  summary_str(S, "rows/0/sigma_0.1", "a dot is part of a key");
  summary_int(S, "a/n", 4); /* replaced where it was */
  summary_num(S, "nan", NAN);
  summary_shape(S, "shape", t);
  summary_str(S, "none", NULL);
  summary_write(S, dir);
  char path[64];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  const char *got = read_all(path);
  const char *want = "{\n"
                     "  \"lab\": \"lab00\",\n"
                     "  \"seed\": 7,\n"
                     "  \"a\": {\n"
                     "    \"t\": [\n"
                     "      [1, 2],\n"
                     "      [3, 4]\n"
                     "    ],\n"
                     "    \"n\": 4\n"
                     "  },\n"
                     "  \"rows\": [\n"
                     "    {\n"
                     "      \"name\": \"x\",\n"
                     "      \"sigma_0.1\": \"a dot is part of a key\"\n"
                     "    },\n"
                     "    {\n"
                     "      \"v\": 0.5\n"
                     "    }\n"
                     "  ],\n"
                     "  \"nan\": null,\n"
                     "  \"shape\": [2, 2],\n"
                     "  \"none\": null\n"
                     "}\n";
  CHECK(got != NULL);
  if (got && strcmp(got, want) != 0) test_fail(__FILE__, __LINE__, "got:\n%s\nwanted:\n%s", got, want);
  unlink(path);
  rmdir(dir);
}
