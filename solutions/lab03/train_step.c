/* Exercise 3.4 — one step of the training loop (reference solution; the spec is in
 * labs/lab03/train_step.c). */
#include <math.h>

#include "lab03/lab03.h"

double seq2seq_train_step(Seq2SeqModel *m, const NmtBatch *b, const Seq2SeqStep *s) {
  paramset_zero_grad(m->ps);
  Tensor *dec_X = seq2seq_dec_input(b->Y, s->bos); /* (batch, num_steps) */
  Tensor *Y_hat = m->forward(m->net, b->X, b->X_valid_len, dec_X,
                             s->training);         /* (batch, num_steps, vocab) */
  if (!Y_hat) return NAN;                          /* a stub in the model */
  Tensor *l = MaskedSoftmaxCELoss(Y_hat, b->Y, b->Y_valid_len); /* (batch) */
  Tensor *l_sum = t_sum_all(l);                                 /* (1) */
  float loss;
  tensor_to_host(l_sum, &loss);
  if (s->token_mean) /* d2l 1.0: the mean over the valid target tokens */
    l_sum = t_scale(l_sum, (float)b->Y->shape[1] / (float)(b->num_tokens ? b->num_tokens : 1));
  ag_backward(l_sum);
  if (s->clip > 0) grad_clipping(m->ps, s->clip);
  Adam_step(s->opt);
  return loss;
}
