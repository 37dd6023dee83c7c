/* lab03.h — Bahdanau attention: the recurrent layers (GRU, LSTM), Seq2SeqEncoder and
 * Seq2SeqAttentionDecoder of d2l's "Bahdanau Attention" section, and the exercises of lab 03.
 * The layers live in chapters/03_bahdanau/ (libchap.a) and call the exercise functions,
 * labs/lab03/ (stubs) or solutions/lab03/, and lab02's masked_softmax and attention layers.
 * (The lab's fast path, checked against these on every run, is in
 * chapters/03_bahdanau/seq2seq_attention_fast.h.) */
#ifndef LAB03_H
#define LAB03_H

#include "../../common/seq2seq.h"
#include "lab02/lab02.h"

/* ================================================================ recurrent cells */

typedef enum { RNN_GRU = 0, RNN_LSTM = 1 } RnnKind;

/* One layer's weights, PyTorch's gate order: GRU [r | z | n] (G = 3H), LSTM [i | f | g | o]
 * (G = 4H). Stored transposed w.r.t. PyTorch (x @ W) so every product is a plain GEMM. */
typedef struct RNNLayerParams {
  Tensor *W_xh; /* (input_size, G) */
  Tensor *W_hh; /* (H, G) */
  Tensor *b_xh; /* (G) */
  Tensor *b_hh; /* (G) */
} RNNLayerParams;

/* Exercise 3.1 — one GRU step, written with the differentiable ops of common/ops.h.
 * X (batch, input_size), H (batch, H) -> H' (batch, H). See labs/lab03/gru_cell.c. */
Tensor *gru_cell(const RNNLayerParams *p, Tensor *X, Tensor *H);
/* Exercise 3.2 — one LSTM step. X (batch, input_size), H, C (batch, H) -> H' (batch, H), and
 * *C_new = C' (batch, H). See labs/lab03/lstm_cell.c. */
Tensor *lstm_cell(const RNNLayerParams *p, Tensor *X, Tensor *H, Tensor *C, Tensor **C_new);

/* d2l's multi-layer nn.GRU / nn.LSTM: num_layers layers, dropout on the outputs of every layer
 * but the last (training only). */
typedef struct RNN {
  RnnKind kind;
  int input_size, num_hiddens, num_layers;
  float dropout;
  RNNLayerParams layer[8];
} RNN;
/* Xavier-uniform weights (d2l's xavier_init_weights), biases U(-1/sqrt(H), 1/sqrt(H)) (PyTorch's
 * default). Parameters "<name>.l<k>.W_xh" etc. */
void RNN_init(RNN *r, ParamSet *ps, const char *name, RnnKind kind, int input_size,
              int num_hiddens, int num_layers, float dropout);
/* The state of every layer: H[l] (batch, H); C[l] for the LSTM (NULL for the GRU). */
typedef struct RNNState {
  Tensor *H[8], *C[8];
} RNNState;
/* Run the whole sequence X (num_steps, batch, input_size) from state (NULL: zeros), one
 * gru_cell / lstm_cell (exercises 3.1, 3.2) per layer and step. Returns the last layer's outputs
 * (num_steps, batch, H); *state_out (which may be state) gets the final state of every layer.
 * NULL when the exercise cell is a stub. */
Tensor *RNN_forward(const RNN *r, Tensor *X, const RNNState *state, RNNState *state_out,
                    bool training);

/* ================================================================ encoder and decoder */

/* d2l's Seq2SeqEncoder: embedding, then the RNN over the time-major sequence. */
typedef struct Seq2SeqEncoder {
  Embedding embedding;
  RNN rnn;
} Seq2SeqEncoder;
void Seq2SeqEncoder_init(Seq2SeqEncoder *e, ParamSet *ps, RnnKind kind, int vocab_size,
                         int embed_size, int num_hiddens, int num_layers, float dropout);
/* X (batch, num_steps) ids -> outputs (num_steps, batch, H); *state = final states. */
Tensor *Seq2SeqEncoder_forward(const Seq2SeqEncoder *e, Tensor *X, RNNState *state,
                               bool training);

typedef enum { ATTN_ADDITIVE = 0, ATTN_DOT = 1 } AttnKind;

