# A partial warp: blocks of 48 threads (one and a half warps, "a row and a half"), so the second
# warp has 16 lanes and a full-mask shuffle names 16 lanes it lacks. Expected: synccheck ("names
# lanes 16-31 of a warp that has 16") and 0.
s|enum { WARPS = 8, THREADS = 32 \* WARPS };|enum { WARPS = 2, THREADS = 48 }; /* PLANT */|
