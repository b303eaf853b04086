#!/usr/bin/python3
"""Step 2: train a small BPE vocabulary in the Gemma 4 format, and encode text with it.

  tokenizer.py train --corpus DIR --out DIR [--vocab-size 4096] [--sample-mb 3]
  tokenizer.py encode --tokenizer DIR TEXT        (prints the ids, as `tandem tokenize --ids`)

The format follows docs/gemma4.md § Tokenizer: spaces are written U+2581,
BPE merges apply over UTF-8 characters lowest rank first, characters outside the vocabulary fall
back to <0xHH> byte tokens, runs of newlines that are a token are emitted whole, and the Gemma 4
special tokens sit at Gemma 4's ids (<pad> 0, <eos> 1, <bos> 2, <unk> 3, <mask> 4, <|tool> 46 ..
<|"|> 52, <|think|> 98, <|channel> 100, <channel|> 101, <|turn> 105, <turn|> 106, "\\n" 107); the
ids between them are <unusedN> placeholders. Merges are counted over whole lines (Gemma 4 has no
pre-tokenizer besides the newline split) with the rule that U+2581 may only lead a token or fill
it, and ties are broken by the pair's text, so training is deterministic.

Writes tokenizer.json, tokenizer_config.json (with the Gemma 4 chat template) and
special_tokens_map.json. Encoder: Tokenizer.load(dir).encode(text) mirrors tandem's Tokenizer
(leftmost-longest special-token matching, BOS added, newline runs, rank-ordered merges).
"""

import argparse
import collections
import heapq
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree

import corpus as corpus_lib  # noqa: E402

SPACE = "\u2581"
MAX_TOKEN_CHARS = 16
MAX_NEWLINE_RUN = 8
# (id, text) of the Gemma 4 special tokens (docs/gemma4.md § Tokenizer).
SPECIALS = [(0, "<pad>"), (1, "<eos>"), (2, "<bos>"), (3, "<unk>"), (4, "<mask>"),
            (46, "<|tool>"), (47, "<tool|>"), (48, "<|tool_call>"), (49, "<tool_call|>"),
            (50, "<|tool_response>"), (51, "<tool_response|>"), (52, '<|"|>'), (98, "<|think|>"),
            (100, "<|channel>"), (101, "<channel|>"), (105, "<|turn>"), (106, "<turn|>")]
FIRST_NEWLINE_ID = 107
# Markup llama.cpp and tandem make USER_DEFINED: always matched, rendered in output.
RENDERED = {"<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", "<|tool_response>",
            "<tool_response|>", '<|"|>'}
CHUNK_RE = re.compile(r"[^\n]+|\n+")
HERE = os.path.dirname(os.path.abspath(__file__))


def allowed_token(text):
    """U+2581 only as a prefix of one, or the whole token: '▁def', '▁▁▁▁' but not 'a▁b'."""
    if len(text) > MAX_TOKEN_CHARS:
        return False
    body = text.lstrip(SPACE)
    return SPACE not in body and (len(text) - len(body) <= 1 or not body)


def line_counts(docs):
    """Counter of the space-escaped non-newline chunks of docs."""
    counts = collections.Counter()
    for doc in docs:
        for chunk in CHUNK_RE.findall(doc):
            if chunk[0] != "\n":
                counts[chunk.replace(" ", SPACE)] += 1
    return counts


def train_merges(counts, alphabet, n_merges):
    """Greedy BPE: repeatedly merge the most frequent allowed adjacent pair (ties: smallest
    (left, right) text). counts: {word: frequency}. -> [(left, right)] in rank order."""
    words = [[c if c in alphabet else None for c in w] for w in counts]
    freqs = list(counts.values())
    pair_count = collections.defaultdict(int)
    where = collections.defaultdict(set)

    def pairs_of(sym):
        return [(a, b) for a, b in zip(sym, sym[1:]) if a is not None and b is not None]

    for i, sym in enumerate(words):
        for pair in pairs_of(sym):
            pair_count[pair] += freqs[i]
            where[pair].add(i)
    allowed = {}

    def ok(pair):
        if pair not in allowed:
            allowed[pair] = allowed_token(pair[0] + pair[1])
        return allowed[pair]

    heap = [(-n, a, b) for (a, b), n in pair_count.items() if ok((a, b))]
    heapq.heapify(heap)
    merges = []
    while len(merges) < n_merges and heap:
        neg, a, b = heapq.heappop(heap)
        if pair_count.get((a, b), 0) != -neg or -neg <= 0:
            continue  # stale entry
        merged = a + b
        merges.append((a, b))
        changed = set()
        for i in where.pop((a, b)):
            sym = words[i]
            if not any(sym[j] == a and sym[j + 1] == b for j in range(len(sym) - 1)):
                continue
            for pair in pairs_of(sym):
                pair_count[pair] -= freqs[i]
                changed.add(pair)
            out, j = [], 0
            while j < len(sym):
                if j + 1 < len(sym) and sym[j] == a and sym[j + 1] == b:
                    out.append(merged)
                    j += 2
                else:
                    out.append(sym[j])
                    j += 1
            words[i] = out
            for pair in pairs_of(out):
                pair_count[pair] += freqs[i]
                where[pair].add(i)
                changed.add(pair)
        pair_count.pop((a, b), None)
        for pair in changed:
            n = pair_count.get(pair, 0)
            if n > 0 and ok(pair):
                heapq.heappush(heap, (-n, pair[0], pair[1]))
    return merges


