/* Exercise 6.6 — predict_seq2seq_greedy (reference solution; the spec is in
 * labs/lab06/predict.c). */
#include "lab06/lab06.h"

#include "../../common/util.h"

int predict_seq2seq_greedy(const Seq2SeqModel *m, Tensor *X, Tensor *X_valid_len, int bos,
                           int eos, int max_steps, bool save_attention, Seq2SeqPrediction *out) {
  m->begin_decode(m->net, X, X_valid_len); /* encoder, then the decoder's state */
  bool attn = save_attention && m->step_attention;
  int tok = bos;
  for (int s = 0; s < max_steps; s++) {
    Tensor *logits = m->decode_step(m->net, tok, s); /* (1, tgt_vocab) */
    if (!logits) return -1;
    int V = logits->shape[logits->ndim - 1], best = 0;
    const float *lg = host_read(logits); /* the numbers the argmax picks from, on the host */
    for (int v = 1; v < V; v++)
      if (lg[v] > lg[best]) best = v;
    if (attn) { /* d2l saves the weights before checking for <eos>: the <eos> step is a row */
      Tensor *w = m->step_attention(m->net); /* this step's weights, e.g. (1, 1, keys) */
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
