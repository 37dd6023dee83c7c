/* Exercise 6.6 — greedy decoding: the loop of d2l's predict_seq2seq (5 points)
 *
 * What: translate one sentence token by token. The kit has tokenized it into X and will turn
 *   your ids back into words; you write the loop in between:
 *     m->begin_decode(m->net, X, X_valid_len)      the encoder, then the decoder's state
 *     token = bos
 *     for s = 0, 1, ..., max_steps - 1:
 *       logits = m->decode_step(m->net, token, s)  (1, tgt_vocab): feed token at position s
 *       best = argmax of logits (the first of equal maxima)
 *       if saving attention: copy m->step_attention(m->net) into row s of out->attn
 *       out->steps = s + 1
 *       if best == eos: stop (eos is not part of the translation)
 *       append best to out->ids (out->n += 1); token = best
 *   Attention (save_attention true and m->step_attention not NULL): on the first step,
 *   out->attn_len = the weights' size and out->attn = xcalloc(max_steps * attn_len floats);
 *   row s holds step s's weights — the eos step's row too (the book saves them before it checks
 *   for eos). Otherwise leave out->attn NULL.
 * Shapes: X (1, num_steps) source ids, X_valid_len (1); logits (1, tgt_vocab); max_steps <=
 *   SEQ2SEQ_MAX_STEPS, the size of out->ids. out arrives zeroed.
 * Hints: host_read(t) gives a tensor's floats on the host (the logits may sit on a GPU);
 *   tensor_to_host(w, dst) copies w->size floats. Return 0; return -1 if decode_step returned
 *   NULL. lab06 decodes with this loop (its four sentences and the held-out BLEU); the
 *   Transformer's decode_step uses your decoder block's cache.
 * Tests: tests/grade/lab06/test_blocks.c (lab06_predict_greedy). Run: make grade LAB=06.
 */
#include "lab06/lab06.h"

#include "../../common/exercise.h"

int predict_seq2seq_greedy(const Seq2SeqModel *m, Tensor *X, Tensor *X_valid_len, int bos,
                           int eos, int max_steps, bool save_attention, Seq2SeqPrediction *out) {
  (void)m, (void)X, (void)X_valid_len, (void)bos, (void)eos, (void)max_steps,
      (void)save_attention, (void)out;
  EXERCISE_TODO("6.6", "predict_seq2seq_greedy");
  return -1;
}
