"""Step 3: PyTorch Gemma 4 text model (the target) and its MTP assistant, written from the specs.

Target (docs/gemma4.md § Forward pass): token embedding × sqrt(D); per-layer embeddings (PLE);
sliding and full attention layers with their own head dims, RoPE (full layers: proportional,
exponent over the whole head dim, only the first partial_rotary_factor·hd/2 pairs rotate),
Q/K RMSNorm, weightless V norm, attention scale 1.0, KV sharing (the last num_kv_shared_layers
layers read the cache of the last owning layer of their type), GeGLU (double width on the shared
layers with use_double_wide_mlp), sandwich norms, layer_scalar on the whole stream, final norm,
tied head and the final soft-cap.

Assistant (docs/mtp.md § Architecture): concat(target's scaled embedding, hidden) →
pre_projection → 4 Q-only layers (3 sliding + 1 full) attending the frozen target's K/V → norm →
tied dense head or centroid head, and post_projection → next hidden.

Parameter names are the Hugging Face names (Gemma4ForCausalLM / Gemma4AssistantForCausalLM), so
state_dict() is the checkpoint. Shapes: N sequences, T tokens, H heads, hd head dim.
"""

import dataclasses
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

NEG = -1e30  # masked score; rows with no visible key are zeroed after the softmax


@dataclasses.dataclass
class TargetConfig:
    vocab_size: int = 4096
    hidden_size: int = 256
    num_hidden_layers: int = 6
    num_attention_heads: int = 4
    num_key_value_heads: int = 1
    head_dim: int = 64
    global_head_dim: int = 128
    intermediate_size: int = 512
    use_double_wide_mlp: bool = True
    num_kv_shared_layers: int = 3
    hidden_size_per_layer_input: int = 32
    sliding_window: int = 64
    swa_period: int = 3  # (period - 1) sliding layers, then a full one; the last is full
    rope_theta_swa: float = 1e4
    rope_theta_full: float = 1e6
    partial_rotary_factor: float = 0.25
    final_logit_softcapping: float = 30.0
    rms_norm_eps: float = 1e-6
    max_position_embeddings: int = 4096

    def is_swa(self, l):
        return l != self.num_hidden_layers - 1 and l % self.swa_period != self.swa_period - 1

    def layer_head_dim(self, l):
        return self.head_dim if self.is_swa(l) else self.global_head_dim

    def first_shared(self):
        return self.num_hidden_layers - self.num_kv_shared_layers

    def owns_kv(self, l):
        return l < self.first_shared()

    def kv_source(self, l):
        """The layer whose K/V layer l reads (docs/gemma4.md § KV sharing)."""
        if self.owns_kv(l):
            return l
        return max(j for j in range(self.first_shared()) if self.is_swa(j) == self.is_swa(l))

    def n_ff(self, l):
        wide = self.use_double_wide_mlp and self.num_kv_shared_layers > 0 and not self.owns_kv(l)
        return 2 * self.intermediate_size if wide else self.intermediate_size

    def last_kv_layer(self, swa):
        """The target layer an assistant layer of that type reads: the last layer of the type,
        resolved through KV sharing (docs/mtp.md § Reading the target's KV cache)."""
        last = max(l for l in range(self.num_hidden_layers) if self.is_swa(l) == swa)
        return self.kv_source(last)

    def text_config(self):
        """The HF text_config fields (real Gemma 4 names)."""
        layer_types = ["sliding_attention" if self.is_swa(l) else "full_attention"
                       for l in range(self.num_hidden_layers)]
        return {
            "model_type": "gemma4_text",
            "vocab_size": self.vocab_size,
            "vocab_size_per_layer_input": self.vocab_size,
            "hidden_size": self.hidden_size,
            "hidden_size_per_layer_input": self.hidden_size_per_layer_input,
            "intermediate_size": self.intermediate_size,
            "use_double_wide_mlp": self.use_double_wide_mlp,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "num_global_key_value_heads": None,
            "head_dim": self.head_dim,
            "global_head_dim": self.global_head_dim,
            "attention_k_eq_v": False,
            "num_kv_shared_layers": self.num_kv_shared_layers,
            "sliding_window": self.sliding_window,
            "layer_types": layer_types,
            "rope_parameters": {
                "sliding_attention": {"rope_type": "default", "rope_theta": self.rope_theta_swa},
                "full_attention": {"rope_type": "proportional", "rope_theta": self.rope_theta_full,
                                   "partial_rotary_factor": self.partial_rotary_factor},
            },
            "final_logit_softcapping": self.final_logit_softcapping,
            "rms_norm_eps": self.rms_norm_eps,
            "hidden_activation": "gelu_pytorch_tanh",
            "max_position_embeddings": self.max_position_embeddings,
            "enable_moe_block": False,
            "attention_bias": False,
            "tie_word_embeddings": True,
            "pad_token_id": 0,
            "eos_token_id": 1,
            "bos_token_id": 2,
        }

    def hf_config(self):
        c = self.text_config()
        c["architectures"] = ["Gemma4ForCausalLM"]
        c["torch_dtype"] = "float32"
        return c


