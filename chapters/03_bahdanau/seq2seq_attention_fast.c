/* seq2seq_attention_fast.c — lab 03's fast path: the encoder and decoder of
 * seq2seq_attention.c, the same numbers up to float rounding, with less arithmetic:
 *   - fused cells (rnn_cell.c) and fused additive scores (additive_scores.c): one tape node
 *     each instead of a dozen small ones;
 *   - table projection: an embedding followed by a linear layer projects the vocabulary's
 *     table, not every token of the batch;
 *   - valid keys: W_k projects only the source positions attention can see;
 *   - packing (training): a row whose target has ended leaves the decoder.
 * It stands in for the student's exercises only after BahdanauNet_checked_model has compared
 * the two on one batch of the run's own data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../../common/backend.h"
#include "../../common/exercise.h"
#include "../../common/util.h"
#include "seq2seq_attention_fast.h"
#include "seq2seq_ids.h"

/* An embedding followed by a linear layer, as both recurrent nets start (the encoder's layer 0
 * and the embedding rows of the decoder's): embedding(ids) @ W + b is row ids of table @ W + b.
 * Where the vocabulary has fewer rows than there are ids, projecting the table and picking rows
 * does fewer products, forward and backward (the table's gradient is then the picked rows'
 * gradients summed per id, times W^T): lab 03's d2l-1.0 batch has 1,152 source ids for 194 words.
 * ids (...) -> (..., W's columns). */
static Tensor *embedded_projection(const Embedding *e, Tensor *ids, Tensor *W, Tensor *b) {
  if (e->vocab < ids->size) return t_embedding(t_linear(e->W, W, b), ids);
  return t_linear(Embedding_forward(e, ids), W, b);
}

/* ================================================================ encoder */

Tensor *Seq2SeqEncoder_forward_fast(const Seq2SeqEncoder *e, Tensor *X, RNNState *state,
                                    bool training) {
  check_ids("Seq2SeqEncoder_forward (fast path)", X);
  const RNNLayerParams *p = &e->rnn.layer[0];
  Tensor *GX0 = embedded_projection(&e->embedding, ids_time_major(X), p->W_xh,
                                    p->b_xh); /* (T, B, G) */
  return RNN_forward_fused(&e->rnn, NULL, GX0, NULL, state, training); /* (T, B, H) */
}

/* ================================================================ decoder */

/* W_k(enc_outputs) at the source positions attention can see. A key past its row's valid
 * length gets weight 0 whatever its score (masked_softmax), so its projection is never read:
 * where a quarter or more of the positions are padding (lab03's d2l-1.0 batches: about half),
 * only the valid rows are projected, and the others read a row of zeros. The rows are picked
 * and put back with t_embedding, whose backward adds the gradients where they came from.
 * enc_outputs (B, T, H) -> (B, T, H). */
static Tensor *keys_projection(const Linear *W_k, Tensor *enc_outputs, Tensor *valid_lens) {
  const int B = enc_outputs->shape[0], T = enc_outputs->shape[1], H = enc_outputs->shape[2];
  if (!valid_lens || valid_lens->ndim != 1 || valid_lens->shape[0] != B)
    return Linear_forward(W_k, enc_outputs);
  const float *vl = host_read(valid_lens);
  int nv = 0;
  for (int b = 0; b < B; b++) nv += vl[b] < 0 ? 0 : vl[b] < (float)T ? (int)vl[b] : T;
  if (4 * nv > 3 * B * T || nv == 0) return Linear_forward(W_k, enc_outputs);
  float *pick = arena_alloc(sizeof(float) * (size_t)nv);        /* (nv): valid (b, t) -> b*T+t */
  float *put = arena_alloc(sizeof(float) * (size_t)B * (size_t)T); /* (B, T): its row, or nv */
  int k = 0;
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      const bool valid = (float)t < vl[b];
      put[b * T + t] = (float)(valid ? k : nv);
      if (valid) pick[k++] = (float)(b * T + t);
    }
  const Device dev = enc_outputs->device;
  Tensor *pick_ids = tensor_new_on(dev, 1, (const int[]){nv});  /* (nv) */
  Tensor *put_ids = tensor_new_on(dev, 2, (const int[]){B, T}); /* (B, T) */
  tensor_copy_from_host(pick_ids, pick);
  tensor_copy_from_host(put_ids, put);
  Tensor *rows = t_embedding(t_view(enc_outputs, B * T, H), pick_ids); /* (nv, H) */
  Tensor *proj = t_cat2(Linear_forward(W_k, rows),
                        tensor_zeros(2, (const int[]){1, W_k->out}), 0); /* (nv + 1, h) */
  return t_embedding(proj, put_ids);                                    /* (B, T, h) */
}

