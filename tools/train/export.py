#!/usr/bin/python3
"""Step 5: export the trained pair in Hugging Face layout, then convert and quantize with tandem.

  export.py --work DIR --out-dir models [--tandem build/tandem] [--dtype bf16|f32]
            [--quant Q8_0] [--name tandem-gemma4-tiny] [--no-convert]

Writes DIR/hf/target (Gemma4ForCausalLM) and DIR/hf/assistant (Gemma4AssistantForCausalLM),
each with config.json (real Gemma 4 field names), generation_config.json, model.safetensors,
tokenizer.json, tokenizer_config.json (chat template included) and special_tokens_map.json.
Then `tandem convert --type f32` and `tandem quantize` write to --out-dir:
NAME-f32.gguf, NAME-assistant-f32.gguf, NAME-QUANT.gguf and NAME-assistant-QUANT.gguf.
The assistant export needs the centroid head (train_assistant.py writes it).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True

import train_common as tc  # noqa: E402
import safetensors_io  # noqa: E402

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def state_arrays(module):
    """HF tensor name -> NumPy array (float32, token_ordering int64)."""
    out = {}
    for name, t in module.state_dict().items():
        if name.startswith("freqs_"):
            continue  # RoPE tables are not weights
        a = t.detach().cpu()
        out[name] = a.float().numpy() if a.dtype.is_floating_point else a.numpy()
    return out


def export_hf(module, hf_config, tokenizer_dir, out_dir, dtype="F32"):
    """Writes one HF checkpoint directory for module (its state_dict names are HF names)."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(dict(hf_config, torch_dtype="bfloat16" if dtype == "BF16" else "float32"), f,
                  indent=1)
    with open(os.path.join(out_dir, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 2, "pad_token_id": 0, "eos_token_id": [1, 106, 50],
                   "do_sample": True, "temperature": 1.0, "top_k": 64, "top_p": 0.95}, f,
                  indent=1)
    safetensors_io.write(os.path.join(out_dir, "model.safetensors"), state_arrays(module), dtype)
    for name in TOKENIZER_FILES:
        shutil.copyfile(os.path.join(tokenizer_dir, name), os.path.join(out_dir, name))


def run(cmd):
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"export.py: error: {cmd[0]} exited {r.returncode}:\n{r.stderr}")
    return r.stdout


def convert(tandem, hf_dir, out_path, name, out_type="f32"):
    run([tandem, "convert", hf_dir, "-o", out_path, "--type", out_type, "--name", name,
         "--no-progress"])


def quantize(tandem, in_path, out_path, quant):
    run([tandem, "quantize", in_path, out_path, quant, "--no-progress"])


def default_tandem():
    for candidate in (os.environ.get("TANDEM", ""), os.path.join(REPO, "build", "tandem")):
        if candidate and os.path.exists(candidate):
            return candidate
    return os.path.join(REPO, "build", "tandem")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", required=True)
    p.add_argument("--out-dir", default=os.path.join(REPO, "models"))
    p.add_argument("--tandem", default=default_tandem())
    p.add_argument("--dtype", choices=["bf16", "f32"], default="bf16",
                   help="safetensors dtype of the HF export (bf16 keeps it small)")
    p.add_argument("--quant", default="Q8_0", help="tandem quantize preset for both GGUFs")
    p.add_argument("--name", default="tandem-gemma4-tiny")
    p.add_argument("--no-convert", action="store_true", help="write the HF export only")
    args = p.parse_args(argv)

    target = tc.load_target(os.path.join(args.work, "target.pt"))
    tok_dir = os.path.join(args.work, "tokenizer")
    hf_target = os.path.join(args.work, "hf", "target")
    hf_assistant = os.path.join(args.work, "hf", "assistant")
    dtype = args.dtype.upper()
    export_hf(target, target.config.hf_config(), tok_dir, hf_target, dtype)
    assistant_path = os.path.join(args.work, "assistant.pt")
    have_assistant = os.path.exists(assistant_path)
    if have_assistant:
        assistant = tc.load_assistant(assistant_path, target.config)
        export_hf(assistant, assistant.config.hf_config(target.config), tok_dir, hf_assistant,
                  dtype)
    print(f"HF export: {hf_target}" + (f", {hf_assistant}" if have_assistant else ""))
    if args.no_convert:
        return 0
    os.makedirs(args.out_dir, exist_ok=True)
    pairs = [(hf_target, args.name)]
    if have_assistant:
        pairs.append((hf_assistant, args.name + "-assistant"))
    for hf_dir, name in pairs:
        f32 = os.path.join(args.out_dir, f"{name}-f32.gguf")
        convert(args.tandem, hf_dir, f32, name)
        if args.quant:
            quantize(args.tandem, f32, os.path.join(args.out_dir, f"{name}-{args.quant}.gguf"),
                     args.quant)
    for f in sorted(os.listdir(args.out_dir)):
        if f.startswith(args.name) and f.endswith(".gguf"):
            size = os.path.getsize(os.path.join(args.out_dir, f))
            print(f"  {f}: {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
