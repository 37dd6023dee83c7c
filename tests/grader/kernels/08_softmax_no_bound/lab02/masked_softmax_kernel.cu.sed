# A missing bound: one row per warp and no grid-stride loop, and no check that the warp's row
# exists. The grid is rounded up to whole blocks of 8 rows, so the last block's extra warps read
# rows past the end of x. Expected: memcheck ("past the end of its allocation ... 'x'") and 0.
s|for (long r = (long)blockIdx.x \* WARPS + threadIdx.x / 32; r < rows;|for (long r = (long)blockIdx.x * WARPS + threadIdx.x / 32, r_end = r + 1; r < r_end; /* PLANT */|
s|static unsigned blocks_for(long rows) { return cap_grid((rows + WARPS - 1) / WARPS, 8192); }|static unsigned blocks_for(long rows) { return (unsigned)((rows + WARPS - 1) / WARPS); } /* PLANT */|
