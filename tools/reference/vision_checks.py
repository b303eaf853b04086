"""Checks of vision.py, gguf_write.py and the image rules of gemma4.py, run by test_reference.py.

CHECKS need nothing but NumPy: they write tiny random mmproj files (tiny_mmproj.py) and compare
the vectorised encoder with loop-by-loop computations written here from the rules in README.md
§ Images (explicit rotation matrices, per-patch convolution, per-head attention, per-cell pooling).
FIXTURE_CHECKS take the llama.cpp fixture's tiny target (D = 128, per-layer embeddings, sliding
window 32) and check the text side: unscaled embedding rows, PLE row 0, the three media masks, and
the command line.
"""

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import gemma4
import ops
import vision
from gguf_read import GGUFError, GGUFFile
from gguf_write import write_gguf
from tiny_mmproj import tiny_mmproj_metadata, tiny_mmproj_tensors, write_tiny_mmproj

HERE = os.path.dirname(os.path.abspath(__file__))
_TMP = tempfile.mkdtemp(prefix="refvision-")
atexit.register(shutil.rmtree, _TMP, True)
DT = 128  # the fixture target's embedding_length


def tmp_path(name):
    return os.path.join(_TMP, name)


_PATHS = {}


def mmproj(name="default", **kw):
    """Path of a tiny mmproj written once per name (kw as write_tiny_mmproj)."""
    if name not in _PATHS:
        _PATHS[name] = write_tiny_mmproj(tmp_path(f"mmproj-{name}.gguf"), **kw)
    return _PATHS[name]


def image(h, w, seed):
    return np.random.default_rng(seed).uniform(0.0, 1.0, (h, w, 3))


# ----------------------------------------------------------------------------------------------
# Loop-by-loop re-computation of the encoder (the second reading of the rules).