def build_vocab(docs, vocab_size, min_char_count=2):
    """-> (tokens [text by id], merges [(left, right)])."""
    n_fixed = FIRST_NEWLINE_ID + MAX_NEWLINE_RUN + 256
    counts = line_counts(docs)
    chars = collections.Counter()
    for word, n in counts.items():
        for c in word:
            chars[c] += n
    budget = vocab_size - n_fixed
    if budget < 64:
        raise SystemExit(f"tokenizer.py: error: --vocab-size must be at least {n_fixed + 64}")
    alphabet = [c for c, n in sorted(chars.items(), key=lambda kv: (-kv[1], kv[0]))
                if n >= min_char_count][: budget // 2]
    merges = train_merges(counts, set(alphabet), budget - len(alphabet))
    tokens = [None] * FIRST_NEWLINE_ID
    for i, text in SPECIALS:
        tokens[i] = text
    unused = 0
    for i in range(len(tokens)):
        if tokens[i] is None:
            tokens[i] = f"<unused{unused}>"
            unused += 1
    tokens += ["\n" * k for k in range(1, MAX_NEWLINE_RUN + 1)]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    tokens += alphabet
    tokens += [a + b for a, b in merges]
    # Pad with placeholders if the corpus ran out of pairs (tiny corpora only).
    while len(tokens) < vocab_size:
        tokens.append(f"<unused{unused}>")
        unused += 1
    if len(set(tokens)) != len(tokens):
        raise SystemExit("tokenizer.py: internal error: duplicate token texts")
    return tokens, merges


def chat_template():
    with open(os.path.join(HERE, "chat_template.jinja"), encoding="utf-8") as f:
        return f.read()


def is_special_text(text):
    return text.startswith("<") and text.endswith(">") and not text.startswith("<0x") \
        and len(text) > 2


def write_files(out_dir, tokens, merges):
    """tokenizer.json, tokenizer_config.json and special_tokens_map.json in HF's layout."""
    os.makedirs(out_dir, exist_ok=True)
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True}
             for i, t in enumerate(tokens) if is_special_text(t)]
    added_ids = {a["id"] for a in added}
    vocab = {t: i for i, t in enumerate(tokens) if i not in added_ids}
    tok = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
        "pre_tokenizer": {"type": "Split", "pattern": {"String": " "},
                          "behavior": "MergedWithPrevious", "invert": False},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<bos>": {"id": "<bos>", "ids": [2], "tokens": ["<bos>"]}},
        },
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": [[a, b] for a, b in merges]},
    }
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, indent=1)
    names = {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>",
             "unk_token": "<unk>", "mask_token": "<mask>"}
    config = dict(names)
    config.update({
        "add_bos_token": True, "add_eos_token": False, "clean_up_tokenization_spaces": False,
        "model_max_length": 4096, "padding_side": "left", "tokenizer_class": "GemmaTokenizer",
        "added_tokens_decoder": {str(a["id"]): {k: v for k, v in a.items() if k != "id"}
                                 for a in added},
        "chat_template": chat_template(),
    })
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=1)
    with open(os.path.join(out_dir, "special_tokens_map.json"), "w", encoding="utf-8") as f:
        json.dump(names, f, indent=1)


