# A wrong exercise 5.2 (tests/suites/grading.sh, "wrong kernels"): the reference solution with
# one classic mistake: one element per thread, no loop: a grid capped at 2 blocks leaves
# the rest unwritten.
s|^       e += (long)gridDim\.x \* blockDim\.x) {$|       e = n) { /* PLANT: no grid-stride step */|
