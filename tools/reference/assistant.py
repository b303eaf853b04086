"""Float64 NumPy reference of the Gemma 4 MTP assistant (GGUF arch "gemma4-assistant") and of
llama.cpp's greedy draft-mtp speculative loop.

Follows docs/mtp.md § Architecture to § Verification: the assistant has Q-only
attention over the TARGET's K/V (last sliding / last full target layer, resolved through KV
sharing), takes concat(target's scaled embedding, incoming hidden), and returns logits (dense
tied head, or the centroid head when masked_embd_* tensors exist) plus the next hidden.
"""

import numpy as np

import ops
from gemma4 import Config, Layer, make_ropes, matrix
from gguf_read import GGUFError, GGUFFile

ARCH = "gemma4-assistant"
# Query positions inside one draft block. "constant" (default): every step at the position of
# the token being extended, as HF, vLLM and llama.cpp's draft-mtp with a shared-memory (Gemma 4)
# assistant do; "increment": pos, pos+1, ... (the older llama.cpp behaviour the spec describes).
POSITION_MODES = ("constant", "increment")
DRAFT_TOP_K = 10  # llama.cpp's draft sampler is top-k 10; p_min is tested on its renormalised p


class DraftStep:
    """One assistant step: the query position, logits [V], drafted (argmax) token, the next
    hidden h_next [B] (post_projection) and the output-normed state y [D]."""

    def __init__(self, pos, logits, token, h_next, y):
        self.pos, self.logits, self.token, self.h_next, self.y = pos, logits, token, h_next, y


class Assistant:
    """The MTP drafter. Use Assistant.load(path), then bind(target)."""

    def __init__(self, f, gelu_mode="exact", partial_rotary_factor=0.25):
        arch = f.require("general.architecture")
        if arch != ARCH:
            raise GGUFError(f"{f.path}: general.architecture is '{arch}', expected '{ARCH}'")
        self.file, self.gelu_mode = f, gelu_mode
        self.cfg = cfg = Config(f, arch)
        self.n_embd_out = int(f.require(f"{arch}.embedding_length_out"))  # B, target width
        self.tok_embd = f.tensor("token_embd.weight")  # [V, D]
        cfg.n_vocab = self.tok_embd.shape[0]
        self.output = f.tensor("output.weight") if "output.weight" in f.tensors else self.tok_embd
        self.output_norm = f.tensor("output_norm.weight")  # [D]
        self.pre_proj = matrix(f.tensor("nextn.pre_projection.weight"))  # [D, 2B]
        self.post_proj = matrix(f.tensor("nextn.post_projection.weight"))  # [B, D]
        if self.pre_proj.shape != (cfg.n_embd, 2 * self.n_embd_out):
            raise GGUFError(f"{f.path}: tensor 'nextn.pre_projection.weight' has shape "
                            f"{self.pre_proj.shape}, expected "
                            f"({cfg.n_embd}, {2 * self.n_embd_out})")
        if self.post_proj.shape != (self.n_embd_out, cfg.n_embd):
            raise GGUFError(f"{f.path}: tensor 'nextn.post_projection.weight' has shape "
                            f"{self.post_proj.shape}, expected ({self.n_embd_out}, {cfg.n_embd})")
        self.rope_swa, self.rope_full = make_ropes(f, cfg, partial_rotary_factor)
        self.layers = [Layer(f, il) for il in range(cfg.n_layer)]
        self.centroids = None
        if "masked_embd_centroids.weight" in f.tensors:
            self.centroids = f.tensor("masked_embd_centroids.weight")  # [C, D]
            ordering = f.tensor("masked_embd_ordering").reshape(-1)  # [V] token ids
            n_c = self.centroids.shape[0]
            if ordering.size != cfg.n_vocab or cfg.n_vocab % n_c:
                raise GGUFError(f"{f.path}: tensor 'masked_embd_ordering' has {ordering.size} "
                                f"entries for {cfg.n_vocab} tokens and {n_c} centroids")
            self.ordering = ordering.reshape(n_c, -1)  # [C, V/C]
            self.centroid_top_k = int(f.get(f"{arch}.centroid_intermediate_top_k", 32))
        self.target = None

    @classmethod
    def load(cls, path, gelu_mode="exact", partial_rotary_factor=0.25):
        return cls(GGUFFile(path), gelu_mode, partial_rotary_factor)

    def bind(self, target):
        """Attach a gemma4.Model: check widths/vocab and map each assistant layer to the target
        layer whose K/V it reads (the last target layer of the same type, resolved through the
        target's KV sharing)."""
        cfg, tcfg = self.cfg, target.cfg
        if tcfg.n_vocab != cfg.n_vocab:
            raise GGUFError(f"{self.file.path}: vocabulary {cfg.n_vocab} != target {tcfg.n_vocab}")
        if tcfg.n_embd != self.n_embd_out:
            raise GGUFError(f"{self.file.path}: embedding_length_out {self.n_embd_out} != target "
                            f"embedding_length {tcfg.n_embd}")
        self.kv_layer = []
        for il in range(cfg.n_layer):
            same = [j for j in range(tcfg.n_layer) if tcfg.is_swa[j] == cfg.is_swa[il]]
            if not same:
                raise GGUFError(f"{self.file.path}: layer {il} has no target layer of its type")
            src = target.kv_source[same[-1]]
            if tcfg.head_dim(src) != cfg.head_dim(il):
                raise GGUFError(f"{self.file.path}: layer {il} head dim {cfg.head_dim(il)} != "
                                f"target layer {src} head dim {tcfg.head_dim(src)}")
            self.kv_layer.append(src)
        self.target = target
        return self

    def head(self, y):
        """Logits [V] from the output-normed state y [D]: dense tied head, or with centroids
        only the tokens of the top-k clusters (others -inf). No soft-cap."""
        if self.centroids is None:
            return self.output @ y
        scores = self.centroids @ y  # [C]
        top = np.argsort(-scores, kind="stable")[: self.centroid_top_k]
        cand = self.ordering[top].reshape(-1)
        logits = np.full(self.cfg.n_vocab, -np.inf)
        logits[cand] = self.output[cand] @ y
        return logits

    def step(self, state, kv_len, token, h, pos):
        """One draft step. state: the target's TargetState whose first kv_len rows are the
        committed context; token: the token being extended; h [B]: the target (or previous
        step's) hidden; pos: the query position. -> (logits [V], h_next [B], y [D])."""
        if self.target is None:
            raise RuntimeError("Assistant.bind(target) must be called first")
        cfg = self.cfg
        e = self.target.embed([token])[0]  # [B], scaled by sqrt(B)
        x = ops.linear(np.concatenate([e, np.asarray(h, np.float64)]), self.pre_proj)[None]
        q_pos = np.array([pos])
        k_pos = state.positions[:kv_len]
        for il, ly in enumerate(self.layers):
            swa = cfg.is_swa[il]
            hd = cfg.head_dim(il)
            a = ops.rms_norm(x, ly.attn_norm, cfg.eps)
            q = ops.linear(a, ly.wq).reshape(1, -1, hd)
            q = (self.rope_swa if swa else self.rope_full)(ops.rms_norm(q, ly.q_norm, cfg.eps),
                                                           q_pos)
            k, v = state.kv[self.kv_layer[il]]
            window = (cfg.window or self.target.cfg.window) if swa else None
            visible = ops.attention_mask(q_pos, k_pos, window)
            o = ops.attend(q, k[:kv_len], v[:kv_len], visible, 1.0)
            x = x + ops.rms_norm(ops.linear(o, ly.wo), ly.post_attention_norm, cfg.eps)
            f = ops.geglu(ops.rms_norm(x, ly.ffn_norm, cfg.eps), ly.w_gate, ly.w_up, ly.w_down,
                          self.gelu_mode)
            x = (x + ops.rms_norm(f, ly.post_ffw_norm, cfg.eps)) * ly.out_scale
        y = ops.rms_norm(x[0], self.output_norm, cfg.eps)
        return self.head(y), ops.linear(y, self.post_proj), y

    def draft(self, state, kv_len, token, h, pos, n, positions="constant", p_min=0.0):
        """Greedy draft block of up to n tokens extending `token` at position `pos` (llama.cpp
        draft-mtp): each step feeds its argmax and its h_next to the next. Stops early when the
        top-k(10)-renormalised probability of the argmax is below p_min. -> [DraftStep]."""
        if positions not in POSITION_MODES:
            raise ValueError(f"unknown position mode '{positions}' ({POSITION_MODES})")
        steps = []
        for i in range(n):
            q_pos = pos + i if positions == "increment" else pos
            logits, h_next, y = self.step(state, kv_len, token, h, q_pos)
            best = int(np.argmax(logits))
            if p_min > 0.0:
                top = np.sort(logits)[::-1][:DRAFT_TOP_K]
                if 1.0 / np.sum(np.exp(top - top[0])) < p_min:
                    break
            steps.append(DraftStep(q_pos, logits, best, h_next, y))
            token, h = best, h_next
        return steps


