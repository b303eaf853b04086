"""Float64 NumPy reference of Gemma 4's vision tower (mmproj GGUF, projector "gemma4v").

Written from the HF transformers description of Gemma4VisionModel + Gemma4MultimodalEmbedder and
from the mmproj layout llama.cpp's converter writes (general.architecture "clip", keys
clip.vision.*, tensors v.* and mm.*). One image at a time, no padding patches:

  x = 2·pixels − 1                               pixels [H, W, 3], already (x/255 − mean)/std
  e = conv16x16(x) + Tx[col] + Ty[row]           [N, Dv], patches row-major over the grid
  L × { e += RMSNorm(attn(RMSNorm(e))); e += RMSNorm(GeGLU(RMSNorm(e))); e *= out_scale? }
  g = k×k average pool · sqrt(Dv) [→ (g − std_bias)·std_scale]
  out = W_mm · RMSNorm_noweight(g)               [tokens, Dt]

Attention: clippable linears, per-head RMSNorm on q and k (weights), weightless on v, 2-D NEOX
RoPE (θ = 100, first half of each head by column, second half by row), scale 1.0, no mask.
"""

import numpy as np

import ops
from gguf_read import GGUFError, GGUFFile

PROJECTOR = "gemma4v"
ROPE_THETA = 100.0  # not in the file; HF rope_theta and clip.cpp's hard-coded value
DEFAULT_POOL = 3  # pooling kernel when clip.vision.projector.scale_factor is absent
GELU_CHOICES = ("tanh", "quick")  # tanh = HF gelu_pytorch_tanh; quick = x·sigmoid(1.702x)
CLIPPABLE = ("attn_q", "attn_k", "attn_v", "attn_out", "ffn_gate", "ffn_up", "ffn_down")
BOUNDS = ("input_min", "input_max", "output_min", "output_max")


def matrix(w):
    """Column-major copy of a 2-D weight so x @ w.T runs on contiguous memory (same values)."""
    return np.asfortranarray(w) if w.ndim == 2 else w


def resolve_gelu(f, override=None):
    """The FFN activation: the override if given, else clip.use_gelu (true -> tanh, false ->
    quick, as clip.cpp reads it), else tanh (HF's gelu_pytorch_tanh; clip.cpp would use quick)."""
    if override is not None:
        if override not in GELU_CHOICES:
            raise ValueError(f"unknown vision GELU '{override}' (expected one of {GELU_CHOICES})")
        return override
    if f.get("clip.use_silu", False) and not f.get("clip.use_gelu", False):
        raise GGUFError(f"{f.path}: key 'clip.use_silu' is true; gemma4v uses GELU (pass an "
                        f"explicit --vision-gelu to ignore the key)")
    use_gelu = f.get("clip.use_gelu")
    if use_gelu is None:
        return "tanh"
    return "tanh" if use_gelu else "quick"


class VisionConfig:
    """Hyperparameters from the clip.vision.* keys."""

    def __init__(self, f):
        arch = f.require("general.architecture")
        if arch != "clip":
            raise GGUFError(f"{f.path}: general.architecture is '{arch}', expected 'clip' "
                            f"(an mmproj file)")
        proj = f.get("clip.projector_type", f.get("clip.vision.projector_type"))
        if proj != PROJECTOR:
            raise GGUFError(f"{f.path}: vision projector type is {proj!r}, expected "
                            f"'{PROJECTOR}' (keys clip.projector_type / "
                            f"clip.vision.projector_type)")

        def key(name, default=None):
            full = f"clip.vision.{name}"
            if full in f.metadata:
                return f.metadata[full]
            if default is None:
                raise GGUFError(f"{f.path}: required key '{full}' is missing")
            return default

        self.n_embd = int(key("embedding_length"))
        self.n_ff = int(key("feed_forward_length"))
        self.n_layer = int(key("block_count"))
        self.n_head = int(key("attention.head_count"))
        self.n_head_kv = int(key("attention.head_count_kv", self.n_head))
        self.head_dim = int(key("attention.head_dim", 0)) or self.n_embd // max(self.n_head, 1)
        self.eps = float(key("attention.layer_norm_epsilon"))
        self.patch_size = int(key("patch_size"))
        self.pool = int(key("projector.scale_factor", DEFAULT_POOL))
        self.image_mean = np.asarray(key("image_mean", [0.0, 0.0, 0.0]), np.float64)
        self.image_std = np.asarray(key("image_std", [1.0, 1.0, 1.0]), np.float64)
        if self.n_head <= 0 or self.n_head_kv <= 0 or self.n_head % self.n_head_kv:
            raise GGUFError(f"{f.path}: head counts {self.n_head} / {self.n_head_kv} are invalid")
        if self.head_dim % 4:
            raise GGUFError(f"{f.path}: vision head dim {self.head_dim} is not a multiple of 4 "
                            f"(2-D RoPE rotates two halves in pairs)")
        if self.patch_size <= 0 or self.pool <= 0:
            raise GGUFError(f"{f.path}: patch size {self.patch_size} / pooling {self.pool} "
                            f"must be positive")


