"""Float64 NumPy reference of Gemma 4's audio encoder (mmproj GGUF, projector "gemma4a").

Written from the HF transformers description of Gemma4AudioModel (a conformer) and
Gemma4MultimodalEmbedder, and from the mmproj layout llama.cpp's converter writes (keys
clip.audio.*, tensors a.* and mm.a.*, docs/audio.md § Tensors). One piece of log-mel frames at a
time (llama.cpp encodes each 30 s piece on its own); every frame is valid, so there is no padding
mask beyond the ends of the piece:

  x = input_proj(flatten(subsample(subsample(mel))))     [T, Da], T = ceil(ceil(F / 2) / 2)
  L × conformer layer (below)
  y = output_proj(x) + bias                              [T, O]  (a.pre_encode.out, optional)
  out = W_mm · RMSNorm_noweight(y)                       [T, Dt]

subsample: 3×3 conv, stride 2, padding 1, over (time, frequency), no bias; LayerNorm over the
channels (mean removed, gain only); ReLU. flatten: per time step, frequency then channel fastest.

Conformer layer (clip(v) = clamp to ±1e10, transformers' gradient_clipping; lin = clippable):
  x = x + ½·ffn_post_norm(clip(ffn_down(silu(ffn_up(ffn_norm(clip(x)))))))
  x = x + attn_post_norm(clip(attn_out(attention(attn_pre_norm(clip(x))))))
  x = x + conv_pw2(silu(norm_conv(clip(dwconv(glu(conv_pw1(conv_norm(x))))))))
  x = the second feed-forward half as the first (ffn_*_1)
  x = ln2(clip(x))

Attention (per head): q = attn_q(h)·hd^-½/ln 2·per_dim_scale (the file stores it after
softplus), k = attn_k(h)·ln(1 + e)/ln 2, v = attn_v(h). The logit of query t and key s is
q_t·k_s + q_t·R(t − s), R(d) = attn_k_rel · [sin(d·τ), cos(d·τ)], τ_i = exp(−i·ln 10000 /
(Da/2 − 1)), then 50·tanh(logit / 50). A key is allowed iff 0 ≤ t − s ≤ 11. The computation is
transformers' blocked one: queries in blocks of 12, each block against a context of 24 keys (the
12 before it and its own), the relative term brought into place by the Transformer-XL shift.

glu(h) = h[:, :Da] ⊙ sigmoid(h[:, Da:]) (conv_pw1's value rows come first); dwconv: causal, 5
taps per channel, the last tap on the current step. Every norm is an RMSNorm with eps 1e-6 (the
file's eps key is ignored, as llama.cpp ignores it); a norm whose gain is absent is skipped.
"""

import math

import numpy as np

import ops
from gguf_read import GGUFError, GGUFFile
from vision import ClippableLinear, matrix

PROJECTOR = "gemma4a"
EPS = 1e-6  # every norm of the tower; llama.cpp ignores clip.audio.attention.layer_norm_epsilon
# transformers' Gemma4AudioConfig defaults, which llama.cpp hard-codes (docs/audio.md § Constants)
CHUNK = 12  # attention_chunk_size: queries per block
MAX_PAST = 12  # attention_context_left - 1: keys before a block that its context holds
MAX_FUTURE = 0  # attention_context_right
CONTEXT = CHUNK + MAX_PAST + MAX_FUTURE  # keys per block context (24)
N_REL = CONTEXT // 2 + 1  # relative positions 12, 11, ..., 0 (13)
MASK_LEFT = MAX_PAST  # sliding_window_mask_function: key allowed iff 0 <= t - s < MASK_LEFT
MASK_RIGHT = MAX_FUTURE  # ... or 0 < s - t < MASK_RIGHT (never, with 0)
SOFTCAP = 50.0  # attention_logit_cap
MASKED_LOGIT = -1.0e9  # attention_invalid_logits_value, written after the soft-cap
RESIDUAL = 0.5  # residual_weight of each feed-forward half
CONV_KERNEL = 5  # conv_kernel_size of the depthwise convolution
GRADIENT_CLIP = 1.0e10  # gradient_clipping: the clamps in front of several norms
K_SCALE = math.log(1.0 + math.e) / math.log(2.0)
CLIPPABLE = ("ffn_up", "ffn_down", "attn_q", "attn_k", "attn_v", "attn_out", "conv_pw1",
             "conv_pw2", "ffn_up_1", "ffn_down_1")