/* Exercise 3.3 — the decoder's attention step: additive attention whose keys were already
 * projected by W_k (they do not change from one decoder step to the next, so the decoder
 * projects them once per sentence). queries (batch, queries, query_size), keys_proj
 * (batch, keys, num_hiddens) = W_k(keys), values (batch, keys, value_size), valid_lens NULL,
 * (batch) or (batch, queries). Returns (batch, queries, value_size) and stores the weights in
 * a->attention_weights, exactly as AdditiveAttention_forward(queries, keys, ...) would.
 * See labs/lab03/attention_step.c. */
Tensor *additive_attention_cached(AdditiveAttention *a, Tensor *queries, Tensor *keys_proj,
                                  Tensor *values, Tensor *valid_lens, bool training);

/* d2l's Seq2SeqAttentionDecoder. Each step: query = the last layer's hidden state, context =
 * attention over the encoder outputs, RNN input = [context, embedding], output = dense(top
 * hidden state). The first layer's input weights are kept as two blocks, the context rows and
 * the embedding rows (stacked, d2l's weight_ih_l0). */
typedef struct Seq2SeqAttentionDecoder {
  AttnKind attn_kind;
  AdditiveAttention attention;
  DotProductAttention dot;
  Embedding embedding;
  RNN rnn;             /* layer 0's W_xh holds the context rows only */
  Tensor *W_xh_emb;    /* (embed_size, G): layer 0's embedding rows */
  Linear dense;        /* num_hiddens -> vocab_size */
  /* state (arena tensors, set by init_state / updated by forward) */
  Tensor *enc_outputs; /* (batch, num_steps, H) */
  Tensor *keys_proj;   /* (batch, num_steps, H): W_k(enc_outputs), additive only */
  Tensor *enc_valid_lens; /* (batch) */
  RNNState state;
  Tensor *attention_weights; /* (batch, 1, num_steps) of the last step */
} Seq2SeqAttentionDecoder;
void Seq2SeqAttentionDecoder_init(Seq2SeqAttentionDecoder *d, ParamSet *ps, RnnKind kind,
                                  AttnKind attn, int vocab_size, int embed_size,
                                  int num_hiddens, int num_layers, float dropout);
/* enc_outputs (num_steps, batch, H) from the encoder, its final state, enc_valid_lens (batch). */
void Seq2SeqAttentionDecoder_init_state(Seq2SeqAttentionDecoder *d, Tensor *enc_outputs,
                                        const RNNState *enc_state, Tensor *enc_valid_lens);
/* X (batch, num_steps) ids -> logits (batch, num_steps, vocab); advances the state. NULL when
 * an exercise it needs is a stub. */
Tensor *Seq2SeqAttentionDecoder_forward(Seq2SeqAttentionDecoder *d, Tensor *X, bool training);

/* The encoder–decoder as a Seq2SeqModel (common/seq2seq.h). */
typedef struct BahdanauNet {
  Seq2SeqEncoder encoder;
  Seq2SeqAttentionDecoder decoder;
  ParamSet ps;
  char tag[160]; /* checkpoint model tag: kind, attention, sizes */
} BahdanauNet;
void BahdanauNet_init(BahdanauNet *n, RnnKind kind, AttnKind attn, int src_vocab,
                      int tgt_vocab, int embed_size, int num_hiddens, int num_layers,
                      float dropout);
/* The model as train_seq2seq and predict_seq2seq take it: the functions above, so every step
 * runs the exercises. */
Seq2SeqModel BahdanauNet_model(BahdanauNet *n);
void BahdanauNet_free(BahdanauNet *n);

/* ================================================================ training */

/* Exercise 3.4 — one step of d2l's train_seq2seq (a Seq2SeqStepFn, common/seq2seq.h): zero the
 * gradients, forward with teacher forcing (s->training), MaskedSoftmaxCELoss, backward (of the
 * token mean where s->token_mean), clip to s->clip, s->opt's step. b (batch, num_steps) on the
 * model's device. Returns the summed per-sequence loss, NAN when the forward met a stub. Labs 03
 * and 06 train with it. See labs/lab03/train_step.c. */
double seq2seq_train_step(Seq2SeqModel *m, const NmtBatch *b, const Seq2SeqStep *s);

#endif
