# A race: the row index forgets the warp (blockIdx.x * WARPS, not + threadIdx.x / 32), so the 8
# warps of a block all compute the same row and write the same y entries with no order between
# them. Expected: racecheck (two threads write one word "with no barrier between them") and 0.
s|for (long r = (long)blockIdx.x \* WARPS + threadIdx.x / 32; r < rows;|for (long r = (long)blockIdx.x * WARPS; r < rows; /* PLANT */|
