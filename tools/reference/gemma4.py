"""Float64 NumPy reference of the Gemma 4 text decoder (GGUF arch "gemma4"): tandem's oracle.

Follows docs/gemma4.md § Forward pass: sliding/full layers with their own
head dims, KV heads and RoPE, QK-norm, weightless V-norm, attention scale 1.0, GeGLU with a
per-layer width, per-layer embeddings, KV sharing, MoE, V = K, layer output scale, final norm,
tied or untied head and final soft-cap. The whole sequence is evaluated in one pass.

Media (README.md § Images): rows of the sequence may be given as embedding vectors
(an image's soft tokens) instead of token ids. Those rows are not scaled by sqrt(D); with per-layer
embeddings their token-identity part uses token id 0 (pad) and their projection part uses the
injected vector. The attention over those rows follows one of MEDIA_MASKS.
"""

import numpy as np

import ops
from gguf_read import GGUFError, GGUFFile

# Token texts llama.cpp treats as end-of-generation for Gemma 4 (architecture spec 4.1).
EOG_TEXTS = ("<eos>", "<turn|>", "<|tool_response>")

# Attention rules for media rows; an "image" is one span of embedding rows (see Model.run).
#   causal                 plain causal / sliding-window mask (HF for E2B/E4B)
#   bidirectional          llama.cpp (non-causal decode of each image chunk, every layer): a row
#                          of an image also sees the later rows of the same image; on sliding
#                          layers the window still hides keys more than W-1 positions back
#   bidirectional-sliding  HF use_bidirectional_attention="vision" as in the 26B/31B models:
#                          on sliding layers only, the rows of one image see each other in
#                          full (OR'ed onto the sliding causal mask); full layers stay causal
#   bidirectional-sliding-windowed
#                          the same with the window kept on the sliding layers: a row of an
#                          image sees its image's later rows, but no key more than W-1
#                          positions back (HF gemma4_unified's AND(window, OR(causal, block));
#                          tandem's bidirectional-sliding). Differs from bidirectional-sliding
#                          only for an image longer than the window.
MEDIA_MASKS = ("causal", "bidirectional", "bidirectional-sliding",
               "bidirectional-sliding-windowed")
PLACEHOLDER = -1  # token id of a row given as an embedding


class Config:
    """Hyperparameters of a gemma4-style file, read from the '{arch}.*' keys."""

    def __init__(self, f, arch):
        def key(name, default=None, required=True):
            full = f"{arch}.{name}"
            if full in f.metadata:
                return f.metadata[full]
            if required and default is None:
                raise GGUFError(f"{f.path}: required key '{full}' is missing")
            return default

        def per_layer(value):
            arr = np.asarray(value).reshape(-1)
            return [int(arr[0])] * self.n_layer if arr.size == 1 else [int(v) for v in arr]

        self.arch = arch
        self.n_embd = int(key("embedding_length"))
        self.n_layer = int(key("block_count"))
        self.n_head = int(key("attention.head_count"))
        self.n_head_kv = per_layer(key("attention.head_count_kv", self.n_head))
        self.head_dim_full = int(key("attention.key_length"))
        self.head_dim_swa = int(key("attention.key_length_swa", self.head_dim_full))
        self.eps = float(key("attention.layer_norm_rms_epsilon", 1e-6))
        self.window = int(key("attention.sliding_window", 0))
        pattern = key("attention.sliding_window_pattern", [False] * self.n_layer)
        self.is_swa = [bool(v) for v in np.asarray(pattern).reshape(-1)]
        if len(self.is_swa) != self.n_layer:
            raise GGUFError(f"{f.path}: key '{arch}.attention.sliding_window_pattern' has "
                            f"{len(self.is_swa)} entries, block_count is {self.n_layer}")
        self.n_shared_kv = int(key("attention.shared_kv_layers", 0))
        self.n_embd_per_layer = int(key("embedding_length_per_layer_input", 0))
        self.rope_base = float(key("rope.freq_base", 10000.0))
        self.rope_base_swa = float(key("rope.freq_base_swa", self.rope_base))
        self.n_rot = int(key("rope.dimension_count", self.head_dim_full))
        self.n_rot_swa = int(key("rope.dimension_count_swa", self.head_dim_swa))
        self.softcap = float(key("final_logit_softcapping", 0.0, required=False))
        self.n_expert_used = int(key("expert_used_count", 0, required=False))
        self.n_vocab = None  # filled from token_embd

    def head_dim(self, il):
        return self.head_dim_swa if self.is_swa[il] else self.head_dim_full


