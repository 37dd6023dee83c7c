# A wrong exercise 5.2 (tests/suites/grading.sh, "wrong kernels"): the table computed by loops on
# the host and copied into P with cudaMemcpy; one launch of the kernel over 0 rows, so that the
# launcher "launches". Before the launch check (kernel_test.h, KT_LAUNCHER) it scored all 4
# points of the kernel tests; now each says the launcher computed on the host: 0.
s|^  posenc_kernel<<<cap_grid((n + THREADS - 1) / THREADS, 1024), THREADS>>>(P, first_row, rows,$|  posenc_kernel<<<1, THREADS>>>(P, first_row, 0, num_hiddens); /* PLANT: a launch that does nothing */\
  float *h = (float *)malloc(sizeof(float) * (size_t)(n + 1)); /* PLANT: the table on the host */\
  for (long e = 0; e < n; e++) {\
    const int r = (int)(e / num_hiddens), c = (int)(e % num_hiddens);\
    const float x = (float)(first_row + r) / powf(10000.0f, (float)(c \& ~1) / (float)num_hiddens);\
    h[e] = (c \& 1) ? cosf(x) : sinf(x);\
  }\
  cudaMemcpy(P, h, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice);\
  free(h);|
\|^                                                                        num_hiddens);$|d
