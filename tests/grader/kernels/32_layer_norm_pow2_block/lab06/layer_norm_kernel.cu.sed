# A wrong exercise 6.7 (tests/suites/grading.sh, "wrong kernels"): a block of the power of two
# >= D threads, uncapped (and a reduction array of 1024): right up to D = 1024, a launch a GPU
# refuses past it (2048 threads at D = 1100). Before a graded D passed 1024 (the largest was
# 1000) it scored all 6 points; now lab06_layer_norm_kernel_uneven stops at the launch: 1 lost.
s|^  LN_MAX_THREADS = 256, |  LN_MAX_THREADS = 1024, /* PLANT */ |
s|^  while (t < D \&\& t < LN_MAX_THREADS) t \*= 2;$|  while (t < D) t *= 2; /* PLANT: uncapped */|
