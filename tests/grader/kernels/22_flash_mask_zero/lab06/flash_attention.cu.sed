# A wrong exercise 6.8 (tests/suites/grading.sh, "wrong kernels"): the wrong mask value: a key
# past the valid length gets the score 0 instead of being left out (exp(0 - m) > 0), so masked
# keys still weigh in. Right without lengths, wrong with them.
s|^      for (int j = 0; j < nk && j0 + j < my_keys; j++) {$|      for (int j = 0; j < nk \&\& i < nq; j++) { /* PLANT */|
s|^        s \*= scale;$|        s = j0 + j < my_keys ? s * scale : 0.0f; /* PLANT: masked keys score 0 */|
