/* test_step_check.c — seq2seq_step_compare (common/step_check.c), the check before the kit's
 * batched step stands in for a student's train step (exercise 3.4): a correct step agrees (on
 * both losses of the book's editions); a step without zero_grad, without clipping, with an
 * unmasked loss or without the optimizer's step does not, each on the number it gets wrong; a
 * stub is told apart; and the check leaves the parameters, the gradients and g_rng as it found
 * them. The steps are written here, on a toy model of the test's own (no exercise inside). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/exercise.h"
#include "../../common/nn.h"
#include "../../common/seq2seq.h"
#include "../../common/step.h"
#include "../test.h"

/* 24 pairs of mixed lengths, thrice: a batch of 64 is cut in two by length (SPLIT_MIN_ROWS), so
 * the kit's step draws the second part's dropout seed from g_rng */
#define PAIRS24 \
    "go .\tva !\nhi .\tsalut .\nrun !\tcours !\nwho ?\tqui ?\nwow !\tça alors !\n" \
    "fire !\tau feu !\nhelp !\tà l'aide !\ni lost .\tj'ai perdu .\nhe's calm .\til est calme .\n" \
    "i'm home .\tje suis chez moi .\nwe won .\tnous avons gagné .\ncome in .\tentre .\n" \
    "go away !\tva-t'en !\nhold on .\ttiens bon .\ni see .\tje comprends .\nit's me .\tc'est moi .\n" \
    "stop !\tarrête !\nwait !\tattends !\ngo on .\tpoursuis .\ni ran .\tj'ai couru .\n" \
    "get up .\tlève-toi .\nhug me .\tserre-moi dans tes bras !\nsee you .\tà plus .\n" \
    "i'm ok .\tje vais bien .\n"
static const char k_pairs[] = PAIRS24 PAIRS24 PAIRS24;

typedef struct Toy {
  Tensor *E, *W, *c, *S; /* (tgt, 4), (4, tgt), (tgt), (src, tgt) */
} Toy;

/* logits[b, t] = E[dec_X[b, t]] W + c + S[X[b, X_valid_len[b] - 1]]; dropout 0.5 in training */
static Tensor *toy_forward(void *net, Tensor *X, Tensor *X_valid_len, Tensor *dec_X,
                           bool training) {
  const Toy *n = net;
  const int B = X->shape[0], T = X->shape[1], V = n->W->shape[1];
  float *last = malloc(sizeof(float) * (size_t)B);
  for (int b = 0; b < B; b++) last[b] = X->data[b * T + (int)X_valid_len->data[b] - 1];
  Tensor *src = t_embedding(n->S, tensor_from(1, (const int[]){B}, last)); /* (B, V) */
  free(last);
  Tensor *logits = t_linear(t_embedding(n->E, dec_X), n->W, n->c); /* (B, T, V) */
  return t_dropout(t_add(logits, t_view(src, B, 1, V)), 0.5f, training);
}

/* The step, right or with one thing wrong (PLANT_*), as a student might write it. */
enum { RIGHT, NO_ZERO_GRAD, NO_CLIP, UNMASKED, NO_STEP, STUB };
static int g_plant;

static double toy_step(Seq2SeqModel *m, const NmtBatch *b, const Seq2SeqStep *s) {
  if (g_plant == STUB) {
    EXERCISE_TODO("3.4", "seq2seq_train_step (test_step_check.c)");
    return NAN;
  }
  if (g_plant != NO_ZERO_GRAD) paramset_zero_grad(m->ps);
  Tensor *dec_X = seq2seq_dec_input(b->Y, s->bos); /* (batch, num_steps) */
  Tensor *Y_hat = m->forward(m->net, b->X, b->X_valid_len, dec_X, s->training);
  const int B = b->Y->shape[0], T = b->Y->shape[1];
  Tensor *vl = g_plant == UNMASKED ? tensor_full(1, (const int[]){B}, (float)T) : b->Y_valid_len;
  Tensor *l = t_sum_all(MaskedSoftmaxCELoss(Y_hat, b->Y, vl)); /* (1) */
  float loss;
  tensor_to_host(l, &loss);
  if (s->token_mean) l = t_scale(l, (float)T / (float)b->num_tokens);
  ag_backward(l);
  if (s->clip > 0 && g_plant != NO_CLIP) clip_grad_norm(m->ps, s->clip);
  if (g_plant != NO_STEP) Adam_step(s->opt);
  return loss;
}

typedef struct Fixture {
  NmtData *d;
  ParamSet ps;
  Toy toy;
  Seq2SeqModel m;
  Adam opt;
} Fixture;

