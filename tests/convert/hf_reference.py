#!/usr/bin/python3
"""Runs the NumPy reference (tools/reference) straight on a Hugging Face checkpoint directory.

  hf_reference.py logits HF_DIR --tokens 2,10,11 --out OUT.f64
  hf_reference.py draft TARGET_HF_DIR ASSISTANT_HF_DIR --tokens 2,10,11 --out OUT.f64
  hf_reference.py vision HF_DIR --pixels IMG.f32 --width W --height H --out OUT.f64
  hf_reference.py audio HF_DIR --mel MEL.f32 --frames N --out OUT.f64

It reads config.json and the safetensors files itself and maps the HF tensor names to the names
the reference expects, written here from the specs independently of tandem's C++ name map. No
rope_freqs tensor is made: the reference applies the proportional RoPE from the config's
partial_rotary_factor, so tandem's generated rope_freqs is checked too.

Output (little-endian float64): `logits` writes logits [T, V]; `draft` writes the target's greedy
token t0, then the assistant's first draft step logits [V] (-inf outside the kept clusters);
`vision` writes the soft tokens [tokens, Dt] of one image (pixels: little-endian float32
[H, W, 3], already normalised) from the vision tower of a Gemma4ForConditionalGeneration
checkpoint, with transformers' tanh GELU. The patch embedding stays the HF linear over patches
flattened (row, column, channel), so the converter's reshape into a conv kernel is checked too.
`audio` writes the soft tokens [tokens, Dt] of one piece of log-mel frames (mel: little-endian
float32 [N, 128]) from the audio tower of a checkpoint with an audio_config; per_dim_scale gets
its softplus here and the depthwise kernel its squeeze, so the converter's are checked too.
Exit code 0 on success, 1 on bad input, 77 when NumPy is missing.
"""

import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True

try:
    import numpy as np
except ImportError:  # the C++ test skips on 77
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "reference"))

import assistant  # noqa: E402
import audio_encoder  # noqa: E402
import gemma4  # noqa: E402
import vision  # noqa: E402

DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I64": np.int64,
          "I32": np.int32}

GLOBAL = {
    "embed_tokens.weight": "token_embd.weight",
    "norm.weight": "output_norm.weight",
    "embed_tokens_per_layer.weight": "per_layer_token_embd.weight",
    "per_layer_model_projection.weight": "per_layer_model_proj.weight",
    "per_layer_projection_norm.weight": "per_layer_proj_norm.weight",
}
ASSISTANT_TOP = {
    "pre_projection.weight": "nextn.pre_projection.weight",
    "post_projection.weight": "nextn.post_projection.weight",
    "masked_embedding.centroids.weight": "masked_embd_centroids.weight",
    "masked_embedding.token_ordering": "masked_embd_ordering",
}
LAYER = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight",
    "post_attention_layernorm.weight": "post_attention_norm.weight",
    "pre_feedforward_layernorm.weight": "ffn_norm.weight",
    "post_feedforward_layernorm.weight": "post_ffw_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
    "layer_scalar": "layer_output_scale.weight",
    "per_layer_input_gate.weight": "inp_gate.weight",
    "per_layer_projection.weight": "proj.weight",
    "post_per_layer_input_norm.weight": "post_norm.weight",
    "router.proj.weight": "ffn_gate_inp.weight",
    "router.scale": "ffn_gate_inp.scale",
    "router.per_expert_scale": "ffn_down_exps.scale",
    "moe.per_expert_scale": "ffn_down_exps.scale",
    "pre_feedforward_layernorm_2.weight": "pre_ffw_norm_2.weight",
    "post_feedforward_layernorm_1.weight": "post_ffw_norm_1.weight",
    "post_feedforward_layernorm_2.weight": "post_ffw_norm_2.weight",
    "experts.gate_up_proj": "ffn_gate_up_exps.weight",
    "experts.down_proj": "ffn_down_exps.weight",
    "moe.down_proj": "ffn_down_exps.weight",
    "moe.gate_proj": "GATE",  # fused below: [E, F, D] + [E, F, D] -> [E, 2F, D]
    "moe.up_proj": "UP",
}


