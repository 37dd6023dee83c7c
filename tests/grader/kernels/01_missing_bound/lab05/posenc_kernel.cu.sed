# A wrong exercise 5.2 (tests/suites/grading.sh, "wrong kernels"): the reference solution with
# one classic mistake: the bound e < n rounded up to whole blocks: the last block writes past P.
s|^  for (long e = (long)blockIdx\.x \* blockDim\.x + threadIdx\.x; e < n;$|  for (long e = (long)blockIdx.x * blockDim.x + threadIdx.x; e < (n + 255) / 256 * 256; /* PLANT */|
s|^       e += (long)gridDim\.x \* blockDim\.x) {$|       e += (long)gridDim.x * blockDim.x) { /* PLANT: memcheck (the bound of the last block) */|
