/* seq2seq_greedy.c — the kit's greedy decoding loop, for the models that bring none of their
 * own (Seq2SeqModel.predict_greedy NULL: lab03's). It is exercise 6.6's answer (lab06 decodes
 * with the student's predict_seq2seq_greedy), so it sits alone in this file: no test runner
 * links it (tests/grade/kit_answers.txt). See seq2seq.h. */
#include "seq2seq.h"

#include "util.h"

int seq2seq_greedy_kit(const Seq2SeqModel *m, Tensor *X, Tensor *X_valid_len, int bos, int eos,
                       int max_steps, bool save_attention, Seq2SeqPrediction *out) {
  m->begin_decode(m->net, X, X_valid_len);
  bool attn = save_attention && m->step_attention;
  int tok = bos;
  for (int s = 0; s < max_steps; s++) {
    Tensor *logits = m->decode_step(m->net, tok, s); /* (1, tgt_vocab) */
    if (!logits) return -1;
    int V = logits->shape[logits->ndim - 1], best = 0;
    const float *lg = host_read(logits); /* greedy decoding reads what it picks from */
    for (int v = 1; v < V; v++)
      if (lg[v] > lg[best]) best = v;
    if (attn) { /* d2l saves the weights before checking for <eos>: the <eos> step is a row */
      Tensor *w = m->step_attention(m->net);
      if (w) {
        if (!out->attn) {
          out->attn_len = (int)w->size;
          out->attn = xcalloc((size_t)max_steps * (size_t)w->size, sizeof(float));
        }
        if (w->size == out->attn_len)
          tensor_to_host(w, out->attn + (size_t)s * (size_t)out->attn_len);
      }
    }
    out->steps = s + 1;
    if (best == eos) break;
    out->ids[out->n++] = best;
    tok = best;
  }
  return 0;
}
