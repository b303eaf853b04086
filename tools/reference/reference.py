#!/usr/bin/python3
"""Command-line front end of the NumPy reference (the C++ tests call it; see README.md).

  reference.py logits MODEL.gguf --tokens 2,10,11 --out OUT.npz [--with-kv]
  reference.py greedy MODEL.gguf --tokens ... -n 64
  reference.py mtp-greedy TARGET.gguf ASSISTANT.gguf --tokens ... -n 64 --draft-max 3
  reference.py draft TARGET.gguf ASSISTANT.gguf --tokens ... --draft-max 3 --out OUT.npz
  reference.py vision MMPROJ.gguf --pixels IMG.npy --out OUT.npz [--vision-gelu tanh|quick]
  reference.py audio-mel (--wav IN.wav | --samples IN.npy) --out OUT.npy \
               [--log-floor add|clamp] [--long-audio chunk|truncate]
  reference.py audio-encode MMPROJ.gguf (--mel A.npy[,B.npy] | --wav IN.wav) --out OUT.npz \
               [--log-floor add|clamp] [--trace]

logits and greedy also take images: --mmproj MMPROJ.gguf --image-pixels A.npy[,B.npy]
--media-mask causal|bidirectional|bidirectional-sliding[-windowed], with the placeholder id -1 once per
image in --tokens (write --tokens=-1,... when the list starts with it).
Common options: --gelu exact|ggml, and for the assistant --positions constant|increment.
Exit code 0 on success, 1 on bad input (message on stderr), 2 on bad usage.
"""

import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import assistant  # noqa: E402
import audio  # noqa: E402
import audio_encoder  # noqa: E402
import gemma4  # noqa: E402
import ops  # noqa: E402
import vision  # noqa: E402
from gguf_read import GGUFError  # noqa: E402


def parse_tokens(text):
    try:
        tokens = [int(t) for t in text.replace(" ", "").split(",") if t != ""]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--tokens must be comma-separated integers: '{text}'")
    if not tokens:
        raise argparse.ArgumentTypeError("--tokens is empty")
    return tokens


def load_target(args):
    return gemma4.Model.load(args.model, gelu_mode=args.gelu)


def load_pixels(path):
    """An .npy image: float [H, W, 3], already normalised."""
    px = np.load(path, allow_pickle=False)
    if not isinstance(px, np.ndarray):
        raise ValueError(f"{path}: not a single .npy array")
    return px


def prompt_with_images(args, model):
    """(token rows, media spans) of the prompt: --tokens with each placeholder -1 replaced by
    the soft tokens of the matching --image-pixels file, encoded with --mmproj."""
    has_slot = gemma4.PLACEHOLDER in args.tokens
    if args.mmproj is None:
        if args.image_pixels or has_slot:
            raise ValueError("images (--image-pixels or a -1 placeholder in --tokens) need "
                             "--mmproj")
        return args.tokens, []
    if not args.image_pixels:
        raise ValueError("--mmproj needs --image-pixels")
    tower = vision.VisionTower.load(args.mmproj, gelu=args.vision_gelu, gelu_mode=args.gelu)
    if tower.n_embd_out != model.cfg.n_embd:
        raise ValueError(f"{args.mmproj}: projection width {tower.n_embd_out} differs from the "
                         f"text model's embedding_length {model.cfg.n_embd}")
    embeddings = [tower.encode(load_pixels(p)) for p in args.image_pixels]
    return gemma4.splice_media(args.tokens, embeddings)


def load_pair(args):
    target = gemma4.Model.load(args.target, gelu_mode=args.gelu)
    drafter = assistant.Assistant.load(args.assistant, gelu_mode=args.gelu).bind(target)
    return target, drafter


def cmd_logits(args):
    model = load_target(args)
    tokens, media = prompt_with_images(args, model)
    state = model.run(tokens, media=media, media_mask=args.media_mask)
    arrays = {"logits": state.logits, "hidden": state.hidden,
              "tokens": state.tokens, "positions": state.positions}
    if args.mmproj is not None:
        arrays["image_spans"] = np.array([[s, len(e)] for s, e in media], np.int64).reshape(-1, 2)
    if args.with_kv:
        for il, (k, v) in state.kv.items():
            arrays[f"k_{il}"], arrays[f"v_{il}"] = k, v
    np.savez(args.out, **arrays)


def cmd_greedy(args):
    model = load_target(args)
    prompt, media = prompt_with_images(args, model)
    tokens = gemma4.greedy(model, prompt, args.n, stop_at_eog=not args.ignore_eos, media=media,
                           media_mask=args.media_mask)
    print(json.dumps({"tokens": tokens}))


def cmd_mtp_greedy(args):
    target, drafter = load_pair(args)
    res = assistant.mtp_greedy(target, drafter, args.tokens, args.n, args.draft_max,
                               positions=args.positions, p_min=args.p_min,
                               stop_at_eog=not args.ignore_eos)
    out = {"tokens": res["tokens"], "drafted": res["drafted"], "accepted": res["accepted"]}
    if args.rounds:
        out["rounds"] = res["rounds"]
    print(json.dumps(out))