def draft_after_prompt(target, assistant, prompt, n, positions="constant"):
    """Evaluate the prompt, take the target's greedy token t0 and its hidden, and draft n steps.
    -> (t0, hidden_in [B], [DraftStep])."""
    state = target.run(prompt)
    t0 = int(np.argmax(state.logits[-1]))
    h = state.hidden[-1]
    p = len(state.tokens)
    return t0, h, assistant.draft(state, p, t0, h, p, n, positions)


def mtp_greedy(target, assistant, prompt, n, draft_max, positions="constant", p_min=0.0,
               stop_at_eog=True):
    """Greedy speculative decoding as llama.cpp's server does with --spec-type draft-mtp.

    Round: draft min(draft_max, n_remaining - 1) tokens from the last token (at position p,
    hidden of the target row p-1), verify [last, d1..dk] with the target, accept while the
    target's argmax equals the draft, append the target's token at the first mismatch (or the
    bonus token). -> {"tokens", "drafted", "accepted", "rounds"}.
    """
    prompt = [int(t) for t in target.check_tokens(prompt)]
    state = target.run(prompt)
    out = [int(np.argmax(state.logits[-1]))]
    h = state.hidden[-1]
    drafted = accepted = 0
    rounds = []
    while len(out) < n and not (stop_at_eog and out[-1] in target.eog_ids):
        p = len(prompt) + len(out) - 1  # position of the last token, not yet in the cache
        n_draft = max(0, min(draft_max, n - len(out) - 1))
        steps = assistant.draft(state, p, out[-1], h, p, n_draft, positions, p_min)
        drafts = [s.token for s in steps]
        state = target.run(prompt + out + drafts)
        n_acc = 0
        for i in range(len(drafts) + 1):
            tok = int(np.argmax(state.logits[p + i]))
            out.append(tok)
            if stop_at_eog and tok in target.eog_ids:
                break
            if i < len(drafts) and tok == drafts[i]:
                n_acc += 1
                continue
            break
        h = state.hidden[p + n_acc]
        drafted += len(drafts)
        accepted += n_acc
        rounds.append({"pos": p, "drafts": drafts, "accepted": n_acc})
    return {"tokens": out[:n], "drafted": drafted, "accepted": accepted, "rounds": rounds}
