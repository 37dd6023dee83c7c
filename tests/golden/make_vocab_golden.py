#!/usr/bin/python3
"""Golden reference for common/nmt.c and vocab.c: the English-French pipeline of d2l,
re-implemented in plain Python (d2l itself is not installed) following the book's code line
by line.

  d2l 0.17 (classic): read_data_nmt, preprocess_nmt, tokenize_nmt(text, 600),
      Vocab(min_freq=2, reserved ['<pad>', '<bos>', '<eos>']), build_array_nmt(num_steps=10)
  d2l 1.0 (MTFraEng): _preprocess, _tokenize(max_examples=640) with '<eos>' appended and empty
      tokens dropped, pad_or_trim to num_steps=9, '<bos>' prefix on targets, Vocab(min_freq=2)
      with its sorted(set(...)) index order

Writes tests/golden/vocab_classic.txt and tests/golden/vocab_d2l10.txt.
Run from the repository root:  /usr/bin/python3 tests/golden/make_vocab_golden.py [fra-eng.zip]
"""
import collections
import io
import os
import sys
import zipfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def find_zip():
    if len(sys.argv) > 1:
        return sys.argv[1]
    for d in [os.environ.get('D2L_DATA_DIR'), 'data', '../shared/data']:
        if d and os.path.exists(os.path.join(d, 'fra-eng.zip')):
            return os.path.join(d, 'fra-eng.zip')
    sys.exit('fra-eng.zip not found: pass its path, or run `make data`')


def read_data_nmt(path):
    # d2l opens fra.txt in text mode: UTF-8 with universal newlines
    with zipfile.ZipFile(path) as z, z.open('fra-eng/fra.txt') as f:
        return io.TextIOWrapper(f, encoding='utf-8').read()


# ---------------------------------------------------------------- d2l 0.17
def preprocess_nmt(text):
    def no_space(char, prev_char):
        return char in set(',.!?') and prev_char != ' '
    text = text.replace('\u202f', ' ').replace('\xa0', ' ').lower()
    out = [' ' + char if i > 0 and no_space(char, text[i - 1]) else char
           for i, char in enumerate(text)]
    return ''.join(out)


def tokenize_nmt(text, num_examples=None):
    source, target = [], []
    for i, line in enumerate(text.split('\n')):
        if num_examples and i > num_examples:
            break
        parts = line.split('\t')
        if len(parts) == 2:
            source.append(parts[0].split(' '))
            target.append(parts[1].split(' '))
    return source, target


class Vocab017:
    def __init__(self, tokens, min_freq=0, reserved_tokens=None):
        reserved_tokens = reserved_tokens or []
        counter = collections.Counter(tok for line in tokens for tok in line)
        self.token_freqs = sorted(counter.items(), key=lambda x: x[1], reverse=True)
        self.idx_to_token = ['<unk>'] + reserved_tokens
        self.token_to_idx = {t: i for i, t in enumerate(self.idx_to_token)}
        for token, freq in self.token_freqs:
            if freq < min_freq:
                break
            if token not in self.token_to_idx:
                self.idx_to_token.append(token)
                self.token_to_idx[token] = len(self.idx_to_token) - 1

    def __getitem__(self, tokens):
        if not isinstance(tokens, (list, tuple)):
            return self.token_to_idx.get(tokens, 0)
        return [self[t] for t in tokens]


def truncate_pad(line, num_steps, padding_token):
    if len(line) > num_steps:
        return line[:num_steps]
    return line + [padding_token] * (num_steps - len(line))


def build_array_nmt(lines, vocab, num_steps):
    lines = [vocab[l] + [vocab['<eos>']] for l in lines]
    array = [truncate_pad(l, num_steps, vocab['<pad>']) for l in lines]
    valid_len = [sum(1 for v in row if v != vocab['<pad>']) for row in array]
    return array, valid_len


# ---------------------------------------------------------------- d2l 1.0
def preprocess_10(text):
    text = text.replace('\u202f', ' ').replace('\xa0', ' ')
    no_space = lambda char, prev_char: char in ',.!?' and prev_char != ' '
    out = [' ' + char if i > 0 and no_space(char, text[i - 1]) else char
           for i, char in enumerate(text.lower())]
    return ''.join(out)


def tokenize_10(text, max_examples=None):
    src, tgt = [], []
    for i, line in enumerate(text.split('\n')):
        if max_examples and i > max_examples:
            break
        parts = line.split('\t')
        if len(parts) == 2:
            src.append([t for t in f'{parts[0]} <eos>'.split(' ') if t])
            tgt.append([t for t in f'{parts[1]} <eos>'.split(' ') if t])
    return src, tgt


class Vocab10:
    def __init__(self, tokens=[], min_freq=0, reserved_tokens=[]):
        if tokens and isinstance(tokens[0], list):
            tokens = [token for line in tokens for token in line]
        counter = collections.Counter(tokens)
        self.token_freqs = sorted(counter.items(), key=lambda x: x[1], reverse=True)
        self.idx_to_token = list(sorted(set(['<unk>'] + reserved_tokens + [
            token for token, freq in self.token_freqs if freq >= min_freq])))
        self.token_to_idx = {t: i for i, t in enumerate(self.idx_to_token)}

    def __getitem__(self, tokens):
        if not isinstance(tokens, (list, tuple)):
            return self.token_to_idx.get(tokens, self.token_to_idx['<unk>'])
        return [self[t] for t in tokens]