def rotation_matrix(hd, col, row, theta=100.0):
    """hd x hd matrix of the 2-D RoPE: dims [0, hd/2) rotate by the column, [hd/2, hd) by the
    row; inside a half of m dims, dim j and j + m/2 form a plane turned by pos·theta^(-2j/m)."""
    r = np.zeros((hd, hd))
    m = hd // 2
    for pos, off in ((col, 0), (row, m)):
        for j in range(m // 2):
            ang = pos * theta ** (-2.0 * j / m)
            a, b = off + j, off + j + m // 2
            r[a, a], r[a, b] = np.cos(ang), -np.sin(ang)
            r[b, a], r[b, b] = np.sin(ang), np.cos(ang)
    return r


def _rms(x, w=None, eps=1e-6):
    y = x / np.sqrt(np.sum(x * x) / x.size + eps)
    return y if w is None else y * w


def _clip_linear(f, base, x):
    def bound(name, default):
        return float(f.tensor(f"{base}.{name}")[0]) if f"{base}.{name}" in f.tensors else default

    x = np.clip(x, bound("input_min", -np.inf), bound("input_max", np.inf))
    y = f.tensor(base + ".weight") @ x
    return np.clip(y, bound("output_min", -np.inf), bound("output_max", np.inf))


def _gelu(x, kind):
    if kind == "quick":
        return x * (1.0 / (1.0 + np.exp(-1.702 * x)))
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def slow_encode(path, pixels, gelu="tanh"):
    """The gemma4v forward, one patch / head / pooled cell at a time, straight from the file."""
    f = GGUFFile(path)
    md = f.metadata
    d = md["clip.vision.embedding_length"]
    n_head = md["clip.vision.attention.head_count"]
    hd = d // n_head
    eps = md["clip.vision.attention.layer_norm_epsilon"]
    p = md["clip.vision.patch_size"]
    k = md.get("clip.vision.projector.scale_factor", 3)
    kernel = f.tensor("v.patch_embd.weight")  # [d, 3, p, p]
    pos = f.tensor("v.position_embd.weight")
    x = 2.0 * pixels - 1.0
    hp, wp = x.shape[0] // p, x.shape[1] // p
    e = np.zeros((hp * wp, d))
    for r in range(hp):
        for c in range(wp):
            patch = x[r * p:(r + 1) * p, c * p:(c + 1) * p, :].transpose(2, 0, 1)  # [3, p, p]
            for o in range(d):
                e[r * wp + c, o] = np.sum(kernel[o] * patch)
            e[r * wp + c] += pos[0, c] + pos[1, r]
    rot = [rotation_matrix(hd, n % wp, n // wp) for n in range(hp * wp)]
    for il in range(md["clip.vision.block_count"]):
        b = f"v.blk.{il}."
        t = lambda name: f.tensor(b + name)  # noqa: E731
        out = np.zeros_like(e)
        qs, ks, vs = [], [], []
        for n in range(e.shape[0]):
            h = _rms(e[n], t("ln1.weight"), eps)
            q, kk, v = (_clip_linear(f, b + name, h) for name in ("attn_q", "attn_k", "attn_v"))
            qs.append([rot[n] @ _rms(q[i * hd:(i + 1) * hd], t("attn_q_norm.weight"), eps)
                       for i in range(n_head)])
            ks.append([rot[n] @ _rms(kk[i * hd:(i + 1) * hd], t("attn_k_norm.weight"), eps)
                       for i in range(n_head)])
            vs.append([_rms(v[i * hd:(i + 1) * hd], None, eps) for i in range(n_head)])
        for n in range(e.shape[0]):
            att = []
            for i in range(n_head):
                s = np.array([qs[n][i] @ ks[m][i] for m in range(e.shape[0])])
                w = np.exp(s - s.max())
                w /= w.sum()
                att.append(sum(w[m] * vs[m][i] for m in range(e.shape[0])))
            a = _clip_linear(f, b + "attn_out", np.concatenate(att))
            y = e[n] + _rms(a, t("attn_post_norm.weight"), eps)
            h = _rms(y, t("ln2.weight"), eps)
            g = _gelu(_clip_linear(f, b + "ffn_gate", h), gelu) * _clip_linear(f, b + "ffn_up", h)
            y = y + _rms(_clip_linear(f, b + "ffn_down", g), t("ffn_post_norm.weight"), eps)
            if b + "out_scale.weight" in f.tensors:
                y = y * t("out_scale.weight")[0]
            out[n] = y
        e = out
    rows, cols = hp // k, wp // k
    g = np.zeros((rows * cols, d))
    for r in range(rows):
        for c in range(cols):
            cell = [e[(k * r + i) * wp + k * c + j] for i in range(k) for j in range(k)]
            g[r * cols + c] = np.sum(cell, axis=0) / (k * k) * np.sqrt(d)
    if "v.std_bias" in f.tensors:
        g = (g - f.tensor("v.std_bias")) * f.tensor("v.std_scale")
    proj = f.tensor("mm.input_projection.weight")
    return np.array([proj @ _rms(g[n], None, eps) for n in range(g.shape[0])])


# ----------------------------------------------------------------------------------------------
# Self-contained checks.


def check_gguf_write_types():
    """Values written as F32 / F16 / BF16 / Q8_0 read back as those types round them."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 64)) * 3.0
    exact = np.array([1.0, -2.5, 3.140625, 0.0] * 16).reshape(2, 32)
    block = np.arange(-16, 16) * 0.5  # Q8_0: amax 8, d = 8/127
    path = tmp_path("types.gguf")
    write_gguf(path, [("k.u32", "u32", 7), ("k.f32", "f32", 0.5), ("k.b", "bool", False),
                      ("k.s", "str", "x"), ("k.fa", "f32[]", [1.0, 2.0]),
                      ("k.sa", "str[]", ["a", "b"])],
               [("f32", a, "F32"), ("f16", a, "F16"), ("bf16", exact, "BF16"),
                ("bf16r", a, "BF16"), ("q8", a, "Q8_0"), ("q8b", block, "Q8_0"),
                ("s", np.array([0.25]), "F32")])
    f = GGUFFile(path)
    md = f.metadata
    assert (md["k.u32"], md["k.f32"], md["k.b"], md["k.s"]) == (7, 0.5, False, "x")
    assert list(md["k.fa"]) == [1.0, 2.0] and md["k.sa"] == ["a", "b"]
    assert f.value_types["k.u32"] == 4 and f.value_types["k.f32"] == 6
    assert np.array_equal(f.tensor("f32"), a.astype(np.float32))
    assert np.array_equal(f.tensor("f16"), a.astype(np.float16))
    assert np.array_equal(f.tensor("bf16"), exact)
    assert np.max(np.abs(f.tensor("bf16r") - a) / np.abs(a)) <= 2.0 ** -8
    d = np.float16(8.0 / 127.0).astype(np.float64)
    assert np.array_equal(f.tensor("q8b"), np.rint(block * 127.0 / 8.0) * d)
    amax = np.max(np.abs(a.reshape(-1, 32)), axis=1, keepdims=True)
    err = np.abs(f.tensor("q8").reshape(-1, 32) - a.reshape(-1, 32))
    assert np.all(err <= 0.51 * amax / 127.0 + 1e-3 * amax), np.max(err)
    assert f.tensors["s"].ne == (1,) and f.tensors["q8"].type_name == "Q8_0"


def check_vision_pooling_known_grid():
    """k×k average pooling of a 6×9 grid, cell by cell, row-major; pooling 2 from the key."""
    hp, wp = 6, 9
    e = np.array([[r, c, 10.0 * r + c] for r in range(hp) for c in range(wp)])
    got = vision.avg_pool(e, hp, wp, 3)
    want = [[3 * R + 1.0, 3 * C + 1.0, 10.0 * (3 * R + 1) + 3 * C + 1]
            for R in range(2) for C in range(3)]
    assert np.allclose(got, want, rtol=0, atol=1e-12), got
    got2 = vision.avg_pool(e[:36], 6, 6, 2)
    want2 = [[e[(2 * R + i) * 6 + 2 * C + j] for i in range(2) for j in range(2)]
             for R in range(3) for C in range(3)]
    assert np.allclose(got2, np.mean(want2, axis=1), rtol=0, atol=1e-12)
    try:
        vision.avg_pool(e, hp, wp, 4)
    except ValueError:
        pass
    else:
        raise AssertionError("a grid not divisible by the pooling was accepted")
    # clip.vision.projector.scale_factor = 2: 64×96 pixels -> 4×6 patches -> 2×3 tokens.
    t2 = vision.VisionTower.load(mmproj("pool2", dt=DT, scale_factor=2))
    px = image(64, 96, 5)
    assert t2.cfg.pool == 2 and t2.encode(px).shape == (6, DT)
    assert np.allclose(t2.encode(px), slow_encode(t2.file.path, px), rtol=1e-9, atol=1e-9)


def check_vision_rope_2d():
    """rope_2d equals multiplying each head vector by the explicit rotation matrix, and the
    rotated dot product depends only on the (column, row) offset."""
    rng = np.random.default_rng(11)
    hd = 16
    x = rng.standard_normal((5, 2, hd))
    cols, rows = np.array([0, 3, 7, 2, 40]), np.array([0, 1, 5, 9, 33])
    got = vision.rope_2d(x, cols, rows)
    for n in range(5):
        r = rotation_matrix(hd, cols[n], rows[n])
        for h in range(2):
            assert np.allclose(got[n, h], r @ x[n, h], rtol=0, atol=1e-12), (n, h)
    q, k = rng.standard_normal((1, 1, hd)), rng.standard_normal((1, 1, hd))

    def dot(cq, rq, ck, rk):
        return float(np.sum(vision.rope_2d(q, [cq], [rq]) * vision.rope_2d(k, [ck], [rk])))

    assert np.isclose(dot(1, 2, 4, 7), dot(11, 5, 14, 10), rtol=0, atol=1e-12)
    assert not np.isclose(dot(1, 2, 4, 7), dot(2, 1, 7, 4))  # column and row are not the same


def check_vision_clamps_bite():
    """A clippable linear clamps its input and its output; in the tiny model the clamps change
    the result (bounds removed -> different embeddings) and both kinds actually bite."""
    path = mmproj("default", dt=DT)
    f = GGUFFile(path)
    lin = vision.ClippableLinear(f, "v.blk.0.attn_q")
    b = lin.bounds
    assert all(np.isfinite(v) for v in b.values())
    x = np.linspace(-4, 4, 32)[None, :]
    w = f.tensor("v.blk.0.attn_q.weight")
    inner = np.clip(x, b["input_min"], b["input_max"]) @ w.T
    want = np.clip(inner, b["output_min"], b["output_max"])
    assert np.allclose(lin(x), want, rtol=0, atol=1e-12)
    assert not np.allclose(inner, x @ w.T) and not np.allclose(want, inner)  # both bite here
    tower = vision.VisionTower(f)
    px = image(96, 144, 7)
    clamped = tower.encode(px)
    bit = {"in": 0, "out": 0}

    def counting(cl):
        b = cl.bounds

        def call(v):
            bit["in"] += int(np.sum((v < b["input_min"]) | (v > b["input_max"])))
            y = ops.linear(np.clip(v, b["input_min"], b["input_max"]), cl.w)
            bit["out"] += int(np.sum((y < b["output_min"]) | (y > b["output_max"])))
            return cl(v)

        return call

    for ly in tower.layers:
        ly.lin = {name: counting(cl) for name, cl in ly.lin.items()}
    assert np.array_equal(tower.encode(px), clamped)
    assert bit["in"] > 0 and bit["out"] > 0, bit
    free = vision.VisionTower.load(mmproj("noclamp", dt=DT, clamps=False))
    assert not any(np.isfinite(v) for ly in free.layers for cl in ly.lin.values()
                   for v in cl.bounds.values())
    unbounded = vision.VisionTower(GGUFFile(path))
    for ly in unbounded.layers:
        for cl in ly.lin.values():
            cl.bounds = {k: (-np.inf if k.endswith("min") else np.inf) for k in cl.bounds}
    assert not np.allclose(unbounded.encode(px), clamped)
    print(f"    clamped elements in one tiny encode: {bit['in']} inputs, {bit['out']} outputs")


def check_vision_gelu_variants():
    """GELU-quick and GELU-tanh values; the choice from clip.use_gelu and the override."""
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0])
    assert np.allclose(ops.gelu_quick(x), x / (1.0 + np.exp(-1.702 * x)), rtol=0, atol=0)
    assert np.isclose(ops.gelu_quick(np.array([1.0]))[0], 1.0 / (1.0 + np.exp(-1.702)))
    assert np.isclose(ops.gelu(np.array([1.0]))[0], 0.8411919906082768, rtol=0, atol=1e-15)
    assert ops.gelu_quick(np.array([-1000.0]))[0] == 0.0  # no overflow warning turned error
    absent = GGUFFile(mmproj("default", dt=DT))
    yes = GGUFFile(mmproj("gelu-true", dt=DT, use_gelu=True))
    no = GGUFFile(mmproj("gelu-false", dt=DT, use_gelu=False))
    assert vision.resolve_gelu(absent) == "tanh" and vision.resolve_gelu(yes) == "tanh"
    assert vision.resolve_gelu(no) == "quick" and vision.resolve_gelu(no, "tanh") == "tanh"
    assert vision.resolve_gelu(absent, "quick") == "quick"
    px = image(48, 96, 8)
    tanh = vision.VisionTower(absent).encode(px)
    quick = vision.VisionTower(no).encode(px)
    assert np.array_equal(quick, vision.VisionTower(absent, gelu="quick").encode(px))
    assert not np.allclose(tanh, quick)
    assert np.allclose(quick, slow_encode(no.path, px, "quick"), rtol=1e-9, atol=1e-9)


def check_vision_against_loops():
    """The vectorised encoder equals the loop-by-loop one on a non-square image."""
    path = mmproj("default", dt=DT)
    px = image(96, 144, 9)
    got = vision.VisionTower.load(path).encode(px)
    want = slow_encode(path, px)
    assert got.shape == (6, DT)
    assert np.allclose(got, want, rtol=1e-9, atol=1e-9), np.max(np.abs(got - want))


def check_vision_xy_tables():
    """Slab 0 of the position table is indexed by the column, slab 1 by the row; swapping the
    slabs changes the soft tokens of a non-square image."""
    path = mmproj("default", dt=DT)
    tower = vision.VisionTower.load(path)
    px = image(96, 144, 10)
    trace = {}
    base = tower.encode(px, trace)
    added = trace["patches"] - trace["patch_proj"]
    wp = 144 // 16
    for n in range(added.shape[0]):
        assert np.allclose(added[n], tower.pos[0, n % wp] + tower.pos[1, n // wp], rtol=0,
                           atol=1e-12), n
    tower.pos = tower.pos[::-1].copy()
    assert not np.allclose(tower.encode(px), base)


def check_vision_two_images():
    """An image encoded alone equals the same image encoded next to another one."""
    tower = vision.VisionTower.load(mmproj("default", dt=DT))
    a, b = image(96, 96, 12), image(48, 144, 13)
    both = tower.encode_images([a, b])
    assert np.array_equal(both[0], tower.encode(a)) and np.array_equal(both[1], tower.encode(b))
    assert both[0].shape == (4, DT) and both[1].shape == (3, DT)


def _expect(exc, fn, *words):
    try:
        fn()
    except exc as e:
        for w in words:
            assert w in str(e), f"'{w}' not in: {e}"
        return
    raise AssertionError(f"no {exc.__name__}")


def check_vision_rejects_bad_input():
    tower = vision.VisionTower.load(mmproj("default", dt=DT))
    _expect(ValueError, lambda: tower.encode(image(96, 100, 1)), "multiples of 48")
    _expect(ValueError, lambda: tower.encode(np.zeros((48, 48))), "[H, W, 3]")
    _expect(ValueError, lambda: tower.encode(np.zeros((48, 48, 3), np.uint8)), "floats")
    _expect(ValueError, lambda: tower.encode(np.full((48, 48, 3), np.nan)), "NaN")
    _expect(ValueError, lambda: tower.encode(image(48, 48 * 22, 1)), "position table")
    rng = np.random.default_rng(1)
    md = tiny_mmproj_metadata(DT)
    tensors = tiny_mmproj_tensors(rng, DT)
    cases = {
        "arch": ([m if m[0] != "general.architecture" else (m[0], "str", "gemma4") for m in md],
                 tensors, "expected 'clip'"),
        "proj": ([m if m[0] != "clip.vision.projector_type" else (m[0], "str", "gemma4uv")
                  for m in md], tensors, "gemma4uv"),
        "key": ([m for m in md if m[0] != "clip.vision.block_count"], tensors,
                "clip.vision.block_count"),
        "bound": (md, [(n, a, "F16" if n.endswith("input_min") else t) for n, a, t in tensors],
                  "must be F32"),
        "std": (md, [x for x in tensors if x[0] != "v.std_scale"], "std_scale"),
        "tensor": (md, [x for x in tensors if x[0] != "v.blk.1.ffn_gate.weight"],
                   "v.blk.1.ffn_gate.weight"),
    }
    for name, (m, t, word) in cases.items():
        path = tmp_path(f"bad-{name}.gguf")
        write_gguf(path, m, t)
        _expect(GGUFError, lambda: vision.VisionTower.load(path), word, path)


CHECKS = [check_gguf_write_types, check_vision_pooling_known_grid, check_vision_rope_2d,
          check_vision_clamps_bite, check_vision_gelu_variants, check_vision_against_loops,
          check_vision_xy_tables, check_vision_two_images, check_vision_rejects_bad_input]


# ----------------------------------------------------------------------------------------------
# Text side, on the fixture's target (D = 128, PLE, sliding window 32, layers S S F S S F).

BOI, EOI = 5, 6  # any two ids of the tiny vocabulary stand in for <|image> / <image|>


def _tower():
    return vision.VisionTower.load(mmproj("default", dt=DT))


def check_media_embedding_rows(fx):
    """Embedding rows are not scaled by sqrt(D) and take PLE row 0: injecting E[0]·sqrt(D) where
    token 0 stands gives the token's result; E[10]·sqrt(D) where token 10 stands does not."""
    target, _ = fx.pair()
    scale = np.sqrt(target.cfg.n_embd)
    ids = [2, 10, 0, 11, 12]
    plain = target.run(ids)
    row0 = target.tok_embd[0:1] * scale
    inj = target.run([2, 10, -1, 11, 12], media=[(2, row0)])
    assert np.array_equal(inj.logits, plain.logits)
    assert np.array_equal(inj.blocks, [-1, -1, 0, -1, -1])
    ids10 = [2, 10, 10, 11, 12]
    plain10 = target.run(ids10)
    inj10 = target.run([2, 10, -1, 11, 12], media=[(2, target.tok_embd[10:11] * scale)])
    assert np.array_equal(inj10.logits[:2], plain10.logits[:2])
    assert not np.allclose(inj10.logits[2:], plain10.logits[2:])  # PLE: row 0, not row 10
    unscaled = target.run([2, 10, -1, 11, 12], media=[(2, target.tok_embd[0:1])])
    assert not np.allclose(unscaled.logits[2:], plain.logits[2:])  # the vector is used as is
    _expect(ValueError, lambda: target.run([2, -1, 3]), "out of range")
    _expect(ValueError, lambda: target.run([2, 3, 4], media=[(1, row0)]), "placeholder")
    _expect(ValueError, lambda: target.run([2, -1, -1], media=[(1, row0)]), "not covered")
    _expect(ValueError, lambda: target.run([2, -1], media=[(1, np.zeros((1, 64)))]), "128")


def expected_visible(mode, blocks, window, is_swa):
    """The media mask rules, entry by entry (README.md § Images)."""
    t = len(blocks)
    out = np.zeros((t, t), bool)
    for q in range(t):
        for k in range(t):
            in_window = (not is_swa) or q - k < window
            causal = k <= q and in_window
            same = blocks[q] >= 0 and blocks[q] == blocks[k]
            if mode == "causal":
                out[q, k] = causal
            elif mode == "bidirectional":
                out[q, k] = (k <= q or same) and in_window
            elif mode == "bidirectional-sliding-windowed":
                out[q, k] = (k <= q or (same and is_swa)) and in_window
            else:
                out[q, k] = causal or (same and is_swa)
    return out


def check_media_masks(fx):
    """Model.visibility against the entry-by-entry rules, with two images (one longer than the
    sliding window) and text around them."""
    target, _ = fx.pair()
    w = target.cfg.window
    blocks = np.array([-1, -1] + [0] * (w + 8) + [-1, -1] + [1] * 5 + [2] * 3 + [-1])
    pos = np.arange(blocks.size)
    for mode in gemma4.MEDIA_MASKS:
        vis = target.visibility(pos, blocks, mode)
        for is_swa in (False, True):
            want = expected_visible(mode, blocks, w, is_swa)
            assert np.array_equal(vis[is_swa], want), (mode, is_swa)
    plain = target.visibility(pos, np.full(blocks.size, -1), "bidirectional")
    assert np.array_equal(plain[True], expected_visible("causal", blocks, w, True))
    _expect(ValueError, lambda: target.visibility(pos, blocks, "full"), "unknown media mask")


def _prompt(tower, target, parts):
    """parts: ids and images -> (tokens, media) via splice_media."""
    toks, embs = [], []
    for p in parts:
        if isinstance(p, np.ndarray):
            toks.append(-1)
            embs.append(tower.encode(p))
        else:
            toks.append(p)
    return gemma4.splice_media(toks, embs)


def check_media_mask_effects(fx):
    """Changing an image's last soft token reaches its first row only with a bidirectional
    mask; rows before the image never change; a later image never reaches an earlier one, also
    when the two spans are adjacent."""
    target, _ = fx.pair()
    tower = _tower()
    a, b = image(96, 144, 21), image(96, 96, 22)
    toks, media = _prompt(tower, target, [2, BOI, a, EOI, 10, 11])
    start, emb = media[0]
    changed = emb.copy()
    changed[-1] += 0.5
    for mode in gemma4.MEDIA_MASKS:
        x = target.run(toks, media=media, media_mask=mode).logits
        y = target.run(toks, media=[(start, changed)], media_mask=mode).logits
        assert np.array_equal(x[:start], y[:start]), mode
        first_changed = not np.allclose(x[start], y[start], rtol=0, atol=1e-12)
        assert first_changed == (mode != "causal"), mode
        assert not np.allclose(x[-1], y[-1])
    for adjacent in (False, True):
        mid = [] if adjacent else [EOI, 12, BOI]
        alone, m1 = _prompt(tower, target, [2, BOI, a] + mid)
        both, m2 = _prompt(tower, target, [2, BOI, a] + mid + [b, EOI, 13])
        assert [s for s, _ in m2] == [2, len(alone)]
        for mode in gemma4.MEDIA_MASKS:
            x = target.run(alone, media=m1, media_mask=mode).logits
            y = target.run(both, media=m2, media_mask=mode).logits[:len(alone)]
            assert np.allclose(x, y, rtol=0, atol=1e-12), (mode, adjacent)
    merged = [(2, np.concatenate([m2[0][1], m2[1][1]]))]
    x = target.run(both, media=m2, media_mask="bidirectional").logits
    y = target.run(both, media=merged, media_mask="bidirectional").logits
    assert not np.allclose(x[2], y[2])  # two spans are two images, not one


def run_cli(*args):
    cmd = [sys.executable, os.path.join(HERE, "reference.py"), *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return res.returncode, res.stdout, res.stderr


def check_media_cli(fx):
    target, _ = fx.pair()
    tower = _tower()
    path = mmproj("default", dt=DT)
    a, b = image(96, 144, 31), image(48, 96, 32).astype(np.float32)
    pa, pb = tmp_path("a.npy"), tmp_path("b.npy")
    np.save(pa, a)
    np.save(pb, b)
    out = tmp_path("v.npz")
    rc, _, err = run_cli("vision", path, "--pixels", pa, "--out", out, "--trace")
    assert rc == 0, err
    with np.load(out) as z:
        assert np.array_equal(z["embeddings"], tower.encode(a)) and list(z["grid"]) == [2, 3]
        assert set(z.files) == {"embeddings", "grid", "patch_proj", "patches", "layer_0",
                                "layer_1", "pooled"}
    assert run_cli("vision", path, "--pixels", pa, "--out", out, "--vision-gelu", "quick")[0] == 0
    with np.load(out) as z:
        assert np.array_equal(z["embeddings"], vision.VisionTower.load(
            path, gelu="quick").encode(a)) and z.files == ["embeddings", "grid"]
    ids = [2, BOI, -1, EOI, 10, BOI, -1, EOI, 11]
    toks, media = gemma4.splice_media(ids, [tower.encode(a), tower.encode(b)])
    csv = ",".join(map(str, ids))
    for mode in gemma4.MEDIA_MASKS:
        rc, _, err = run_cli("logits", fx.target_path, f"--tokens={csv}", "--mmproj", path,
                             "--image-pixels", f"{pa},{pb}", "--media-mask", mode, "--out", out)
        assert rc == 0, err
        state = target.run(toks, media=media, media_mask=mode)
        with np.load(out) as z:
            assert np.array_equal(z["logits"], state.logits), mode
            assert np.array_equal(z["tokens"], toks) and np.array_equal(z["positions"],
                                                                        np.arange(len(toks)))
            assert z["image_spans"].tolist() == [[2, 6], [11, 2]]
    rc, stdout, err = run_cli("greedy", fx.target_path, f"--tokens={csv}", "--mmproj", path,
                              "--image-pixels", f"{pa},{pb}", "--media-mask", "bidirectional",
                              "-n", "3", "--ignore-eos")
    want = gemma4.greedy(target, toks, 3, stop_at_eog=False, media=media,
                         media_mask="bidirectional")
    assert rc == 0 and json.loads(stdout)["tokens"] == want, (stdout, err)
    rc, _, err = run_cli("logits", fx.target_path, f"--tokens={csv}", "--mmproj", path,
                         "--image-pixels", pa, "--out", out)
    assert rc == 1 and "2 image placeholder(s)" in err, err
    rc, _, err = run_cli("logits", fx.target_path, f"--tokens={csv}", "--out", out)
    assert rc == 1 and "--mmproj" in err, err
    narrow = mmproj("dt64", dt=64)
    rc, _, err = run_cli("logits", fx.target_path, f"--tokens={csv}", "--mmproj", narrow,
                         "--image-pixels", f"{pa},{pb}", "--out", out)
    assert rc == 1 and "projection width 64" in err, err
    rc, _, err = run_cli("vision", fx.target_path, "--pixels", pa, "--out", out)
    assert rc == 1 and "expected 'clip'" in err, err
    np.save(pb, np.zeros((50, 48, 3)))
    rc, _, err = run_cli("vision", path, "--pixels", pb, "--out", out)
    assert rc == 1 and "multiples of 48" in err, err


FIXTURE_CHECKS = [check_media_embedding_rows, check_media_masks, check_media_mask_effects,
                  check_media_cli]
