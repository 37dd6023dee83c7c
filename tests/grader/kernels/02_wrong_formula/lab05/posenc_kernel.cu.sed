# A wrong exercise 5.2 (tests/suites/grading.sh, "wrong kernels"): the reference solution with
# one classic mistake: the frequency of column c is 10000^(c/d), not 10000^(2j/d): wrong numbers.
s|^    const float x = (float)(first_row + r) / powf(10000\.0f, (float)(c & ~1) / (float)d);$|    /* PLANT: wrong formula (10000^(c/d), not 10000^(2j/d)) */\n    const float x = (float)(first_row + r) / powf(10000.0f, (float)c / (float)d);|