void Seq2SeqAttentionDecoder_init_state_fast(Seq2SeqAttentionDecoder *d, Tensor *enc_outputs,
                                             const RNNState *enc_state, Tensor *enc_valid_lens) {
  d->enc_outputs = t_permute(enc_outputs, (const int[]){1, 0, 2}); /* (B, T, H) */
  d->keys_proj = d->attn_kind == ATTN_ADDITIVE
                     ? keys_projection(&d->attention.W_k, d->enc_outputs, enc_valid_lens)
                     : NULL; /* (B, T, H) */
  d->enc_valid_lens = enc_valid_lens;
  d->state = *enc_state;
  d->attention_weights = NULL;
}

/* Packing (training only): a row whose target ended before step t is weighted 0 by the loss
 * from t on, and the decoder is causal, so nothing it computes for that row at t or later can
 * change the loss or a gradient. With the rows sorted by target length (the trainer sorts them),
 * the rows still running at step t are a suffix [lo[t], B): step t runs on those rows only, as
 * PyTorch's pack_padded_sequence would. lo[t] is the longest prefix of rows whose target has
 * ended; unsorted rows still give the right numbers, only less is skipped. Without valid
 * lengths every row runs every step. */
typedef struct Packing {
  int B, T;
  int P;                /* positions computed */
  int steps;            /* steps with a row running (T, or where every row has ended) */
  int lo[513];          /* the rows before lo[t] have ended by step t */
  int off[513];         /* step t's first row in the packed (P, ...) arrays: step 0's running
                           rows, then step 1's, ... */
} Packing;

static void packing_plan(Packing *pk, Tensor *dec_valid_len, int B, int T) {
  const float *vl = dec_valid_len ? host_read(dec_valid_len) : NULL;
  pk->B = B, pk->T = T, pk->steps = T, pk->off[0] = 0;
  for (int t = 0; t < T; t++) {
    int lo = 0;
    while (vl && lo < B && vl[lo] <= (float)t) lo++;
    pk->lo[t] = lo;
    pk->off[t + 1] = pk->off[t] + (B - lo);
    if (lo == B && pk->steps == T) pk->steps = t; /* a target trimmed by its caller never ends */
  }
  pk->P = pk->off[T];
}

/* The running rows' ids, step after step: ids (T, B) -> (P). */
static Tensor *packed_ids(Tensor *ids, const Packing *pk) {
  if (pk->P == pk->T * pk->B) return t_view(ids, pk->P);
  Tensor *pieces[512];
  int n = 0;
  for (int t = 0; t < pk->T; t++)
    if (pk->lo[t] < pk->B) pieces[n++] = t_slice(t_slice(ids, 0, t, t + 1), 1, pk->lo[t], pk->B);
  return t_view(t_concat(pieces, n, 1), pk->P);
}

/* What a step's attention reads, for the running rows [cur, B). */
typedef struct Running {
  int cur;
  Tensor *enc_out, *keys_proj, *enc_vl; /* (n, ...): the running rows of d's */
} Running;

/* Rows [run->cur, lo) have ended: drop them from the state and from the attention's memory. */
static void drop_ended(Seq2SeqAttentionDecoder *d, Running *run, int lo) {
  if (lo <= run->cur) return;
  const int B = d->enc_outputs->shape[0], k = lo - run->cur, n = B - run->cur;
  RNNState *s = &d->state;
  for (int l = 0; l < d->rnn.num_layers; l++) {
    s->H[l] = t_slice(s->H[l], 0, k, n);
    if (s->C[l]) s->C[l] = t_slice(s->C[l], 0, k, n);
  }
  run->cur = lo;
  run->enc_out = t_slice(d->enc_outputs, 0, lo, B);
  if (run->keys_proj) run->keys_proj = t_slice(d->keys_proj, 0, lo, B);
  if (run->enc_vl) run->enc_vl = t_slice(d->enc_valid_lens, 0, lo, B);
}

