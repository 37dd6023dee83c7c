# A shuffle with a wrong mask: 0x0000ffff names lanes 0-15 only, while all 32 lanes call it.
# Expected: synccheck ("which leaves the lane itself out") and 0, whatever the numbers.
0,/m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o))/s||m = fmaxf(m, __shfl_xor_sync(0x0000ffffu, m, o)) /* PLANT */|