@dataclasses.dataclass
class AssistantConfig:
    hidden_size: int = 128
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    intermediate_size: int = 512
    num_centroids: int = 128
    centroid_intermediate_top_k: int = 8
    use_ordered_embeddings: bool = True

    def is_swa(self, l):
        return l != self.num_hidden_layers - 1

    def hf_config(self, target):
        """config.json of Gemma4AssistantForCausalLM for this body reading `target`."""
        text = target.text_config()
        n = self.num_hidden_layers
        text.update({
            "model_type": "gemma4_assistant_text",
            "hidden_size": self.hidden_size,
            "hidden_size_per_layer_input": 0,
            "vocab_size_per_layer_input": 0,
            "intermediate_size": self.intermediate_size,
            "use_double_wide_mlp": False,
            "num_hidden_layers": n,
            "num_attention_heads": self.num_attention_heads,
            "num_kv_shared_layers": n,
            "layer_types": ["sliding_attention" if self.is_swa(l) else "full_attention"
                            for l in range(n)],
            "final_logit_softcapping": None,
        })
        return {
            "architectures": ["Gemma4AssistantForCausalLM"],
            "model_type": "gemma4_assistant",
            "backbone_hidden_size": target.hidden_size,
            "use_ordered_embeddings": self.use_ordered_embeddings,
            "num_centroids": self.num_centroids,
            "centroid_intermediate_top_k": self.centroid_intermediate_top_k,
            "tie_word_embeddings": True,
            "torch_dtype": "float32",
            "text_config": text,
        }


# -- building blocks ------------------------------------------------------------------------

