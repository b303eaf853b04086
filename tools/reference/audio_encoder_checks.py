"""Self-checks of the audio encoder (audio_encoder.py), part of test_reference.py.

They need nothing but NumPy. The tiny random mmproj files come from tiny_audio_mmproj.py. Each
check compares the vectorised, blocked encoder with a second computation of the same fact: a
dense attention with an explicit distance mask, a loop-by-loop encoder (one frame, row, head and
key at a time, the relative term computed per distance), or a property that a mistake breaks
(how far one mel frame reaches, the per-dimension scale used as stored, pieces encoded alone).
"""

import atexit
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import wave

import numpy as np

import audio
import audio_encoder as ae
import ops
from gguf_read import GGUFError, GGUFFile
from gguf_write import write_gguf
from tiny_audio_mmproj import (tiny_audio_metadata, tiny_audio_tensors,
                               write_tiny_audio_mmproj)

HERE = os.path.dirname(os.path.abspath(__file__))
_TMP = tempfile.mkdtemp(prefix="refaudio-")
atexit.register(shutil.rmtree, _TMP, True)
DT = 128
# Small enough for the loop-by-loop encoder: 16 mel bins, subsampling channels 8 and 4, Da 16.
SMALL = {"n_embd": 16, "n_head": 2, "n_ff": 32, "n_layer": 2, "n_mel": 16, "c0": 8, "c1": 4,
         "n_out": 24}
_PATHS = {}


def tmp_path(name):
    return os.path.join(_TMP, name)


def mmproj(name, **kw):
    """Path of a tiny audio mmproj written once per name (kw as write_tiny_audio_mmproj)."""
    if name not in _PATHS:
        _PATHS[name] = write_tiny_audio_mmproj(tmp_path(f"audio-{name}.gguf"), **kw)
    return _PATHS[name]


def mel(frames, seed, bins=128):
    """Random log-mel-like values (log-mel of speech spans about -7 .. 3)."""
    return np.random.default_rng(seed).normal(-2.0, 2.0, (frames, bins))


# ----------------------------------------------------------------------------------------------
# The second computations.


