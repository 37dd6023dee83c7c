#!/usr/bin/python3
"""Golden reference for lab02 (attention scoring functions), computed with PyTorch.

Takes the book's masked_softmax, AdditiveAttention and DotProductAttention (d2l, "Attention
Scoring Functions", PyTorch edition; written once in golden_common.py) and runs them on fixed
inputs with fixed layer weights, in eval mode (no dropout). For every case it records the
inputs, the outputs, the attention weights and the gradients of  loss = sum(output * R)  for a
fixed R, and writes them as C arrays to tests/golden/lab02_reference.h (read by
tests/unit/test_lab02.c and the graded tests in tests/grade/lab02/).

Layout notes for the C side:
  * torch.nn.Linear keeps its weight as (out, in); common/nn.h's Linear keeps W as (in, out).
    The header stores the C layout (the transpose), and the gradients likewise.
  * The book masks with -1e6, so a row with valid length 0 would be uniform; attention-lab
    gives zeros there. The golden cases avoid length 0 (the C tests check it separately).

Run from the repository root:  /usr/bin/python3 tests/golden/lab02_reference.py
(Debian's python3-torch; the pyenv python3 first on PATH has no torch.)
"""
import os

import torch
from torch import nn

from golden_common import AdditiveAttention, DotProductAttention, masked_softmax

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'lab02_reference.h')


# ---------------------------------------------------------------- output
lines = []


def c_float(v):
    """A float32 value as a C literal that reads back exactly (9 significant digits)."""
    s = '%.9g' % v
    if '.' not in s and 'e' not in s:
        s += '.0'
    return s + 'f'


def emit(name, t, comment=None):
    t = t.detach().to(torch.float32).contiguous()
    vals = t.reshape(-1).tolist()
    shape = ', '.join(str(s) for s in t.shape)
    lines.append('/* %s (%s) */' % (comment or name, shape))
    lines.append('GOLDEN_F lab02_%s[%d] = {' % (name, len(vals)))
    for i in range(0, len(vals), 6):
        lines.append('    ' + ', '.join(c_float(v) for v in vals[i:i + 6]) + ',')
    lines.append('};')


def leaf(shape, gen, scale=1.0):
    return (torch.randn(shape, generator=gen) * scale).requires_grad_(True)


