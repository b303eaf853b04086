#!/usr/bin/python3
"""Logits after an audio prompt: tandem-dump-logits vs the float64 NumPy reference.

  run_audio_logits_parity.py --dump BUILD/tandem-dump-logits --tandem BUILD/tandem
                             --reference tools/reference [--workdir DIR] [--keep]

Writes a random-weight tiny-e2b text model (per-layer embeddings and KV sharing) with conditioned
q/k norms (emulation.condition_qk_norms, README.md says why), the tiny-e2b mmproj with both
towers (`tandem mkmodel --mmproj`, f32), and two 16 kHz mono WAVs of tones. tandem-dump-logits
evaluates a prompt holding both recordings between text tokens (tandem's own decode, log-mel,
encode and markup expansion); the reference encodes the same WAVs from its own float64 log-mel
(`reference.py audio-encode --wav`) and evaluates the same rows, the soft tokens as media rows
with the causal mask (docs/gemma4.md § Media rows: audio rows are causal whatever the image
rule). Checks:

  * each recording is expanded to <|audio>, one placeholder row per soft token the reference
    counts, <audio|>, where its placeholder token stood;
  * the logits of every row, and in particular of every text row after a recording, are within
    F32_BOUND of the reference with the same argmax;
  * chunks that cut through the recordings and --image-attention bidirectional give the bits of
    one causal prefill (audio rows are causal and split like text rows);
  * the reference with the recordings' rows bidirectional, or with their soft tokens scaled by
    sqrt(D) as token embeddings are, differs from the causal, unscaled one by far more than the
    bound, so a wrong rule cannot pass.

Prints one line per check and "N passed, M failed". Exit code 0 = all passed, 1 = a check failed
or a run broke, 77 = skipped (NumPy absent).
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import wave

sys.dont_write_bytecode = True

from parity_util import Report, run  # noqa: E402

MODEL = "tiny-e2b"
F32_BOUND = 1e-3  # as run_image_parity.py's f32 bound; the measured figures are far below
RULES_APART = 0.1  # a wrong rule in the reference must move the logits by at least this much
RATE = 16000
# (name, seconds, tone frequencies in Hz): short recordings of a few soft tokens each
RECORDINGS = (("a", 0.6, (440.0, 1250.0)), ("b", 0.9, (300.0, 2100.0, 3700.0)))
CHUNK = 5  # the chunked run's rows per call: cuts through both recordings


def write_wav(path, seconds, freqs):
    """A 16-bit PCM 16 kHz mono WAV: the sum of the tones under a short fade in and out."""
    import numpy as np
    t = np.arange(int(seconds * RATE)) / RATE
    x = sum(np.sin(2 * np.pi * f * t) for f in freqs) / len(freqs)
    fade = np.minimum(1.0, np.minimum(t, t[-1] - t) / 0.02)
    pcm = np.round(x * fade * 0.5 * 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(pcm.tobytes())


def prompt(placeholder, n_vocab):
    """BOS, 4 text tokens, a recording, 6 text tokens, a recording, 30 text tokens: the text after
    the recordings runs past the sliding window."""
    text = [(i * 97 + 13) % (n_vocab - 300) + 280 for i in range(40)]
    return [2] + text[:4] + [placeholder] + text[4:10] + [placeholder] + text[10:]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dump", required=True, help="path of the tandem-dump-logits binary")
    p.add_argument("--tandem", required=True, help="path of the tandem binary (mkmodel)")
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

    work = a.workdir or tempfile.mkdtemp(prefix="audio_logits_parity_")
    os.makedirs(work, exist_ok=True)
    report = Report()
    try:
        mmproj = os.path.join(work, f"{MODEL}-mmproj-f32.gguf")
        run([a.tandem, "mkmodel", "--config", MODEL, "--mmproj", "--type", "f32", "-o", mmproj])
        model_path = os.path.join(work, f"{MODEL}-f32.gguf")
        run([a.dump, "-m", model_path, "--write-random", MODEL])
        emulation.condition_qk_norms(model_path)
        model = gemma4.Model.load(model_path)
        vocab = list(model.file.metadata["tokenizer.ggml.tokens"])
        markup = [vocab.index(t) for t in ("<|audio>", "<|audio|>", "<audio|>")]
        tokens = prompt(markup[1], model.cfg.n_vocab)

        wavs, soft = [], []
        for name, seconds, freqs in RECORDINGS:
            path = os.path.join(work, f"{name}.wav")
            write_wav(path, seconds, freqs)
            wavs.append(path)
            npz = os.path.join(work, f"{name}.npz")
            run([sys.executable, os.path.join(a.reference, "reference.py"), "audio-encode",
                 mmproj, "--wav", path, "--out", npz])
            soft.append(np.load(npz)["embeddings"])
        tag = f"{MODEL} recordings {', '.join(f'{r[1]:g} s' for r in RECORDINGS)}"
        out = os.path.join(work, "dump.bin")

        def dump(*flags):
            info = json.loads(run([a.dump, "-m", model_path, "--tokens",
                                   ",".join(map(str, tokens)), "--mmproj", mmproj, "--audio",
                                   ",".join(wavs), *flags, "--out", out]))
            rows = info["tokens"]
            data = np.fromfile(out, dtype="<f4")
            v, d = model.cfg.n_vocab, model.cfg.n_embd
            if data.size != len(rows) * (v + d):
                raise RuntimeError(f"dump has {data.size} floats for {len(rows)} rows")
            return info, data[:len(rows) * v].reshape(len(rows), v)

        info, cpp = dump()
        # The expansion the reference's counts give.
        want, spans = [], []
        ref_tokens = []
        k = 0
        for t in tokens:
            if t != markup[1]:
                want.append(t)
                ref_tokens.append(t)
                continue
            n = soft[k].shape[0]
            want += [markup[0]] + [markup[1]] * n + [markup[2]]
            spans.append([len(want) - n - 1, n])
            ref_tokens += [markup[0], gemma4.PLACEHOLDER, markup[2]]
            k += 1
        report.check(info["tokens"] == want and info["audio"] == spans and info["images"] == [],
                     f"{tag}: expanded to <|audio>, {[s[1] for s in spans]} placeholder rows, "
                     f"<audio|> (tandem: audio {info['audio']}, reference {spans})")

        seq, media = gemma4.splice_media(ref_tokens, soft)
        ref = model.run(seq, media=media, media_mask="causal").logits
        after = np.array([i for i in range(spans[0][0] + spans[0][1], len(seq))
                          if all(not (b <= i < b + n) for b, n in spans)])
        # Audio rows are causal whatever the image rule: both runs must match the causal reference.
        for rule in ("causal", "bidirectional"):
            logits = cpp if rule == "causal" else dump("--image-attention", rule)[1]
            diff = np.abs(logits.astype(np.float64) - ref).max(axis=1)
            same_argmax = np.array_equal(logits.argmax(axis=1), ref.argmax(axis=1))
            report.check(diff.max() <= F32_BOUND and same_argmax,
                         f"{tag} --image-attention {rule} vs --media-mask causal: max|Δlogit| "
                         f"text rows after the first recording {diff[after].max():.2e}, audio "
                         f"rows {max(diff[b:b + n].max() for b, n in spans):.2e}, every row "
                         f"{diff.max():.2e} (row {int(diff.argmax())}); argmax "
                         f"{'equal' if same_argmax else 'DIFFERS'} (bound {F32_BOUND:g})")
            if rule != "causal":
                report.check(np.array_equal(cpp, logits),
                             f"{tag}: --image-attention {rule} bitwise equal to causal")

        _, chunked = dump("--mode", f"chunks:{CHUNK}")
        report.check(np.array_equal(cpp, chunked),
                     f"{tag}: chunks of {CHUNK} (cutting through the recordings) bitwise equal "
                     "to one prefill")

        # The wrong rules the reference can state must be far from the right one.
        begin = spans[0][0]
        wrong = model.run(seq, media=media, media_mask="bidirectional").logits
        gap = np.abs(wrong[begin:] - ref[begin:]).max()
        report.check(gap >= RULES_APART,
                     f"{tag}: the reference with bidirectional audio rows differs from causal "
                     f"by {gap:.2e} from the first recording on (needed {RULES_APART:g})")
        scale = np.sqrt(model.cfg.n_embd)
        scaled = [(b, e * scale) for b, e in media]
        wrong = model.run(seq, media=scaled, media_mask="causal").logits
        gap = np.abs(wrong[begin:] - ref[begin:]).max()
        report.check(gap >= RULES_APART,
                     f"{tag}: the reference with soft tokens scaled by sqrt(D) differs from "
                     f"unscaled by {gap:.2e} from the first recording on (needed "
                     f"{RULES_APART:g})")
    except Exception as e:  # a crashed run is one failed check
        report.check(False, f"{MODEL} audio: {type(e).__name__}: {e}")
    print(f"{report.passed} passed, {report.failed} failed")
    if not a.keep and not a.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if report.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
