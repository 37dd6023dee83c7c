# A wrong exercise 6.7 (tests/suites/grading.sh, "wrong kernels"): no barrier between the levels
# of the block's tree reduction (racecheck: every 6.7 test scores 0).
s|^    if (tid < s) red\[tid\] += red\[tid + s\];$|    if (tid < s) red[tid] += red[tid + s]; /* PLANT: racecheck (no barrier between levels) */|
\|^    __syncthreads(); /\* this level's sums are in before the next level reads them \*/$|d
