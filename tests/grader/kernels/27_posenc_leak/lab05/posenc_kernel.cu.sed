# A wrong exercise 5.2 (tests/suites/grading.sh, "wrong kernels"): a scratch buffer allocated
# on every call and never freed (every training step would lose 256 bytes of the GPU). Before
# the leak check (kernel_test.cpp, kt_watch_end) it scored all 4 points; now the test that calls
# the launcher 4 times (lab05_pe_kernel_uneven) fails: 1 point lost.
s|^  const long n = (long)rows \* num_hiddens;$|&\
  float *scratch = NULL; /* PLANT: allocated every call, never freed */\
  cudaMalloc((void **)\&scratch, 256);|
