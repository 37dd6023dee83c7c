# A wrong exercise 5.2 (tests/suites/grading.sh, "wrong kernels"): the reference solution with
# one classic mistake: every block covers the whole table (blockIdx forgotten): the right
# numbers, written by every block.
s|^  for (long e = (long)blockIdx\.x \* blockDim\.x + threadIdx\.x; e < n;$|  for (long e = threadIdx.x; e < n; e += blockDim.x) { /* PLANT: racecheck (no blockIdx) */|
\|^       e += (long)gridDim\.x \* blockDim\.x) {$|d
