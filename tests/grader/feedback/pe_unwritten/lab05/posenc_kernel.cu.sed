# A wrong exercise 5.2 (tests/suites/grading.sh, "feedback"), a sed script over the solution's
# posenc_kernel.cu: one element per thread and no grid-stride step, so a grid capped at 2
# blocks leaves the rest of P unwritten (still the NaN of fresh device memory). Its feedback
# must count the elements never written and blame the grid or loop, never exp() or a max.
s|^       e += (long)gridDim\.x \* blockDim\.x) {$|       e = n) { /* PLANT: no grid-stride step */|