class Rope:
    """RoPE of one layer type: inverse frequencies [hd/2 or n_rot/2], NEOX pairing."""

    def __init__(self, n_rot, base, freq_factors=None, proportional=None):
        if proportional is not None:  # (head_dim, partial factor) when rope_freqs is absent
            self.inv_freq = ops.proportional_inv_freq(proportional[0], base, proportional[1])
        else:
            self.inv_freq = ops.rope_inv_freq(n_rot, base, freq_factors)

    def __call__(self, x, positions):
        return ops.rope_neox(x, positions, self.inv_freq)


def make_ropes(f, cfg, partial_rotary_factor):
    """(sliding Rope, full Rope). Full layers use rope_freqs.weight when present, else the
    HF proportional rule with partial_rotary_factor (spec 2.4)."""
    swa = Rope(cfg.n_rot_swa, cfg.rope_base_swa)
    if "rope_freqs.weight" in f.tensors:
        full = Rope(cfg.n_rot, cfg.rope_base, f.tensor("rope_freqs.weight"))
    else:
        full = Rope(None, cfg.rope_base, proportional=(cfg.head_dim_full, partial_rotary_factor))
    return swa, full


def matrix(w):
    """Store 2-D weights column-major so that x @ w.T runs on contiguous memory (the values and
    the [out, in] indexing are unchanged; only the speed of the BLAS call differs)."""
    return np.asfortranarray(w) if w.ndim == 2 else w


class Layer:
    """Weights of one decoder block (all float64, row-major [out, in]); None when absent."""

    def __init__(self, f, il):
        p = f"blk.{il}."

        def opt(name):
            return matrix(f.tensor(p + name)) if p + name in f.tensors else None

        def req(name):
            return matrix(f.tensor(p + name))

        self.index = il
        self.attn_norm, self.post_attention_norm = req("attn_norm.weight"), req(
            "post_attention_norm.weight")
        self.wq, self.wo, self.q_norm = req("attn_q.weight"), req("attn_output.weight"), req(
            "attn_q_norm.weight")
        self.wk, self.wv, self.k_norm = opt("attn_k.weight"), opt("attn_v.weight"), opt(
            "attn_k_norm.weight")
        self.ffn_norm, self.post_ffw_norm = opt("ffn_norm.weight"), opt("post_ffw_norm.weight")
        self.w_gate, self.w_up, self.w_down = opt("ffn_gate.weight"), opt("ffn_up.weight"), opt(
            "ffn_down.weight")
        scale = opt("layer_output_scale.weight")
        self.out_scale = 1.0 if scale is None else float(scale.reshape(-1)[0])
        # Per-layer embeddings (PLE).
        self.ple_gate, self.ple_proj, self.ple_norm = opt("inp_gate.weight"), opt(
            "proj.weight"), opt("post_norm.weight")
        # MoE: presence of the router makes this an MoE layer.
        self.router = opt("ffn_gate_inp.weight")  # [E, D]
        if self.router is not None:
            self.router_scale = req("ffn_gate_inp.scale")  # [D]
            self.pre_ffw_norm_2 = req("pre_ffw_norm_2.weight")
            self.post_ffw_norm_1 = req("post_ffw_norm_1.weight")
            self.post_ffw_norm_2 = req("post_ffw_norm_2.weight")
            gate_up = opt("ffn_gate_up_exps.weight")  # [E, 2F, D]
            if gate_up is not None:
                n_ff = gate_up.shape[1] // 2
                self.exp_gate, self.exp_up = gate_up[:, :n_ff], gate_up[:, n_ff:]
            else:
                self.exp_gate, self.exp_up = req("ffn_gate_exps.weight"), req("ffn_up_exps.weight")
            self.exp_down = req("ffn_down_exps.weight")  # [E, D, F]
            s = opt("ffn_down_exps.scale")
            self.exp_scale = np.ones(self.router.shape[0]) if s is None else s.reshape(-1)


