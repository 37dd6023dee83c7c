#!/usr/bin/python3
"""Golden reference numbers for lab04 (multi-head attention) and lab05 (positional encoding),
from the book's PyTorch code (d2l "Multi-Head Attention" and "Self-Attention and Positional
Encoding"), re-typed here so that no d2l package is needed.

Inputs and weights are not random: entry i of each tensor is  scale * sin(a * i + b)  computed
in double and rounded to float32, so tests/unit/test_lab04.c regenerates them bit for bit
(see gen()). A C Linear keeps W as (in, out); torch keeps (out, in), so torch gets W.T.

Run with Debian's PyTorch:  /usr/bin/python3 tests/golden/lab0405_reference.py
It writes tests/golden/lab04_reference.txt and tests/golden/lab05_reference.txt: one record per
line, "name count v0 v1 ...", values with 9 significant digits; '#' lines are comments.
"""
import os

import torch
from torch import nn

from golden_common import MultiHeadAttention, gen, record

HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------- the book's layers
class PositionalEncoding(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((1, max_len, num_hiddens))
        X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        self.P[:, :, 0::2] = torch.sin(X)
        self.P[:, :, 1::2] = torch.cos(X)

    def forward(self, X):
        X = X + self.P[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)


# ---------------------------------------------------------------- writer
class Out:
    def __init__(self, path, header):
        self.path = path
        self.lines = ['# ' + l for l in header.strip().splitlines()]

    def put(self, name, t):
        self.lines.append(record(name, t))

    def close(self):
        with open(self.path, 'w') as fh:
            fh.write('\n'.join(self.lines) + '\n')
        print('wrote', self.path)


# ---------------------------------------------------------------- lab04
# Case "mha": batch 2, 4 queries, 6 key-value pairs, query/key/value sizes 5/3/7, 8 hiddens,
# 2 heads, with bias; valid lengths [3, 2] (1-D) and a (2, 4) table (2-D); no dropout (eval).
# The loss for the gradients is sum(out * R).
B, NQ, NK, QS, KS, VS, H, HEADS = 2, 4, 6, 5, 3, 7, 8, 2
o4 = Out(os.path.join(HERE, 'lab04_reference.txt'), """
lab04 golden numbers, written by tests/golden/lab0405_reference.py (torch %s); read by
tests/unit/test_lab04.c. Tensors: gen(shape, a, b, scale)[i] = scale * sin(a*i + b) in float32.
queries gen((2,4,5), 0.37, 0.1, 1); keys gen((2,6,3), 0.53, 0.2, 1); values gen((2,6,7), 0.29, 0.3, 1)
W_q gen((5,8), 0.71, 0.4, 0.5); W_k gen((3,8), 0.43, 0.5, 0.5); W_v gen((7,8), 0.61, 0.6, 0.5)
W_o gen((8,8), 0.47, 0.7, 0.5); b_q/b_k/b_v/b_o gen((8), 0.9, 1.1/1.2/1.3/1.4, 0.1)
R gen((2,4,8), 0.83, 0.8, 1); valid 1-D [3, 2]; valid 2-D [[1,2,3,6],[6,5,4,2]]
""" % torch.__version__)
queries = gen((B, NQ, QS), 0.37, 0.1, 1.0)
keys = gen((B, NK, KS), 0.53, 0.2, 1.0)
values = gen((B, NK, VS), 0.29, 0.3, 1.0)
Wc = {'W_q': gen((QS, H), 0.71, 0.4, 0.5), 'W_k': gen((KS, H), 0.43, 0.5, 0.5),
      'W_v': gen((VS, H), 0.61, 0.6, 0.5), 'W_o': gen((H, H), 0.47, 0.7, 0.5)}
bc = {'W_q': gen((H,), 0.9, 1.1, 0.1), 'W_k': gen((H,), 0.9, 1.2, 0.1),
      'W_v': gen((H,), 0.9, 1.3, 0.1), 'W_o': gen((H,), 0.9, 1.4, 0.1)}
R = gen((B, NQ, H), 0.83, 0.8, 1.0)

for tag, vl in (('vl1', torch.tensor([3, 2])),
                ('vl2', torch.tensor([[1, 2, 3, 6], [6, 5, 4, 2]])),
                ('none', None)):
    mha = MultiHeadAttention(KS, QS, VS, H, HEADS, 0.0, bias=True)
    with torch.no_grad():
        for name in Wc:
            getattr(mha, name).weight.copy_(Wc[name].T)
            getattr(mha, name).bias.copy_(bc[name])
    mha.eval()
    q = queries.clone().requires_grad_()
    k = keys.clone().requires_grad_()
    v = values.clone().requires_grad_()
    out = mha(q, k, v, vl)
    (out * R).sum().backward()
    o4.put(tag + '.out', out)
    o4.put(tag + '.weights', mha.attention.attention_weights)
    o4.put(tag + '.dq', q.grad)
    o4.put(tag + '.dk', k.grad)
    o4.put(tag + '.dv', v.grad)
    for name in Wc:
        o4.put(tag + '.d' + name, getattr(mha, name).weight.grad.T)
        o4.put(tag + '.db' + name[1:], getattr(mha, name).bias.grad)

# The book's shape check: 100 hiddens, 5 heads, batch 2, 4 queries, 6 pairs, valid [3, 2].
mha = MultiHeadAttention(100, 100, 100, 100, 5, 0.5)
mha.eval()
out = mha(torch.ones((2, 4, 100)), torch.ones((2, 6, 100)), torch.ones((2, 6, 100)),
          torch.tensor([3, 2]))
o4.put('book.shape', list(out.shape))
o4.close()

# ---------------------------------------------------------------- lab05
o5 = Out(os.path.join(HERE, 'lab05_reference.txt'), """
lab05 golden numbers, written by tests/golden/lab0405_reference.py (torch %s); read by
tests/unit/test_lab05.c. P is the book's PositionalEncoding(32, 0, 1000).P[0]:
P.rows0_60 = P[0:60, :] (60 x 32); P.cols6_9 = P[0:60, 6:10] (the book's figure);
P.row<i> = P[i, :]; P64 rows are from PositionalEncoding(64, 0, 1000).
rot.maxerr: max over i < 60, j < 16, delta in 1..20 of the rotation error, in float32.
""" % torch.__version__)
pe = PositionalEncoding(32, 0.0)
pe.eval()
P = pe.P[0]
o5.put('P.rows0_60', P[:60])
o5.put('P.cols6_9', P[:60, 6:10])
for i in (100, 500, 999):
    o5.put('P.row%d' % i, P[i])
P64 = PositionalEncoding(64, 0.0).P[0]
for i in (0, 1, 7, 123, 999):
    o5.put('P64.row%d' % i, P64[i])
# forward on zeros is the table itself
Y = pe(torch.zeros((1, 60, 32)))
o5.put('forward.zeros', Y[0, :3])
# the relative-position property
err = 0.0
for delta in range(1, 21):
    w = 1.0 / torch.pow(10000, torch.arange(0, 32, 2, dtype=torch.float32) / 32)
    c, s = torch.cos(delta * w), torch.sin(delta * w)
    a, b = P[:60, 0::2], P[:60, 1::2]
    ra, rb = c * a + s * b, -s * a + c * b
    err = max(err, float((ra - P[delta:delta + 60, 0::2]).abs().max()),
              float((rb - P[delta:delta + 60, 1::2]).abs().max()))
o5.put('rot.maxerr', [err])
o5.close()