def _scalar(f, name):
    """A clamp bound: an F32 tensor with exactly one element -> float."""
    t = f.info(name)
    if t.type_name != "F32" or t.n_values != 1:
        raise GGUFError(f"{f.path}: tensor '{name}' must be F32 with one element, is "
                        f"{t.type_name} ne={t.ne}")
    return float(f.tensor(name).reshape(-1)[0])


class ClippableLinear:
    """y = clamp(W · clamp(x, in_min, in_max), out_min, out_max); a missing bound is ±inf.
    clamp(v, lo, hi) = min(max(v, lo), hi), so hi wins if the bounds cross (as torch.clamp)."""

    def __init__(self, f, base):
        self.name = base
        self.w = matrix(f.tensor(base + ".weight"))  # [out, in]
        defaults = {"input_min": -np.inf, "input_max": np.inf,
                    "output_min": -np.inf, "output_max": np.inf}
        self.bounds = {b: (_scalar(f, f"{base}.{b}") if f"{base}.{b}" in f.tensors
                           else defaults[b]) for b in BOUNDS}

    def __call__(self, x):
        b = self.bounds
        x = np.minimum(np.maximum(x, b["input_min"]), b["input_max"])
        y = ops.linear(x, self.w)
        return np.minimum(np.maximum(y, b["output_min"]), b["output_max"])


class VisionLayer:
    """Weights of one encoder block v.blk.N.*."""

    def __init__(self, f, il, cfg):
        p = f"v.blk.{il}."

        def vec(name, size):
            w = f.tensor(p + name).reshape(-1)
            if w.size != size:
                raise GGUFError(f"{f.path}: tensor '{p + name}' has {w.size} values, "
                                f"expected {size}")
            return w

        d, hd = cfg.n_embd, cfg.head_dim
        self.index = il
        self.ln1, self.ln2 = vec("ln1.weight", d), vec("ln2.weight", d)
        self.attn_post_norm = vec("attn_post_norm.weight", d)
        self.ffn_post_norm = vec("ffn_post_norm.weight", d)
        self.q_norm, self.k_norm = vec("attn_q_norm.weight", hd), vec("attn_k_norm.weight", hd)
        self.lin = {name: ClippableLinear(f, p + name) for name in CLIPPABLE}
        want = {"attn_q": (cfg.n_head * hd, d), "attn_k": (cfg.n_head_kv * hd, d),
                "attn_v": (cfg.n_head_kv * hd, d), "attn_out": (d, cfg.n_head * hd),
                "ffn_gate": (cfg.n_ff, d), "ffn_up": (cfg.n_ff, d), "ffn_down": (d, cfg.n_ff)}
        for name, shape in want.items():
            if self.lin[name].w.shape != shape:
                raise GGUFError(f"{f.path}: tensor '{p}{name}.weight' has shape "
                                f"{self.lin[name].w.shape}, expected {shape}")
        scale = p + "out_scale.weight"
        self.out_scale = float(vec("out_scale.weight", 1)[0]) if scale in f.tensors else None


def rope_2d(x, cols, rows, theta=ROPE_THETA):
    """2-D NEOX RoPE. x [N, H, hd]; cols, rows [N]. The first hd/2 dims rotate with the column,
    the last hd/2 with the row; inside each half of m = hd/2 dims, dim j pairs with j + m/2 at
    frequency theta^(-2j/m) (the same frequencies for both axes)."""
    hd = x.shape[-1]
    if hd % 4:
        raise ValueError(f"2-D RoPE needs a head dim that is a multiple of 4, got {hd}")
    half = hd // 2
    inv_freq = ops.rope_inv_freq(half, theta)
    out = np.empty_like(x)
    out[..., :half] = ops.rope_neox(x[..., :half], cols, inv_freq)
    out[..., half:] = ops.rope_neox(x[..., half:], rows, inv_freq)
    return out