# Tensors llama.cpp would apply that no Gemma 4 checkpoint has; the reference does not model
# them, so a file holding one is refused rather than silently read differently.
UNMODELLED = ("a.conv1d.0.bias", "a.conv1d.1.bias", "mm.a.soft_emb_norm.weight")
UNMODELLED_LAYER = ("per_dim_k_scale.weight",)


def token_count(frames):
    """Soft tokens of a piece of `frames` mel frames: two stride-2 convolutions."""
    return ((frames + 1) // 2 + 1) // 2


def q_scale(head_dim):
    """The query factor hd^-1/2 / ln 2 (before the per-dimension scale)."""
    return head_dim ** -0.5 / math.log(2.0)


def silu(x):
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-x))


def sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def grad_clip(x):
    """transformers' clamp to ±gradient_clipping (1e10) in front of several norms."""
    return np.clip(x, -GRADIENT_CLIP, GRADIENT_CLIP)


def norm(x, gain):
    """RMSNorm with gain `gain`, or nothing when the file has no such norm."""
    return x if gain is None else ops.rms_norm(x, gain, EPS)


def relative_position_table(width):
    """[N_REL, width]: row p is the sinusoid of distance N_REL - 1 - p (12 down to 0): sines of
    distance·τ_i, then cosines, τ_i = exp(-i·ln(10000) / max(width/2 - 1, 1))."""
    half = width // 2
    inv_timescales = np.exp(-np.arange(half) * (math.log(10000.0) / max(half - 1, 1)))
    distance = np.arange(N_REL - 1, -1, -1, dtype=np.float64)[:, None]
    scaled = distance * inv_timescales[None, :]
    return np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1)


# ----------------------------------------------------------------------------------------------
# Blocked local attention, as transformers computes it.


