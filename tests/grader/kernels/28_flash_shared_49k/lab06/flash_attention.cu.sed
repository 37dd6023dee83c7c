# A wrong exercise 6.8 (tests/suites/grading.sh, "wrong kernels"): 16 KB of static shared memory
# (a spare array) beside the 33 KB of dynamic shared memory heads of 64 need: 49.3 KB a block,
# which a GPU refuses to launch (48 KB without the opt-in). Before the emulator summed the two
# it scored all 8 points (each was under 48 KB); now the two tests with heads of 64
# (lab06_flash_attention, lab06_flash_attention_causal) stop at the launch: 4 points lost.
s|^  extern __shared__ float sh\[\]; /\* the launch's shared_bytes \*/$|&\
  __shared__ float spare[4096]; /* PLANT: 16 KB more */\
  spare[threadIdx.x] = 0.0f;|
