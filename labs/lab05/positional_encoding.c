/* Exercise 5.1 — the sinusoidal positional-encoding table (4 points)
 *
 * What: fill P, a row-major (max_len, num_hiddens) float array, with
 *     P[i, 2j]     = sin(i / 10000^(2j / d))
 *     P[i, 2j + 1] = cos(i / 10000^(2j / d))          (d = num_hiddens)
 *   for every position i in [0, max_len) and every column pair. Row i is the encoding added to
 *   the token at position i; each column pair is one frequency, from 1 (columns 0, 1) down to
 *   almost 1/10000 (the last pair).
 *   An odd d has a last column 2j = d - 1 with no partner: it is a sine (no cos column).
 * Return 0 when done (-1 is what the stub returns: "not implemented").
 * Hints: compute the divisor 10000^(2j/d) once per column pair, not once per entry. The book
 *   computes in float32 (powf, sinf, cosf with the exponent (float)(2j) / (float)d); doing the
 *   same reproduces its numbers to about 1e-6. double math is fine too: the tests allow for
 *   float32 rounding of angles up to 100 (their tables have 100 rows).
 * Shapes: P has max_len * num_hiddens floats, allocated by the caller
 *   (PositionalEncoding_init in chapters/05_self_attention_pe/posenc.c).
 * Tests: tests/grade/lab05/test_posenc.c. Run: make grade LAB=05.
 */
#include "lab05/lab05.h"

#include "../../common/exercise.h"

int positional_encoding_table(float *P, int max_len, int num_hiddens) {
  (void)P, (void)max_len, (void)num_hiddens;
  EXERCISE_TODO("5.1", "positional_encoding_table");
  return -1;
}