/* One step's context, (n, 1, H), for the query (n, 1, H) of the running rows. Additive:
 * exercise 3.3's computation with the scores fused (masked_softmax is lab02's). NULL when a
 * lab02 exercise is a stub. */
static Tensor *fast_attention(Seq2SeqAttentionDecoder *d, const Running *run, Tensor *query,
                              bool training) {
  if (d->attn_kind == ATTN_ADDITIVE) {
    AdditiveAttention *a = &d->attention;
    Tensor *q = Linear_forward(&a->W_q, query);                             /* (n, 1, H) */
    Tensor *scores = additive_scores_fused(q, run->keys_proj, a->w_v.W);   /* (n, 1, T) */
    Tensor *w = masked_softmax(scores, run->enc_vl);                       /* (n, 1, T) */
    if (!w) return NULL;
    a->attention_weights = d->attention_weights = w;
    return t_bmm(Dropout_forward(&a->dropout, w, training), run->enc_out); /* (n, 1, H) */
  }
  Tensor *context = DotProductAttention_forward(&d->dot, query, run->enc_out, run->enc_out,
                                                run->enc_vl, training);
  d->attention_weights = d->dot.attention_weights;
  return context;
}

/* One step of the fused cells for the n running rows. Layer 0's input projection is the
 * context's plus the embedding's, gx_emb (n, G), projected for all steps at once. Returns the
 * top layer's new state (n, H). */
static Tensor *fast_cells(Seq2SeqAttentionDecoder *d, Tensor *context, Tensor *gx_emb,
                          bool training) {
  const RNN *r = &d->rnn;
  const int H = r->num_hiddens, n = context->shape[0];
  RNNState *s = &d->state;
  Tensor *gx = t_add(t_matmul(t_view(context, n, H), r->layer[0].W_xh), gx_emb); /* (n, G) */
  Tensor *inp = NULL;
  for (int l = 0; l < r->num_layers; l++) {
    const RNNLayerParams *p = &r->layer[l];
    if (l > 0) gx = t_linear(t_dropout(inp, r->dropout, training), p->W_xh, p->b_xh);
    Tensor *o = rnn_cell_fused(r->kind, gx, s->H[l], s->C[l], p->W_hh, p->b_hh);
    if (r->kind == RNN_LSTM) {
      s->H[l] = t_slice(o, 1, 0, H);
      s->C[l] = t_slice(o, 1, H, 2 * H);
    } else {
      s->H[l] = o;
    }
    inp = s->H[l]; /* (n, H) */
  }
  return inp;
}

/* logits (P, V) of the computed positions -> (T * B, V), step-major, 0 where a row had ended. */
static Tensor *unpack_logits(Tensor *logits, const Packing *pk, int V) {
  if (pk->P == pk->T * pk->B) return logits;
  Tensor *pieces[1024];
  int n = 0;
  for (int t = 0; t < pk->T; t++) {
    if (pk->lo[t] > 0) pieces[n++] = tensor_zeros(2, (const int[]){pk->lo[t], V});
    if (pk->lo[t] < pk->B) pieces[n++] = t_slice(logits, 0, pk->off[t], pk->off[t + 1]);
  }
  return t_concat(pieces, n, 0);
}

