/* Attack 32 (issue 25, route 6): the kit's own answer is in the runner. The exercise reads the
 * runner's symbol table (/proc/self/exe is readable) and looks for code that solves it: here
 * test_nw_kernel_regression.c's own `reference`, the NWKernelRegression forward in double that
 * the test uses for its expected values (of old, masked_softmax could find the kit's
 * t_masked_softmax the same way). It calls it with the net's w and returns the result.
 * Against an unstripped runner whose tests compute expected values, this scores
 * lab01_nwkr_forward (3 points). Expected: a student's runner is stripped and holds no code
 * that computes an expected value; nothing is found and the stub's answer stands (not
 * implemented, 0/95). */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab01/lab01.h"

#include "../../common/exercise.h"

typedef void (*RefFn)(double w, double *y_hat, double *attn);

/* The address of the local function `name` defined in the file `file`, or NULL. */
static void *lookup(const char *file, const char *name) {
  int fd = open("/proc/self/exe", O_RDONLY);
  if (fd < 0) return NULL;
  struct stat st;
  char *img = NULL;
  if (fstat(fd, &st) == 0 && st.st_size > 0 && (img = malloc((size_t)st.st_size))) {
    size_t got = 0;
    ssize_t n;
    while (got < (size_t)st.st_size &&
           (n = pread(fd, img + got, (size_t)st.st_size - got, (off_t)got)) > 0)
      got += (size_t)n;
    if (got != (size_t)st.st_size) free(img), img = NULL;
  }
  close(fd);
  if (!img) return NULL;
  void *found = NULL;
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_type != ET_EXEC) goto out;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum && !found; i++) {
    if (sh[i].sh_type != SHT_SYMTAB) continue;
    const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
    const char *str = img + sh[sh[i].sh_link].sh_offset;
    size_t count = sh[i].sh_size / sizeof *sym;
    int in_file = 0;
    for (size_t k = 0; k < count && !found; k++) {
      const char *nm = str + sym[k].st_name;
      if (ELF64_ST_TYPE(sym[k].st_info) == STT_FILE)
        in_file = strstr(nm, file) != NULL;
      else if (in_file && ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && !strcmp(nm, name))
        found = (void *)(uintptr_t)sym[k].st_value;
    }
  }
out:
  free(img);
  return found;
}

Tensor *NWKernelRegression_forward(NWKernelRegression *net, Tensor *queries, Tensor *keys,
                                   Tensor *values) {
  (void)values;
  RefFn ref = (RefFn)lookup("test_nw_kernel_regression.c", "reference");
  if (ref && queries && keys && queries->size == 2 && keys->size == 6) {
    double y[2], a[6];
    ref((double)net->w->data[0], y, a);
    Tensor *out = tensor_new(1, (int[]){2});
    net->attention_weights = tensor_new(2, (int[]){2, 3});
    for (int i = 0; i < 2; i++) out->data[i] = (float)y[i];
    for (int i = 0; i < 6; i++) net->attention_weights->data[i] = (float)a[i];
    return out;
  }
  EXERCISE_TODO("1.3", "NWKernelRegression_forward");
  return NULL;
}

Tensor *leave_one_out(Tensor *x) {
  (void)x;
  EXERCISE_TODO("1.4", "leave_one_out");
  return NULL;
}
