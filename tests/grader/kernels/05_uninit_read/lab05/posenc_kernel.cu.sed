# A wrong exercise 5.2 (tests/suites/grading.sh, "wrong kernels"): the reference solution with
# one classic mistake: P[e] += ...: reads the fresh output before writing it.
s|^    P\[e\] = (c & 1) ? cosf(x) : sinf(x);$|    P[e] += (c \& 1) ? cosf(x) : sinf(x); /* PLANT: initcheck (reads fresh memory) */|
