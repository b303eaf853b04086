#!/usr/bin/python3
"""A tiny random-weight gemma4v mmproj GGUF, as llama.cpp's converter lays one out, for tests.

Sizes (spec-style "smallest that exercises every path"): Dv 32, 2 heads of 16, FFN 64, 2 layers,
patch 16, pooling 3, position table 64, finite random clamp bounds on every clippable linear
(tight enough that many of them bite), std_bias/std_scale present, an out_scale on the last
layer, and the matmul weights spread over F32, F16, BF16 and Q8_0.

  tiny_mmproj.py OUT.gguf [--dt 128] [--seed 1] [--use-gelu true|false] [--scale-factor K]
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from gguf_write import write_gguf  # noqa: E402

TINY = {"n_embd": 32, "n_head": 2, "n_ff": 64, "n_layer": 2, "patch": 16, "pos_size": 64}
# Weight type per linear and layer (cycled), so the reader's F16 / BF16 / Q8_0 paths are used.
LAYER_TYPES = [{"attn_q": "F32", "attn_k": "F16", "attn_v": "BF16", "attn_out": "Q8_0",
                "ffn_gate": "F32", "ffn_up": "F16", "ffn_down": "Q8_0"},
               {"attn_q": "Q8_0", "attn_k": "BF16", "attn_v": "F16", "attn_out": "F32",
                "ffn_gate": "BF16", "ffn_up": "Q8_0", "ffn_down": "F16"}]


def tiny_mmproj_tensors(rng, dt, cfg=TINY, clamps=True, standardize=True, out_scale=True):
    """[(name, row-major array, type)] of a random gemma4v mmproj."""
    d, h, f, p, s = cfg["n_embd"], cfg["n_head"], cfg["n_ff"], cfg["patch"], cfg["pos_size"]
    hd = d // h

    def w(out_dim, in_dim):
        return rng.standard_normal((out_dim, in_dim)) / np.sqrt(in_dim)

    def norm(n):
        return 1.0 + 0.2 * rng.standard_normal(n)

    t = [("v.patch_embd.weight", rng.standard_normal((d, 3, p, p)) / np.sqrt(3 * p * p), "F16"),
         ("v.position_embd.weight", 0.5 * rng.standard_normal((2, s, d)), "F32")]
    for il in range(cfg["n_layer"]):
        b = f"v.blk.{il}."
        types = LAYER_TYPES[il % len(LAYER_TYPES)]
        shapes = {"attn_q": (d, d), "attn_k": (d, d), "attn_v": (d, d), "attn_out": (d, d),
                  "ffn_gate": (f, d), "ffn_up": (f, d), "ffn_down": (d, f)}
        t += [(b + "ln1.weight", norm(d), "F32"), (b + "ln2.weight", norm(d), "F32"),
              (b + "attn_q_norm.weight", norm(hd), "F32"),
              (b + "attn_k_norm.weight", norm(hd), "F32"),
              (b + "attn_post_norm.weight", norm(d), "F32"),
              (b + "ffn_post_norm.weight", norm(d), "F32")]
        for name, (o, i) in shapes.items():
            t.append((b + name + ".weight", w(o, i), types[name]))
            if clamps:
                lo_in, hi_in = rng.uniform(0.8, 2.0, 2)
                lo_out, hi_out = rng.uniform(0.4, 1.2, 2)
                t += [(b + name + ".input_min", np.array([-lo_in]), "F32"),
                      (b + name + ".input_max", np.array([hi_in]), "F32"),
                      (b + name + ".output_min", np.array([-lo_out]), "F32"),
                      (b + name + ".output_max", np.array([hi_out]), "F32")]
        if out_scale and il == cfg["n_layer"] - 1:
            t.append((b + "out_scale.weight", np.array([0.75]), "F32"))
    if standardize:
        t += [("v.std_bias", 0.3 * rng.standard_normal(d), "F32"),
              ("v.std_scale", rng.uniform(0.5, 1.5, d), "F32")]
    t.append(("mm.input_projection.weight", w(dt, d), "Q8_0"))
    return t


def tiny_mmproj_metadata(dt, cfg=TINY, use_gelu=None, scale_factor=None):
    md = [("general.architecture", "str", "clip"), ("general.type", "str", "mmproj"),
          ("general.name", "str", "tiny-gemma4v"), ("clip.has_vision_encoder", "bool", True),
          ("clip.vision.projector_type", "str", "gemma4v"),
          ("clip.vision.projection_dim", "u32", dt), ("clip.vision.image_size", "u32", 224),
          ("clip.vision.patch_size", "u32", cfg["patch"]),
          ("clip.vision.embedding_length", "u32", cfg["n_embd"]),
          ("clip.vision.feed_forward_length", "u32", cfg["n_ff"]),
          ("clip.vision.block_count", "u32", cfg["n_layer"]),
          ("clip.vision.attention.head_count", "u32", cfg["n_head"]),
          ("clip.vision.attention.layer_norm_epsilon", "f32", 1e-6),
          ("clip.vision.image_mean", "f32[]", [0.0, 0.0, 0.0]),
          ("clip.vision.image_std", "f32[]", [1.0, 1.0, 1.0])]
    if use_gelu is not None:
        md.append(("clip.use_gelu", "bool", use_gelu))
    if scale_factor is not None:
        md.append(("clip.vision.projector.scale_factor", "u32", scale_factor))
    return md


def write_tiny_mmproj(path, dt=128, seed=1, use_gelu=None, scale_factor=None, **kw):
    """Write the tiny mmproj to path. kw: clamps, standardize, out_scale (booleans)."""
    rng = np.random.default_rng(seed)
    write_gguf(path, tiny_mmproj_metadata(dt, use_gelu=use_gelu, scale_factor=scale_factor),
               tiny_mmproj_tensors(rng, dt, **kw))
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--dt", type=int, default=128, help="text embedding width (projection out)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--use-gelu", choices=("true", "false"), default=None,
                   help="write clip.use_gelu (default: leave the key out, as the converter does)")
    p.add_argument("--scale-factor", type=int, default=None,
                   help="write clip.vision.projector.scale_factor (pooling kernel)")
    a = p.parse_args(argv)
    use_gelu = None if a.use_gelu is None else a.use_gelu == "true"
    write_tiny_mmproj(a.out, a.dt, a.seed, use_gelu, a.scale_factor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
