# A wrong exercise 4.5 (tests/suites/grading.sh, "wrong kernels"): the tile's rows are not
# padded, so a warp's column reads hit the same banks: it loses only the bank-conflict point.
s|^  const int L = TC \* D + ((D - TC \* D) % 32 + 32) % 32; /\* L = D (mod 32), L < PT_SHARED \*/$|  const int L = TC * D; /* PLANT: bank conflicts (rows not padded) */|
