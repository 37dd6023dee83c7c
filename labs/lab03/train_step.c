/* Exercise 3.4 — one step of the training loop (5 points)
 *
 * What: the body of d2l's train_seq2seq, for one minibatch b:
 *       optimizer.zero_grad()                      paramset_zero_grad(m->ps)
 *       dec_input = cat([<bos>, Y[:, :-1]], 1)     seq2seq_dec_input(b->Y, s->bos)
 *       Y_hat, _ = net(X, dec_input, X_valid_len)  m->forward(m->net, ..., s->training)
 *       l = loss(Y_hat, Y, Y_valid_len)            MaskedSoftmaxCELoss: (batch), padding weighs 0
 *       l.sum().backward()                         t_sum_all, then ag_backward
 *       grad_clipping(net, 1)                      grad_clipping(m->ps, s->clip) when s->clip > 0
 *       optimizer.step()                           Adam_step(s->opt)
 *   and return l.sum() (the book's metric), read with tensor_to_host before backward.
 *   d2l 1.0's loss (s->token_mean) is the mean over the valid target tokens instead: backward
 *   of l.sum() * num_steps / b->num_tokens (each l is a mean over num_steps), returning l.sum()
 *   all the same.
 * Shapes: b->X, b->Y (batch, num_steps) ids; b->X_valid_len, b->Y_valid_len (batch), all on the
 *   model's device; Y_hat (batch, num_steps, vocab).
 * Hints: the forward returns NULL when an exercise it calls is a stub: return NAN then. The
 *   trainer resets the arena after each step (ag_step_reset): leave that to it.
 * The lab: labs 03 and 06 train with this step. Before training they compare it once with the
 *   kit's batched step (rows sorted by length and cut in two, on two threads) on one batch, and
 *   train with the kit's only where the two agree; else with yours, saying so in one line.
 * Tests: tests/grade/lab03/test_train_step.c — the returned loss (1), the gradients after
 *   zero_grad, backward and clipping (2), the optimizer's step (1), d2l 1.0's token-mean loss
 *   (1). Run: make grade LAB=03.
 */
#include <math.h>

#include "lab03/lab03.h"

#include "../../common/exercise.h"

double seq2seq_train_step(Seq2SeqModel *m, const NmtBatch *b, const Seq2SeqStep *s) {
  (void)m, (void)b, (void)s;
  EXERCISE_TODO("3.4", "seq2seq_train_step");
  return NAN;
}
