# A wrong exercise 6.8 (tests/suites/grading.sh, "wrong kernels"): the K/V tile load copies a
# whole tile of 32 keys even when fewer are left: the last tile reads past the end of K.
# The emulator's memcheck reports it: 0 points.
s|^      for (int e = i; e < nk \* d; e += TILE) k_tile\[e\] = K\[((long)b \* keys + j0) \* d + e\];$|      for (int e = i; e < TILE * d; e += TILE) k_tile[e] = K[((long)b * keys + j0) * d + e]; /* PLANT */|
s|^      for (int e = i; e < nk \* dv; e += TILE) v_tile\[e\] = V\[((long)b \* keys + j0) \* dv + e\];$|      for (int e = i; e < TILE * dv; e += TILE) v_tile[e] = V[((long)b * keys + j0) * dv + e]; /* PLANT */|