class TargetState:
    """Result of one whole-sequence pass.

    tokens [T], positions [T], logits [T, V] (soft-capped), hidden [T, D] (post-final-norm),
    kv: owning layer index -> (K [T, Hkv, hd] normed+roped, V [T, Hkv, hd] normed).
    """

    def __init__(self, model, tokens, positions, logits, hidden, kv, blocks=None):
        self.model, self.tokens, self.positions = model, tokens, positions
        self.logits, self.hidden, self.kv = logits, hidden, kv
        # [T]: -1 for token rows, else the index of the media span the row belongs to.
        self.blocks = np.full(tokens.size, -1, np.int64) if blocks is None else blocks

    def layer_kv(self, il):
        """K/V layer il attends (its own, or its KV source's for shared layers)."""
        return self.kv[self.model.kv_source[il]]


class Model:
    """The Gemma 4 target. Use Model.load(path)."""

    def __init__(self, f, gelu_mode="exact", partial_rotary_factor=0.25):
        arch = f.require("general.architecture")
        if arch != "gemma4":
            raise GGUFError(f"{f.path}: general.architecture is '{arch}', expected 'gemma4'")
        self.file, self.gelu_mode = f, gelu_mode
        self.cfg = cfg = Config(f, arch)
        self.tok_embd = f.tensor("token_embd.weight")  # [V, D]
        cfg.n_vocab = self.tok_embd.shape[0]
        if self.tok_embd.shape[1] != cfg.n_embd:
            raise GGUFError(f"{f.path}: tensor 'token_embd.weight' width "
                            f"{self.tok_embd.shape[1]} != embedding_length {cfg.n_embd}")
        self.output = matrix(f.tensor("output.weight") if "output.weight" in f.tensors
                             else self.tok_embd)
        self.output_norm = f.tensor("output_norm.weight")
        self.rope_swa, self.rope_full = make_ropes(f, cfg, partial_rotary_factor)
        self.layers = [Layer(f, il) for il in range(cfg.n_layer)]
        self.kv_source = self._kv_sources()
        self.has_ple = cfg.n_embd_per_layer > 0
        if self.has_ple:
            self.ple_model_proj = matrix(f.tensor("per_layer_model_proj.weight"))  # [L*P, D]
            self.ple_proj_norm = f.tensor("per_layer_proj_norm.weight")  # [P]
            f.info("per_layer_token_embd.weight")  # gathered by rows on use: [V, L*P]
        self.eog_ids = eog_token_ids(f)

    @classmethod
    def load(cls, path, gelu_mode="exact", partial_rotary_factor=0.25):
        """Read a gemma4 GGUF. gelu_mode: "exact" (float64) or "ggml" (llama.cpp fp16 table)."""
        return cls(GGUFFile(path), gelu_mode, partial_rotary_factor)

    def _kv_sources(self):
        """Layer -> index of the layer whose K/V it uses: itself when it owns KV, else the last
        owning layer of the same attention type (spec 2.5)."""
        cfg = self.cfg
        n_own = cfg.n_layer - cfg.n_shared_kv
        src = []
        for il in range(cfg.n_layer):
            if il < n_own:
                if self.layers[il].wk is None:
                    raise GGUFError(f"{self.file.path}: tensor 'blk.{il}.attn_k.weight' is "
                                    f"missing on a KV-owning layer")
                src.append(il)
                continue
            same = [j for j in range(n_own) if cfg.is_swa[j] == cfg.is_swa[il]]
            if not same:
                raise GGUFError(f"{self.file.path}: shared layer {il} has no KV-owning layer of "
                                f"the same attention type")
            src.append(same[-1])
        return src

    # -- pieces ------------------------------------------------------------------------------

    def check_tokens(self, tokens):
        tokens = np.asarray(tokens, np.int64).reshape(-1)
        if tokens.size == 0:
            raise ValueError("empty token list")
        if tokens.min() < 0 or tokens.max() >= self.cfg.n_vocab:
            raise ValueError(f"token id out of range 0..{self.cfg.n_vocab - 1}")
        return tokens

    def embed(self, tokens):
        """Scaled input embedding E[id]·sqrt(D): [T] -> [T, D]."""
        return self.tok_embd[self.check_tokens(tokens)] * np.sqrt(self.cfg.n_embd)

    def _ple_inputs(self, tokens, x0):
        """Per-layer inputs [T, L, P] from token ids and the scaled embedding x0 [T, D]."""
        cfg = self.cfg
        n_l, n_p = cfg.n_layer, cfg.n_embd_per_layer
        tokp = self.file.rows("per_layer_token_embd.weight", tokens) * np.sqrt(n_p)
        proj = ops.linear(x0, self.ple_model_proj) / np.sqrt(cfg.n_embd)
        proj = ops.rms_norm(proj.reshape(-1, n_l, n_p), self.ple_proj_norm, cfg.eps)
        return (proj + tokp.reshape(-1, n_l, n_p)) / np.sqrt(2.0)

    def _attention(self, ly, a, positions, kv, visible):
        cfg, il = self.cfg, ly.index
        hd = cfg.head_dim(il)
        rope = self.rope_swa if cfg.is_swa[il] else self.rope_full
        q = ops.linear(a, ly.wq).reshape(a.shape[0], -1, hd)  # [T, H, hd]
        q = rope(ops.rms_norm(q, ly.q_norm, cfg.eps), positions)
        if self.kv_source[il] == il:
            k = ops.linear(a, ly.wk).reshape(a.shape[0], -1, hd)  # [T, Hkv, hd]
            v = k if ly.wv is None else ops.linear(a, ly.wv).reshape(a.shape[0], -1, hd)
            k = rope(ops.rms_norm(k, ly.k_norm, cfg.eps), positions)
            v = ops.rms_norm(v, None, cfg.eps)
            kv[il] = (k, v)
        k, v = kv[self.kv_source[il]]
        return ops.linear(ops.attend(q, k, v, visible[cfg.is_swa[il]], 1.0), ly.wo)

    def _dense_ffn(self, ly, x):
        return ops.geglu(x, ly.w_gate, ly.w_up, ly.w_down, self.gelu_mode)

    def _moe_ffn(self, ly, r):
        """MoE block (spec 2.7) on the post-attention residual r [T, D] -> f [T, D]."""
        cfg = self.cfg
        f1 = ops.rms_norm(self._dense_ffn(ly, ops.rms_norm(r, ly.ffn_norm, cfg.eps)),
                          ly.post_ffw_norm_1, cfg.eps)
        z = ops.rms_norm(r, None, cfg.eps) * ly.router_scale / np.sqrt(cfg.n_embd)
        logits = ops.linear(z, ly.router)  # [T, E]
        prob = np.exp(ops.log_softmax(logits))
        k = cfg.n_expert_used or 1
        f2_in = ops.rms_norm(r, ly.pre_ffw_norm_2, cfg.eps)
        f2 = np.zeros_like(r)
        for t in range(r.shape[0]):
            top = np.argsort(-prob[t], kind="stable")[:k]
            w = prob[t, top] / max(np.sum(prob[t, top]), 6.103515625e-5)
            w = w * ly.exp_scale[top]
            for e, we in zip(top, w):
                g = ops.gelu(ly.exp_gate[e] @ f2_in[t], self.gelu_mode) * (ly.exp_up[e] @ f2_in[t])
                f2[t] += we * (ly.exp_down[e] @ g)
        f2 = ops.rms_norm(f2, ly.post_ffw_norm_2, cfg.eps)
        return ops.rms_norm(f1 + f2, ly.post_ffw_norm, cfg.eps)

    def _layer(self, ly, x, positions, kv, ple, visible):
        eps = self.cfg.eps
        a = ops.rms_norm(x, ly.attn_norm, eps)
        a = ops.rms_norm(self._attention(ly, a, positions, kv, visible), ly.post_attention_norm,
                         eps)
        x = x + a
        if ly.router is not None:
            x = x + self._moe_ffn(ly, x)
        else:
            f = self._dense_ffn(ly, ops.rms_norm(x, ly.ffn_norm, eps))
            x = x + ops.rms_norm(f, ly.post_ffw_norm, eps)
        if ple is not None:
            g = ops.gelu(ops.linear(x, ly.ple_gate), self.gelu_mode) * ple[:, ly.index, :]
            x = x + ops.rms_norm(ops.linear(g, ly.ple_proj), ly.ple_norm, eps)
        return x * ly.out_scale

    # -- public ------------------------------------------------------------------------------

    def media_blocks(self, tokens, media):
        """Validate media spans against the token rows -> blocks [T] (-1 for token rows, else
        the span index). media: [(start, embd [n, D])]; every row of a span must hold
        PLACEHOLDER in tokens, every other row a valid id; spans must not overlap."""
        tokens = np.asarray(tokens, np.int64).reshape(-1)
        if tokens.size == 0:
            raise ValueError("empty token list")
        blocks = np.full(tokens.size, -1, np.int64)
        for i, (start, embd) in enumerate(media):
            embd = np.asarray(embd)
            if embd.ndim != 2 or embd.shape[0] == 0 or embd.shape[1] != self.cfg.n_embd:
                raise ValueError(f"media span {i}: embeddings of shape {embd.shape}, expected "
                                 f"[n >= 1, {self.cfg.n_embd}] (the model's embedding_length)")
            start, n = int(start), embd.shape[0]
            if start < 0 or start + n > tokens.size:
                raise ValueError(f"media span {i}: rows {start}..{start + n - 1} are outside the "
                                 f"sequence of {tokens.size} rows")
            if np.any(blocks[start:start + n] >= 0):
                raise ValueError(f"media span {i} overlaps an earlier span")
            if np.any(tokens[start:start + n] != PLACEHOLDER):
                raise ValueError(f"media span {i}: rows {start}..{start + n - 1} must hold the "
                                 f"placeholder id {PLACEHOLDER}")
            blocks[start:start + n] = i
        text = blocks < 0
        if np.any(tokens[text] == PLACEHOLDER):
            raise ValueError(f"placeholder id {PLACEHOLDER} at row "
                             f"{int(np.flatnonzero(text & (tokens == PLACEHOLDER))[0])} "
                             f"is not covered by a media span")
        if np.any(text):
            self.check_tokens(tokens[text])
        return blocks

    def embed_mixed(self, tokens, media, blocks):
        """Input rows [T, D]: E[id]·sqrt(D) for token rows, the given vectors (unscaled) for
        media rows."""
        x = np.empty((tokens.size, self.cfg.n_embd))
        text = blocks < 0
        if np.any(text):
            x[text] = self.embed(tokens[text])
        for start, embd in media:
            x[int(start):int(start) + len(embd)] = np.asarray(embd, np.float64)
        return x

    def visibility(self, positions, blocks, media_mask="causal"):
        """Attention masks {is_swa: visible [T, T]} for the sliding and the full layers."""
        if media_mask not in MEDIA_MASKS:
            raise ValueError(f"unknown media mask '{media_mask}' (expected one of {MEDIA_MASKS})")
        cfg = self.cfg
        out = {False: ops.attention_mask(positions, positions, None),
               True: ops.attention_mask(positions, positions, cfg.window)}
        if media_mask == "causal" or not np.any(blocks >= 0):
            return out
        same = (blocks[:, None] == blocks[None, :]) & (blocks[:, None] >= 0)
        if media_mask == "bidirectional-sliding":
            out[True] = out[True] | same
            return out
        q, k = positions[:, None], positions[None, :]
        both_ways = (k <= q) | same
        out[True] = both_ways & ((q - k) < cfg.window)
        if media_mask == "bidirectional":
            out[False] = both_ways
        return out

    def run(self, tokens, positions=None, media=(), media_mask="causal"):
        """Whole-sequence pass -> TargetState. positions default to 0..T-1.

        media: [(start, embd [n, D])], rows start..start+n-1 given as embedding vectors (their
        token ids must be PLACEHOLDER); each span is one image for the media_mask rules."""
        tokens = np.asarray(tokens, np.int64).reshape(-1)
        if len(media):
            blocks = self.media_blocks(tokens, media)
        else:
            tokens = self.check_tokens(tokens)
            blocks = np.full(tokens.size, -1, np.int64)
        positions = (np.arange(tokens.size) if positions is None
                     else np.asarray(positions, np.int64).reshape(-1))
        if positions.size != tokens.size:
            raise ValueError(f"{positions.size} positions for {tokens.size} tokens")
        x = self.embed_mixed(tokens, media, blocks) if len(media) else self.embed(tokens)
        ple = None
        if self.has_ple:  # token-identity part of media rows: token id 0 (pad)
            ple = self._ple_inputs(np.where(blocks < 0, tokens, 0), x)
        visible = self.visibility(positions, blocks, media_mask)
        kv = {}
        for ly in self.layers:
            x = self._layer(ly, x, positions, kv, ple, visible)
        hidden = ops.rms_norm(x, self.output_norm, self.cfg.eps)
        logits = ops.softcap(ops.linear(hidden, self.output), self.cfg.softcap)
        return TargetState(self, tokens, positions, logits, hidden, kv, blocks)

    def forward(self, tokens, positions=None, media=(), media_mask="causal"):
        """-> (logits [T, V], hidden [T, D] post-final-norm). The K/V stay in self.state."""
        self.state = self.run(tokens, positions, media, media_mask)
        return self.state.logits, self.state.hidden