Tensor *Seq2SeqAttentionDecoder_forward_fast(Seq2SeqAttentionDecoder *d, Tensor *X,
                                             Tensor *dec_valid_len, bool training) {
  const char *op = "Seq2SeqAttentionDecoder_forward (fast path)";
  check_ids(op, X);
  const int B = X->shape[0], T = X->shape[1], H = d->rnn.num_hiddens, L = d->rnn.num_layers;
  if (!d->enc_outputs || d->enc_outputs->shape[0] != B)
    tensor_error(op, "call init_state with a batch of %d first", B);
  if (T > 512) tensor_error(op, "num_steps %d > 512", T);
  if (dec_valid_len && (dec_valid_len->ndim != 1 || dec_valid_len->shape[0] != B))
    tensor_error(op, "dec_valid_len must be (%d), one per row", B);
  Packing pk;
  packing_plan(&pk, dec_valid_len, B, T);
  Tensor *ids = packed_ids(ids_time_major(X), &pk); /* (P) */
  /* the embedding half of layer 0's input projection, every step at once */
  Tensor *GX_emb = embedded_projection(&d->embedding, ids, d->W_xh_emb,
                                       d->rnn.layer[0].b_xh); /* (P, G) */
  Running run = {0, d->enc_outputs, d->keys_proj, d->enc_valid_lens};
  Tensor *outs[512];
  for (int t = 0; t < pk.steps; t++) {
    drop_ended(d, &run, pk.lo[t]);
    const int n = B - run.cur;                                   /* running rows */
    Tensor *query = t_view(d->state.H[L - 1], n, 1, H);          /* (n, 1, H) */
    Tensor *context = fast_attention(d, &run, query, training);  /* (n, 1, H) */
    if (!context) return NULL;
    outs[t] = fast_cells(d, context, t_slice(GX_emb, 0, pk.off[t], pk.off[t + 1]), training);
  }
  const int V = d->dense.out;
  Tensor *top = pk.steps > 1 ? t_concat(outs, pk.steps, 0) : outs[0]; /* (P, H) */
  Tensor *logits = pk.steps == 0 ? NULL /* no row had a target */
                                 : Linear_forward(&d->dense, top); /* (P, V) */
  logits = unpack_logits(logits, &pk, V);            /* (T * B, V) */
  return t_transpose(t_view(logits, T, B, V), 0, 1); /* (B, T, V) */
}

/* ================================================================ the model */

static Tensor *fast_forward_packed(void *p, Tensor *X, Tensor *X_valid_len, Tensor *dec_X,
                                   Tensor *dec_valid_len, bool training) {
  BahdanauNet *n = p;
  RNNState st;
  Tensor *enc_out = Seq2SeqEncoder_forward_fast(&n->encoder, X, &st, training); /* (T, B, H) */
  Seq2SeqAttentionDecoder_init_state_fast(&n->decoder, enc_out, &st, X_valid_len);
  return NEED(Seq2SeqAttentionDecoder_forward_fast(&n->decoder, dec_X, dec_valid_len, training),
              "the decoder (lab02's masked_softmax or attention)");
}

static Tensor *fast_forward(void *p, Tensor *X, Tensor *X_valid_len, Tensor *dec_X,
                            bool training) {
  return fast_forward_packed(p, X, X_valid_len, dec_X, NULL, training);
}

static void fast_begin_decode(void *p, Tensor *X, Tensor *X_valid_len) {
  BahdanauNet *n = p;
  RNNState st;
  Tensor *enc_out = Seq2SeqEncoder_forward_fast(&n->encoder, X, &st, false);
  Seq2SeqAttentionDecoder_init_state_fast(&n->decoder, enc_out, &st, X_valid_len);
}

static Tensor *fast_decode_step(void *p, int token, int pos) {
  (void)pos;
  BahdanauNet *n = p;
  Tensor *x = tensor_full(2, (const int[]){1, 1}, (float)token); /* (1, 1) */
  Tensor *y = NEED(Seq2SeqAttentionDecoder_forward_fast(&n->decoder, x, NULL, false),
                   "the decoder");
  return t_view(y, 1, y->shape[2]); /* (1, vocab) */
}

/* A part's cost in positions x passes (forward 1, backward 2): the encoder runs every source
 * column (its state after the padding starts the decoder), the packing decoder only its rows'
 * target lengths. */
static double fast_part_cost(const Seq2SeqPartShape *p) {
  return 3.0 * ((double)p->rows * (double)p->src_cols + p->tgt_tokens);
}

/* The readable model's twin, on the fast path too. */
static void fast_twin_new(const Seq2SeqModel *m, Seq2SeqModel *twin) {
  const Seq2SeqModel readable = BahdanauNet_model(m->net);
  readable.exec.twin_new(&readable, twin);
  *twin = BahdanauNet_fast_model(twin->net);
}