class Tokenizer:
    """Encoder/decoder for a tokenizer.json written by write_files (tandem's algorithm)."""

    def __init__(self, tokens, merges, special_ids):
        self.tokens = tokens
        self.ids = {t: i for i, t in enumerate(tokens)}
        self.ranks = {}
        for rank, (a, b) in enumerate(merges):
            if a in self.ids and b in self.ids and a + b in self.ids:
                self.ranks.setdefault((a, b), rank)
        self.specials = {tokens[i]: i for i in special_ids}
        self.max_special = max((len(t) for t in self.specials), default=0)
        self.bos_id, self.eos_id = self.ids["<bos>"], self.ids["<eos>"]
        self.pad_id = self.ids["<pad>"]
        self.byte_ids = [self.ids.get(f"<0x{b:02X}>") for b in range(256)]
        self.unk_id = self.ids.get("<unk>")
        self.cache = {}

    @classmethod
    def load(cls, directory):
        with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as f:
            tok = json.load(f)
        n = 1 + max([i for i in tok["model"]["vocab"].values()] +
                    [a["id"] for a in tok["added_tokens"]])
        tokens = [None] * n
        for text, i in tok["model"]["vocab"].items():
            tokens[i] = text
        for a in tok["added_tokens"]:
            tokens[a["id"]] = a["content"]
        merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1))
                  for m in tok["model"]["merges"]]
        return cls(tokens, merges, [a["id"] for a in tok["added_tokens"]])

    def __len__(self):
        return len(self.tokens)

    def encode_word(self, word):
        """BPE over one space-escaped line (or newline run) -> [id]."""
        hit = self.cache.get(word)
        if hit is not None:
            return hit
        sym = list(word)
        ids = [self.ids.get(c) for c in sym]
        nxt = list(range(1, len(sym) + 1))
        nxt[-1] = -1
        prv = list(range(-1, len(sym) - 1))
        heap = []

        def push(i, j):
            if i >= 0 and j >= 0 and ids[i] is not None and ids[j] is not None:
                r = self.ranks.get((sym[i], sym[j]))
                if r is not None:
                    heapq.heappush(heap, (r, i, j, sym[i], sym[j]))

        for i in range(len(sym) - 1):
            push(i, i + 1)
        while heap:
            _, i, j, left, right = heapq.heappop(heap)
            if sym[i] != left or sym[j] != right or nxt[i] != j:
                continue
            sym[i] = left + right
            ids[i] = self.ids[sym[i]]
            sym[j] = None
            nxt[i] = nxt[j]
            if nxt[j] >= 0:
                prv[nxt[j]] = i
            push(prv[i], i)
            push(i, nxt[i])
        out = []
        i = 0
        while i >= 0:
            if ids[i] is not None:
                out.append(ids[i])
            else:
                raw = sym[i].encode("utf-8")
                if all(self.byte_ids[b] is not None for b in raw):
                    out.extend(self.byte_ids[b] for b in raw)
                elif self.unk_id is not None:
                    out.append(self.unk_id)
            i = nxt[i]
        if len(self.cache) < 500_000:
            self.cache[word] = out
        return out

    def encode_raw(self, text):
        out = []
        for chunk in CHUNK_RE.findall(text):
            if chunk[0] == "\n" and chunk in self.ids:
                out.append(self.ids[chunk])
            else:
                out.extend(self.encode_word(chunk.replace(" ", SPACE)))
        return out

    def encode(self, text, add_bos=True, parse_special=True):
        """Text -> ids, like `tandem tokenize --ids` (BOS first, special texts matched
        leftmost-longest; without parse_special only the RENDERED ones, as tandem does)."""
        out = [self.bos_id] if add_bos else []
        start = pos = 0
        while pos < len(text):
            match = None
            if text[pos] == "<":
                for n in range(min(self.max_special, len(text) - pos), 0, -1):
                    piece = text[pos:pos + n]
                    if piece in self.specials and (parse_special or piece in RENDERED):
                        match = piece
                        break
            if match is None:
                pos += 1
                continue
            out.extend(self.encode_raw(text[start:pos]))
            out.append(self.specials[match])
            pos += len(match)
            start = pos
        out.extend(self.encode_raw(text[start:]))
        return out

    def decode(self, ids):
        """Ids -> text (special tokens rendered, byte tokens joined into UTF-8)."""
        data = bytearray()
        for i in ids:
            t = self.tokens[i]
            if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
                data.append(int(t[3:5], 16))
            else:
                data.extend(t.replace(SPACE, " ").encode("utf-8"))
        return data.decode("utf-8", errors="replace")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train the vocabulary on a corpus (corpus.py output)")
    t.add_argument("--corpus", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--vocab-size", type=int, default=4096)
    t.add_argument("--sample-mb", type=float, default=3.0,
                   help="train on the first N MB of the training split")
    e = sub.add_parser("encode", help="print the ids of TEXT")
    e.add_argument("--tokenizer", required=True)
    e.add_argument("text")
    args = p.parse_args(argv)
    if args.command == "encode":
        print(json.dumps(Tokenizer.load(args.tokenizer).encode(args.text)))
        return 0
    docs, size = [], 0
    for doc in corpus_lib.read_split(args.corpus, "train"):
        if size >= args.sample_mb * 1e6:
            break
        docs.append(doc)
        size += len(doc.encode("utf-8"))
    tokens, merges = build_vocab(docs, args.vocab_size)
    write_files(args.out, tokens, merges)
    tk = Tokenizer.load(args.out)
    held = corpus_lib.read_split(args.corpus, "heldout")
    n_bytes = sum(len(d.encode("utf-8")) for d in held)
    n_tok = sum(len(tk.encode(d, add_bos=False)) for d in held)
    print(f"tokenizer: {len(tokens)} tokens, {len(merges)} merges from {size / 1e6:.2f} MB; "
          f"held-out: {n_bytes / max(n_tok, 1):.2f} bytes/token -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
