"""Float64 building blocks shared by the Gemma 4 target and assistant references.

Everything here follows docs/gemma4.md § Forward pass literally. Shapes
are written as [T = tokens, H = heads, hd = head dim, S = keys].
"""

import numpy as np

SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)
GELU_COEF_A = 0.044715

# How GELU is evaluated: "exact" = float64 tanh approximation; "ggml" = llama.cpp's CPU
# lookup table (input rounded to fp16, fp16-rounded GELU-tanh of it, |x| >= 10 bypassed).
GELU_MODES = ("exact", "ggml")


def rms_norm(x, weight=None, eps=1e-6):
    """RMSNorm over the last axis: x / sqrt(mean(x^2) + eps) * weight (weight as is, no 1+w).

    x: [..., n]; weight: [n] or None for the weightless norm (V-norm, router norm).
    """
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y if weight is None else y * weight


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * x * (1.0 + GELU_COEF_A * x * x)))


def _gelu_ggml(x):
    """ggml's table GELU: fp16(x) -> fp16(gelu_f32(fp16(x))); x <= -10 -> 0; x >= 10 -> x."""
    xh = x.astype(np.float16).astype(np.float32)
    with np.errstate(over="ignore"):
        c = np.float32(SQRT_2_OVER_PI)
        a = np.float32(GELU_COEF_A)
        g = np.float32(0.5) * xh * (np.float32(1) + np.tanh(c * xh * (np.float32(1) + a * xh * xh)))
    y = g.astype(np.float16).astype(np.float64)
    y = np.where(x <= -10.0, 0.0, y)
    return np.where(x >= 10.0, x, y)


def gelu(x, mode="exact"):
    """GELU with the tanh approximation (gelu_pytorch_tanh). mode: see GELU_MODES."""
    if mode == "exact":
        return _gelu_tanh(x)
    if mode == "ggml":
        return _gelu_ggml(x)
    raise ValueError(f"unknown GELU mode '{mode}' (expected one of {GELU_MODES})")


def gelu_quick(x):
    """GELU-quick: x * sigmoid(1.702 x), written as x / (1 + exp(-1.702 x))."""
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-1.702 * x))


def linear(x, w):
    """x [..., in] times weight w [out, in] (row-major, i.e. ggml ne = [in, out]) -> [..., out]."""
    return x @ w.T


def geglu(x, w_gate, w_up, w_down, mode="exact"):
    """Gemma FFN: W_down · (gelu_tanh(W_gate·x) ⊙ (W_up·x)). x [T, D] -> [T, D]."""
    return linear(gelu(linear(x, w_gate), mode) * linear(x, w_up), w_down)


def rope_inv_freq(n_rot, base, freq_factors=None):
    """Inverse frequencies [n_rot/2]: base^(-2i/n_rot), divided by freq_factors[i] if given."""
    i = np.arange(n_rot // 2, dtype=np.float64)
    inv = base ** (-2.0 * i / n_rot)
    if freq_factors is not None:
        if len(freq_factors) < n_rot // 2:
            raise ValueError(f"rope_freqs has {len(freq_factors)} entries, need {n_rot // 2}")
        inv = inv / np.asarray(freq_factors[: n_rot // 2], np.float64)
    return inv


def proportional_inv_freq(head_dim, base, partial_factor):
    """HF "proportional" RoPE: the exponent uses the full head_dim, only the first
    int(partial_factor*head_dim/2) pairs rotate, the rest get frequency 0. -> [head_dim/2]."""
    inv = rope_inv_freq(head_dim, base)
    inv[int(partial_factor * head_dim / 2):] = 0.0
    return inv


def rope_neox(x, positions, inv_freq):
    """NEOX (rotate-half) RoPE. x [T, H, hd]; positions [T]; inv_freq [n_rot/2].

    Dim i pairs with dim i + n_rot/2 for i < n_rot/2; dims >= n_rot pass through.
    """
    half = inv_freq.shape[0]
    theta = np.asarray(positions, np.float64)[:, None] * inv_freq[None, :]  # [T, half]
    cos, sin = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
    out = x.copy()
    x1, x2 = x[..., :half], x[..., half:2 * half]
    out[..., :half] = x1 * cos - x2 * sin
    out[..., half:2 * half] = x2 * cos + x1 * sin
    return out


def attention_mask(q_pos, k_pos, window=None):
    """Visibility [T, S]: key position p is visible to query position t iff p <= t and, with a
    sliding window W, t - p < W (the window includes the current token)."""
    q = np.asarray(q_pos)[:, None]
    k = np.asarray(k_pos)[None, :]
    visible = k <= q
    if window is not None:
        visible &= (q - k) < window
    return visible


def attend(q, k, v, visible, scale=1.0):
    """softmax(q·kᵀ·scale + mask)·v with grouped KV heads.

    q [T, H, hd]; k, v [S, Hkv, hd]; visible [T, S] bool. Query head h reads KV head
    h // (H / Hkv). Returns [T, H*hd]. A query row with no visible key gives zeros.
    """
    t, n_head, hd = q.shape
    n_kv = k.shape[1]
    if n_head % n_kv:
        raise ValueError(f"{n_head} query heads are not a multiple of {n_kv} KV heads")
    kv_of_head = np.arange(n_head) // (n_head // n_kv)
    kh = k[:, kv_of_head, :]  # [S, H, hd]
    vh = v[:, kv_of_head, :]
    scores = np.einsum("thd,shd->hts", q, kh) * scale  # [H, T, S]
    scores = np.where(visible[None], scores, -np.inf)
    row_max = np.max(scores, axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    p = np.exp(scores - row_max)
    denom = np.sum(p, axis=-1, keepdims=True)
    p = p / np.where(denom > 0, denom, 1.0)
    out = np.einsum("hts,shd->thd", p, vh)  # [T, H, hd]
    return out.reshape(t, n_head * hd)


def softcap(x, cap):
    """cap * tanh(x / cap); cap <= 0 or None means no capping."""
    return x if not cap or cap <= 0 else cap * np.tanh(x / cap)


def log_softmax(logits):
    """Natural-log softmax over the last axis (float64)."""
    m = np.max(logits, axis=-1, keepdims=True)
    z = logits - m
    return z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))