Seq2SeqModel BahdanauNet_fast_model(BahdanauNet *n) {
  Seq2SeqModel m = BahdanauNet_model(n); /* name, parameters, attention weights, twin_free */
  m.forward = fast_forward;
  m.begin_decode = fast_begin_decode;
  m.decode_step = fast_decode_step;
  m.exec.forward_packed = fast_forward_packed;
  m.exec.part_cost = fast_part_cost;
  m.exec.twin_new = fast_twin_new;
  return m;
}

/* ================================================================ the check */

/* Training pairs in the check's batch: enough lengths for packing to drop rows at several steps,
 * few enough that the readable path's small ops cost next to nothing beside training. */
enum { CHECK_ROWS = 16 };
/* Both paths compute the same sums in float32, in another order (fused kernels, packed rows,
 * projected tables) and with exp/tanh within 2e-7 of libm's: on both presets the losses agree
 * and the gradients to 1e-7 of the largest. 1e-4 leaves a wide margin for that rounding, while
 * a wrong step (the update gate's sign, a row dropped a step early) moves the gradients by 0.1
 * of the largest or more (and the loss by 1e-3). */
static const double CHECK_TOL = 1e-4;

/* CHECK_ROWS training pairs spread over d's training split, sorted by target length as the
 * trainer sorts a batch, on the model's device (arena tensors). */
static NmtBatch check_batch(const NmtData *d, Device dev) {
  const int R = d->n_train < CHECK_ROWS ? d->n_train : CHECK_ROWS, T = d->num_steps;
  int row[CHECK_ROWS];
  for (int r = 0; r < R; r++) { /* insertion sort by target length: stable, R small */
    int i = (int)((long)r * d->n_train / R), k = r;
    for (; k > 0 && d->tgt_valid[row[k - 1]] > d->tgt_valid[i]; k--) row[k] = row[k - 1];
    row[k] = i;
  }
  float *x = arena_alloc(sizeof(float) * (size_t)(2 * R * T + 2 * R)); /* X, Y, then lengths */
  float *y = x + R * T, *xvl = y + R * T, *yvl = xvl + R;
  for (int r = 0; r < R; r++) {
    for (int t = 0; t < T; t++) {
      x[r * T + t] = (float)d->src[(long)row[r] * T + t];
      y[r * T + t] = (float)d->tgt[(long)row[r] * T + t];
    }
    xvl[r] = (float)d->src_valid[row[r]];
    yvl[r] = (float)d->tgt_valid[row[r]];
  }
  NmtBatch b = {.size = R};
  b.X = tensor_new_on(dev, 2, (const int[]){R, T});         /* (batch, num_steps) */
  b.Y = tensor_new_on(dev, 2, (const int[]){R, T});         /* (batch, num_steps) */
  b.X_valid_len = tensor_new_on(dev, 1, (const int[]){R});  /* (batch) */
  b.Y_valid_len = tensor_new_on(dev, 1, (const int[]){R});  /* (batch) */
  tensor_copy_from_host(b.X, x);
  tensor_copy_from_host(b.Y, y);
  tensor_copy_from_host(b.X_valid_len, xvl);
  tensor_copy_from_host(b.Y_valid_len, yvl);
  return b;
}

/* The summed masked loss of the check's batch through one path (eval mode) into *loss, its
 * gradients into g (host, ps.total floats). false when the path met a stub. */