def to_blocks(x):
    """[T, ...] -> [B, CHUNK, ...], zero rows after the end; B = ceil(T / CHUNK)."""
    n_blocks = -(-x.shape[0] // CHUNK)
    pad = [(0, n_blocks * CHUNK - x.shape[0])] + [(0, 0)] * (x.ndim - 1)
    return np.pad(x, pad).reshape(n_blocks, CHUNK, *x.shape[1:])


def block_context(x):
    """[T, ...] -> [B, CONTEXT, ...]: block b's context is rows b·CHUNK - MAX_PAST ...
    b·CHUNK + CHUNK + MAX_FUTURE - 1 of x, zero outside 0 .. T - 1."""
    n_blocks = -(-x.shape[0] // CHUNK)
    pad = [(MAX_PAST, MAX_FUTURE + CHUNK - 1)] + [(0, 0)] * (x.ndim - 1)
    padded = np.pad(x, pad)
    index = CHUNK * np.arange(n_blocks)[:, None] + np.arange(CONTEXT)[None, :]
    return padded[index]


def rel_shift(x):
    """Transformer-XL relative shift: [..., CHUNK, N_REL] -> [..., CHUNK, CONTEXT]. Pad each row
    with zeros to CONTEXT + 1 values, read the rows back as one run of CHUNK·(CONTEXT + 1) values,
    keep the first CHUNK·CONTEXT and cut them into rows of CONTEXT. Row i then holds x[i, j - i]
    at context column j for 0 <= j - i < N_REL, and zeros elsewhere."""
    *lead, rows, n_pos = x.shape
    x = np.pad(x, [(0, 0)] * len(lead) + [(0, 0), (0, CONTEXT + 1 - n_pos)])
    x = x.reshape(*lead, rows * (CONTEXT + 1))[..., :rows * CONTEXT]
    return x.reshape(*lead, rows, CONTEXT)


def sliding_window_mask(n):
    """[n, n] bool, query t by key s: 0 <= t - s < MASK_LEFT or 0 < s - t < MASK_RIGHT."""
    d = np.arange(n)[:, None] - np.arange(n)[None, :]
    return ((d >= 0) & (d < MASK_LEFT)) | ((d < 0) & (-d < MASK_RIGHT))


def blocked_mask(mask):
    """A [T, T] mask -> [B, CHUNK, CONTEXT]: entry (b, i, j) is mask[b·CHUNK + i, b·CHUNK -
    MAX_PAST + j], False where either index is outside 0 .. T - 1."""
    n = mask.shape[0]
    n_blocks = -(-n // CHUNK)
    padded_n = n_blocks * CHUNK
    m = np.zeros((padded_n, padded_n), bool)
    m[:n, :n] = mask
    m = m.reshape(n_blocks, CHUNK, padded_n)
    m = np.pad(m, [(0, 0), (0, 0), (MAX_PAST, MAX_FUTURE)])
    index = CHUNK * np.arange(n_blocks)[:, None] + np.arange(CONTEXT)[None, :]  # [B, CONTEXT]
    return np.take_along_axis(m, np.broadcast_to(index[:, None, :], (n_blocks, CHUNK, CONTEXT)),
                              axis=2)


def blocked_attention(q, k, v, rel):
    """Local attention of q, k, v [T, H, hd] (already scaled); rel [N_REL, H, hd] (the projected
    relative positions 12 .. 0) or None for no position term. -> [T, H·hd]."""
    n, n_head, hd = q.shape
    qb = to_blocks(q)  # [B, CHUNK, H, hd]
    kb, vb = block_context(k), block_context(v)  # [B, CONTEXT, H, hd]
    logits = np.einsum("bihd,bjhd->hbij", qb, kb)  # [H, B, CHUNK, CONTEXT]
    if rel is not None:
        by_position = np.einsum("bihd,phd->hbip", qb, rel)  # [H, B, CHUNK, N_REL]
        logits = logits + rel_shift(by_position)
    logits = ops.softcap(logits, SOFTCAP)
    allowed = blocked_mask(sliding_window_mask(n))  # [B, CHUNK, CONTEXT]
    logits = np.where(allowed[None], logits, MASKED_LOGIT)
    logits = logits - logits.max(axis=-1, keepdims=True)
    p = np.exp(logits)
    p = p / p.sum(axis=-1, keepdims=True)
    out = np.einsum("hbij,bjhd->bihd", p, vb)  # [B, CHUNK, H, hd]
    return out.reshape(-1, n_head * hd)[:n]


# ----------------------------------------------------------------------------------------------
# Subsampling.


def conv3x3_stride2(x, w):
    """x [C_in, T, F], w [C_out, C_in, 3 (time), 3 (freq)] -> [C_out, ceil(T/2), ceil(F/2)]:
    zero padding 1 on each side; output (i, j) sums input rows 2i-1 .. 2i+1 and columns
    2j-1 .. 2j+1."""
    _, t, f = x.shape
    t_out, f_out = (t + 1) // 2, (f + 1) // 2
    padded = np.pad(x, [(0, 0), (1, 1), (1, 1)])
    out = np.zeros((w.shape[0], t_out, f_out))
    for a in range(3):
        for b in range(3):
            taps = padded[:, a:a + 2 * t_out:2, b:b + 2 * f_out:2]  # [C_in, t_out, f_out]
            out += np.einsum("oc,ctf->otf", w[:, :, a, b], taps)
    return out


def channel_layer_norm(x, gain):
    """LayerNorm over the channel axis 0 of [C, T, F]: mean removed, biased variance, gain only
    (none when the file has no gain)."""
    centred = x - x.mean(axis=0, keepdims=True)
    y = centred / np.sqrt(np.mean(centred * centred, axis=0, keepdims=True) + EPS)
    return y if gain is None else y * gain[:, None, None]


def depthwise_causal_conv(h, w):
    """h [T, D], w [D, K]: out[t, c] = sum_k w[c, k]·h[t - K + 1 + k, c] (zeros before t = 0)."""
    kernel = w.shape[1]
    padded = np.pad(h, [(kernel - 1, 0), (0, 0)])
    out = np.zeros_like(h)
    for k in range(kernel):
        out += padded[k:k + h.shape[0]] * w[:, k]
    return out


# ----------------------------------------------------------------------------------------------
# The file.


class AudioConfig:
    """Hyperparameters from the clip.audio.* keys."""

    def __init__(self, f):
        arch = f.require("general.architecture")
        if arch != "clip":
            raise GGUFError(f"{f.path}: general.architecture is '{arch}', expected 'clip' "
                            f"(an mmproj file)")
        proj = f.get("clip.audio.projector_type", f.get("clip.projector_type"))
        if proj != PROJECTOR:
            raise GGUFError(f"{f.path}: audio projector type is {proj!r}, expected "
                            f"'{PROJECTOR}' (keys clip.audio.projector_type / "
                            f"clip.projector_type)")

        def key(name):
            full = f"clip.audio.{name}"
            if full not in f.metadata:
                raise GGUFError(f"{f.path}: required key '{full}' is missing")
            return int(f.metadata[full])

        self.n_embd = key("embedding_length")
        self.n_ff = key("feed_forward_length")
        self.n_layer = key("block_count")
        self.n_head = key("attention.head_count")
        self.n_mel = key("num_mel_bins")
        self.n_embd_text = key("projection_dim")
        if min(self.n_embd, self.n_ff, self.n_layer, self.n_head, self.n_mel) <= 0:
            raise GGUFError(f"{f.path}: clip.audio sizes must be positive")
        if self.n_embd % self.n_head or self.n_embd % 2:
            raise GGUFError(f"{f.path}: audio width {self.n_embd} must be even and a multiple "
                            f"of the head count {self.n_head}")
        self.head_dim = self.n_embd // self.n_head
        self.sub_freq = token_count(self.n_mel)  # mel bins after the two stride-2 convolutions


def _vector(f, name, size, required):
    if name not in f.tensors:
        if required:
            raise GGUFError(f"{f.path}: required tensor '{name}' is missing")
        return None
    w = f.tensor(name).reshape(-1)
    if w.size != size:
        raise GGUFError(f"{f.path}: tensor '{name}' has {w.size} values, expected {size}")
    return w


def _check_shape(f, name, array, shape):
    if array.shape != shape:
        raise GGUFError(f"{f.path}: tensor '{name}' has shape {array.shape}, expected {shape}")


class AudioLayer:
    """Weights of one conformer layer a.blk.N.*; an absent optional norm is None."""

    def __init__(self, f, il, cfg):
        p = f"a.blk.{il}."
        d, ff = cfg.n_embd, cfg.n_ff
        for name in UNMODELLED_LAYER:
            if p + name in f.tensors:
                raise GGUFError(f"{f.path}: tensor '{p + name}' is not part of Gemma 4's audio "
                                f"tower; the reference does not model it")
        self.index = il
        self.ffn_norm = _vector(f, p + "ffn_norm.weight", d, True)
        self.ffn_post_norm = _vector(f, p + "ffn_post_norm.weight", d, False)
        self.attn_pre_norm = _vector(f, p + "attn_pre_norm.weight", d, False)
        self.per_dim_scale = _vector(f, p + "per_dim_scale.weight", cfg.head_dim, False)
        self.attn_post_norm = _vector(f, p + "attn_post_norm.weight", d, False)
        self.conv_norm = _vector(f, p + "conv_norm.weight", d, False)  # the conv PRE-norm
        self.norm_conv = _vector(f, p + "norm_conv.weight", d, False)  # after the depthwise conv
        self.ffn_norm_1 = _vector(f, p + "ffn_norm_1.weight", d, True)
        self.ffn_post_norm_1 = _vector(f, p + "ffn_post_norm_1.weight", d, False)
        self.ln2 = _vector(f, p + "ln2.weight", d, False)
        self.lin = {name: ClippableLinear(f, p + name) for name in CLIPPABLE}
        want = {"ffn_up": (ff, d), "ffn_down": (d, ff), "attn_q": (d, d), "attn_k": (d, d),
                "attn_v": (d, d), "attn_out": (d, d), "conv_pw1": (2 * d, d), "conv_pw2": (d, d),
                "ffn_up_1": (ff, d), "ffn_down_1": (d, ff)}
        for name, shape in want.items():
            _check_shape(f, f"{p}{name}.weight", self.lin[name].w, shape)
        self.k_rel = None
        if p + "attn_k_rel.weight" in f.tensors:
            self.k_rel = matrix(f.tensor(p + "attn_k_rel.weight"))  # [Da, Da]
            _check_shape(f, p + "attn_k_rel.weight", self.k_rel, (d, d))
        self.conv_dw = f.tensor(p + "conv_dw.weight")  # [Da, K], tap K-1 on the current step
        _check_shape(f, p + "conv_dw.weight", self.conv_dw, (d, CONV_KERNEL))


class AudioEncoder:
    """gemma4a encoder + embedder. Use AudioEncoder.load(path)."""

    def __init__(self, f):
        self.file = f
        self.cfg = cfg = AudioConfig(f)
        for name in UNMODELLED:
            if name in f.tensors:
                raise GGUFError(f"{f.path}: tensor '{name}' is not part of Gemma 4's audio "
                                f"tower; the reference does not model it")
        d = cfg.n_embd
        self.conv0 = f.tensor("a.conv1d.0.weight")  # [C0, 1, 3 (time), 3 (freq)]
        c0 = self.conv0.shape[0]
        _check_shape(f, "a.conv1d.0.weight", self.conv0, (c0, 1, 3, 3))
        self.conv1 = f.tensor("a.conv1d.1.weight")  # [C1, C0, 3, 3]
        c1 = self.conv1.shape[0]
        _check_shape(f, "a.conv1d.1.weight", self.conv1, (c1, c0, 3, 3))
        self.conv0_norm = _vector(f, "a.conv1d.0.norm.weight", c0, False)
        self.conv1_norm = _vector(f, "a.conv1d.1.norm.weight", c1, False)
        self.input_proj = matrix(f.tensor("a.input_projection.weight"))  # [Da, Fq·C1]
        _check_shape(f, "a.input_projection.weight", self.input_proj, (d, cfg.sub_freq * c1))
        self.layers = [AudioLayer(f, il, cfg) for il in range(cfg.n_layer)]
        self.out_proj = self.out_bias = None
        width = d
        if "a.pre_encode.out.weight" in f.tensors:
            self.out_proj = matrix(f.tensor("a.pre_encode.out.weight"))  # [O, Da]
            width = self.out_proj.shape[0]
            _check_shape(f, "a.pre_encode.out.weight", self.out_proj, (width, d))
            self.out_bias = _vector(f, "a.pre_encode.out.bias", width, False)
        elif "a.pre_encode.out.bias" in f.tensors:
            raise GGUFError(f"{f.path}: tensor 'a.pre_encode.out.bias' without "
                            f"'a.pre_encode.out.weight'")
        self.mm_proj = matrix(f.tensor("mm.a.input_projection.weight"))  # [Dt, O or Da]
        _check_shape(f, "mm.a.input_projection.weight", self.mm_proj, (cfg.n_embd_text, width))
        self.n_embd_out = cfg.n_embd_text

    @classmethod
    def load(cls, path):
        return cls(GGUFFile(path))

    # -- pieces ------------------------------------------------------------------------------

    def check_mel(self, mel):
        """-> float64 [F, n_mel] with F >= 1 and finite values."""
        m = np.asarray(mel)
        if m.ndim != 2 or m.shape[1] != self.cfg.n_mel:
            raise ValueError(f"log-mel input must have shape [frames, {self.cfg.n_mel}], got "
                             f"{m.shape}")
        if not np.issubdtype(m.dtype, np.floating):
            raise ValueError(f"log-mel input must be floats, got {m.dtype}")
        if m.shape[0] == 0:
            raise ValueError("log-mel input has no frames")
        m = m.astype(np.float64)
        if not np.all(np.isfinite(m)):
            raise ValueError("log-mel input contains NaN or infinity")
        return m

    def subsample(self, mel):
        """[F, n_mel] -> [T, Da]: two conv / LayerNorm / ReLU stages, flatten, input projection."""
        h = mel[None]  # [1, F, n_mel]: one channel over (time, frequency)
        h = np.maximum(channel_layer_norm(conv3x3_stride2(h, self.conv0), self.conv0_norm), 0.0)
        h = np.maximum(channel_layer_norm(conv3x3_stride2(h, self.conv1), self.conv1_norm), 0.0)
        rows = h.transpose(1, 2, 0).reshape(h.shape[1], -1)  # [T, Fq·C1], channel fastest
        return ops.linear(rows, self.input_proj)

    def feed_forward(self, x, up, down, pre, post):
        h = norm(grad_clip(x), pre)
        h = down(silu(up(h)))
        return x + RESIDUAL * norm(grad_clip(h), post)

    def attention(self, ly, h):
        """h [T, Da] (after the pre-norm) -> [T, Da] (after attn_out, before the post-norm)."""
        cfg = self.cfg
        n, n_head, hd = h.shape[0], cfg.n_head, cfg.head_dim
        q = ly.lin["attn_q"](h).reshape(n, n_head, hd) * q_scale(hd)
        if ly.per_dim_scale is not None:
            q = q * ly.per_dim_scale  # already softplus-ed in the file
        k = ly.lin["attn_k"](h).reshape(n, n_head, hd) * K_SCALE
        v = ly.lin["attn_v"](h).reshape(n, n_head, hd)
        rel = None
        if ly.k_rel is not None:
            table = relative_position_table(cfg.n_embd)
            rel = ops.linear(table, ly.k_rel).reshape(N_REL, n_head, hd)
        return ly.lin["attn_out"](blocked_attention(q, k, v, rel))

    def light_conv(self, ly, x):
        d = self.cfg.n_embd
        h = ly.lin["conv_pw1"](norm(x, ly.conv_norm))
        h = h[:, :d] * sigmoid(h[:, d:])
        h = depthwise_causal_conv(h, ly.conv_dw)
        h = silu(norm(grad_clip(h), ly.norm_conv))
        return x + ly.lin["conv_pw2"](h)

    def layer(self, ly, x):
        x = self.feed_forward(x, ly.lin["ffn_up"], ly.lin["ffn_down"], ly.ffn_norm,
                              ly.ffn_post_norm)
        a = self.attention(ly, norm(grad_clip(x), ly.attn_pre_norm))
        x = x + norm(grad_clip(a), ly.attn_post_norm)
        x = self.light_conv(ly, x)
        x = self.feed_forward(x, ly.lin["ffn_up_1"], ly.lin["ffn_down_1"], ly.ffn_norm_1,
                              ly.ffn_post_norm_1)
        return norm(grad_clip(x), ly.ln2)

    # -- public ------------------------------------------------------------------------------

    def encode(self, mel, trace=None):
        """One piece of log-mel frames [F, n_mel] -> soft tokens [ceil(ceil(F/2)/2), Dt]. trace
        (a dict) receives subsample [T, Da] (after the input projection), layer_L [T, Da] and
        encoder_out [T, O or Da] (after the output projection, before the embedder)."""
        x = self.subsample(self.check_mel(mel))
        if trace is not None:
            trace["subsample"] = x
        for ly in self.layers:
            x = self.layer(ly, x)
            if trace is not None:
                trace[f"layer_{ly.index}"] = x
        if self.out_proj is not None:
            x = ops.linear(x, self.out_proj)
            if self.out_bias is not None:
                x = x + self.out_bias
        if trace is not None:
            trace["encoder_out"] = x
        return ops.linear(ops.rms_norm(x, None, EPS), self.mm_proj)

    def encode_pieces(self, mels, trace=None):
        """Each piece encoded on its own, the soft tokens concatenated in order ->
        ([sum of tokens, Dt], [tokens per piece]). trace entries are concatenated likewise."""
        outputs, counts, traces = [], [], []
        for mel in mels:
            t = {} if trace is not None else None
            outputs.append(self.encode(mel, t))
            counts.append(outputs[-1].shape[0])
            traces.append(t)
        if trace is not None and traces:
            for name in traces[0]:
                trace[name] = np.concatenate([t[name] for t in traces])
        return np.concatenate(outputs), counts