static bool fixture(Fixture *f) {
  memset(f, 0, sizeof *f);
  NmtConfig cfg;
  if (nmt_preset("d2l-0.17", &cfg) != 0) return false;
  cfg.batch_size = 64;
  cfg.num_steps = 6;
  char err[256];
  f->d = nmt_build(k_pairs, sizeof k_pairs - 1, &cfg, err, sizeof err);
  if (!f->d) return false;
  const int SV = f->d->src_vocab->size, TV = f->d->tgt_vocab->size;
  Toy *n = &f->toy;
  n->E = param_new(&f->ps, "E", 2, (const int[]){TV, 4});
  n->W = param_new(&f->ps, "W", 2, (const int[]){4, TV});
  n->c = param_new(&f->ps, "c", 1, (const int[]){TV});
  n->S = param_new(&f->ps, "S", 2, (const int[]){SV, TV});
  for (int i = 0; i < f->ps.n; i++) /* made-up values of order 1 */
    for (long k = 0; k < f->ps.items[i]->size; k++)
      f->ps.items[i]->data[k] = (float)sin(0.7 * (double)k + 1.3 * i);
  f->m = (Seq2SeqModel){.name = "toy", .net = n, .ps = &f->ps, .forward = toy_forward};
  Adam_init(&f->opt, &f->ps, 0.01f);
  return true;
}

static void fixture_free(Fixture *f) {
  Adam_free(&f->opt);
  paramset_free(&f->ps);
  nmt_data_free(f->d);
}

static Seq2SeqStepCheck compare(Fixture *f, int plant, bool token_mean) {
  g_plant = plant;
  const Seq2SeqStep s = {.opt = &f->opt, .bos = vocab_idx(f->d->tgt_vocab, "<bos>"),
                         .clip = 0.1f, .token_mean = token_mean, .training = true};
  Seq2SeqExec *e =
      seq2seq_exec_new(&f->m, f->d->num_steps, s.bos, token_mean, SEQ2SEQ_RUN_PARTS);
  const Seq2SeqStepCheck c = seq2seq_step_compare(&f->m, f->d, e, toy_step, &s);
  seq2seq_exec_free(e);
  return c;
}

TEST(step_check_right_step_agrees_and_leaves_the_run_alone) {
  Fixture f;
  CHECK(fixture(&f));
  if (!f.d) return;
  paramset_pack(&f.ps);
  const long n = f.ps.total;
  float *before = malloc(sizeof(float) * (size_t)n);
  memcpy(before, f.ps.data, sizeof(float) * (size_t)n);
  for (long i = 0; i < n; i++) f.ps.grad[i] = 1; /* what a previous step left */
  const Rng rng = g_rng;
  for (int token_mean = 0; token_mean < 2; token_mean++) {
    const Seq2SeqStepCheck c = compare(&f, RIGHT, token_mean);
    CHECK(c.agrees && !c.stub && c.rows == 64);
    /* float rounding of the same sums in another order (trimmed columns), far inside 1e-4 */
    CHECK(c.loss_diff < 1e-6 && c.grad_diff < 1e-5 && c.param_diff < 1e-5);
  }
  CHECK(memcmp(before, f.ps.data, sizeof(float) * (size_t)n) == 0);
  long nonzero = 0;
  for (long i = 0; i < n; i++) nonzero += f.ps.grad[i] != 0;
  CHECK_INT(nonzero, 0);
  CHECK(memcmp(&rng, &g_rng, sizeof rng) == 0);
  CHECK(f.opt.t == 0); /* the run's optimizer did not step */
  free(before);
  fixture_free(&f);
}

TEST(step_check_wrong_steps_disagree) {
  Fixture f;
  CHECK(fixture(&f));
  if (!f.d) return;
  /* each plant on the number it gets wrong, by far more than the tolerances (1e-4, 1e-3) */
  Seq2SeqStepCheck c = compare(&f, NO_ZERO_GRAD, false);
  CHECK(!c.agrees && c.grad_diff > 1e-2 && c.loss_diff < 1e-6);
  c = compare(&f, NO_CLIP, false);
  CHECK(!c.agrees && c.grad_diff > 1e-2);
  c = compare(&f, UNMASKED, false);
  CHECK(!c.agrees && c.loss_diff > 1e-2);
  c = compare(&f, NO_STEP, false);
  CHECK(!c.agrees && c.param_diff > 0.5 && c.grad_diff < 1e-5);
  c = compare(&f, STUB, false);
  CHECK(!c.agrees && c.stub);
  fixture_free(&f);
}