static bool check_pass(BahdanauNet *n, const NmtData *d, bool fast, double *loss, float *g) {
  paramset_zero_grad(&n->ps);
  NmtBatch b = check_batch(d, n->ps.device);
  Tensor *dec_X = seq2seq_dec_input(b.Y, vocab_idx(d->tgt_vocab, "<bos>")); /* (batch, T) */
  RNNState st;
  Tensor *Y_hat = NULL; /* (batch, T, vocab) */
  if (fast) {
    Tensor *enc_out = Seq2SeqEncoder_forward_fast(&n->encoder, b.X, &st, false);
    Seq2SeqAttentionDecoder_init_state_fast(&n->decoder, enc_out, &st, b.X_valid_len);
    Y_hat = Seq2SeqAttentionDecoder_forward_fast(&n->decoder, dec_X, b.Y_valid_len, false);
  } else {
    Tensor *enc_out = Seq2SeqEncoder_forward(&n->encoder, b.X, &st, false);
    if (enc_out) Seq2SeqAttentionDecoder_init_state(&n->decoder, enc_out, &st, b.X_valid_len);
    if (enc_out) Y_hat = Seq2SeqAttentionDecoder_forward(&n->decoder, dec_X, false);
  }
  float l = NAN;
  if (Y_hat) {
    Tensor *ls = t_sum_all(MaskedSoftmaxCELoss(Y_hat, b.Y, b.Y_valid_len)); /* (1) */
    tensor_to_host(ls, &l);
    ag_backward(ls);
    KERNEL(n->ps.device, to_host, g, n->ps.grad, sizeof(float) * (size_t)n->ps.total);
  }
  ag_step_reset();
  paramset_zero_grad(&n->ps);
  *loss = l;
  return Y_hat != NULL;
}

BahdanauFastCheck BahdanauNet_fast_check(BahdanauNet *n, const NmtData *d) {
  BahdanauFastCheck c = {.rows = d->n_train < CHECK_ROWS ? d->n_train : CHECK_ROWS};
  if (c.rows == 0) return c; /* nothing to compare (and nothing to train) */
  paramset_pack(&n->ps);
#ifdef _OPENMP
  /* One thread: the check's ops are small, and each parallel region would wait for a second
   * core that other work may hold (a second per check on a busy machine, measured). */
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
#endif
  const size_t N = (size_t)n->ps.total;
  float *gr = xmalloc(sizeof(float) * N), *gf = xmalloc(sizeof(float) * N);
  double lr = NAN, lf = NAN;
  c.stub = !check_pass(n, d, false, &lr, gr);
  if (!c.stub) {
    const bool fast_ran = check_pass(n, d, true, &lf, gf); /* false: lab02's stub, after all */
    double gmax = 0, dmax = 0;
    for (size_t i = 0; fast_ran && i < N; i++) {
      gmax = fmax(gmax, fabs(gr[i]));
      const double e = fabs((double)gf[i] - gr[i]);
      if (e > dmax || isnan(e)) dmax = e;
    }
    c.loss_diff = fabs(lf - lr) / fmax(fabs(lr), 1e-30);
    c.grad_diff = fast_ran ? dmax / fmax(gmax, 1e-30) : NAN;
    c.agrees = fast_ran && c.loss_diff <= CHECK_TOL && c.grad_diff <= CHECK_TOL; /* not on NaN */
  }
  free(gr);
  free(gf);
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  return c;
}

Seq2SeqModel BahdanauNet_checked_model(BahdanauNet *n, const NmtData *d,
                                       BahdanauFastCheck *check) {
  const BahdanauFastCheck c = BahdanauNet_fast_check(n, d);
  if (check) *check = c;
  const bool gru = n->encoder.rnn.kind == RNN_GRU;
  char mine[96]; /* the exercises this model runs */
  snprintf(mine, sizeof mine, "%s, %s and masked_softmax", gru ? "gru_cell" : "lstm_cell",
           n->decoder.attn_kind == ATTN_ADDITIVE ? "additive_attention_cached"
                                                 : "DotProductAttention_forward");
  if (c.rows == 0) {
    printf("fast path not checked: no training pairs to check it on\n");
  } else if (c.stub) {
    printf("fast path not checked: an exercise among your %s is a stub\n", mine);
  } else if (!c.agrees) {
    printf("fast path not used: it differs from your %s on %d training pairs (loss by %.2g, "
           "gradients by %.2g of the largest; tolerance %g): training with your code, slower\n",
           mine, c.rows, c.loss_diff, c.grad_diff, CHECK_TOL);
  } else {
    printf("fast path (fused %s cells, packed decoder) agrees with your %s on %d training pairs "
           "(loss to %.1g, gradients to %.1g of the largest): training with it\n",
           gru ? "GRU" : "LSTM", mine, c.rows, c.loss_diff, c.grad_diff);
    return BahdanauNet_fast_model(n);
  }
  return BahdanauNet_model(n);
}