def avg_pool(e, grid_h, grid_w, k):
    """Average of each k×k block of a row-major [grid_h·grid_w, D] patch grid ->
    [(grid_h/k)·(grid_w/k), D], row-major over the pooled grid."""
    if grid_h % k or grid_w % k:
        raise ValueError(f"patch grid {grid_h}x{grid_w} is not divisible by the pooling {k}")
    d = e.shape[-1]
    return e.reshape(grid_h // k, k, grid_w // k, k, d).mean(axis=(1, 3)).reshape(-1, d)


class VisionTower:
    """gemma4v encoder + embedder. Use VisionTower.load(path)."""

    def __init__(self, f, gelu=None, gelu_mode="exact"):
        self.file = f
        self.cfg = cfg = VisionConfig(f)
        self.gelu = resolve_gelu(f, gelu)
        self.gelu_mode = gelu_mode  # "exact" or "ggml" for the tanh GELU (ops.GELU_MODES)
        p, d = cfg.patch_size, cfg.n_embd
        self.patch_embd = f.tensor("v.patch_embd.weight")  # [Dv, 3, p, p] (OIHW conv kernel)
        if self.patch_embd.shape != (d, 3, p, p):
            raise GGUFError(f"{f.path}: tensor 'v.patch_embd.weight' has shape "
                            f"{self.patch_embd.shape}, expected {(d, 3, p, p)}")
        self.patch_matrix = matrix(self.patch_embd.reshape(d, 3 * p * p))  # columns (c, i, j)
        self.pos = f.tensor("v.position_embd.weight")  # [2, S, Dv]: 0 = by column, 1 = by row
        if self.pos.ndim != 3 or self.pos.shape[0] != 2 or self.pos.shape[2] != d:
            raise GGUFError(f"{f.path}: tensor 'v.position_embd.weight' has shape "
                            f"{self.pos.shape}, expected (2, S, {d})")
        self.layers = [VisionLayer(f, il, cfg) for il in range(cfg.n_layer)]
        has_bias, has_scale = "v.std_bias" in f.tensors, "v.std_scale" in f.tensors
        if has_bias != has_scale:
            raise GGUFError(f"{f.path}: only one of 'v.std_bias' / 'v.std_scale' is present")
        self.std_bias = f.tensor("v.std_bias").reshape(-1) if has_bias else None
        self.std_scale = f.tensor("v.std_scale").reshape(-1) if has_scale else None
        self.mm_proj = matrix(f.tensor("mm.input_projection.weight"))  # [Dt, Dv]
        if self.mm_proj.ndim != 2 or self.mm_proj.shape[1] != d:
            raise GGUFError(f"{f.path}: tensor 'mm.input_projection.weight' has shape "
                            f"{self.mm_proj.shape}, expected (Dt, {d})")
        self.n_embd_out = self.mm_proj.shape[0]

    @classmethod
    def load(cls, path, gelu=None, gelu_mode="exact"):
        """Read an mmproj GGUF. gelu: None (from the file, see resolve_gelu), "tanh", "quick"."""
        return cls(GGUFFile(path), gelu, gelu_mode)

    # -- pieces ------------------------------------------------------------------------------

    def check_pixels(self, pixels):
        """-> float64 [H, W, 3] with H, W positive multiples of patch·pool, finite values."""
        px = np.asarray(pixels)
        if px.ndim != 3 or px.shape[2] != 3:
            raise ValueError(f"image pixels must have shape [H, W, 3], got {px.shape}")
        if not np.issubdtype(px.dtype, np.floating):
            raise ValueError(f"image pixels must be floats (already normalised), got {px.dtype}")
        px = px.astype(np.float64)
        unit = self.cfg.patch_size * self.cfg.pool
        h, w = px.shape[:2]
        if h == 0 or w == 0 or h % unit or w % unit:
            raise ValueError(f"image of {h}x{w} pixels: both sides must be positive multiples "
                             f"of {unit} (patch {self.cfg.patch_size} x pooling {self.cfg.pool})")
        if not np.all(np.isfinite(px)):
            raise ValueError("image pixels contain NaN or infinity")
        table = self.pos.shape[1]
        if h // self.cfg.patch_size > table or w // self.cfg.patch_size > table:
            raise ValueError(f"image of {h}x{w} pixels has a patch grid side above the position "
                             f"table size {table}")
        return px

    def token_grid(self, pixels_shape):
        """(rows, cols) of the pooled output grid for an image of shape [H, W, 3]."""
        unit = self.cfg.patch_size * self.cfg.pool
        return pixels_shape[0] // unit, pixels_shape[1] // unit

    def n_tokens(self, pixels_shape):
        rows, cols = self.token_grid(pixels_shape)
        return rows * cols

    def patchify(self, x):
        """Non-overlapping p×p conv (no bias): x [H, W, 3] -> [N, Dv], patch index row·Wp + col."""
        p = self.cfg.patch_size
        hp, wp = x.shape[0] // p, x.shape[1] // p
        blocks = x.reshape(hp, p, wp, p, 3).transpose(0, 2, 4, 1, 3)  # [r, q, c, i, j]
        return ops.linear(blocks.reshape(hp * wp, 3 * p * p), self.patch_matrix)

    def act(self, x):
        return ops.gelu(x, self.gelu_mode) if self.gelu == "tanh" else ops.gelu_quick(x)

    def layer(self, ly, e, cols, rows):
        cfg = self.cfg
        n, hd, eps = e.shape[0], cfg.head_dim, cfg.eps
        h = ops.rms_norm(e, ly.ln1, eps)
        q = ly.lin["attn_q"](h).reshape(n, cfg.n_head, hd)
        k = ly.lin["attn_k"](h).reshape(n, cfg.n_head_kv, hd)
        v = ly.lin["attn_v"](h).reshape(n, cfg.n_head_kv, hd)
        q = rope_2d(ops.rms_norm(q, ly.q_norm, eps), cols, rows)
        k = rope_2d(ops.rms_norm(k, ly.k_norm, eps), cols, rows)
        v = ops.rms_norm(v, None, eps)
        a = ops.attend(q, k, v, np.ones((n, n), bool), 1.0)
        e = e + ops.rms_norm(ly.lin["attn_out"](a), ly.attn_post_norm, eps)
        h = ops.rms_norm(e, ly.ln2, eps)
        f = ly.lin["ffn_down"](self.act(ly.lin["ffn_gate"](h)) * ly.lin["ffn_up"](h))
        e = e + ops.rms_norm(f, ly.ffn_post_norm, eps)
        return e if ly.out_scale is None else e * ly.out_scale

    # -- public ------------------------------------------------------------------------------

    def encode(self, pixels, trace=None):
        """One image [H, W, 3] (normalised floats) -> soft tokens [tokens, Dt], row-major over the
        pooled grid. trace (a dict) receives the intermediates: patch_proj and patches [N, Dv]
        (before / after the position tables), layer_L [N, Dv], pooled [tokens, Dv] (after the
        sqrt(Dv) scale and the standardisation)."""
        cfg = self.cfg
        px = self.check_pixels(pixels)
        p = cfg.patch_size
        hp, wp = px.shape[0] // p, px.shape[1] // p
        rows, cols = np.divmod(np.arange(hp * wp), wp)
        e = self.patchify(2.0 * px - 1.0)
        if trace is not None:
            trace["patch_proj"] = e
        e = e + (self.pos[0][cols] + self.pos[1][rows])
        if trace is not None:
            trace["patches"] = e
        for ly in self.layers:
            e = self.layer(ly, e, cols, rows)
            if trace is not None:
                trace[f"layer_{ly.index}"] = e
        g = avg_pool(e, hp, wp, cfg.pool) * np.sqrt(cfg.n_embd)
        if self.std_bias is not None:
            g = (g - self.std_bias) * self.std_scale
        if trace is not None:
            trace["pooled"] = g
        return ops.linear(ops.rms_norm(g, None, cfg.eps), self.mm_proj)

    def encode_images(self, images):
        """Each image encoded on its own (no attention across images) -> [[tokens_i, Dt]]."""
        return [self.encode(px) for px in images]
