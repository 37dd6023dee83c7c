/* seq2seq_loss.c — the loss of the two sequence-to-sequence labs (03 and 06): d2l's
 * MaskedSoftmaxCELoss and the decoder input of teacher forcing. See seq2seq.h. */
#include "seq2seq.h"

/* ================================================================ loss */

Tensor *MaskedSoftmaxCELoss(Tensor *pred, Tensor *label, Tensor *valid_len) {
  if (!pred || !label || !valid_len)
    tensor_error("MaskedSoftmaxCELoss", "NULL argument (did an unfinished exercise return NULL?)");
  char sp[64], sl[64], sv[64];
  if (pred->ndim != 3 || label->ndim != 2 || valid_len->ndim != 1 ||
      pred->shape[0] != label->shape[0] || pred->shape[1] != label->shape[1] ||
      valid_len->shape[0] != label->shape[0])
    tensor_error("MaskedSoftmaxCELoss",
                 "pred %s, label %s, valid_len %s: expected (batch, num_steps, vocab), "
                 "(batch, num_steps) and (batch)",
                 shape_str(pred, sp, sizeof sp), shape_str(label, sl, sizeof sl),
                 shape_str(valid_len, sv, sizeof sv));
  /* weights = sequence_mask(ones_like(label), valid_len): 1 for real tokens, 0 for padding,
   * made where pred is (nothing to send) */
  Tensor *ones = tensor_full_on(pred->device, 2, label->shape, 1.0f); /* (batch, num_steps) */
  Tensor *w = t_sequence_mask(ones, valid_len, 0.0f);                 /* (batch, num_steps) */
  Tensor *l = t_cross_entropy(pred, label, w); /* (batch, num_steps) */
  return t_mean(l, 1, false);                  /* (batch) */
}

Tensor *seq2seq_dec_input(const Tensor *Y, int bos) {
  int B = Y->shape[0], T = Y->shape[1];
  const float *y = host_read(Y); /* an explicit host copy off the CPU */
  float *dh = arena_alloc(sizeof(float) * (size_t)B * (size_t)T);
  for (int b = 0; b < B; b++) {
    dh[b * T] = (float)bos;
    for (int t = 1; t < T; t++) dh[b * T + t] = y[b * T + t - 1];
  }
  Tensor *d = tensor_new_on(Y->device, 2, Y->shape); /* (batch, num_steps) */
  tensor_copy_from_host(d, dh);
  return d;
}

