# A wrong exercise 4.5 (tests/suites/grading.sh, "wrong kernels"): no __syncthreads() between
# the tile's write and its reads (initcheck: every tiled test scores 0); the naive kernel keeps
# its points.
s|^    __syncthreads(); /\* the whole tile is in before any warp reads it across rows \*/$|    /* PLANT: initcheck (no __syncthreads() between the tile's write and its reads: a warp reads\n     * rows other warps have not written yet) */|
