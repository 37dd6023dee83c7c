/* lab01_data.h — the regression data of lab01: the book's generated training set, and `x y`
 * text files for --data (also read by the golden test). Not an exercise. */
#ifndef AL_LAB01_DATA_H
#define AL_LAB01_DATA_H

#include <stddef.h>

#include "../../common/rng.h"

/* The noiseless function of d2l 0.17's section, in float32 as torch computes it:
 * 2 sin(x) + x^0.8. */
float lab01_f(float x);

/* 0.17's training set from g_rng: x sorted uniform in [0, 5) (torch.rand(n) * 5, then sort),
 * then y = lab01_f(x) + N(0, 0.5) noise (torch.normal(0.0, 0.5, ...)). x and y hold n floats;
 * the book has n = 50. */
void lab01_make_data(int n, float *x, float *y);

/* The function of d2l 1.0's section ("Attention Pooling by Similarity"): 2 sin(x) + x. */
float lab01_f10(float x);

/* 1.0's training set from r: x as above, y = lab01_f10(x) + N(0, 1) noise (torch.randn(n));
 * the book has n = 40. */
void lab01_make_data10(Rng *r, int n, float *x, float *y);

/* Evenly spaced points: out[i] = start + step * i, formed in double and rounded to float once
 * (torch.arange(0, 5, 0.1) matches it up to one float32 ulp at a few points: its vectorized
 * kernel adds j * step in float to a per-chunk base). */
void lab01_arange(float start, double step, int n, float *out);

/* Read a data file of lines "x y" (whitespace-separated; blank lines and text after '#' are
 * ignored). On success *x and *y are malloc'd arrays of *n >= 2 points (the caller frees them)
 * and 0 is returned. On failure returns -1, allocates nothing, and err holds one line naming
 * the file and the line number, e.g. "pts.txt:7: expected two numbers \"x y\", got \"1.5\"". */
int lab01_read_xy(const char *path, float **x, float **y, int *n, char *err, size_t errlen);

/* Sort the pairs by x (stable, so equal x keep their order: the heatmaps need sorted keys).
 * Returns 1 when the order changed, else 0. */
int lab01_sort_xy(float *x, float *y, int n);

#endif