def read_safetensors(path):
    """name -> numpy array (float32 for float dtypes, int64 for integers), PyTorch shape."""
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        a = np.frombuffer(data, DTYPES[e["dtype"]], offset=base + begin,
                          count=(end - begin) // np.dtype(DTYPES[e["dtype"]]).itemsize)
        if e["dtype"] == "BF16":
            a = (a.astype(np.uint32) << 16).view(np.float32)
        a = a.astype(np.int64 if e["dtype"] in ("I64", "I32") else np.float32)
        out[name] = a.reshape(e["shape"])
    return out


def read_checkpoint(path):
    index = os.path.join(path, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    tensors = {}
    for name in files:
        tensors.update(read_safetensors(os.path.join(path, name)))
    return tensors


def gguf_names(hf_tensors, is_assistant):
    """HF tensors -> {gguf name: float64/int64 array}, vision/audio and lm_head dropped."""
    out, halves = {}, {}
    for name, a in hf_tensors.items():
        if name in ASSISTANT_TOP and is_assistant:
            out[ASSISTANT_TOP[name]] = a
            continue
        m = re.match(r"^(?:model\.language_model\.|model\.)(.*)$", name)
        if not m or name.startswith(("model.vision_tower.", "model.audio_tower.",
                                     "model.embed_vision.", "model.embed_audio.")):
            continue
        rest = m.group(1)
        if rest in GLOBAL:
            out[GLOBAL[rest]] = a
            continue
        lm = re.match(r"^layers\.(\d+)\.(.*)$", rest)
        if not lm or lm.group(2) not in LAYER:
            raise ValueError(f"unmapped tensor {name}")
        g = LAYER[lm.group(2)]
        if g in ("GATE", "UP"):
            halves.setdefault(lm.group(1), {})[g] = a
            continue
        out[f"blk.{lm.group(1)}.{g}"] = a
    for layer, h in halves.items():
        out[f"blk.{layer}.ffn_gate_up_exps.weight"] = np.concatenate([h["GATE"], h["UP"]], axis=1)
    return {k: (v if v.dtype == np.int64 else v.astype(np.float64)) for k, v in out.items()}


def metadata(cfg_json):
    """The GGUF-style metadata the reference reads, from config.json (HF semantics)."""
    arch_names = cfg_json["architectures"]
    is_assistant = any("Assistant" in a for a in arch_names)
    tc = cfg_json.get("text_config", cfg_json)
    arch = "gemma4-assistant" if is_assistant else "gemma4"
    n_layer = tc["num_hidden_layers"]
    types = tc["layer_types"]
    swa = [t == "sliding_attention" for t in types]
    kv = tc["num_key_value_heads"]
    kv_full = tc.get("num_global_key_value_heads") if tc.get("attention_k_eq_v") else None
    rope = tc["rope_parameters"]
    shared = n_layer if is_assistant else tc.get("num_kv_shared_layers", 0)
    md = {
        "general.architecture": arch,
        "embedding_length": tc["hidden_size"],
        "block_count": n_layer,
        "attention.head_count": tc["num_attention_heads"],
        "attention.head_count_kv": [kv if s else (kv_full or kv) for s in swa],
        "attention.key_length": tc["global_head_dim"],
        "attention.key_length_swa": tc["head_dim"],
        "attention.layer_norm_rms_epsilon": tc["rms_norm_eps"],
        "attention.sliding_window": tc["sliding_window"],
        "attention.sliding_window_pattern": swa,
        "attention.shared_kv_layers": shared,
        "embedding_length_per_layer_input": tc.get("hidden_size_per_layer_input") or 0,
        "rope.freq_base": rope["full_attention"]["rope_theta"],
        "rope.freq_base_swa": rope["sliding_attention"]["rope_theta"],
        "rope.dimension_count": tc["global_head_dim"],
        "rope.dimension_count_swa": tc["head_dim"],
        "final_logit_softcapping": tc.get("final_logit_softcapping") or 0.0,
        "expert_used_count": tc.get("top_k_experts") or 0,
    }
    out = {f"{arch}.{k}": v for k, v in md.items() if k != "general.architecture"}
    out["general.architecture"] = arch
    if is_assistant:
        out[f"{arch}.embedding_length_out"] = cfg_json["backbone_hidden_size"]
        out[f"{arch}.centroid_intermediate_top_k"] = cfg_json.get("centroid_intermediate_top_k", 32)
    return out, is_assistant, rope["full_attention"].get("partial_rotary_factor", 1.0)


class HfFile:
    """What gemma4.Model / assistant.Assistant read from a GGUFFile, served from HF tensors."""

    def __init__(self, path):
        self.path = path
        with open(os.path.join(path, "config.json")) as f:
            cfg = json.load(f)
        self.metadata, is_assistant, self.partial_rotary_factor = metadata(cfg)
        self.tensors = gguf_names(read_checkpoint(path), is_assistant)

    def get(self, key, default=None):
        return self.metadata.get(key, default)

    def require(self, key):
        if key not in self.metadata:
            raise ValueError(f"{self.path}: no key {key}")
        return self.metadata[key]

    def info(self, name):
        if name not in self.tensors:
            raise ValueError(f"{self.path}: tensor {name} is missing")
        return self.tensors[name]

    def tensor(self, name):
        return self.info(name)

    def rows(self, name, index):
        return self.info(name)[np.asarray(index, np.int64).reshape(-1)]


VISION_LAYER = {
    "input_layernorm.weight": "ln1.weight",
    "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight",
    "post_attention_layernorm.weight": "attn_post_norm.weight",
    "pre_feedforward_layernorm.weight": "ln2.weight",
    "post_feedforward_layernorm.weight": "ffn_post_norm.weight",
}
VISION_LINEAR = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
                 "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_out",
                 "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}


class _Info:
    def __init__(self, a):
        self.type_name, self.n_values, self.ne = "F32", a.size, list(reversed(a.shape))


class HfVisionFile:
    """What vision.VisionTower reads from an mmproj GGUF, served from a HF checkpoint's vision
    tower (config.json vision_config with transformers' defaults)."""

    def __init__(self, path):
        self.path = path
        with open(os.path.join(path, "config.json")) as f:
            cfg = json.load(f)
        vc = cfg.get("vision_config") or {}
        if not vc:
            raise ValueError(f"{path}: no vision_config")
        d = vc.get("hidden_size", 768)
        heads = vc.get("num_attention_heads", 12)
        hd = vc.get("head_dim", 64)
        self.metadata = {
            "general.architecture": "clip",
            "clip.vision.projector_type": "gemma4v",
            "clip.vision.embedding_length": d,
            "clip.vision.feed_forward_length": vc.get("intermediate_size", 3072),
            "clip.vision.block_count": vc.get("num_hidden_layers", 16),
            "clip.vision.attention.head_count": heads,
            "clip.vision.attention.head_count_kv": vc.get("num_key_value_heads", 12),
            "clip.vision.attention.head_dim": hd,
            "clip.vision.attention.layer_norm_epsilon": vc.get("rms_norm_eps", 1e-6),
            "clip.vision.patch_size": vc.get("patch_size", 16),
            "clip.vision.projector.scale_factor": vc.get("pooling_kernel_size", 3),
        }
        p = self.metadata["clip.vision.patch_size"]
        self.tensors = {}
        for name, a in read_checkpoint(path).items():
            a = a.astype(np.float64)
            name = name.removeprefix("model.")
            if name == "embed_vision.embedding_projection.weight":
                self.tensors["mm.input_projection.weight"] = a
            elif name == "vision_tower.patch_embedder.input_proj.weight":
                self.hf_patch = a  # [D, p·p·3] over (row, column, channel)
                self.tensors["v.patch_embd.weight"] = np.zeros((d, 3, p, p))  # shape check only
            elif name == "vision_tower.patch_embedder.position_embedding_table":
                self.tensors["v.position_embd.weight"] = a
            elif name in ("vision_tower.std_bias", "vision_tower.std_scale"):
                self.tensors["v." + name.split(".")[-1]] = a
            elif m := re.match(r"vision_tower\.encoder\.layers\.(\d+)\.(.+)$", name):
                blk, rest = f"v.blk.{m.group(1)}.", m.group(2)
                if rest in VISION_LAYER:
                    self.tensors[blk + VISION_LAYER[rest]] = a
                    continue
                lm = re.match(r"(.+)\.(linear\.weight|input_min|input_max|output_min|output_max)$",
                              rest)
                if not lm or lm.group(1) not in VISION_LINEAR:
                    raise ValueError(f"{path}: unknown vision tensor {name}")
                suffix = "weight" if lm.group(2) == "linear.weight" else lm.group(2)
                self.tensors[f"{blk}{VISION_LINEAR[lm.group(1)]}.{suffix}"] = a.reshape(-1) \
                    if a.ndim == 0 else a

    def get(self, key, default=None):
        return self.metadata.get(key, default)

    def require(self, key):
        if key not in self.metadata:
            raise ValueError(f"{self.path}: no key {key}")
        return self.metadata[key]

    def info(self, name):
        if name not in self.tensors:
            raise ValueError(f"{self.path}: tensor {name} is missing")
        return _Info(self.tensors[name])

    def tensor(self, name):
        self.info(name)
        return self.tensors[name]


class HfVisionTower(vision.VisionTower):
    """The reference tower with transformers' patch embedding: a linear over each patch
    flattened (row, column, channel)."""

    def patchify(self, x):
        p = self.cfg.patch_size
        hp, wp = x.shape[0] // p, x.shape[1] // p
        blocks = x.reshape(hp, p, wp, p, 3).transpose(0, 2, 1, 3, 4)  # [r, q, i, j, c]
        return blocks.reshape(hp * wp, p * p * 3) @ self.file.hf_patch.T


AUDIO_TOWER = {
    "subsample_conv_projection.layer0.conv.weight": "a.conv1d.0.weight",
    "subsample_conv_projection.layer0.norm.weight": "a.conv1d.0.norm.weight",
    "subsample_conv_projection.layer1.conv.weight": "a.conv1d.1.weight",
    "subsample_conv_projection.layer1.norm.weight": "a.conv1d.1.norm.weight",
    "subsample_conv_projection.input_proj_linear.weight": "a.input_projection.weight",
    "output_proj.weight": "a.pre_encode.out.weight",
    "output_proj.bias": "a.pre_encode.out.bias",
}
AUDIO_LAYER = {
    "feed_forward1.pre_layer_norm.weight": "ffn_norm.weight",
    "feed_forward1.post_layer_norm.weight": "ffn_post_norm.weight",
    "feed_forward2.pre_layer_norm.weight": "ffn_norm_1.weight",
    "feed_forward2.post_layer_norm.weight": "ffn_post_norm_1.weight",
    "norm_pre_attn.weight": "attn_pre_norm.weight",
    "norm_post_attn.weight": "attn_post_norm.weight",
    "norm_out.weight": "ln2.weight",
    "self_attn.relative_k_proj.weight": "attn_k_rel.weight",
    "self_attn.per_dim_scale": "per_dim_scale.weight",
    "lconv1d.pre_layer_norm.weight": "conv_norm.weight",  # the conv module's PRE-norm
    "lconv1d.conv_norm.weight": "norm_conv.weight",  # the norm after the depthwise conv
    "lconv1d.depthwise_conv1d.weight": "conv_dw.weight",
}
AUDIO_LINEAR = {"feed_forward1.ffw_layer_1": "ffn_up", "feed_forward1.ffw_layer_2": "ffn_down",
                "feed_forward2.ffw_layer_1": "ffn_up_1", "feed_forward2.ffw_layer_2": "ffn_down_1",
                "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
                "self_attn.v_proj": "attn_v", "self_attn.post": "attn_out",
                "lconv1d.linear_start": "conv_pw1", "lconv1d.linear_end": "conv_pw2"}


class HfAudioFile:
    """What audio_encoder.AudioEncoder reads from an mmproj GGUF, served from a HF checkpoint's
    audio tower (config.json audio_config with transformers' defaults) and audio embedder."""

    def __init__(self, path):
        self.path = path
        with open(os.path.join(path, "config.json")) as f:
            cfg = json.load(f)
        ac = cfg.get("audio_config") or {}
        if not ac:
            raise ValueError(f"{path}: no audio_config")
        d = ac.get("hidden_size", 1024)
        self.metadata = {
            "general.architecture": "clip",
            "clip.audio.projector_type": "gemma4a",
            "clip.audio.embedding_length": d,
            "clip.audio.feed_forward_length": 4 * d,  # transformers' FFN is 4 x hidden_size
            "clip.audio.block_count": ac.get("num_hidden_layers", 12),
            "clip.audio.attention.head_count": ac.get("num_attention_heads", 8),
            "clip.audio.num_mel_bins": 128,  # the feature extractor's default feature_size
            "clip.audio.projection_dim": cfg["text_config"]["hidden_size"],
        }
        self.tensors = {}
        for name, a in read_checkpoint(path).items():
            a = a.astype(np.float64)
            name = name.removeprefix("model.")
            if name == "embed_audio.embedding_projection.weight":
                self.tensors["mm.a.input_projection.weight"] = a
            elif name.startswith("audio_tower.") and name[12:] in AUDIO_TOWER:
                self.tensors[AUDIO_TOWER[name[12:]]] = a
            elif m := re.match(r"audio_tower\.layers\.(\d+)\.(.+)$", name):
                blk, rest = f"a.blk.{m.group(1)}.", m.group(2)
                if rest == "self_attn.per_dim_scale":
                    a = np.logaddexp(0.0, a)  # softplus, which transformers applies at run time
                elif rest == "lconv1d.depthwise_conv1d.weight":
                    a = a[:, 0, :]  # [Da, 1, K] -> [Da, K]
                if rest in AUDIO_LAYER:
                    self.tensors[blk + AUDIO_LAYER[rest]] = a
                    continue
                lm = re.match(r"(.+)\.(linear\.weight|input_min|input_max|output_min|output_max)$",
                              rest)
                if not lm or lm.group(1) not in AUDIO_LINEAR:
                    raise ValueError(f"{path}: unknown audio tensor {name}")
                suffix = "weight" if lm.group(2) == "linear.weight" else lm.group(2)
                self.tensors[f"{blk}{AUDIO_LINEAR[lm.group(1)]}.{suffix}"] = a.reshape(-1) \
                    if a.ndim == 0 else a
            elif name.startswith(("audio_tower.", "embed_audio.")):
                raise ValueError(f"{path}: unknown audio tensor {name}")

    get = HfVisionFile.get
    require = HfVisionFile.require
    info = HfVisionFile.info
    tensor = HfVisionFile.tensor


def target_model(path):
    f = HfFile(path)
    return gemma4.Model(f, "exact", f.partial_rotary_factor)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["logits", "draft", "vision", "audio"])
    p.add_argument("dirs", nargs="+")
    p.add_argument("--tokens", default="")
    p.add_argument("--pixels")
    p.add_argument("--width", type=int)
    p.add_argument("--height", type=int)
    p.add_argument("--mel")
    p.add_argument("--frames", type=int)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    tokens = [int(t) for t in args.tokens.split(",") if t]
    try:
        if args.command == "vision":
            px = np.fromfile(args.pixels, "<f4").reshape(args.height, args.width, 3)
            result = HfVisionTower(HfVisionFile(args.dirs[0]), gelu="tanh").encode(px).reshape(-1)
        elif args.command == "audio":
            mel = np.fromfile(args.mel, "<f4").reshape(args.frames, 128)
            result = audio_encoder.AudioEncoder(HfAudioFile(args.dirs[0])).encode(mel).reshape(-1)
        elif args.command == "logits":
            result = target_model(args.dirs[0]).run(tokens).logits.reshape(-1)
        else:
            target = target_model(args.dirs[0])
            af = HfFile(args.dirs[1])
            drafter = assistant.Assistant(af, "exact", af.partial_rotary_factor).bind(target)
            t0, _, steps = assistant.draft_after_prompt(target, drafter, tokens, 1)
            result = np.concatenate([[float(t0)], steps[0].logits])
    except (ValueError, KeyError, OSError) as e:
        print(f"hf_reference.py: error: {e}", file=sys.stderr)
        return 1
    np.asarray(result, "<f8").tofile(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