class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) · w (w used as is, no 1 + w); with_scale=False: no weight."""

    def __init__(self, dim, eps, with_scale=True, init=1.0):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.full((dim,), float(init))) if with_scale else None

    def forward(self, x):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return y if self.weight is None else y * self.weight


def gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


def inv_freq(head_dim, theta, partial=1.0):
    """[hd/2] inverse frequencies theta^(-2i/hd); pairs i >= int(partial·hd/2) get 0 (HF
    proportional RoPE keeps the exponent over the whole head dim)."""
    i = torch.arange(head_dim // 2, dtype=torch.float64)
    f = theta ** (-2.0 * i / head_dim)
    f[int(partial * head_dim / 2):] = 0.0
    return f


def rope_tables(pos, freqs, dtype):
    """(cos, sin) [N, T, 1, hd] for positions pos [N, T] and inverse frequencies [hd/2]."""
    ang = pos.to(torch.float64)[..., None] * freqs
    ang = torch.cat([ang, ang], -1)[:, :, None, :]
    return ang.cos().to(dtype), ang.sin().to(dtype)


def rope(x, tables):
    """NEOX rotate-half RoPE of x [N, T, H, hd] with tables from rope_tables()."""
    cos, sin = tables
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


def visibility(q_pos, k_pos, window=None, strict=False):
    """[N, Tq, S] bool: key p visible to query t iff p <= t (p < t when strict) and, with a
    window W, t - p < W."""
    q = q_pos[:, :, None]
    k = k_pos[:, None, :]
    vis = (k < q) if strict else (k <= q)
    if window is not None:
        vis = vis & (q - k < window)
    return vis


class Mask:
    """A visibility pattern prepared for attend(): additive bias [N, 1, Tq, S] and, when some
    query row sees no key, a [N, 1, Tq, 1] multiplier that zeroes those rows."""

    def __init__(self, visible, dtype):
        self.bias = torch.zeros(visible.shape, dtype=dtype).masked_fill(~visible, NEG)[:, None]
        empty = ~visible.any(-1)
        self.keep = (~empty).to(dtype)[:, None, :, None] if bool(empty.any()) else None


def attend(q, k, v, mask):
    """softmax(q·kᵀ·1.0 + mask)·v with grouped KV heads (query head h reads KV head
    h // (H / Hkv)). q [N, Tq, H, hd]; k, v [N, S, Hkv, hd]; mask: Mask. -> [N, Tq, H·hd]."""
    n, t, h, hd = q.shape
    n_kv = k.shape[2]
    rep = h // n_kv
    qg = q.permute(0, 2, 1, 3).reshape(n, n_kv, rep * t, hd)  # heads of one KV head together
    kt = k.permute(0, 2, 3, 1)  # [N, Hkv, hd, S]
    scores = torch.matmul(qg, kt).view(n, h, t, -1) + mask.bias
    p = torch.softmax(scores, -1)
    if mask.keep is not None:
        p = p * mask.keep
    o = torch.matmul(p.view(n, n_kv, rep * t, -1), v.permute(0, 2, 1, 3))  # [N, Hkv, rep·T, hd]
    return o.view(n, h, t, hd).permute(0, 2, 1, 3).reshape(n, t, h * hd)


class Mlp(nn.Module):
    def __init__(self, d, ff):
        super().__init__()
        self.gate_proj = nn.Linear(d, ff, bias=False)
        self.up_proj = nn.Linear(d, ff, bias=False)
        self.down_proj = nn.Linear(ff, d, bias=False)

    def forward(self, x):
        return self.down_proj(gelu_tanh(self.gate_proj(x)) * self.up_proj(x))


class Attention(nn.Module):
    """Q (and, on KV-owning layers, K/V) projections with their norms."""

    def __init__(self, d, n_head, n_kv, hd, eps, owns_kv):
        super().__init__()
        self.n_head, self.n_kv, self.hd = n_head, n_kv, hd
        qk_init = hd ** -0.25  # q·k starts near unit variance with the 1.0 scale
        self.q_proj = nn.Linear(d, n_head * hd, bias=False)
        self.q_norm = RMSNorm(hd, eps, init=qk_init)
        self.o_proj = nn.Linear(n_head * hd, d, bias=False)
        if owns_kv:
            self.k_proj = nn.Linear(d, n_kv * hd, bias=False)
            self.v_proj = nn.Linear(d, n_kv * hd, bias=False)
            self.k_norm = RMSNorm(hd, eps, init=qk_init)
            self.v_norm = RMSNorm(hd, eps, with_scale=False)

    def query(self, a, tables):
        q = self.q_proj(a).view(*a.shape[:2], self.n_head, self.hd)
        return rope(self.q_norm(q), tables)

    def key_value(self, a, tables):
        k = self.k_proj(a).view(*a.shape[:2], self.n_kv, self.hd)
        v = self.v_proj(a).view(*a.shape[:2], self.n_kv, self.hd)
        return rope(self.k_norm(k), tables), self.v_norm(v)


class DecoderLayer(nn.Module):
    """One Gemma 4 block; ple_width > 0 adds the per-layer-embedding branch."""

    def __init__(self, d, n_head, n_kv, hd, ff, eps, owns_kv, ple_width=0):
        super().__init__()
        self.input_layernorm = RMSNorm(d, eps)
        self.self_attn = Attention(d, n_head, n_kv, hd, eps, owns_kv)
        self.post_attention_layernorm = RMSNorm(d, eps)
        self.pre_feedforward_layernorm = RMSNorm(d, eps)
        self.mlp = Mlp(d, ff)
        self.post_feedforward_layernorm = RMSNorm(d, eps)
        self.layer_scalar = nn.Parameter(torch.ones(1))
        if ple_width:
            self.per_layer_input_gate = nn.Linear(d, ple_width, bias=False)
            self.per_layer_projection = nn.Linear(ple_width, d, bias=False)
            self.post_per_layer_input_norm = RMSNorm(d, eps)

    def forward(self, x, q, kv, mask, ple=None):
        """q [N, T, H, hd] (roped), kv = (K, V) to attend, mask: Mask over [N, T, S]."""
        o = self.self_attn.o_proj(attend(q, kv[0], kv[1], mask))
        x = x + self.post_attention_layernorm(o)
        f = self.mlp(self.pre_feedforward_layernorm(x))
        x = x + self.post_feedforward_layernorm(f)
        if ple is not None:
            g = gelu_tanh(self.per_layer_input_gate(x)) * ple
            x = x + self.post_per_layer_input_norm(self.per_layer_projection(g))
        return x * self.layer_scalar


def init_weights(module):
    """Linear: N(0, 1/fan_in); embeddings: N(0, 1/width) so E·sqrt(D) has unit scale."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=m.in_features ** -0.5)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=m.embedding_dim ** -0.5)


# -- the target -----------------------------------------------------------------------------

class TextModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, p, n_l = c.hidden_size, c.hidden_size_per_layer_input, c.num_hidden_layers
        self.embed_tokens = nn.Embedding(c.vocab_size, d)
        self.layers = nn.ModuleList(
            DecoderLayer(d, c.num_attention_heads, c.num_key_value_heads, c.layer_head_dim(l),
                         c.n_ff(l), c.rms_norm_eps, c.owns_kv(l), p) for l in range(n_l))
        self.norm = RMSNorm(d, c.rms_norm_eps)
        if p:
            self.embed_tokens_per_layer = nn.Embedding(c.vocab_size, n_l * p)
            self.per_layer_model_projection = nn.Linear(d, n_l * p, bias=False)
            self.per_layer_projection_norm = RMSNorm(p, c.rms_norm_eps)


class Gemma4ForCausalLM(nn.Module):
    """The target. forward(tokens [N, T]) -> (logits [N, T, V] soft-capped, hidden [N, T, D]
    post-final-norm, kv {owning layer: (K [N, T, Hkv, hd] normed + roped, V normed)})."""

    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.model = TextModel(c)
        init_weights(self)
        self.register_buffer("freqs_swa", inv_freq(c.head_dim, c.rope_theta_swa), False)
        self.register_buffer("freqs_full", inv_freq(c.global_head_dim, c.rope_theta_full,
                                                    c.partial_rotary_factor), False)

    def embed(self, tokens):
        """Scaled input embedding E[id]·sqrt(D) [N, T, D] (the assistant's input too)."""
        return self.model.embed_tokens(tokens) * math.sqrt(self.config.hidden_size)

    def ple_inputs(self, tokens, x0):
        """Per-layer inputs [N, T, L, P] (docs/gemma4.md § Per-layer embeddings)."""
        c, m = self.config, self.model
        n_l, p = c.num_hidden_layers, c.hidden_size_per_layer_input
        tokp = m.embed_tokens_per_layer(tokens) * math.sqrt(p)
        proj = m.per_layer_model_projection(x0) / math.sqrt(c.hidden_size)
        proj = m.per_layer_projection_norm(proj.view(*x0.shape[:2], n_l, p))
        return (proj + tokp.view(*x0.shape[:2], n_l, p)) / math.sqrt(2.0)

    def forward(self, tokens, positions=None):
        c = self.config
        n, t = tokens.shape
        pos = torch.arange(t)[None] if positions is None else positions  # [1 or N, T]
        x = self.embed(tokens)
        ple = self.ple_inputs(tokens, x) if c.hidden_size_per_layer_input else None
        masks = {True: Mask(visibility(pos, pos, c.sliding_window), x.dtype),
                 False: Mask(visibility(pos, pos), x.dtype)}
        tables = {True: rope_tables(pos, self.freqs_swa, x.dtype),
                  False: rope_tables(pos, self.freqs_full, x.dtype)}
        kv = {}
        for l, layer in enumerate(self.model.layers):
            swa = c.is_swa(l)
            a = layer.input_layernorm(x)
            if c.owns_kv(l):
                kv[l] = layer.self_attn.key_value(a, tables[swa])
            q = layer.self_attn.query(a, tables[swa])
            x = layer(x, q, kv[c.kv_source(l)], masks[swa], None if ple is None else ple[:, :, l])
        hidden = self.model.norm(x)
        logits = hidden @ self.model.embed_tokens.weight.t()
        cap = c.final_logit_softcapping
        if cap:
            logits = cap * torch.tanh(logits / cap)
        return logits, hidden, kv


# -- the assistant --------------------------------------------------------------------------

class AssistantModel(nn.Module):
    def __init__(self, a, target):
        super().__init__()
        eps = target.rms_norm_eps
        self.embed_tokens = nn.Embedding(target.vocab_size, a.hidden_size)
        self.layers = nn.ModuleList()
        for l in range(a.num_hidden_layers):
            hd = target.head_dim if a.is_swa(l) else target.global_head_dim
            self.layers.append(DecoderLayer(a.hidden_size, a.num_attention_heads,
                                            target.num_key_value_heads, hd, a.intermediate_size,
                                            eps, owns_kv=False))
        self.norm = RMSNorm(a.hidden_size, eps)


class MaskedEmbedding(nn.Module):
    """Centroid head: cluster scorer D -> C and token_ordering (row c of [C, V/C] = cluster c)."""

    def __init__(self, d, n_centroids, n_vocab):
        super().__init__()
        self.centroids = nn.Linear(d, n_centroids, bias=False)
        self.register_buffer("token_ordering", torch.arange(n_vocab, dtype=torch.int64))


class Gemma4AssistantForCausalLM(nn.Module):
    def __init__(self, config, target_config):
        super().__init__()
        self.config, self.target_config = config, target_config
        t = target_config
        self.model = AssistantModel(config, t)
        self.pre_projection = nn.Linear(2 * t.hidden_size, config.hidden_size, bias=False)
        self.post_projection = nn.Linear(config.hidden_size, t.hidden_size, bias=False)
        if config.use_ordered_embeddings:
            self.masked_embedding = MaskedEmbedding(config.hidden_size, config.num_centroids,
                                                    t.vocab_size)
        init_weights(self)
        self.register_buffer("freqs_swa", inv_freq(t.head_dim, t.rope_theta_swa), False)
        self.register_buffer("freqs_full", inv_freq(t.global_head_dim, t.rope_theta_full,
                                                    t.partial_rotary_factor), False)

    def queries(self, q_pos, k_pos, dtype):
        """Per-block inputs for queries at q_pos [1 or N, R] over target keys at k_pos
        [1 or N, S]: {swa: (Mask, rope tables)}. Only keys before the query position are
        visible (the token being extended is not in the target's cache yet)."""
        t = self.target_config
        return {True: (Mask(visibility(q_pos, k_pos, t.sliding_window, strict=True), dtype),
                       rope_tables(q_pos, self.freqs_swa, dtype)),
                False: (Mask(visibility(q_pos, k_pos, strict=True), dtype),
                        rope_tables(q_pos, self.freqs_full, dtype))}

    def forward(self, e, h, kv_swa, kv_full, queries):
        """One draft step for R rows per sequence. e [N, R, B]: the target's scaled embedding
        of the token being extended; h [N, R, B]: the incoming hidden; kv_* the target's (K, V)
        [N, S, Hkv, hd] of the layer each type reads; queries from queries().
        -> (y [N, R, D] output-normed state, h_next [N, R, B] post_projection)."""
        x = self.pre_projection(torch.cat([e, h], -1))
        for l, layer in enumerate(self.model.layers):
            swa = self.config.is_swa(l)
            mask, tables = queries[swa]
            q = layer.self_attn.query(layer.input_layernorm(x), tables)
            x = layer(x, q, kv_swa if swa else kv_full, mask)
        y = self.model.norm(x)
        return y, self.post_projection(y)

    def dense_logits(self, y):
        """Tied head, no soft-cap: [..., D] -> [..., V]."""
        return y @ self.model.embed_tokens.weight.t()

    def centroid_logits(self, y):
        """Centroid head (docs/mtp.md § Centroid head): the tokens of the top-k clusters get
        their dense logit, all others -inf. y [..., D] -> [..., V]."""
        c = self.config
        scores = self.masked_embedding.centroids(y)  # [..., C]
        top = torch.topk(scores, c.centroid_intermediate_top_k, dim=-1).indices
        ordering = self.masked_embedding.token_ordering.view(c.num_centroids, -1)
        cand = ordering[top].flatten(-2)  # [..., K·V/C]
        dense = self.dense_logits(y)
        out = torch.full_like(dense, float("-inf"))
        return out.scatter(-1, cand, dense.gather(-1, cand))


def count_parameters(module):
    return sum(p.numel() for p in module.parameters())
