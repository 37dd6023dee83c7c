# A wrong exercise 5.2 (tests/suites/grading.sh, "wrong kernels"): the reference solution with
# one classic mistake: threads walk P column by column, so the lanes of a warp store d floats
# apart (uncoalesced: the right numbers, up to 8 times the store sectors).
s|^    const int r = (int)(e / d), c = (int)(e % d);$|    const int r = (int)(e % rows), c = (int)(e / rows); /* PLANT: column-major walk */|
s|^    P\[e\] = (c & 1) ? cosf(x) : sinf(x);$|    P[(long)r * d + c] = (c \& 1) ? cosf(x) : sinf(x); /* PLANT */|