def build_arrays_10(raw_text, num_steps=9, num_train=512, num_val=128):
    def _build_array(sentences, vocab, is_tgt=False):
        pad_or_trim = lambda seq, t: (seq[:t] if len(seq) > t else seq + ['<pad>'] * (t - len(seq)))
        sentences = [pad_or_trim(s, num_steps) for s in sentences]
        if is_tgt:
            sentences = [['<bos>'] + s for s in sentences]
        if vocab is None:
            vocab = Vocab10(sentences, min_freq=2)
        array = [vocab[s] for s in sentences]
        valid_len = [sum(1 for v in row if v != vocab['<pad>']) for row in array]
        return array, vocab, valid_len
    src, tgt = tokenize_10(preprocess_10(raw_text), num_train + num_val)
    src_array, src_vocab, src_valid_len = _build_array(src, None)
    tgt_array, tgt_vocab, _ = _build_array(tgt, None, True)
    return src_array, src_valid_len, tgt_array, src_vocab, tgt_vocab


# ---------------------------------------------------------------- output
def rows(name, array):
    return [f'{name} ' + ' '.join(map(str, r)) for r in array]


def main():
    raw = read_data_nmt(find_zip())
    text = preprocess_nmt(raw)
    enc = text.encode('utf-8')
    source, target = tokenize_nmt(text, 600)
    src_vocab = Vocab017(source, min_freq=2, reserved_tokens=['<pad>', '<bos>', '<eos>'])
    tgt_vocab = Vocab017(target, min_freq=2, reserved_tokens=['<pad>', '<bos>', '<eos>'])
    src_arr, src_vl = build_array_nmt(source, src_vocab, 10)
    tgt_arr, tgt_vl = build_array_nmt(target, tgt_vocab, 10)
    s1000, t1000 = tokenize_nmt(text, 1000)
    s_all, t_all = tokenize_nmt(text)
    sv_all = Vocab017(s_all, min_freq=2, reserved_tokens=['<pad>', '<bos>', '<eos>'])
    tv_all = Vocab017(t_all, min_freq=2, reserved_tokens=['<pad>', '<bos>', '<eos>'])
    out = ['# d2l 0.17 English-French pipeline (tests/golden/make_vocab_golden.py); one item a line',
           f'preprocessed_bytes {len(enc)}',
           f'preprocessed_crc32 {zlib.crc32(enc):08x}',
           f'pairs_1000 {len(s1000)} src_tokens_1000 {sum(map(len, s1000))} '
           f'tgt_tokens_1000 {sum(map(len, t1000))}',
           f'full_pairs {len(s_all)} full_src_size {len(sv_all.idx_to_token)} '
           f'full_tgt_size {len(tv_all.idx_to_token)} full_src_go {sv_all["go"]}',
           'full_src_head ' + ' '.join(sv_all.idx_to_token[:40]),
           'full_tgt_head ' + ' '.join(tv_all.idx_to_token[:40]),
           f'pairs {len(source)}',
           f'src_size {len(src_vocab.idx_to_token)}',
           f'tgt_size {len(tgt_vocab.idx_to_token)}']
    out += ['src_token ' + t for t in src_vocab.idx_to_token]
    out += ['tgt_token ' + t for t in tgt_vocab.idx_to_token]
    out += rows('src_row', src_arr) + ['src_valid ' + ' '.join(map(str, src_vl))]
    out += rows('tgt_row', tgt_arr) + ['tgt_valid ' + ' '.join(map(str, tgt_vl))]
    with open(os.path.join(HERE, 'vocab_classic.txt'), 'w', encoding='utf-8') as f:
        f.write('\n'.join(out) + '\n')
    print(f'vocab_classic.txt: {len(source)} pairs, src {len(src_vocab.idx_to_token)}, '
          f'tgt {len(tgt_vocab.idx_to_token)} tokens')

    sa, svl, ta, sv, tv = build_arrays_10(raw)
    out = ['# d2l 1.0 MTFraEng (num_steps 9, num_train 512, num_val 128); make_vocab_golden.py',
           f'pairs {len(sa)}',
           f'src_size {len(sv.idx_to_token)}',
           f'tgt_size {len(tv.idx_to_token)}']
    out += ['src_token ' + t for t in sv.idx_to_token]
    out += ['tgt_token ' + t for t in tv.idx_to_token]
    out += rows('src_row', sa) + ['src_valid ' + ' '.join(map(str, svl))]
    out += rows('tgt_row', ta)
    with open(os.path.join(HERE, 'vocab_d2l10.txt'), 'w', encoding='utf-8') as f:
        f.write('\n'.join(out) + '\n')
    print(f'vocab_d2l10.txt: {len(sa)} pairs, src {len(sv.idx_to_token)}, '
          f'tgt {len(tv.idx_to_token)} tokens')


if __name__ == '__main__':
    main()
