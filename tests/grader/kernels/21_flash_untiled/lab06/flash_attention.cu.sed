# A wrong exercise 6.8 (tests/suites/grading.sh, "wrong kernels"): right numbers, but no K/V
# tiles: each thread reads the K and V rows of every key from global memory for its own query,
# so every K/V sector is loaded once per query instead of once per tile of 32 queries. It keeps
# the numbers' points and loses the reads' (global load sectors past 2x the reference's).
s|^  float \*v_tile = k_tile + TILE \* d;         /\* (TILE, dv) \*/$|&\n  (void)v_tile; /* PLANT: the tiles are never loaded */|
s|^      for (int e = i; e < nk \* d; e += TILE) k_tile\[e\] = K\[((long)b \* keys + j0) \* d + e\];$|      /* PLANT: removed here */|
\|^      for (int e = i; e < nk \* dv; e += TILE) v_tile\[e\] = V\[((long)b \* keys + j0) \* dv + e\];$|d
s|^        for (int c = 0; c < d; c++) s += q_tile\[i \* (d + 1) + c\] \* k_tile\[j \* d + c\];$|        for (int c = 0; c < d; c++) s += q_tile[i * (d + 1) + c] * K[((long)b * keys + j0 + j) * d + c]; /* PLANT */|
s|^          acc\[i \* (dv + 1) + c\] = acc\[i \* (dv + 1) + c\] \* corr + p \* v_tile\[j \* dv + c\];$|          acc[i * (dv + 1) + c] = acc[i * (dv + 1) + c] * corr + p * V[((long)b * keys + j0 + j) * dv + c]; /* PLANT */|
