/* Exercise 6.5 — the Transformer decoder block and its key/value cache (6 points)
 *
 * What: the book's TransformerDecoderBlock.forward: three sublayers, each inside an AddNorm:
 *     X2 = attention1(X, key_values, key_values, dec_valid_lens)   masked self-attention
 *     Y  = addnorm1(X, X2)
 *     Y2 = attention2(Y, enc_outputs, enc_outputs, enc_valid_lens) encoder–decoder attention
 *     Z  = addnorm2(Y, Y2)
 *     return addnorm3(Z, ffn(Z))
 *   The keys and values of self-attention (the book's state[2][i]):
 *     - key_values NULL: no cache; the keys and values are X itself (a whole target sequence,
 *       training or an evaluation pass), offset 0;
 *     - otherwise *key_values holds the block's inputs of the earlier calls, (batch, offset,
 *       num_hiddens), or is NULL before the first call (offset 0). The keys and values are
 *       those followed by X (concatenated along the steps), and *key_values becomes that
 *       concatenation, so the next call sees this one's tokens too.
 *   dec_valid_lens, the causal mask (exercise 6.3):
 *     - mode DECODER_FIXED: causal_valid_lens(batch, steps, offset), training or not;
 *     - mode DECODER_D2L_COMPAT (the book's code, lab06 --d2l-compat): causal_valid_lens(batch,
 *       steps, 0) when training, NULL (no mask) otherwise.
 * Shapes: X (batch, steps, num_hiddens) at target positions offset..offset+steps-1;
 *   enc_outputs (batch, src_steps, num_hiddens), enc_valid_lens (batch); a cache must have X's
 *   batch and num_hiddens (else a clear error with tensor_error naming both shapes). Returns
 *   (batch, steps, num_hiddens).
 * Hints: t_cat2(a, b, 1) concatenates along dim 1. Pass `training` to every sublayer. If X or a
 *   sublayer's result is NULL (an unfinished exercise), return NULL.
 * Tests: tests/grade/lab06/test_blocks.c (lab06_decoder_block_cache) and
 *   tests/grade/lab06/test_transformer.c (lab06_decoder_block_causal); they run your 6.1-6.3
 *   and lab04 multi-head attention too. Run: make grade LAB=06.
 */
#include "lab06/lab06.h"

#include "../../common/exercise.h"

Tensor *TransformerDecoderBlock_forward(TransformerDecoderBlock *b, Tensor *X,
                                        Tensor *enc_outputs, Tensor *enc_valid_lens,
                                        Tensor **key_values, bool training, DecoderMode mode) {
  (void)b, (void)X, (void)enc_outputs, (void)enc_valid_lens, (void)key_values, (void)training,
      (void)mode;
  EXERCISE_TODO("6.5", "TransformerDecoderBlock_forward");
  return NULL;
}
