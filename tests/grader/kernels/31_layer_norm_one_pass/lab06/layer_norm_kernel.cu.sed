# A wrong exercise 6.7 (tests/suites/grading.sh, "wrong kernels"): the variance in one pass,
# E[x^2] - mean^2, which cancels in float32 when the mean is large against the spread. Before a
# graded row had a large mean (they were <= 2.5) it scored all 6 points; now the rows of mean
# 1000 (lab06_layer_norm_kernel_uneven) fail: 1 point lost.
s|^    for (int j = threadIdx\.x; j < D; j += blockDim\.x) q += (xr\[j\] - mean) \* (xr\[j\] - mean);$|    for (int j = threadIdx.x; j < D; j += blockDim.x) q += xr[j] * xr[j]; /* PLANT: one pass */|
s|^    const float rstd = 1\.0f / sqrtf(block_reduce_sum(q, red) / (float)D + eps);$|    const float rstd = 1.0f / sqrtf(block_reduce_sum(q, red) / (float)D - mean * mean + eps); /* PLANT */|
