#!/usr/bin/python3
"""C++ gemma4v vision encoder (tandem-encode-image) vs the float64 NumPy reference.

  run_vision_parity.py --encode BUILD/tandem-encode-image --reference tools/reference
                       [--workdir DIR] [--keep]

Writes random-weight mmproj files (the tiny tower: clipped linears and standardization; a
variant with head_dim 20, which the kernel pads to 32, pooling 2 and neither feature; F16 and
Q8_0 weights), encodes non-square images one at a time and in one batch, and compares the soft
tokens [tokens, Dt] with `reference.py vision`. Bounds are relative to the reference's RMS (about
1). Prints one line per check and "N passed, M failed". Exit code 0 = all passed, 1 = a check
failed or a run broke, 77 = skipped (NumPy or the reference's vision command absent).
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True

from parity_util import Report, run  # noqa: E402

F32_BOUND = 1e-4     # f32 weights: max |Δ| / rms(reference)
F16_BOUND = 1e-4     # f16 weights: the reference reads the same f16 values, f32 activations
Q8_BOUND = 1e-1      # q8_0 weights: the engine also rounds activations to q8_0

# (name, write-random flags, image sizes (W, H))
VARIANTS = [
    ("tiny", [], [(96, 144), (48, 48), (144, 96)]),
    ("tiny-hd20-pool2", ["--n-embd", "40", "--n-head", "2", "--pooling", "2", "--no-clamps",
                         "--no-standardize"], [(64, 96), (32, 32)]),
]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
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
    ref_cli = os.path.join(a.reference, "reference.py")
    if not os.path.exists(os.path.join(a.reference, "vision.py")):
        print(f"SKIP: {a.reference} has no vision reference (vision.py)")
        return 77
    work = a.workdir or tempfile.mkdtemp(prefix="vision_parity_")
    os.makedirs(work, exist_ok=True)
    report = Report()
    isas = run([a.encode, "--list-isas"]).split()

    def reference(mmproj, pixels, gelu):
        out = os.path.join(work, "ref.npz")
        run([sys.executable, ref_cli, "vision", mmproj, "--pixels", pixels, "--out", out,
             "--vision-gelu", gelu])
        return np.load(out)["embeddings"]

    def encode(mmproj, pixel_paths, gelu, threads=1, isa=None, batch=False):
        out = os.path.join(work, "cpp.f32")
        args = [a.encode, "--mmproj", mmproj, "--pixels", ",".join(pixel_paths), "--gelu", gelu,
                "--threads", str(threads), "--out", out]
        if isa:
            args += ["--isa", isa]
        if batch:
            args.append("--batch")
        info = json.loads(run(args))
        flat = np.fromfile(out, dtype="<f4")
        parts, at = [], 0
        for t in info["tokens"]:
            parts.append(flat[at:at + t * info["n_embd"]].reshape(t, info["n_embd"]))
            at += t * info["n_embd"]
        return parts

    def rel(cpp, ref):
        return float(np.abs(cpp.astype(np.float64) - ref).max() / np.sqrt(np.mean(ref ** 2)))

    rng = np.random.default_rng(5)
    for name, flags, sizes in VARIANTS:
        pixels = []
        for w, h in sizes:
            path = os.path.join(work, f"{name}-{w}x{h}.npy")
            np.save(path, rng.random((h, w, 3), dtype=np.float32))
            pixels.append(path)
        for wtype, bound in (("f32", F32_BOUND), ("f16", F16_BOUND), ("q8_0", Q8_BOUND)):
            mmproj = os.path.join(work, f"{name}-{wtype}.gguf")
            run([a.encode, "--mmproj", mmproj, "--write-random", "tiny", "--weight-type", wtype,
                 *flags])
            gelus = ("tanh", "quick") if wtype == "f32" else ("tanh",)
            for gelu in gelus:
                refs = [reference(mmproj, px, gelu) for px in pixels]
                runs = [("threads=1", {})]
                if wtype == "f32" and gelu == "tanh":
                    runs += [(f"isa={isa}", {"isa": isa}) for isa in isas]
                for label, kw in runs:
                    cpp = encode(mmproj, pixels, gelu, **kw)
                    for (w, h), c, r in zip(sizes, cpp, refs):
                        ok_shape = c.shape == r.shape
                        err = rel(c, r) if ok_shape else float("inf")
                        report.check(ok_shape and err <= bound,
                                     f"{name} {wtype} gelu={gelu} {label} {w}x{h}: tokens "
                                     f"{c.shape[0]} vs {r.shape[0]}, max|Δ|/rms {err:.2e} "
                                     f"(bound {bound:g})")
                # One call for all images, two threads: bitwise the single-image results.
                alone = encode(mmproj, pixels, gelu)
                batch = encode(mmproj, pixels, gelu, threads=2, batch=True)
                report.check(all(np.array_equal(x, y) for x, y in zip(alone, batch)),
                             f"{name} {wtype} gelu={gelu}: batch of {len(pixels)} on 2 threads "
                             f"bitwise equal to each image alone on 1")
    print(f"{report.passed} passed, {report.failed} failed")
    if not a.keep and not a.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if report.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
