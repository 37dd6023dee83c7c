# A wrong exercise 6.8 (tests/suites/grading.sh, "wrong kernels"): the scale argument ignored,
# 1 / sqrt(d) used instead. Before a graded case passed another scale it scored all 8 points;
# now the case at scale 0.9 (lab06_flash_attention_uneven) fails: 2 points lost.
s|^        s \*= scale;$|        s *= 1.0f / sqrtf((float)d); /* PLANT: the scale argument ignored */|
