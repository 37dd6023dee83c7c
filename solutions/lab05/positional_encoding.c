/* Exercise 5.1 — the sinusoidal positional-encoding table (reference solution). See
 * labs/lab05/positional_encoding.c for the spec. Computed in float32 step by step like the
 * book's torch code (exponent 2j/d, then 10000^exponent, then i / that, then sin/cos), so it
 * matches the golden numbers of tests/golden/lab05_reference.py closely. */
#include <math.h>

#include "lab05/lab05.h"

int positional_encoding_table(float *P, int max_len, int num_hiddens) {
  const int d = num_hiddens;
  for (int j2 = 0; j2 < d; j2 += 2) {                 /* j2 = 2j: the even column */
    const float inv = powf(10000.0f, (float)j2 / (float)d);
    for (int i = 0; i < max_len; i++) {
      const float x = (float)i / inv;                 /* angle of position i, frequency j */
      P[(long)i * d + j2] = sinf(x);
      if (j2 + 1 < d) P[(long)i * d + j2 + 1] = cosf(x); /* odd d: the last column is a sine */
    }
  }
  return 0;
}
