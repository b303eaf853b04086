#!/usr/bin/python3
"""Logits after an image prompt: tandem-dump-logits vs the float64 NumPy reference.

  run_image_parity.py --dump BUILD/tandem-dump-logits --encode BUILD/tandem-encode-image
                      --reference tools/reference [--workdir DIR] [--keep]

Writes random-weight text models (tiny-e2b: per-layer embeddings and KV sharing; tiny-31b:
neither) with conditioned q/k norms (emulation.condition_qk_norms, README.md says why) and a tiny
mmproj (f32), and PNG images whose size neither resize rule changes. For each model, image and
media attention rule tandem offers (--image-attention causal / bidirectional /
bidirectional-sliding) tandem-dump-logits evaluates a prompt holding the image (tandem's own
decode, preparation, encode and markup expansion; prefill, and chunks that the image's rows
interrupt) and the reference evaluates the same rows with the matching --media-mask, from the
pixels tandem prepared. Checks:

  * the prepared pixels are the PNG's bytes x float32(1/255), bit for bit (no resize happened);
  * the expanded prompt is <|image>, one placeholder row per soft token the reference counts,
    <image|>, where the placeholder token stood;
  * the logits of every row, and in particular of every text row after the image, are within
    F32_BOUND of the reference with the same argmax, and the chunked run equals the prefill bit
    for bit (the numerics contract);
  * the reference's rules differ from each other after the image by far more than the bound, so
    a wrong rule cannot pass.

Prints one line per check and "N passed, M failed". Exit code 0 = all passed, 1 = a check failed
or a run broke, 77 = skipped (NumPy absent).
"""

import argparse
import json
import os
import shutil
import struct
import sys
import tempfile
import zlib

sys.dont_write_bytecode = True

from parity_util import Report, run  # noqa: E402

MODELS = ("tiny-e2b", "tiny-31b")
# tandem's --image-attention -> the reference's --media-mask that states the same rule
RULES = {"causal": "causal", "bidirectional": "bidirectional",
         "bidirectional-sliding": "bidirectional-sliding-windowed"}
# tandem keeps the sliding window on an image's rows; transformers' gemma4 @ c308a309 does not
# (tools/reference/README.md § Images). Only an image longer than the window tells them apart:
# printed as a NOTE with its figure, not checked.
HF_GEMMA4 = ("bidirectional-sliding", "bidirectional-sliding")
F32_BOUND = 1e-3  # f32 weights and KV, as run_parity.py; the measured figures are far below
RULES_APART = 0.1  # the reference's rules must differ after the image by at least this much
# (name, width, height, tandem's resize flags): sizes that neither rule changes
# (docs/media.md § Target size). "long" has 70 soft tokens, more than the sliding window (32).
IMAGES = (
    ("short", 96, 144, ["--image-resize", "llamacpp", "--image-min-tokens", "1"]),
    ("long", 336, 480, ["--image-resize", "budget", "--image-budget", "70"]),
)
CHUNK = 5  # the chunked run's rows per call; the image's rows stay in one call


def png_rgb(width, height, seed):
    """(PNG bytes, the same pixels as uint8 [H, W, 3]): a deterministic pattern."""
    import numpy as np
    y, x = np.mgrid[0:height, 0:width]
    rgb = np.stack([(x * 7 + y * 3 + seed * 31) % 256, (y * 5 + seed * 17) % 256,
                    ((x ^ y) + seed) % 256], axis=-1).astype(np.uint8)
    raw = b"".join(b"\x00" + rgb[r].tobytes() for r in range(height))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b"")), rgb