def dense_attention(q, k, v, rel):
    """The attention of audio_encoder.blocked_attention without blocks: every query against
    every key, allowed iff 0 <= t - s <= 11, the relative term Rel(t - s) = rel[12 - (t - s)]."""
    n, n_head, hd = q.shape
    d = np.arange(n)[:, None] - np.arange(n)[None, :]
    allowed = (d >= 0) & (d <= 11)
    logits = np.einsum("thd,shd->hts", q, k)
    if rel is not None:
        by_distance = np.einsum("thd,phd->htp", q, rel)  # [H, T, 13], p = 12 - distance
        p = np.clip(12 - d, 0, 12)
        logits = logits + np.take_along_axis(by_distance, np.broadcast_to(p, (n_head, n, n)), 2)
    logits = 50.0 * np.tanh(logits / 50.0)
    logits = np.where(allowed[None], logits, -np.inf)
    w = np.exp(logits - logits.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    return np.einsum("hts,shd->thd", w, v).reshape(n, n_head * hd)


def _rms(x, w=None, eps=1e-6):
    y = x / np.sqrt(np.sum(x * x) / x.size + eps)
    return y if w is None else y * w


def _silu(x):
    return x / (1.0 + np.exp(-x))


class SlowEncoder:
    """The gemma4a forward one frame, row, head and key at a time, read from the file again."""

    def __init__(self, path):
        self.f = f = GGUFFile(path)
        md = f.metadata
        self.d = md["clip.audio.embedding_length"]
        self.n_head = md["clip.audio.attention.head_count"]
        self.hd = self.d // self.n_head
        self.n_layer = md["clip.audio.block_count"]

    def t(self, name):
        return self.f.tensor(name) if name in self.f.tensors else None

    def lin(self, base, x):
        def bound(name, default):
            return float(self.f.tensor(f"{base}.{name}")[0]) if f"{base}.{name}" in \
                self.f.tensors else default

        x = np.clip(x, bound("input_min", -np.inf), bound("input_max", np.inf))
        y = self.f.tensor(base + ".weight") @ x
        return np.clip(y, bound("output_min", -np.inf), bound("output_max", np.inf))

    def norm(self, x, name):
        w = self.t(name)
        return x if w is None else _rms(x, w)

    def conv_stage(self, x, wname, gname):
        """x [C_in, T, F]: 3x3 stride-2 conv (zero padding 1), channel LayerNorm, ReLU."""
        w, gain = self.f.tensor(wname), self.t(gname)
        c_in, t_in, f_in = x.shape
        t_out, f_out = (t_in + 1) // 2, (f_in + 1) // 2
        out = np.zeros((w.shape[0], t_out, f_out))
        for i in range(t_out):
            for j in range(f_out):
                acc = np.zeros(w.shape[0])
                for a in range(3):
                    for b in range(3):
                        ti, fj = 2 * i - 1 + a, 2 * j - 1 + b
                        if 0 <= ti < t_in and 0 <= fj < f_in:
                            acc += w[:, :, a, b] @ x[:, ti, fj]
                mean = acc.mean()
                var = np.mean((acc - mean) ** 2)
                y = (acc - mean) / np.sqrt(var + 1e-6)
                out[:, i, j] = np.maximum(y if gain is None else y * gain, 0.0)
        return out

    def rel_vector(self, layer, distance):
        """attn_k_rel applied to the sinusoid of one distance: [Da]."""
        half = self.d // 2
        tau = [math.exp(-i * math.log(10000.0) / max(half - 1, 1)) for i in range(half)]
        pe = np.array([math.sin(distance * x) for x in tau] + [math.cos(distance * x) for x in tau])
        return self.f.tensor(f"a.blk.{layer}.attn_k_rel.weight") @ pe

    def ffn(self, b, x, suffix):
        h = self.norm(x, b + f"ffn_norm{suffix}.weight")
        h = self.lin(b + f"ffn_down{suffix}", _silu(self.lin(b + f"ffn_up{suffix}", h)))
        return x + 0.5 * self.norm(h, b + f"ffn_post_norm{suffix}.weight")

    def layer(self, il, xs):
        b = f"a.blk.{il}."
        n, hd = len(xs), self.hd
        xs = [self.ffn(b, x, "") for x in xs]
        pds = self.t(b + "per_dim_scale.weight")
        qs, ks, vs = [], [], []
        for x in xs:
            h = self.norm(x, b + "attn_pre_norm.weight")
            q = self.lin(b + "attn_q", h) / math.sqrt(hd) / math.log(2.0)
            qs.append([q[i * hd:(i + 1) * hd] * (1.0 if pds is None else pds)
                       for i in range(self.n_head)])
            k = self.lin(b + "attn_k", h) * math.log(1.0 + math.e) / math.log(2.0)
            ks.append([k[i * hd:(i + 1) * hd] for i in range(self.n_head)])
            v = self.lin(b + "attn_v", h)
            vs.append([v[i * hd:(i + 1) * hd] for i in range(self.n_head)])
        has_rel = b + "attn_k_rel.weight" in self.f.tensors
        rel = [self.rel_vector(il, dist) if has_rel else np.zeros(self.d) for dist in range(12)]
        after = []
        for t in range(n):
            heads = []
            for i in range(self.n_head):
                keys = range(max(0, t - 11), t + 1)
                s = np.array([qs[t][i] @ (ks[m][i] + rel[t - m][i * hd:(i + 1) * hd])
                              for m in keys])
                s = 50.0 * np.tanh(s / 50.0)
                w = np.exp(s - s.max())
                w /= w.sum()
                heads.append(sum(wm * vs[m][i] for wm, m in zip(w, keys)))
            a = self.lin(b + "attn_out", np.concatenate(heads))
            after.append(xs[t] + self.norm(a, b + "attn_post_norm.weight"))
        glu = []
        for x in after:
            h = self.lin(b + "conv_pw1", self.norm(x, b + "conv_norm.weight"))
            glu.append(h[:self.d] / (1.0 + np.exp(-h[self.d:])))
        dw = self.f.tensor(b + "conv_dw.weight")  # [Da, 5]
        out = []
        for t in range(n):
            acc = sum(dw[:, k] * glu[t - 4 + k] for k in range(5) if t - 4 + k >= 0)
            h = _silu(self.norm(acc, b + "norm_conv.weight"))
            x = after[t] + self.lin(b + "conv_pw2", h)
            out.append(self.norm(self.ffn(b, x, "_1"), b + "ln2.weight"))
        return out

    def encode(self, mel_frames):
        h = self.conv_stage(mel_frames[None], "a.conv1d.0.weight", "a.conv1d.0.norm.weight")
        h = self.conv_stage(h, "a.conv1d.1.weight", "a.conv1d.1.norm.weight")
        c, n, fq = h.shape
        proj = self.f.tensor("a.input_projection.weight")
        xs = [proj @ np.array([h[ch, t, f] for f in range(fq) for ch in range(c)])
              for t in range(n)]
        for il in range(self.n_layer):
            xs = self.layer(il, xs)
        out_w, out_b = self.t("a.pre_encode.out.weight"), self.t("a.pre_encode.out.bias")
        mm = self.f.tensor("mm.a.input_projection.weight")
        rows = []
        for x in xs:
            y = x if out_w is None else out_w @ x + (0.0 if out_b is None else out_b)
            rows.append(mm @ _rms(y))
        return np.array(rows)


# ----------------------------------------------------------------------------------------------
# Checks.


def check_audio_attention_blocked_equals_dense():
    """The blocked attention with the relative shift equals the dense one, for lengths below,
    at and above a block, with and without the position term, with soft-capped logits."""
    rng = np.random.default_rng(21)
    n_head, hd = 3, 8
    for n in (1, 2, 5, 11, 12, 13, 23, 24, 25, 40):
        q, k, v = (rng.standard_normal((n, n_head, hd)) * 3.0 for _ in range(3))
        rel = rng.standard_normal((ae.N_REL, n_head, hd)) * 3.0
        for r in (rel, None):
            got = ae.blocked_attention(q, k, v, r)
            want = dense_attention(q, k, v, r)
            assert got.shape == (n, n_head * hd)
            err = np.max(np.abs(got - want))
            assert err <= 1e-12, (n, r is None, err)
    # The soft-cap matters at this scale, so a missing one would show.
    assert np.max(np.abs(np.einsum("thd,shd->hts", q, k))) > 50.0


def check_audio_rel_shift_layout():
    """Row i of the shifted block holds x[i, j - i] at context column j for 0 <= j - i <= 12,
    zero elsewhere; the blocked mask allows exactly the keys 0..11 steps back inside 0..T-1."""
    x = np.arange(1.0, 1.0 + ae.CHUNK * ae.N_REL).reshape(ae.CHUNK, ae.N_REL)
    y = ae.rel_shift(x)
    assert y.shape == (ae.CHUNK, ae.CONTEXT)
    for i in range(ae.CHUNK):
        for j in range(ae.CONTEXT):
            want = x[i, j - i] if 0 <= j - i < ae.N_REL else 0.0
            assert y[i, j] == want, (i, j, y[i, j], want)
    for n in (1, 12, 13, 30):
        m = ae.blocked_mask(ae.sliding_window_mask(n))
        for b in range(m.shape[0]):
            for i in range(ae.CHUNK):
                for j in range(ae.CONTEXT):
                    t, s = ae.CHUNK * b + i, ae.CHUNK * b - ae.MAX_PAST + j
                    want = t < n and 0 <= s < n and 0 <= t - s <= 11
                    assert m[b, i, j] == want, (n, b, i, j)


def check_audio_token_counts():
    """ceil(ceil(F / 2) / 2) soft tokens of width Dt, for lengths short of one block and not."""
    enc = ae.AudioEncoder.load(mmproj("tiny", dt=DT))
    for frames, tokens in ((1, 1), (2, 1), (3, 1), (4, 1), (5, 2), (99, 25), (250, 63)):
        assert ae.token_count(frames) == tokens
        out = enc.encode(mel(frames, frames))
        assert out.shape == (tokens, DT), (frames, out.shape)
        assert np.all(np.isfinite(out))


def check_audio_against_loops():
    """The vectorised encoder equals the loop-by-loop one: clamps and every optional tensor;
    then no clamps and no optional tensor (norms skipped, no position term, no per-dimension
    scale, no output projection); 99 frames (25 rows, 3 blocks) and 7 frames (2 rows)."""
    cases = [("small", {}), ("small-bare", {"clamps": False, "drop": (
        "norm", "ffn_post_norm", "attn_pre_norm", "attn_k_rel", "per_dim_scale",
        "attn_post_norm", "conv_norm", "norm_conv", "ffn_post_norm_1", "ln2", "pre_encode")})]
    for name, kw in cases:
        path = mmproj(name, dt=40, cfg=SMALL, **kw)
        enc, slow = ae.AudioEncoder.load(path), SlowEncoder(path)
        for frames in (99, 7):
            x = mel(frames, frames, SMALL["n_mel"])
            got, want = enc.encode(x), slow.encode(x)
            assert got.shape == want.shape == (ae.token_count(frames), 40)
            err = np.max(np.abs(got - want))
            assert err <= 1e-9, (name, frames, err)


class _CountingLinear:
    """A clippable linear that counts the values its bounds change."""

    def __init__(self, lin):
        self.lin, self.inputs, self.outputs = lin, 0, 0

    def __call__(self, v):
        b = self.lin.bounds
        inside = np.clip(v, b["input_min"], b["input_max"])
        y = ops.linear(inside, self.lin.w)
        self.inputs += int(np.sum(inside != v))
        self.outputs += int(np.sum((y < b["output_min"]) | (y > b["output_max"])))
        return self.lin(v)


def check_audio_clamps_bite():
    """With the tiny file's bounds, input and output clamps both change values (so the parity
    test exercises them), and the same weights without bounds give other soft tokens."""
    x = mel(99, 3)
    clamped = ae.AudioEncoder.load(mmproj("tiny", dt=DT))
    free = ae.AudioEncoder.load(mmproj("tiny-noclamp", dt=DT, clamps=False))
    counters = []
    for ly in clamped.layers:
        ly.lin = {name: _CountingLinear(lin) for name, lin in ly.lin.items()}
        counters += ly.lin.values()
    a = clamped.encode(x)
    inputs, outputs = sum(c.inputs for c in counters), sum(c.outputs for c in counters)
    assert inputs > 100 and outputs > 100, (inputs, outputs)
    assert np.max(np.abs(a - free.encode(x))) > 1e-3


def check_audio_receptive_field():
    """Token j sees mel frames 4j - 3 .. 4j + 3 through the subsampling, then each of the two
    layers reaches 11 rows back by attention and 4 more by the depthwise conv, and nothing
    ahead: a change to frame 0 reaches tokens 0..30 and no further, a change to frame 200 leaves
    tokens 0..49 untouched."""
    enc = ae.AudioEncoder.load(mmproj("tiny-noclamp", dt=DT, clamps=False))
    x = mel(250, 11)
    base = enc.encode(x)
    for frame, first, last in ((0, 0, 30), (200, 50, 62)):
        y = x.copy()
        y[frame] += 3.0
        diff = np.max(np.abs(enc.encode(y) - base), axis=1)
        changed = np.flatnonzero(diff > 1e-9)
        assert changed.min() == first and changed.max() == last, (frame, changed)
        assert np.all(diff[first:last + 1] > 1e-9), (frame, diff[first:last + 1])
        assert np.all(diff[:first] <= 1e-12) and np.all(diff[last + 1:] <= 1e-12), frame


def check_audio_per_dim_scale_as_stored():
    """per_dim_scale multiplies q as stored (the converter applied softplus already): a file
    with scale s equals one with scale 1 and s folded into attn_q, and an absent scale is 1."""
    rng = np.random.default_rng(2)
    tensors = tiny_audio_tensors(rng, DT, clamps=False)
    md = tiny_audio_metadata(DT)
    # Powers of two, so that folding them into the f32 attn_q weights is exact; softplus of
    # them (0.97, 1.31, 2.13) is not proportional to them.
    tensors = [(n, rng.choice([0.5, 1.0, 2.0], a.size) if n.endswith("per_dim_scale.weight")
                else a, t) for n, a, t in tensors]
    folded, absent = [], []
    scales = {n: a for n, a, _ in tensors if n.endswith("per_dim_scale.weight")}
    for n, a, t in tensors:
        if n.endswith("per_dim_scale.weight"):
            folded.append((n, np.ones_like(a), t))
            continue
        if n.endswith("attn_q.weight"):
            s = scales[n.replace("attn_q.weight", "per_dim_scale.weight")]
            a = a * np.tile(s, a.shape[0] // s.size)[:, None]
        folded.append((n, a, t))
        absent.append((n, a, t))
    paths = [tmp_path(f"pds-{i}.gguf") for i in range(3)]
    for p, ts in zip(paths, (tensors, folded, absent)):
        write_gguf(p, md, [(n, a, "F32") for n, a, _ in ts])
    x = mel(60, 4)
    out = [ae.AudioEncoder.load(p).encode(x) for p in paths]
    assert np.max(np.abs(out[0] - out[1])) <= 1e-12, np.max(np.abs(out[0] - out[1]))
    assert np.max(np.abs(out[1] - out[2])) <= 1e-12


def check_audio_pieces():
    """Pieces are encoded on their own and concatenated in order. The same frames as one piece
    give the first piece's tokens again (nothing looks ahead; 32 frames end on a token boundary)
    and other tokens after it (attention and convolution reach back into the first piece)."""
    enc = ae.AudioEncoder.load(mmproj("tiny", dt=DT))
    a, b = mel(32, 5), mel(15, 6)
    both, counts = enc.encode_pieces([a, b])
    assert counts == [8, 4]
    assert np.array_equal(both, np.concatenate([enc.encode(a), enc.encode(b)]))
    joined = enc.encode(np.concatenate([a, b]))
    assert joined.shape == both.shape
    assert np.max(np.abs(joined[:8] - both[:8])) <= 1e-12
    assert np.min(np.max(np.abs(joined[8:] - both[8:]), axis=1)) > 1e-3


def _expect(exc, fn, *words):
    try:
        fn()
    except exc as e:
        for w in words:
            assert w in str(e), f"'{w}' not in: {e}"
        return
    raise AssertionError(f"no {exc.__name__}")


def check_audio_rejects_bad_input():
    enc = ae.AudioEncoder.load(mmproj("tiny", dt=DT))
    _expect(ValueError, lambda: enc.encode(np.zeros((5, 80))), "[frames, 128]")
    _expect(ValueError, lambda: enc.encode(np.zeros((0, 128))), "no frames")
    _expect(ValueError, lambda: enc.encode(np.zeros((5, 128), np.int32)), "floats")
    _expect(ValueError, lambda: enc.encode(np.full((5, 128), np.nan)), "NaN")
    md = tiny_audio_metadata(DT)
    tensors = tiny_audio_tensors(np.random.default_rng(1), DT)
    cases = {
        "proj": ([m if m[0] != "clip.audio.projector_type" else (m[0], "str", "gemma4ua")
                  for m in md], tensors, "gemma4ua"),
        "key": ([m for m in md if m[0] != "clip.audio.block_count"], tensors,
                "clip.audio.block_count"),
        "tensor": (md, [x for x in tensors if x[0] != "a.blk.1.conv_dw.weight"],
                   "a.blk.1.conv_dw.weight"),
        "shape": (md, [x if x[0] != "a.blk.0.ffn_up.weight" else (x[0], x[1][:, :16], "F32")
                       for x in tensors], "a.blk.0.ffn_up.weight"),
        "bound": (md, [(n, a, "F16" if n.endswith("attn_q.input_min") else t)
                       for n, a, t in tensors], "must be F32"),
        "extra": (md, tensors + [("a.blk.0.per_dim_k_scale.weight", np.ones(16), "F32")],
                  "per_dim_k_scale"),
        "bias": (md, [x for x in tensors if x[0] != "a.pre_encode.out.weight"],
                 "a.pre_encode.out.bias"),
    }
    for name, (m, t, word) in cases.items():
        path = tmp_path(f"bad-{name}.gguf")
        write_gguf(path, m, t)
        _expect(GGUFError, lambda: ae.AudioEncoder.load(path), word, path)


def _write_wav(path, samples):
    pcm = np.clip(np.round(samples * 32767.0), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(audio.SAMPLE_RATE)
        w.writeframes(pcm.tobytes())


def run_cli(*args):
    cmd = [sys.executable, os.path.join(HERE, "reference.py"), *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return res.returncode, res.stdout, res.stderr


def check_audio_cli():
    """audio-encode: several --mel pieces, --wav cut into 30 s pieces, the trace, the errors."""
    path = mmproj("tiny", dt=DT)
    enc = ae.AudioEncoder.load(path)
    pieces = [mel(7, 1).astype(np.float32), mel(99, 2).astype(np.float32)]
    files = []
    for i, p in enumerate(pieces):
        files.append(tmp_path(f"mel{i}.npy"))
        np.save(files[-1], p)
    out = tmp_path("enc.npz")
    rc, stdout, err = run_cli("audio-encode", path, "--mel", ",".join(files), "--out", out,
                              "--trace")
    assert rc == 0, err
    assert json.loads(stdout) == {"tokens": [2, 25], "n_embd": DT}, stdout
    want, _ = enc.encode_pieces(pieces)
    with np.load(out) as z:
        assert np.array_equal(z["embeddings"], want)
        assert list(z["tokens"]) == [2, 25] and z["layer_1"].shape == (27, 32)
    samples = np.sin(np.arange(audio.CHUNK + 3200) * 0.05) * 0.3  # 30.2 s: pieces of 30 s, 0.2 s
    wav = tmp_path("a.wav")
    _write_wav(wav, samples)
    rc, stdout, err = run_cli("audio-encode", path, "--wav", wav, "--out", out)
    assert rc == 0, err
    assert json.loads(stdout)["tokens"] == [750, 5], stdout
    read, _ = audio.read_wav(wav)
    want, _ = enc.encode_pieces(audio.log_mel_chunks(read))
    with np.load(out) as z:
        assert np.array_equal(z["embeddings"], want)
    rc, _, err = run_cli("audio-encode", path, "--out", out)
    assert rc == 1 and "exactly one of --mel and --wav" in err, err
    bad = tmp_path("bad.npy")
    np.save(bad, np.zeros((4, 80), np.float32))
    rc, _, err = run_cli("audio-encode", path, "--mel", bad, "--out", out)
    assert rc == 1 and "bad.npy" in err and "[frames, 128]" in err, err


CHECKS = [check_audio_attention_blocked_equals_dense, check_audio_rel_shift_layout,
          check_audio_token_counts, check_audio_against_loops, check_audio_clamps_bite,
          check_audio_receptive_field, check_audio_per_dim_scale_as_stored, check_audio_pieces,
          check_audio_rejects_bad_input, check_audio_cli]
