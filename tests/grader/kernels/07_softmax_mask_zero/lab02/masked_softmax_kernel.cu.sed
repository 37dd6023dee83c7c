# The wrong mask value: masked keys take part with the score 0 (as if the scores had been filled
# with 0, not left out or set to -inf): they enter the max and the sum and come out nonzero.
# Expected: the tests with lengths score 0 (wrong answer); the ones without lengths pass.
s|for (int j = lane; j < n; j += 32) m = fmaxf(m, xr\[j\]);|for (int j = lane; j < keys; j += 32) m = fmaxf(m, j < n ? xr[j] : 0.0f); n = keys; /* PLANT */|
s|float e = expf(xr\[j\] - m); /\* <= 1 \*/|float e = expf((j < (len ? len[r / per] : keys) ? xr[j] : 0.0f) - m); /* PLANT */|
