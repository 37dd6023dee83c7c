# A wrong exercise 6.8 (tests/suites/grading.sh, "wrong kernels"): the online softmax without
# its running max (exp of the raw score): right while scores stay small, inf/NaN once one passes
# ~88. Before the graded inputs reached such scores it scored all 8 points; now the case with
# scores up to ~124 (lab06_flash_attention_uneven) fails: 2 points lost.
s|^        const float m_new = fmaxf(m, s), corr = expf(m - m_new), p = expf(s - m_new);$|        const float m_new = 0.0f, corr = 1.0f, p = expf(s); /* PLANT: no running max */|
