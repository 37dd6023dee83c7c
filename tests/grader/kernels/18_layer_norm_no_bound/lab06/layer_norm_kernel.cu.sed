# A wrong exercise 6.7 (tests/suites/grading.sh, "wrong kernels"): the column-sum kernel without
# its c < D bound: the last column block reads past the rows (memcheck on the uneven backward
# test; the rest pass).
s|^    if (c < D)$|    /* PLANT: memcheck (no c < D: the last column block reads past the rows) */|
s|^    if (grp == 0 && c < D) {$|    if (grp == 0) { /* PLANT */|