def eog_token_ids(f):
    """End-of-generation ids: tokenizer.ggml.eos_token_id plus the EOG_TEXTS tokens."""
    ids = set()
    if "tokenizer.ggml.eos_token_id" in f.metadata:
        ids.add(int(f.metadata["tokenizer.ggml.eos_token_id"]))
    for i, text in enumerate(f.metadata.get("tokenizer.ggml.tokens", [])):
        if text in EOG_TEXTS:
            ids.add(i)
    return ids


def splice_media(tokens, embeddings):
    """Expand a token list holding PLACEHOLDER once per image into the full sequence.

    tokens: ids with one PLACEHOLDER per image, in order; embeddings: [[n_i, D]] per image.
    -> (expanded token list with n_i PLACEHOLDER rows per image, media [(start, embd)])."""
    tokens = [int(t) for t in np.asarray(tokens, np.int64).reshape(-1)]
    n_slots = sum(1 for t in tokens if t == PLACEHOLDER)
    if n_slots != len(embeddings):
        raise ValueError(f"the token list has {n_slots} image placeholder(s) ({PLACEHOLDER}) "
                         f"but {len(embeddings)} image(s) were given")
    out, media, images = [], [], iter(embeddings)
    for t in tokens:
        if t != PLACEHOLDER:
            out.append(t)
            continue
        embd = np.asarray(next(images), np.float64)
        media.append((len(out), embd))
        out.extend([PLACEHOLDER] * embd.shape[0])
    return out, media


def greedy(model, prompt, n, stop_at_eog=True, media=(), media_mask="causal"):
    """Greedy continuation of n tokens, each from a fresh whole-prefix pass. The EOG token that
    stops generation (when stop_at_eog) is included. media / media_mask as in Model.run (the
    spans index the prompt). -> list of generated ids."""
    if len(media):
        model.media_blocks(prompt, media)
        seq = [int(t) for t in np.asarray(prompt, np.int64).reshape(-1)]
    else:
        seq = list(model.check_tokens(prompt))
    out = []
    while len(out) < n:
        tok = int(np.argmax(model.run(seq, media=media, media_mask=media_mask).logits[-1]))
        out.append(tok)
        seq.append(tok)
        if stop_at_eog and tok in model.eog_ids:
            break
    return out