def prompt(placeholder, n_vocab):
    """BOS, 5 text tokens, the image placeholder, then 40 text tokens: the text after the image
    runs past the sliding window, so sliding layers lose the image's first rows."""
    text = [(i * 97 + 13) % (n_vocab - 300) + 280 for i in range(45)]
    return [2] + text[:5] + [placeholder] + text[5:]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dump", required=True, help="path of the tandem-dump-logits binary")
    p.add_argument("--encode", required=True, help="path of the tandem-encode-image binary")
    p.add_argument("--reference", required=True, help="tools/reference directory")
    p.add_argument("--workdir", help="where files go (default: a temporary dir)")
    p.add_argument("--keep", action="store_true")
    a = p.parse_args(argv)
    try:
        import numpy as np
    except ImportError:
        print("SKIP: NumPy is not available")
        return 77
    sys.path.insert(0, os.path.abspath(a.reference))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import emulation
    import gemma4
    import vision

    work = a.workdir or tempfile.mkdtemp(prefix="image_parity_")
    os.makedirs(work, exist_ok=True)
    report = Report()

    mmproj = os.path.join(work, "tiny-mmproj-f32.gguf")
    run([a.encode, "--mmproj", mmproj, "--write-random", "tiny", "--weight-type", "f32"])
    tower = vision.VisionTower.load(mmproj, gelu="tanh")
    images = []
    for name, w, h, flags in IMAGES:
        path = os.path.join(work, f"{name}.png")
        data, rgb = png_rgb(w, h, len(images) + 1)
        with open(path, "wb") as f:
            f.write(data)
        images.append((name, path, rgb, flags))

    for preset in MODELS:
        model_path = os.path.join(work, f"{preset}-f32.gguf")
        run([a.dump, "-m", model_path, "--write-random", preset])
        emulation.condition_qk_norms(model_path)
        model = gemma4.Model.load(model_path)
        vocab = list(model.file.metadata["tokenizer.ggml.tokens"])
        markup = [vocab.index(t) for t in ("<|image>", "<|image|>", "<image|>")]
        tokens = prompt(markup[1], model.cfg.n_vocab)
        for name, png, rgb, flags in images:
            tag = f"{preset} {name} image {rgb.shape[1]}x{rgb.shape[0]}"
            out = os.path.join(work, "dump.bin")
            pixels = os.path.join(work, "pixels")

            def dump(rule, mode="prefill"):
                info = json.loads(run([a.dump, "-m", model_path, "--tokens",
                                       ",".join(map(str, tokens)), "--mmproj", mmproj,
                                       "--image", png, *flags, "--vision-gelu", "tanh",
                                       "--image-attention", rule, "--mode", mode,
                                       "--pixels-out", pixels, "--out", out]))
                rows = info["tokens"]
                data = np.fromfile(out, dtype="<f4")
                v, d = model.cfg.n_vocab, model.cfg.n_embd
                if data.size != len(rows) * (v + d):
                    raise RuntimeError(f"dump has {data.size} floats for {len(rows)} rows")
                return info, data[:len(rows) * v].reshape(len(rows), v)

            try:
                info, _ = dump("causal")
                px = np.load(pixels + "0.npy")
                expect = rgb.astype(np.float32) * np.float32(1.0 / 255.0)
                report.check(px.shape == expect.shape and np.array_equal(px, expect),
                             f"{tag}: tandem's prepared pixels {px.shape[1]}x{px.shape[0]} are "
                             "the PNG's bytes / 255, bit for bit")
                soft = tower.encode(px.astype(np.float64))
                at = tokens.index(markup[1])
                n = soft.shape[0]
                want = (tokens[:at] + [markup[0]] + [markup[1]] * n + [markup[2]]
                        + tokens[at + 1:])
                begin = at + 1
                report.check(info["tokens"] == want and info["images"] == [[begin, n]],
                             f"{tag}: expanded to <|image>, {n} placeholder rows, <image|> at "
                             f"row {at} (tandem: images {info['images']})")
                ref_tokens = tokens[:at] + [markup[0], gemma4.PLACEHOLDER, markup[2]] + \
                    tokens[at + 1:]
                seq, media = gemma4.splice_media(ref_tokens, [soft])
                after = np.arange(begin + n, len(seq))  # <image|> and the text after it
                refs = {}
                for rule in RULES:
                    ref = model.run(seq, media=media, media_mask=RULES[rule]).logits
                    refs[rule] = ref
                    _, cpp = dump(rule)
                    _, chunked = dump(rule, f"chunks:{CHUNK}")
                    diff = np.abs(cpp.astype(np.float64) - ref).max(axis=1)
                    same_argmax = np.array_equal(cpp.argmax(axis=1), ref.argmax(axis=1))
                    report.check(
                        diff.max() <= F32_BOUND and same_argmax,
                        f"{tag} --image-attention {rule} vs --media-mask {RULES[rule]}: "
                        f"max|Δlogit| text after the image "
                        f"{diff[after].max():.2e} (rows {after[0]}..{after[-1]}), every row "
                        f"{diff.max():.2e} (row {int(diff.argmax())}); argmax "
                        f"{'equal' if same_argmax else 'DIFFERS'} (bound {F32_BOUND:g})")
                    report.check(np.array_equal(cpp, chunked),
                                 f"{tag} --image-attention {rule}: chunks of {CHUNK} (image "
                                 "whole) bitwise equal to one prefill")
                    if rule == HF_GEMMA4[0]:
                        hf = model.run(seq, media=media, media_mask=HF_GEMMA4[1]).logits
                        gap = np.abs(cpp.astype(np.float64) - hf)
                        print(f"NOTE {tag} --image-attention {rule} vs transformers gemma4 "
                              f"@ c308a309 (--media-mask {HF_GEMMA4[1]}, no window on the "
                              f"image's rows): max|Δlogit| text after the image "
                              f"{gap[after].max():.2e}, every row {gap.max():.2e}", flush=True)
                # The rules must differ where they act: on the image's rows (the tiny models'
                # only full layers whose mask could matter feed no later K/V, so the text after
                # an image shorter than the window may not tell bidirectional from
                # bidirectional-sliding) and after it.
                names = list(RULES)
                for i, r1 in enumerate(names):
                    for r2 in names[i + 1:]:
                        gap = np.abs(refs[r1][begin:] - refs[r2][begin:]).max()
                        report.check(gap >= RULES_APART,
                                     f"{tag}: the reference's {RULES[r1]} and {RULES[r2]} "
                                     f"differ from the image on by {gap:.2e} (needed "
                                     f"{RULES_APART:g})")
            except Exception as e:  # a crashed run is one failed check, the others still run
                report.check(False, f"{tag}: {type(e).__name__}: {e}")
    print(f"{report.passed} passed, {report.failed} failed")
    if not a.keep and not a.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if report.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