def cmd_draft(args):
    target, drafter = load_pair(args)
    t0, h, steps = assistant.draft_after_prompt(target, drafter, args.tokens, args.draft_max,
                                                args.positions)
    np.savez(args.out,
             logits=np.array([s.logits for s in steps]),  # [n, V]
             tokens=np.array([s.token for s in steps], np.int64),  # [n]
             positions=np.array([s.pos for s in steps], np.int64),  # [n]
             hidden_out=np.array([s.h_next for s in steps]),  # [n, B]
             normed=np.array([s.y for s in steps]),  # [n, D]
             first_token=np.int64(t0), hidden_in=h)  # scalar, [B]


def cmd_vision(args):
    tower = vision.VisionTower.load(args.mmproj, gelu=args.vision_gelu, gelu_mode=args.gelu)
    pixels = load_pixels(args.pixels)
    trace = {} if args.trace else None
    arrays = {"embeddings": tower.encode(pixels, trace)}
    arrays["grid"] = np.array(tower.token_grid(np.shape(pixels)), np.int64)
    arrays.update(trace or {})
    np.savez(args.out, **arrays)


def read_wav_16k(path):
    samples, rate = audio.read_wav(path)
    if rate != audio.SAMPLE_RATE:
        raise ValueError(f"{path}: {rate} Hz; the reference does not resample (16000 Hz)")
    return samples


def cmd_audio_mel(args):
    if (args.wav is None) == (args.samples is None):
        raise ValueError("give exactly one of --wav and --samples")
    if args.wav is not None:
        samples = read_wav_16k(args.wav)
    else:
        samples = np.load(args.samples)
        if samples.ndim != 1:
            raise ValueError(f"{args.samples}: expected a 1-D array of 16 kHz samples")
    chunks = audio.log_mel_chunks(samples, args.log_floor, args.long_audio)
    rows = np.concatenate(chunks) if chunks else np.zeros((0, audio.MELS))
    np.save(args.out, rows)
    print(json.dumps({"chunks": [len(c) for c in chunks], "samples": len(samples)}))


def load_mel(path):
    """An .npy log-mel piece: float [frames, mel bins]."""
    m = np.load(path, allow_pickle=False)
    if not isinstance(m, np.ndarray):
        raise ValueError(f"{path}: not a single .npy array")
    return m


def cmd_audio_encode(args):
    if (args.mel is None) == (args.wav is None):
        raise ValueError("give exactly one of --mel and --wav")
    encoder = audio_encoder.AudioEncoder.load(args.mmproj)
    if args.wav is not None:
        pieces = audio.log_mel_chunks(read_wav_16k(args.wav), args.log_floor, "chunk")
        if not pieces:
            raise ValueError(f"{args.wav}: too short for one log-mel frame")
        names = [f"{args.wav} piece {i}" for i in range(len(pieces))]
    else:
        names = args.mel
        pieces = [load_mel(p) for p in args.mel]
    trace = {} if args.trace else None
    outputs, counts = [], []
    for name, mel in zip(names, pieces):
        t = {} if trace is not None else None
        try:
            outputs.append(encoder.encode(mel, t))
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
        counts.append(outputs[-1].shape[0])
        for key, value in (t or {}).items():
            trace.setdefault(key, []).append(value)
    arrays = {"embeddings": np.concatenate(outputs), "tokens": np.array(counts, np.int64)}
    arrays.update({k: np.concatenate(v) for k, v in (trace or {}).items()})
    np.savez(args.out, **arrays)
    print(json.dumps({"tokens": counts, "n_embd": encoder.n_embd_out}))


def parse_paths(text):
    paths = [p for p in text.split(",") if p != ""]
    if not paths:
        raise argparse.ArgumentTypeError("the list of .npy paths is empty")
    return paths


def add_vision_gelu(sp):
    sp.add_argument("--vision-gelu", choices=vision.GELU_CHOICES, default=None,
                    help="vision FFN activation (default: clip.use_gelu from the file, tanh when "
                         "the key is absent)")


def add_images(sp):
    sp.add_argument("--mmproj", help="mmproj GGUF (clip, gemma4v) that encodes the images")
    sp.add_argument("--image-pixels", type=parse_paths, default=[],
                    help="comma-separated .npy images [H,W,3], one per -1 in --tokens")
    sp.add_argument("--media-mask", choices=gemma4.MEDIA_MASKS, default="causal",
                    help="attention over image rows (default causal)")
    add_vision_gelu(sp)


