# A wrong exercise 4.4 (tests/suites/grading.sh, "wrong kernels"): the naive kernel's row loop
# runs to r <= rows, one row past the end (memcheck: 4.4 scores 0); the tiled kernel is the
# solution's and keeps its points.
s|^  for (long r = first_index(); r < rows; r += grid_stride()) {$|  for (long r = first_index(); r <= rows; r += grid_stride()) { /* PLANT: memcheck (r <= rows) */|
