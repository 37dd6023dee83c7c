# A wrong exercise 6.8 (tests/suites/grading.sh, "wrong kernels"): no __syncthreads() between
# loading a K/V tile and reading it: a thread may score keys another thread has not written
# yet. The emulator's racecheck (or initcheck, on the first tile) reports it: 0 points.
s|^      __syncthreads(); /\* the tiles are loaded \*/$|      /* PLANT: no barrier here */|
