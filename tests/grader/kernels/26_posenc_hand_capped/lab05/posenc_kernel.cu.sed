# A wrong exercise 5.2 (tests/suites/grading.sh, "wrong kernels"): the grid capped by hand at
# 1024 blocks (not through cap_grid) and one element per thread, no grid-stride loop: right
# until a table passes 1024 x 256 elements. Before the emulator capped every grid of a graded
# test (emu_set_grid_cap) it scored all 4 points; now the device holds 2 blocks whatever the
# launcher asks, and every test with more than 512 elements leaves some unwritten.
s|^       e += (long)gridDim\.x \* blockDim\.x) {$|       e = n) { /* PLANT: no grid-stride step */|
s|^  posenc_kernel<<<cap_grid((n + THREADS - 1) / THREADS, 1024), THREADS>>>(P, first_row, rows,$|  const long blocks = (n + THREADS - 1) / THREADS > 1024 ? 1024 : (n + THREADS - 1) / THREADS; /* PLANT: capped by hand */\
  posenc_kernel<<<(unsigned)blocks, THREADS>>>(P, first_row, rows,|
