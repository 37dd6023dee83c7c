/* lab05.h — exercises of lab 05 (self-attention and positional encoding). Used by labs 06–07. */
#ifndef LAB05_H
#define LAB05_H

#include "lab04/lab04.h"

/* Sinusoidal positional encoding: P (max_len, num_hiddens) with
 *   P[i, 2j] = sin(i / 10000^(2j/d)),  P[i, 2j+1] = cos(i / 10000^(2j/d)). */
typedef struct PositionalEncoding {
  int num_hiddens, max_len;
  Dropout dropout;
  float *P; /* (max_len, num_hiddens), malloc'd by PositionalEncoding_init */
} PositionalEncoding;
/* Not an exercise (chapters/05_self_attention_pe/posenc.c): allocates P and fills it with
 * positional_encoding_table. An odd num_hiddens works: the last column is a sine. */
void PositionalEncoding_init(PositionalEncoding *pe, int num_hiddens, float dropout, int max_len);
void PositionalEncoding_free(PositionalEncoding *pe);
/* Exercise 5.1 — fill P (max_len, num_hiddens) as above. Returns 0, or -1 if not implemented. */
int positional_encoding_table(float *P, int max_len, int num_hiddens);
/* X (batch, steps, num_hiddens) + P[offset : offset + steps], then dropout. offset is the
 * position of X's first step (0 for a whole sequence; t when decoding token t alone). */
Tensor *PositionalEncoding_forward(const PositionalEncoding *pe, Tensor *X, int offset,
                                   bool training);

#endif
