"""What the golden scripts share: the book's attention layers, and the Python side of
tests/golden_io.h.

The layers are d2l's PyTorch code (0.17 signatures), written once here for every script:
masked_softmax, AdditiveAttention, DotProductAttention, transpose_qkv / transpose_output and
MultiHeadAttention.

A golden text file holds '#' comment lines and records "name count v0 v1 ...", written with
%.9g so that every float32 reads back exactly. The scripts' inputs and weights are
gen(shape, a, b, scale)[i] = scale * sin(a i + b) in double, rounded to float32: the numbers
golden_gen() / golden_fill() make on the C side.
"""
import math

import torch
from torch import nn


# ---------------------------------------------------------------- the book's attention layers
def masked_softmax(X, valid_lens):
    """Softmax over the last axis; keys at positions >= valid length get -1e6 before it.
    (torch.where rather than the book's in-place assignment, so that X may be a leaf that
    requires grad; the values and gradients are the same.)"""
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        lens = valid_lens.reshape(-1)
    flat = X.reshape(-1, shape[-1])
    keep = torch.arange(shape[-1], dtype=torch.float32)[None, :] < lens[:, None]
    flat = torch.where(keep, flat, torch.full_like(flat, -1e6))
    return nn.functional.softmax(flat.reshape(shape), dim=-1)


class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        q, k = self.W_q(queries), self.W_k(keys)
        # (batch, queries, 1, h) + (batch, 1, keys, h) -> (batch, queries, keys, h)
        features = torch.tanh(q.unsqueeze(2) + k.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)  # (batch, queries, keys)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    def __init__(self, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


def transpose_qkv(X, num_heads):
    """(batch, n, num_hiddens) -> (batch * num_heads, n, num_hiddens / num_heads)"""
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    X = X.permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X, num_heads):
    """The inverse of transpose_qkv."""
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


class MultiHeadAttention(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout,
                 bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens=None):
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)
        return self.W_o(transpose_output(output, self.num_heads))


# ---------------------------------------------------------------- golden files


def gen(shape, a, b, scale):
    n = 1
    for s in shape:
        n *= s
    v = [scale * math.sin(a * i + b) for i in range(n)]
    return torch.tensor(v, dtype=torch.float32).reshape(shape)


def record(name, t):
    """One record line (no newline) for a tensor or a list of numbers."""
    v = t.detach().reshape(-1).tolist() if torch.is_tensor(t) else list(t)
    return "%s %d %s" % (name, len(v), " ".join("%.9g" % x for x in v))
