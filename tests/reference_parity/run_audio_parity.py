#!/usr/bin/python3
"""C++ gemma4a audio encoder (tandem-encode-audio) vs the float64 NumPy reference.

  run_audio_parity.py --encode BUILD/tandem-encode-audio --reference tools/reference
                      [--workdir DIR] [--keep]

Writes random-weight audio mmproj files (the tiny tower, with and without clamp bounds; F32, F16,
BF16 and Q8_0 weights), encodes random log-mel pieces of 1, 7, 99 and 250 frames (1, 2, 25 and
63 soft tokens: one row, a block of 12 not filled, several blocks with the last one not filled;
F32 also a whole 30 s piece of 2999 frames) and compares the soft tokens [tokens, Dt] of each
piece with `reference.py audio-encode`. Bounds are relative to the reference's RMS (about 1).
Also checked: the token counts and the output layout; every ISA path on F32; --threads 2 and
each piece encoded alone give the bits of one call on one thread; the exit codes of a bad input
(1) and a bad command line (2). For Q8_0 weights most rows must also match the reference with
the engine's Q8_0 activation rounding emulated (emulation.emulate_audio) to float precision.

Prints one line per check and "N passed, M failed". Exit code 0 = all passed, 1 = a check failed
or a run broke, 77 = skipped (NumPy or the reference's audio_encoder.py absent).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True

from parity_util import Report, run  # noqa: E402

# max |Δ| / rms(reference). F32: float32 rounding of the reference's matmul inputs and outputs
# alone moves the tiny tower by under 1e-6 of its RMS. F16 / BF16: the reference reads the same
# rounded weights, the engine keeps f32 activations. Q8_0: the engine also rounds every
# quantized matmul's input to Q8_0; that rounding alone (emulated in the reference) moves the
# tiny tower by up to 0.11 on these inputs.
F32_BOUND = 1e-4
F16_BOUND = 1e-4
Q8_BOUND = 0.25
# Q8_0 again, against the reference with the engine's activation rounding emulated: max |Δ| of a
# row / rms(reference), for the rows before any rounding-boundary flip.
EMULATED_ROW_BOUND = 1e-5
WEIGHT_TYPES = (("f32", F32_BOUND), ("f16", F16_BOUND), ("bf16", F16_BOUND), ("q8_0", Q8_BOUND))
VARIANTS = (("tiny", []), ("tiny-no-clamps", ["--no-clamps"]))
MEL_FRAMES = (1, 7, 99, 250)
LONG_FRAMES = 2999  # one whole 30 s piece, F32 only
N_MEL = 128  # the tiny preset's mel bins


def token_count(frames):
    return ((frames + 1) // 2 + 1) // 2


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--encode", required=True, help="path of the tandem-encode-audio binary")
    p.add_argument("--reference", required=True, help="tools/reference directory")
    p.add_argument("--workdir", help="where files go (default: a temporary dir)")
    p.add_argument("--keep", action="store_true")
    a = p.parse_args(argv)
    try:
        import numpy as np
    except ImportError:
        print("SKIP: NumPy is not available")
        return 77
    if not os.path.exists(os.path.join(a.reference, "audio_encoder.py")):
        print(f"SKIP: {a.reference} has no audio encoder reference (audio_encoder.py)")
        return 77
    sys.path.insert(0, os.path.abspath(a.reference))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import audio_encoder
    import emulation

    ref_cli = os.path.join(a.reference, "reference.py")
    work = a.workdir or tempfile.mkdtemp(prefix="audio_parity_")
    os.makedirs(work, exist_ok=True)
    report = Report()
    isas = run([a.encode, "--list-isas"]).split()

    rng = np.random.default_rng(11)
    mels = {}
    for frames in MEL_FRAMES + (LONG_FRAMES,):
        path = os.path.join(work, f"mel-{frames}.npy")
        # Log-mel values of speech span about -7 .. 3.
        np.save(path, rng.normal(-2.0, 2.0, (frames, N_MEL)).astype(np.float32))
        mels[frames] = path

    def reference(mmproj, paths):
        out = os.path.join(work, "ref.npz")
        run([sys.executable, ref_cli, "audio-encode", mmproj, "--mel", ",".join(paths),
             "--out", out])
        with np.load(out) as z:
            flat, counts = z["embeddings"], list(z["tokens"])
        return np.split(flat, np.cumsum(counts)[:-1])

    def encode(mmproj, paths, threads=1, isa=None):
        out = os.path.join(work, "cpp.f32")
        args = [a.encode, "--mmproj", mmproj, "--mel", ",".join(paths), "--threads",
                str(threads), "--out", out]
        if isa:
            args += ["--isa", isa]
        info = json.loads(run(args))
        flat = np.fromfile(out, dtype="<f4")
        d = info["n_embd"]
        layout_ok = (len(info["tokens"]) == len(paths)
                     and len(info.get("encode_ms", [])) == len(paths)
                     and flat.size == sum(info["tokens"]) * d)
        if not layout_ok:
            raise RuntimeError(f"tandem-encode-audio output does not match its JSON {info}: "
                               f"{flat.size} floats for {len(paths)} inputs")
        parts, at = [], 0
        for t in info["tokens"]:
            parts.append(flat[at:at + t * d].reshape(t, d))
            at += t * d
        return parts

    def rel(cpp, ref):
        return float(np.abs(cpp.astype(np.float64) - ref).max() / np.sqrt(np.mean(ref ** 2)))

    def compare(label, frames, cpp, refs, bound):
        for f, c, r in zip(frames, cpp, refs):
            ok_shape = c.shape == r.shape and c.shape[0] == token_count(f)
            err = rel(c, r) if ok_shape else float("inf")
            report.check(ok_shape and err <= bound,
                         f"{label} {f} frames: tokens {c.shape[0]} vs {r.shape[0]}, "
                         f"max|Δ|/rms {err:.2e} (bound {bound:g})")

    def bitwise(label, x, y):
        report.check(len(x) == len(y) and all(np.array_equal(u, v) for u, v in zip(x, y)), label)

    for name, flags in VARIANTS:
        for wtype, bound in WEIGHT_TYPES:
            mmproj = os.path.join(work, f"{name}-{wtype}.gguf")
            run([a.encode, "--mmproj", mmproj, "--write-random", "tiny", "--weight-type", wtype,
                 *flags])
            frames = MEL_FRAMES + ((LONG_FRAMES,) if wtype == "f32" else ())
            paths = [mels[f] for f in frames]
            refs = reference(mmproj, paths)
            label = f"{name} {wtype}"
            one = encode(mmproj, paths)
            compare(f"{label} threads=1", frames, one, refs, bound)
            if wtype == "f32" and not flags:
                for isa in isas:
                    compare(f"{label} isa={isa}", frames, encode(mmproj, paths, isa=isa), refs,
                            bound)
            bitwise(f"{label}: --threads 2 bitwise equal to --threads 1",
                    encode(mmproj, paths, threads=2), one)
            alone = [encode(mmproj, [pth])[0] for pth in paths]
            bitwise(f"{label}: each piece alone bitwise equal to all {len(paths)} in one call",
                    alone, one)
            if wtype == "q8_0":
                # Row by row against the reference that rounds where the engine rounds: equal up
                # to float order until a Q8_0 rounding-boundary flip, which then moves its row
                # and the later rows it reaches. Most rows must agree.
                enc = audio_encoder.AudioEncoder.load(mmproj)
                with emulation.emulate_audio(enc):
                    emulated = [enc.encode(np.load(pth)) for pth in paths]
                rows = np.concatenate([np.abs(c - e).max(axis=1) / np.sqrt(np.mean(r ** 2))
                                       for c, e, r in zip(one, emulated, refs)])
                agree = int(np.sum(rows <= EMULATED_ROW_BOUND))
                report.check(2 * agree >= rows.size,
                             f"{label}: {agree} of {rows.size} rows within "
                             f"{EMULATED_ROW_BOUND:g} of the reference with Q8_0 activations "
                             f"(need half; the others up to {rows.max():.2e})")

    # Exit codes: a bad input is a tandem error (1), a bad command line a usage error (2).
    mmproj = os.path.join(work, "tiny-f32.gguf")
    bad = os.path.join(work, "mel-80-bins.npy")
    np.save(bad, np.zeros((10, 80), np.float32))
    out = os.path.join(work, "bad.f32")
    r = subprocess.run([a.encode, "--mmproj", mmproj, "--mel", bad, "--out", out],
                       capture_output=True, text=True)
    report.check(r.returncode == 1 and r.stderr.strip() != "",
                 f"a mel input of 80 bins: exit {r.returncode} (want 1), message "
                 f"{r.stderr.strip()[:120]!r}")
    r = subprocess.run([a.encode, "--mmproj", mmproj, "--out", out], capture_output=True,
                       text=True)
    report.check(r.returncode == 2, f"no --mel: exit {r.returncode} (want 2)")

    print(f"{report.passed} passed, {report.failed} failed")
    if not a.keep and not a.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if report.failed == 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"FAIL {e}")
        sys.exit(1)