def build_parser():
    p = argparse.ArgumentParser(prog="reference.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp, pair):
        if pair:
            sp.add_argument("target", help="target GGUF (arch gemma4)")
            sp.add_argument("assistant", help="assistant GGUF (arch gemma4-assistant)")
            sp.add_argument("--positions", choices=assistant.POSITION_MODES, default="constant",
                            help="assistant query positions in a draft block (default constant)")
        else:
            sp.add_argument("model", help="target GGUF (arch gemma4)")
        sp.add_argument("--tokens", type=parse_tokens, required=True,
                        help="comma-separated prompt token ids, e.g. 2,10,11")
        sp.add_argument("--gelu", choices=ops.GELU_MODES, default="exact",
                        help="exact float64 GELU (default) or ggml's fp16 lookup table")

    sp = sub.add_parser("logits", help="logits and hidden of a whole sequence -> npz")
    common(sp, False)
    sp.add_argument("--out", required=True)
    sp.add_argument("--with-kv", action="store_true", help="also store k_L / v_L per KV layer")
    add_images(sp)
    sp.set_defaults(fn=cmd_logits)

    sp = sub.add_parser("greedy", help="greedy continuation -> JSON")
    common(sp, False)
    sp.add_argument("-n", type=int, default=64)
    sp.add_argument("--ignore-eos", action="store_true")
    add_images(sp)
    sp.set_defaults(fn=cmd_greedy)

    sp = sub.add_parser("mtp-greedy", help="greedy MTP speculative decoding -> JSON")
    common(sp, True)
    sp.add_argument("-n", type=int, default=64)
    sp.add_argument("--draft-max", type=int, default=3)
    sp.add_argument("--p-min", type=float, default=0.0)
    sp.add_argument("--ignore-eos", action="store_true")
    sp.add_argument("--rounds", action="store_true", help="also print every round's drafts")
    sp.set_defaults(fn=cmd_mtp_greedy)

    sp = sub.add_parser("draft", help="assistant logits per draft step after the prompt -> npz")
    common(sp, True)
    sp.add_argument("--draft-max", type=int, default=3)
    sp.add_argument("--out", required=True)
    sp.set_defaults(fn=cmd_draft)

    sp = sub.add_parser("vision", help="soft tokens of one image (gemma4v mmproj) -> npz")
    sp.add_argument("mmproj", help="mmproj GGUF (arch clip, projector gemma4v)")
    sp.add_argument("--pixels", required=True, help=".npy float [H,W,3], already normalised")
    sp.add_argument("--out", required=True)
    sp.add_argument("--trace", action="store_true",
                    help="also store patch_proj, patches, layer_N and pooled")
    sp.add_argument("--gelu", choices=ops.GELU_MODES, default="exact",
                    help="how the tanh GELU is evaluated: exact float64 (default) or ggml's table")
    add_vision_gelu(sp)
    sp.set_defaults(fn=cmd_vision)

    sp = sub.add_parser("audio-mel", help="log-mel features of 16 kHz audio -> npy")
    sp.add_argument("--wav", help="16-bit PCM WAV at 16 kHz (channels are averaged)")
    sp.add_argument("--samples", help=".npy 1-D float array of 16 kHz mono samples")
    sp.add_argument("--out", required=True, help=".npy float64 [frames of all chunks, 128]")
    sp.add_argument("--log-floor", choices=audio.LOG_FLOORS, default="add",
                    help="ln(x + 0.001) as transformers (default) or ln(max(x, 0.001)) as llama.cpp")
    sp.add_argument("--long-audio", choices=audio.LONG_AUDIO, default="chunk",
                    help="30 s chunks as llama.cpp (default) or the first 30 s as transformers")
    sp.set_defaults(fn=cmd_audio_mel)

    sp = sub.add_parser("audio-encode",
                        help="soft tokens of log-mel pieces (gemma4a mmproj) -> npz")
    sp.add_argument("mmproj", help="mmproj GGUF (arch clip, audio projector gemma4a)")
    sp.add_argument("--mel", type=parse_paths,
                    help="comma-separated .npy float [frames, mel bins], one per piece, each "
                         "encoded on its own")
    sp.add_argument("--wav", help="16-bit PCM WAV at 16 kHz: log-mel first (audio-mel), cut into "
                                  "30 s pieces")
    sp.add_argument("--out", required=True,
                    help=".npz: embeddings [tokens of all pieces, Dt], tokens [pieces]")
    sp.add_argument("--log-floor", choices=audio.LOG_FLOORS, default="add",
                    help="with --wav: ln(x + 0.001) (default) or ln(max(x, 0.001))")
    sp.add_argument("--trace", action="store_true",
                    help="also store subsample, layer_N and encoder_out (rows of all pieces)")
    sp.set_defaults(fn=cmd_audio_encode)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    for name in ("n", "draft_max"):
        if getattr(args, name, 0) < 0:
            print(f"reference.py: error: {name.replace('_', '-')} must be >= 0", file=sys.stderr)
            return 2
    try:
        args.fn(args)
    except (GGUFError, ValueError, OSError) as e:
        print(f"reference.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
