"""Test-model conditioning and engine-rounding emulation for the reference parity test.

* condition_qk_norms(): rescales a random model's attn_q_norm / attn_k_norm weights in place so
  that attention scores have unit variance (see README.md: the generator's scores have std
  sqrt(head_dim), which amplifies float32 rounding about 2x per layer).
* emulate(): patches a loaded reference Model so it rounds where the C++ engine rounds for
  quantized weights: Q8_0 activations in front of every matmul whose weight is quantized, and
  the embedding in f32. The rest stays float64, so what remains is float order and the Q8_0
  rounding-boundary flips that float order causes.
* emulate_audio(): the same Q8_0 activation rounding for a loaded gemma4a AudioEncoder.
"""

import contextlib

import numpy as np

import gguf_read  # tools/reference, put on sys.path by run_parity.py
import ops

QK8_0 = 32  # values per Q8_0 block (docs/formats.md § Block layouts)
FLOAT_TYPES = ("F32", "F16", "BF16", "F64")


def condition_qk_norms(path):
    """Sets every attn_q_norm / attn_k_norm weight (F32) of the GGUF at `path` to RMS
    head_dim^-1/4, keeping each vector's shape: q·k then has about unit variance. Idempotent.
    Returns the number of tensors rewritten."""
    f = gguf_read.GGUFFile(path)
    spots = []  # (file offset, n values)
    for name, t in f.tensors.items():
        if not (name.endswith(".attn_q_norm.weight") or name.endswith(".attn_k_norm.weight")):
            continue
        if t.type_name.upper() != "F32":
            raise ValueError(f"{path}: tensor '{name}' is {t.type_name}, expected F32")
        spots.append((f.data_start + t.offset, t.n_values))
    del f
    mm = np.memmap(path, dtype=np.uint8, mode="r+")
    try:
        for offset, n in spots:
            w = mm[offset:offset + 4 * n].view("<f4")
            rms = np.sqrt(np.mean(w.astype(np.float64) ** 2))
            if rms > 0:
                w[:] = (w / rms * float(n) ** -0.25).astype(np.float32)
        mm.flush()
    finally:
        del mm
    return len(spots)


def quantized_inputs(path):
    """The matmul input widths the C++ engine quantizes to Q8_0 activations for this file: the
    ne[0] of every quantized (non-float) matrix. Raises ValueError if one width is used by both
    a float and a quantized matrix (the emulation decides by width) or a type is not Q8_0-family."""
    f = gguf_read.GGUFFile(path)
    quant, plain = set(), set()
    for name, t in f.tensors.items():
        if len(t.ne) < 2 or name == "per_layer_token_embd.weight":
            continue  # vectors, and the PLE table (looked up by row, never multiplied)
        tname = t.type_name.upper()
        if tname in FLOAT_TYPES:
            plain.add(t.ne[0])
        elif tname in ("Q8_0", "Q4_0", "Q5_0"):
            quant.add(t.ne[0])
        else:
            raise ValueError(f"{path}: tensor '{name}' is {tname}; only Q8_0-activation types "
                             "are emulated")
    if quant & plain:
        raise ValueError(f"{path}: input widths {sorted(quant & plain)} occur with float and "
                         "quantized weights; the emulation cannot tell them apart")
    return quant


def q8_0_roundtrip(x):
    """x [..., n] (n a multiple of 32) -> the values of its Q8_0 quantization, as the engine's
    QuantizeRowQ8_0: f32 input, d = amax/127 in f32, codes roundf(x·(1/d)), d stored as f16."""
    x = np.asarray(x)
    b = x.astype(np.float32).reshape(-1, QK8_0)
    amax = np.max(np.abs(b), axis=1, keepdims=True)
    d = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    v = (b * inv).astype(np.float64)  # the f32 product, exactly
    q = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5), -128, 127)
    return (q * d.astype(np.float16).astype(np.float64)).reshape(x.shape)


class _QuantizedInput:
    """An expert weight stack whose `@ v` quantizes v first (the MoE path multiplies with @)."""

    def __init__(self, w):
        self.w = w

    def __getitem__(self, index):
        return _QuantizedInput(self.w[index])

    def __matmul__(self, v):
        return self.w @ q8_0_roundtrip(v)


@contextlib.contextmanager
def emulate(model, q8_widths):
    """`with emulate(model, q8_widths): model.forward(...)` runs the reference with Q8_0
    activations in front of every matmul whose input width is in q8_widths (quantized_inputs())
    and the embedding in f32. Restores the model and ops.linear on exit."""
    plain, widths, saved_experts = ops.linear, set(q8_widths), []

    def linear(x, w):
        return plain(q8_0_roundtrip(x) if x.shape[-1] in widths else x, w)

    # The embedding in f32 as the engine computes it (row · f32 sqrt(D)): q4_0 rows sit on a
    # 16-level grid, so Q8_0 codes of x0 (the PLE projection's input) fall on exact rounding ties
    # that only the engine's own f32 rounding resolves the same way.
    scale = np.float32(np.sqrt(np.float32(model.cfg.n_embd)))

    def embed(tokens):
        rows = model.tok_embd[model.check_tokens(tokens)].astype(np.float32)
        return (rows * scale).astype(np.float64)

    try:
        if widths:
            ops.linear, model.embed = linear, embed
            for ly in model.layers:
                if getattr(ly, "router", None) is None:
                    continue
                saved_experts.append((ly, ly.exp_gate, ly.exp_up, ly.exp_down))
                ly.exp_gate, ly.exp_up, ly.exp_down = [
                    _QuantizedInput(w) if w.shape[-1] in widths else w
                    for w in (ly.exp_gate, ly.exp_up, ly.exp_down)]
        yield model
    finally:
        ops.linear = plain
        model.__dict__.pop("embed", None)
        for ly, g, u, d in saved_experts:
            ly.exp_gate, ly.exp_up, ly.exp_down = g, u, d


QUANTIZED_TYPES = ("Q8_0", "Q4_0", "Q5_0")  # the types whose matmuls take Q8_0 activations


@contextlib.contextmanager
def emulate_audio(encoder):
    """`with emulate_audio(enc): enc.encode(mel)` runs the audio reference (audio_encoder.py)
    with Q8_0 activations in front of every matmul whose weight its file stores quantized: the
    layers' linears, attn_k_rel, the output projection and the two input projections, whichever
    are quantized. Restores ops.linear on exit."""
    f = encoder.file
    quantized = set()

    def add(name, w):
        if w is not None and f.info(name).type_name.upper() in QUANTIZED_TYPES:
            quantized.add(id(w))

    for ly in encoder.layers:
        for name, lin in ly.lin.items():
            add(f"a.blk.{ly.index}.{name}.weight", lin.w)
        add(f"a.blk.{ly.index}.attn_k_rel.weight", ly.k_rel)
    add("a.input_projection.weight", encoder.input_proj)
    add("a.pre_encode.out.weight", encoder.out_proj)
    add("mm.a.input_projection.weight", encoder.mm_proj)
    plain = ops.linear

    def linear(x, w):
        return plain(q8_0_roundtrip(x) if id(w) in quantized else x, w)

    ops.linear = linear
    try:
        yield encoder
    finally:
        ops.linear = plain
