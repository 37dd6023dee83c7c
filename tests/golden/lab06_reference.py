#!/usr/bin/python3
"""Golden reference numbers for lab06 (the Transformer), from the book's PyTorch code (d2l 0.17
"Transformer": PositionWiseFFN, AddNorm, EncoderBlock, TransformerEncoder, DecoderBlock,
TransformerDecoder), re-typed here so that no d2l package is needed. norm_shape is the last
dim (as d2l 1.0 and lab06 use it).

Inputs and weights are not random: entry i of each tensor is  scale * sin(a * i + b)  computed
in double and rounded to float32, so tests/unit/test_lab06.c regenerates them bit for bit
(see gen()). Parameters are filled in lab06's ParamSet order (the order Transformer_init
registers them); parameter k uses a = 0.37 + 0.013 k, b = 0.1 k, scale 0.6. A C Linear keeps W as
(in, out); torch keeps (out, in), so torch gets W.T.

Records written (one per line, "name count v0 v1 ...", 9 significant digits):
  logits_masked       the book's training-mode pass (dropout 0): causal mask, positions 0..T-1
  logits_unmasked     the book's evaluation-mode pass over the whole target: no causal mask
  logits_book_steps   the book's token-by-token decoding (as predict_seq2seq feeds it): each
                      step one token, cache of block inputs, positional encoding row 0
Run with Debian's PyTorch:  /usr/bin/python3 tests/golden/lab06_reference.py
"""
import math
import os

import torch
from torch import nn

from golden_common import MultiHeadAttention, gen, record

HERE = os.path.dirname(os.path.abspath(__file__))

SRC_V, TGT_V, D, FFN, HEADS, BLKS = 11, 13, 8, 12, 2, 2
B, SRC_T, TGT_T = 2, 5, 4
VALID = [5, 3]
SRC_IDS = [[(3 * b + 5 * t + 1) % SRC_V for t in range(SRC_T)] for b in range(B)]
TGT_IDS = [[(7 * b + 4 * t + 2) % TGT_V for t in range(TGT_T)] for b in range(B)]


# ---------------------------------------------------------------- the book's code
class PositionWiseFFN(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense1 = nn.Linear(D, FFN)
        self.dense2 = nn.Linear(FFN, D)

    def forward(self, X):
        return self.dense2(torch.relu(self.dense1(X)))


class AddNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)

    def forward(self, X, Y):
        return self.ln(Y + X)  # dropout 0


def pos_table(max_len=1000):
    P = torch.zeros((1, max_len, D))
    X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
        10000, torch.arange(0, D, 2, dtype=torch.float32) / D)
    P[:, :, 0::2] = torch.sin(X)
    P[:, :, 1::2] = torch.cos(X)
    return P


P = pos_table()


class EncoderBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = MultiHeadAttention(D, D, D, D, HEADS, 0.0)
        self.addnorm1 = AddNorm()
        self.ffn = PositionWiseFFN()
        self.addnorm2 = AddNorm()

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


class DecoderBlock(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.i = i
        self.attention1 = MultiHeadAttention(D, D, D, D, HEADS, 0.0)
        self.addnorm1 = AddNorm()
        self.attention2 = MultiHeadAttention(D, D, D, D, HEADS, 0.0)
        self.addnorm2 = AddNorm()
        self.ffn = PositionWiseFFN()
        self.addnorm3 = AddNorm()

    def forward(self, X, state):
        enc_outputs, enc_valid_lens = state[0], state[1]
        if state[2][self.i] is None:
            key_values = X
        else:
            key_values = torch.cat((state[2][self.i], X), axis=1)
        state[2][self.i] = key_values
        if self.training:
            batch_size, num_steps, _ = X.shape
            dec_valid_lens = torch.arange(1, num_steps + 1).repeat(batch_size, 1)
        else:
            dec_valid_lens = None
        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
        Y = self.addnorm1(X, X2)
        Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
        Z = self.addnorm2(Y, Y2)
        return self.addnorm3(Z, self.ffn(Z)), state


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc_embedding = nn.Embedding(SRC_V, D)
        self.enc_blks = nn.ModuleList([EncoderBlock() for _ in range(BLKS)])
        self.dec_embedding = nn.Embedding(TGT_V, D)
        self.dec_blks = nn.ModuleList([DecoderBlock(i) for i in range(BLKS)])
        self.dense = nn.Linear(D, TGT_V)

    def encode(self, X, valid_lens):
        X = self.enc_embedding(X) * math.sqrt(D) + P[:, :X.shape[1], :]
        for blk in self.enc_blks:
            X = blk(X, valid_lens)
        return X

    def decode(self, X, state):
        X = self.dec_embedding(X) * math.sqrt(D) + P[:, :X.shape[1], :]
        for blk in self.dec_blks:
            X, state = blk(X, state)
        return self.dense(X), state


def params_in_lab06_order(net):
    """(tensor, is_linear_weight) in the order Transformer_init registers lab06's parameters."""
    out = [(net.enc_embedding.weight, False)]

    def mha(m):
        return [(m.W_q.weight, True), (m.W_k.weight, True), (m.W_v.weight, True),
                (m.W_o.weight, True)]

    def ln(a):
        return [(a.ln.weight, False), (a.ln.bias, False)]

    def ffn(f):
        return [(f.dense1.weight, True), (f.dense1.bias, False), (f.dense2.weight, True),
                (f.dense2.bias, False)]

    for blk in net.enc_blks:
        out += mha(blk.attention) + ln(blk.addnorm1) + ffn(blk.ffn) + ln(blk.addnorm2)
    out.append((net.dec_embedding.weight, False))
    for blk in net.dec_blks:
        out += mha(blk.attention1) + ln(blk.addnorm1) + mha(blk.attention2) + ln(blk.addnorm2)
        out += ffn(blk.ffn) + ln(blk.addnorm3)
    out += [(net.dense.weight, True), (net.dense.bias, False)]
    return out


def main():
    net = Transformer()
    with torch.no_grad():
        for k, (p, is_w) in enumerate(params_in_lab06_order(net)):
            shape = list(p.shape)
            if is_w:  # lab06 stores (in, out)
                p.copy_(gen([shape[1], shape[0]], 0.37 + 0.013 * k, 0.1 * k, 0.6).T)
            else:
                p.copy_(gen(shape, 0.37 + 0.013 * k, 0.1 * k, 0.6))
    X = torch.tensor(SRC_IDS)
    Y = torch.tensor(TGT_IDS)
    vl = torch.tensor(VALID)
    recs = []
    with torch.no_grad():
        net.train()  # dropout is 0: train mode only switches the book's causal mask on
        enc = net.encode(X, vl)
        masked, _ = net.decode(Y, [enc, vl, [None] * BLKS])
        net.eval()
        unmasked, _ = net.decode(Y, [enc, vl, [None] * BLKS])
        state = [enc, vl, [None] * BLKS]
        steps = []
        for t in range(TGT_T):
            out, state = net.decode(Y[:, t:t + 1], state)
            steps.append(out)
        book_steps = torch.cat(steps, 1)
    recs.append(("logits_masked", masked))
    recs.append(("logits_unmasked", unmasked))
    recs.append(("logits_book_steps", book_steps))
    path = os.path.join(HERE, "lab06_reference.txt")
    with open(path, "w") as f:
        f.write("# written by tests/golden/lab06_reference.py (PyTorch %s); do not edit\n"
                % torch.__version__)
        f.write("# logits (batch %d, tgt steps %d, tgt vocab %d), row-major\n" % (B, TGT_T, TGT_V))
        for name, t in recs:
            f.write(record(name, t) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
