"""Shared pieces of train_target.py and train_assistant.py: the tokenized corpus, seeded batches,
the learning-rate schedule, the step budget, the CSV log and checkpoints."""

import csv
import hashlib
import json
import math
import os
import time

import numpy as np
import torch

import corpus as corpus_lib
import model as model_lib
from tokenizer import Tokenizer

CALIBRATION_STEPS = 8  # steps timed to turn --max-minutes into a step count (--steps auto)


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def token_stream(corpus_dir, tokenizer_dir, split, cache_dir):
    """All documents of a split, each as <bos> + its tokens, concatenated: uint16 [n]. Cached
    in cache_dir/{split}.tokens.npy, keyed by the digests of the split and tokenizer.json."""
    path = os.path.join(cache_dir, f"{split}.tokens.npy")
    key = {"corpus": file_digest(os.path.join(corpus_dir, f"{split}.jsonl")),
           "tokenizer": file_digest(os.path.join(tokenizer_dir, "tokenizer.json"))}
    key_path = path + ".key.json"
    if os.path.exists(path) and os.path.exists(key_path):
        with open(key_path) as f:
            if json.load(f) == key:
                return np.load(path)
    tk = Tokenizer.load(tokenizer_dir)
    if len(tk) > 65536:
        raise SystemExit("token ids do not fit uint16: vocabulary larger than 65536")
    ids = []
    for doc in corpus_lib.read_split(corpus_dir, split):
        ids.extend(tk.encode(doc, add_bos=True))
    arr = np.asarray(ids, dtype=np.uint16)
    os.makedirs(cache_dir, exist_ok=True)
    np.save(path, arr)
    write_json(key_path, key)
    return arr


class Batches:
    """Random windows [batch, seq_len + 1] of a token stream, from a seeded generator."""

    def __init__(self, stream, batch, seq_len, seed):
        if len(stream) <= seq_len + 1:
            raise SystemExit(f"the corpus has {len(stream)} tokens, fewer than one window of "
                             f"{seq_len + 1}: use a larger corpus or a smaller --seq-len")
        self.stream, self.batch, self.seq_len = stream, batch, seq_len
        self.rng = np.random.default_rng(seed)

    def next(self):
        starts = self.rng.integers(0, len(self.stream) - self.seq_len - 1, self.batch)
        rows = np.stack([self.stream[s:s + self.seq_len + 1] for s in starts])
        return torch.from_numpy(rows.astype(np.int64))


def eval_windows(stream, seq_len, max_windows):
    """Consecutive non-overlapping windows [n, seq_len + 1] from the start of a stream."""
    n = min(max_windows, (len(stream) - 1) // seq_len)
    if n == 0:
        raise SystemExit(f"the held-out split has {len(stream)} tokens, fewer than one window")
    rows = [stream[i * seq_len:i * seq_len + seq_len + 1] for i in range(n)]
    return torch.from_numpy(np.stack(rows).astype(np.int64))


def lr_at(step, total, peak, warmup, floor=0.1):
    """Linear warm-up, then cosine decay to floor·peak at `total`."""
    if step < warmup:
        return peak * (step + 1) / warmup
    frac = min(1.0, (step - warmup) / max(1, total - warmup))
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * frac)))


class StepBudget:
    """Turns --steps N | auto and --max-minutes into a fixed step count. With auto the first
    CALIBRATION_STEPS steps are timed and total = budget / mean step time (logged, so a run
    is repeated exactly by passing that --steps). The wall-clock limit also stops a run."""

    def __init__(self, steps, max_minutes):
        self.fixed = None if steps == "auto" else int(steps)
        self.max_seconds = max_minutes * 60.0
        self.start = time.time()
        self.total = self.fixed if self.fixed is not None else 10 ** 9

    def elapsed(self):
        return time.time() - self.start

    def after_step(self, step):
        """Call after finishing step (0-based). -> False when training must stop."""
        if self.fixed is None and step + 1 == CALIBRATION_STEPS:
            per_step = self.elapsed() / CALIBRATION_STEPS
            # 5 % headroom for the held-out evaluations and the end of the run.
            self.total = max(CALIBRATION_STEPS, int(0.95 * self.max_seconds / per_step))
            print(f"calibrated: {per_step:.2f} s/step -> --steps {self.total}", flush=True)
        if step + 1 >= self.total:
            return False
        if self.elapsed() > self.max_seconds:
            print(f"stopping at step {step + 1}: --max-minutes reached", flush=True)
            return False
        return True


class CsvLog:
    def __init__(self, path, fields):
        self.file = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=fields)
        self.writer.writeheader()

    def write(self, **row):
        self.writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                              for k, v in row.items()})
        self.file.flush()

    def close(self):
        self.file.close()


def setup_torch(seed, threads):
    torch.manual_seed(seed)
    torch.set_num_threads(threads)


def save_checkpoint(path, module, config, extra=None):
    """module's state_dict plus its config(s) as JSON-able dicts."""
    torch.save({"state_dict": module.state_dict(), "config": config, "extra": extra or {}}, path)


def load_target(path):
    ck = torch.load(path)
    cfg = model_lib.TargetConfig(**ck["config"])
    m = model_lib.Gemma4ForCausalLM(cfg)
    m.load_state_dict(ck["state_dict"])
    return m


def load_assistant(path, target_config):
    ck = torch.load(path)
    cfg = model_lib.AssistantConfig(**ck["config"])
    m = model_lib.Gemma4AssistantForCausalLM(cfg, target_config)
    m.load_state_dict(ck["state_dict"])
    return m


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
