#!/usr/bin/python3
"""A tiny random-weight gemma4a (audio) mmproj GGUF, as llama.cpp's converter lays one out, for
tests (docs/audio.md § Tensors).

Default sizes are tandem's `tiny` audio preset: Da 32, 2 layers, 2 heads of 16, FFN 128, 128 mel
bins, subsampling channels 128 and 4, output projection 48 (not Da, so a transposed projection
cannot pass), Dt 128. Clamp bounds on the ten clippable linears are finite and tight enough that
many bite. The matmul weights are spread over F32, F16, BF16 and Q8_0 (Q8_0 only where a row
holds whole blocks of 32). Any tensor group can be left out to exercise the optional paths.

  tiny_audio_mmproj.py OUT.gguf [--dt 128] [--seed 1] [--no-clamps] [--drop attn_k_rel,...]
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from gguf_write import write_gguf  # noqa: E402

TINY_AUDIO = {"n_embd": 32, "n_head": 2, "n_ff": 128, "n_layer": 2, "n_mel": 128, "c0": 128,
              "c1": 4, "n_out": 48}
CLIPPABLE = ("ffn_up", "ffn_down", "attn_q", "attn_k", "attn_v", "attn_out", "conv_pw1",
             "conv_pw2", "ffn_up_1", "ffn_down_1")
# Weight type per linear (cycled over the layers), so the reader's dequantizers are all used.
TYPE_CYCLE = ("F32", "F16", "BF16", "Q8_0")
# Groups that may be left out (drop=...): the name part between dots that selects them.
OPTIONAL = ("norm", "ffn_post_norm", "attn_pre_norm", "attn_k_rel", "per_dim_scale",
            "attn_post_norm", "conv_norm", "norm_conv", "ffn_post_norm_1", "ln2", "pre_encode")


def _ceil_half(n):
    return (n + 1) // 2


def tiny_audio_tensors(rng, dt, cfg=TINY_AUDIO, clamps=True, drop=()):
    """[(name, row-major array, type)] of a random gemma4a tower. drop: parts of OPTIONAL whose
    tensors are left out (e.g. "attn_k_rel", "pre_encode", "norm" for the subsampling norms)."""
    d, h, ff, c0, c1 = cfg["n_embd"], cfg["n_head"], cfg["n_ff"], cfg["c0"], cfg["c1"]
    hd, n_out = d // h, cfg["n_out"]
    fq = _ceil_half(_ceil_half(cfg["n_mel"]))
    counter = iter(range(1 << 30))

    def w(out_dim, in_dim):
        return rng.uniform(-1.0, 1.0, (out_dim, in_dim)) * np.sqrt(3.0 / in_dim)

    def gain(n):
        return rng.uniform(0.6, 1.4, n)

    def mat_type(in_dim):
        t = TYPE_CYCLE[next(counter) % len(TYPE_CYCLE)]
        return "F16" if t == "Q8_0" and in_dim % 32 else t

    t = [("a.conv1d.0.weight", w(c0, 9).reshape(c0, 1, 3, 3), "F32"),
         ("a.conv1d.0.norm.weight", gain(c0), "F32"),
         ("a.conv1d.1.weight", w(c1, 9 * c0).reshape(c1, c0, 3, 3), "F32"),
         ("a.conv1d.1.norm.weight", gain(c1), "F32"),
         ("a.input_projection.weight", w(d, fq * c1), "F32")]
    shapes = {"ffn_up": (ff, d), "ffn_down": (d, ff), "attn_q": (d, d), "attn_k": (d, d),
              "attn_v": (d, d), "attn_out": (d, d), "conv_pw1": (2 * d, d), "conv_pw2": (d, d),
              "ffn_up_1": (ff, d), "ffn_down_1": (d, ff)}
    for il in range(cfg["n_layer"]):
        b = f"a.blk.{il}."

        def linear(name):
            out_dim, in_dim = shapes[name]
            items = [(b + name + ".weight", w(out_dim, in_dim), mat_type(in_dim))]
            if clamps:
                lo_in, hi_in = rng.uniform(1.0, 3.0, 2)
                lo_out, hi_out = rng.uniform(1.0, 3.0, 2)
                items += [(b + name + ".input_min", np.array([-lo_in]), "F32"),
                          (b + name + ".input_max", np.array([hi_in]), "F32"),
                          (b + name + ".output_min", np.array([-lo_out]), "F32"),
                          (b + name + ".output_max", np.array([hi_out]), "F32")]
            return items

        t += [(b + "ffn_norm.weight", gain(d), "F32"), *linear("ffn_up"), *linear("ffn_down"),
              (b + "ffn_post_norm.weight", gain(d), "F32"),
              (b + "attn_pre_norm.weight", gain(d), "F32"),
              *linear("attn_q"), *linear("attn_k"), *linear("attn_v"), *linear("attn_out"),
              (b + "attn_k_rel.weight", w(d, d), mat_type(d)),
              (b + "per_dim_scale.weight", rng.uniform(0.5, 0.9, hd), "F32"),
              (b + "attn_post_norm.weight", gain(d), "F32"),
              (b + "conv_norm.weight", gain(d), "F32"), *linear("conv_pw1"),
              (b + "conv_dw.weight", w(d, 5), "F32"),
              (b + "norm_conv.weight", gain(d), "F32"), *linear("conv_pw2"),
              (b + "ffn_norm_1.weight", gain(d), "F32"), *linear("ffn_up_1"),
              *linear("ffn_down_1"), (b + "ffn_post_norm_1.weight", gain(d), "F32"),
              (b + "ln2.weight", gain(d), "F32")]
    t += [("a.pre_encode.out.weight", w(n_out, d), mat_type(d)),
          ("a.pre_encode.out.bias", rng.uniform(-0.5, 0.5, n_out), "F32")]
    width = n_out if "pre_encode" not in drop else d
    t.append(("mm.a.input_projection.weight", w(dt, width), mat_type(width)))
    unknown = set(drop) - set(OPTIONAL)
    if unknown:
        raise ValueError(f"cannot drop {sorted(unknown)}; optional groups: {OPTIONAL}")
    return [x for x in t if not any(f".{part}." in x[0] for part in drop)]


def tiny_audio_metadata(dt, cfg=TINY_AUDIO):
    return [("general.architecture", "str", "clip"), ("general.type", "str", "mmproj"),
            ("general.name", "str", "tiny-gemma4a"), ("clip.has_audio_encoder", "bool", True),
            ("clip.audio.projector_type", "str", "gemma4a"),
            ("clip.audio.projection_dim", "u32", dt),
            ("clip.audio.embedding_length", "u32", cfg["n_embd"]),
            ("clip.audio.feed_forward_length", "u32", cfg["n_ff"]),
            ("clip.audio.block_count", "u32", cfg["n_layer"]),
            ("clip.audio.attention.head_count", "u32", cfg["n_head"]),
            ("clip.audio.attention.layer_norm_epsilon", "f32", 1e-5),  # ignored: 1e-6 is used
            ("clip.audio.num_mel_bins", "u32", cfg["n_mel"])]


def write_tiny_audio_mmproj(path, dt=128, seed=1, cfg=TINY_AUDIO, clamps=True, drop=()):
    rng = np.random.default_rng(seed)
    write_gguf(path, tiny_audio_metadata(dt, cfg), tiny_audio_tensors(rng, dt, cfg, clamps, drop))
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--dt", type=int, default=128, help="text embedding width (projection out)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-clamps", action="store_true", help="no clamp bounds on the linears")
    p.add_argument("--drop", default="", help=f"comma-separated optional groups to leave out: "
                                              f"{', '.join(OPTIONAL)}")
    a = p.parse_args(argv)
    drop = [x for x in a.drop.split(",") if x]
    write_tiny_audio_mmproj(a.out, a.dt, a.seed, clamps=not a.no_clamps, drop=drop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
