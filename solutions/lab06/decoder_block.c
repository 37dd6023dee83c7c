/* Exercise 6.5 — TransformerDecoderBlock_forward with its key/value cache (reference solution;
 * the spec is in labs/lab06/decoder_block.c). */
#include "lab06/lab06.h"

Tensor *TransformerDecoderBlock_forward(TransformerDecoderBlock *b, Tensor *X,
                                        Tensor *enc_outputs, Tensor *enc_valid_lens,
                                        Tensor **key_values, bool training, DecoderMode mode) {
  if (!X) return NULL;
  char sx[64], sk[64];
  /* The keys and values of self-attention: every earlier target token's block input, then X's. */
  Tensor *kv = X; /* (batch, offset + steps, h) */
  int offset = 0;
  if (key_values && *key_values) {
    Tensor *cache = *key_values;
    if (cache->ndim != 3 || cache->shape[0] != X->shape[0] || cache->shape[2] != X->shape[2])
      tensor_error("TransformerDecoderBlock_forward",
                   "the key/value cache %s does not fit X %s (batch and num_hiddens must agree); "
                   "start a new state for a new batch",
                   shape_str(cache, sk, sizeof sk), shape_str(X, sx, sizeof sx));
    offset = cache->shape[1];
    kv = t_cat2(cache, X, 1);
  }
  if (key_values) *key_values = kv;
  const int B = X->shape[0], T = X->shape[1];
  /* The causal mask. Fixed: a function of positions only — query i (position offset + i) sees
   * keys 0..offset+i, for a whole sequence (offset 0) and for a cached step alike. The book:
   * the mask exists only in training mode. */
  Tensor *dec_valid_lens;
  if (mode == DECODER_D2L_COMPAT)
    dec_valid_lens = training ? causal_valid_lens(B, T, 0) : NULL;
  else {
    dec_valid_lens = causal_valid_lens(B, T, offset); /* (batch, steps) */
    if (!dec_valid_lens) return NULL;
  }
  /* X2 (batch, steps, h): X's queries over the cache and X */
  Tensor *X2 = MultiHeadAttention_forward(&b->attention1, X, kv, kv, dec_valid_lens, training);
  Tensor *Y = AddNorm_forward(&b->addnorm1, X, X2, training);        /* (batch, steps, h) */
  if (!Y) return NULL;
  /* Encoder–decoder attention: queries from the decoder, keys and values from the encoder,
   * padding of the source masked by its valid lengths. Y2 (batch, steps, h). */
  Tensor *Y2 = MultiHeadAttention_forward(&b->attention2, Y, enc_outputs, enc_outputs,
                                          enc_valid_lens, training);
  Tensor *Z = AddNorm_forward(&b->addnorm2, Y, Y2, training);        /* (batch, steps, h) */
  if (!Z) return NULL;
  return AddNorm_forward(&b->addnorm3, Z, PositionWiseFFN_forward(&b->ffn, Z), training);
}