def main():
    gen = torch.Generator().manual_seed(2024)

    # ---- masked softmax: X (2, 2, 4), lengths [2, 3] and [[1, 3], [2, 4]]
    X = leaf((2, 2, 4), gen, 2.0)
    R = torch.randn((2, 2, 4), generator=gen)
    emit('ms_X', X, 'masked softmax input X')
    emit('ms_R', R, 'loss weights: loss = sum(masked_softmax(X, lens) * R)')
    for tag, lens in [('1d', torch.tensor([2.0, 3.0])),
                      ('2d', torch.tensor([[1.0, 3.0], [2.0, 4.0]]))]:
        X.grad = None
        Y = masked_softmax(X, lens)
        (Y * R).sum().backward()
        emit('ms_lens_' + tag, lens, 'valid lengths')
        emit('ms_Y_' + tag, Y, 'masked_softmax(X, lens_%s)' % tag)
        emit('ms_dX_' + tag, X.grad, 'd loss / d X with lens_%s' % tag)

    # ---- additive attention: batch 2, 3 queries of size 6, 5 keys of size 4, values of size 3
    B, Q, K, QS, KS, H, V = 2, 3, 5, 6, 4, 8, 3
    att = AdditiveAttention(KS, QS, H, dropout=0.1)
    att.eval()
    with torch.no_grad():
        att.W_q.weight.copy_(torch.randn((H, QS), generator=gen) * 0.5)
        att.W_k.weight.copy_(torch.randn((H, KS), generator=gen) * 0.5)
        att.w_v.weight.copy_(torch.randn((1, H), generator=gen))
    q, k, v = leaf((B, Q, QS), gen), leaf((B, K, KS), gen), leaf((B, K, V), gen)
    R = torch.randn((B, Q, V), generator=gen)
    emit('add_Wq', att.W_q.weight.t(), 'W_q.W in C layout (query_size, num_hiddens)')
    emit('add_Wk', att.W_k.weight.t(), 'W_k.W (key_size, num_hiddens)')
    emit('add_wv', att.w_v.weight.t(), 'w_v.W (num_hiddens, 1)')
    emit('add_q', q, 'queries')
    emit('add_k', k, 'keys')
    emit('add_v', v, 'values')
    emit('add_R', R, 'loss weights: loss = sum(output * R)')
    for tag, lens in [('1d', torch.tensor([2.0, 4.0])),
                      ('2d', torch.tensor([[1.0, 3.0, 5.0], [2.0, 5.0, 4.0]]))]:
        for p in (q, k, v, *att.parameters()):
            p.grad = None
        out = att(q, k, v, lens)
        (out * R).sum().backward()
        emit('add_lens_' + tag, lens, 'valid lengths')
        emit('add_out_' + tag, out, 'AdditiveAttention output')
        emit('add_w_' + tag, att.attention_weights, 'its attention weights')
        emit('add_dq_' + tag, q.grad, 'd loss / d queries')
        emit('add_dk_' + tag, k.grad, 'd loss / d keys')
        emit('add_dv_' + tag, v.grad, 'd loss / d values')
        emit('add_dWq_' + tag, att.W_q.weight.grad.t(), 'd loss / d W_q.W (C layout)')
        emit('add_dWk_' + tag, att.W_k.weight.grad.t(), 'd loss / d W_k.W (C layout)')
        emit('add_dwv_' + tag, att.w_v.weight.grad.t(), 'd loss / d w_v.W (C layout)')

    # ---- scaled dot-product attention: batch 2, 3 queries and 5 keys of size 4, values 3
    D = 4
    att = DotProductAttention(dropout=0.5)
    att.eval()
    q, k, v = leaf((B, Q, D), gen), leaf((B, K, D), gen), leaf((B, K, V), gen)
    R = torch.randn((B, Q, V), generator=gen)
    emit('dot_q', q, 'queries')
    emit('dot_k', k, 'keys')
    emit('dot_v', v, 'values')
    emit('dot_R', R, 'loss weights')
    for tag, lens in [('none', None), ('1d', torch.tensor([3.0, 5.0])),
                      ('2d', torch.tensor([[1.0, 2.0, 5.0], [4.0, 3.0, 2.0]]))]:
        for p in (q, k, v):
            p.grad = None
        out = att(q, k, v, lens)
        (out * R).sum().backward()
        if lens is not None:
            emit('dot_lens_' + tag, lens, 'valid lengths')
        emit('dot_out_' + tag, out, 'DotProductAttention output')
        emit('dot_w_' + tag, att.attention_weights, 'its attention weights')
        emit('dot_dq_' + tag, q.grad, 'd loss / d queries')
        emit('dot_dk_' + tag, k.grad, 'd loss / d keys')
        emit('dot_dv_' + tag, v.grad, 'd loss / d values')

    with open(OUT, 'w') as f:
        f.write('/* lab02_reference.h — generated by tests/golden/lab02_reference.py with PyTorch '
                '%s; do not edit.\n * The book\'s masked_softmax, AdditiveAttention and '
                'DotProductAttention on fixed inputs,\n * eval mode; gradients are of '
                'sum(output * R). Linear weights in common/nn.h layout (in, out). */\n'
                % torch.__version__.split('+')[0])
        f.write('#ifndef LAB02_REFERENCE_H\n#define LAB02_REFERENCE_H\n\n')
        f.write('#define GOLDEN_F static const float __attribute__((unused))\n\n')
        f.write('\n'.join(lines))
        f.write('\n\n#endif\n')
    print('wrote', os.path.relpath(OUT))


if __name__ == '__main__':
    main()
