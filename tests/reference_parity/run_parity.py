#!/usr/bin/python3
"""C++ forward pass (tandem-dump-logits) vs the float64 NumPy reference on every tiny Gemma 4.

  run_parity.py --dump BUILD/tandem-dump-logits --reference tools/reference [--workdir DIR]
                [--variants tiny-e2b,...] [--keep]

For each tiny preset it writes random-weight models (f32, q8_0, q4_0), conditions their q/k
norms (emulation.condition_qk_norms; README.md says why), evaluates 64 tokens (twice the sliding
window) by one-shot prefill, token-by-token decode and chunks, and compares logits [T,V] and
hidden [T,D] with the reference. Bounds and measured figures: README.md. Prints one line per
check and a final "N passed, M failed". Exit code 0 = all passed, 1 = a check failed or a run
broke, 77 = skipped (NumPy absent).
"""

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree

VARIANTS = ("tiny-e2b", "tiny-e4b", "tiny-26b-a4b", "tiny-31b")
N_TOKENS = 64  # the tiny presets' sliding window is 32

F32_BOUND = 1e-3           # f32 weights, f32 KV (the bound)
F16_KV_BOUND = 1.5e-2      # f32 weights, f16 KV: the f16 rounding's effect
# q8_0 / q4_0 weights vs the plain reference: (max |Δ|, rms |Δlogit|) for dense and MoE models
QUANT_BOUND = {"dense": (1.0, 0.15), "moe": (4.0, 0.5)}
EXACT = 1e-4               # a position "agrees" with the rounding-emulating reference
NEAR_TIE = 1e-3            # an argmax flip where the reference's gap is below this is reported


def sequence(n_vocab):
    """BOS then a fixed spread of ordinary ids (deterministic, no RNG)."""
    return [2] + [(i * 97 + 13) % (n_vocab - 4) + 4 for i in range(N_TOKENS - 1)]


class Report:
    def __init__(self):
        self.passed = self.failed = 0
        self.notes = []
        self.worst = {}  # figure name -> largest value seen
        self.exact = {}  # weight type -> positions agreeing with the Q8_0-activation reference

    def check(self, ok, text):
        print(("PASS " if ok else "FAIL ") + text, flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    def note(self, text):
        print("NOTE " + text, flush=True)
        self.notes.append(text)

    def figure(self, name, value):
        self.worst[name] = max(self.worst.get(name, 0.0), value)


class Engine:
    """Runs tandem-dump-logits and reads its f32 [T][V] logits + [T][D] hidden."""

    def __init__(self, binary, workdir):
        self.binary, self.workdir = binary, workdir
        self.out = os.path.join(workdir, "dump.bin")

    def _call(self, args):
        r = subprocess.run([self.binary, *args], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{os.path.basename(self.binary)} {' '.join(args[:4])} ... exited "
                               f"{r.returncode}: {r.stderr.strip()}")
        return r.stdout

    def isas(self):
        return self._call(["--list-isas"]).split()

    def write_model(self, preset, weight_type, path):
        self._call(["-m", path, "--write-random", preset, "--weight-type", weight_type])

    def logits(self, path, tokens, shape, mode="prefill", kv="f32", threads=1, isa=None):
        import numpy as np
        args = ["-m", path, "--tokens", ",".join(map(str, tokens)), "--mode", mode,
                "--kv-type", kv, "--threads", str(threads), "--out", self.out]
        if isa:
            args += ["--isa", isa]
        self._call(args)
        t, v, d = shape
        data = np.fromfile(self.out, dtype="<f4")
        if data.size != t * (v + d):
            raise RuntimeError(f"dump has {data.size} floats, expected {t}*({v}+{d})")
        return data[:t * v].reshape(t, v), data[t * v:].reshape(t, d)


def compare(cpp, ref):
    """Max |Δ| of logits and hidden, the worst position, and the argmax flips with the
    reference's logit gap between its argmax and the engine's."""
    import numpy as np
    (cl, ch), (rl, rh) = cpp, ref
    dl = np.abs(cl - rl).max(axis=1)
    dh = np.abs(ch - rh).max(axis=1)
    ra, ca = rl.argmax(axis=1), cl.argmax(axis=1)
    flips = [(int(t), float(rl[t, ra[t]] - rl[t, ca[t]])) for t in np.nonzero(ra != ca)[0]]
    return {"dl": float(dl.max()), "pos": int(dl.argmax()), "dh": float(dh.max()),
            "rms": float(np.sqrt(np.mean((cl - rl) ** 2))),
            "per_pos": np.maximum(dl, dh), "flips": flips}


def describe(c):
    return (f"max|Δlogit| {c['dl']:.2e} (pos {c['pos']}), max|Δhidden| {c['dh']:.2e}, "
            f"argmax differs at {len(c['flips'])}/{len(c['per_pos'])}")


def check_bounded(report, label, c, bound, figure):
    """Passes when logits and hidden are within `bound` and every argmax flip is a near-tie."""
    report.figure(figure, c["dl"])
    real = [(t, g) for t, g in c["flips"] if g >= NEAR_TIE]
    for t, g in c["flips"]:
        if g < NEAR_TIE:
            report.note(f"{label}: argmax flip at near-tie position {t} (reference gap {g:.1e})")
    ok = c["dl"] <= bound and c["dh"] <= bound and not real
    extra = f"; flips at {[(t, round(g, 4)) for t, g in real]}" if real else ""
    report.check(ok, f"{label}: {describe(c)} (bound {bound:g}){extra}")


def check_variant(report, engine, preset, isas, keep):
    import numpy as np
    import emulation
    import gemma4

    def path_of(wtype, suffix=""):
        return os.path.join(engine.workdir, f"{preset}-{wtype}{suffix}.gguf")

    # As written by WriteRandomGemma4, unconditioned: informational only (README.md).
    raw = path_of("f32", "-raw")
    engine.write_model(preset, "f32", raw)
    model = gemma4.Model.load(raw)
    tokens = sequence(model.cfg.n_vocab)
    ref = model.forward(tokens)
    shape = (len(tokens), ref[0].shape[1], ref[1].shape[1])
    c = compare(engine.logits(raw, tokens, shape), ref)
    report.figure("f32 weights, unconditioned model (info)", c["dl"])
    print(f"INFO {preset} f32 unconditioned model, prefill: {describe(c)}", flush=True)
    paths = [raw]

    for wtype in ("f32", "q8_0", "q4_0"):
        path = path_of(wtype)
        paths.append(path)
        engine.write_model(preset, wtype, path)
        emulation.condition_qk_norms(path)
        model = gemma4.Model.load(path)
        ref = model.forward(tokens)
        tag = f"{preset} {wtype}"
        if wtype == "f32":
            for isa in isas:
                c = compare(engine.logits(path, tokens, shape, isa=isa), ref)
                check_bounded(report, f"{tag} prefill kv=f32 isa={isa}", c, F32_BOUND,
                              "f32 weights, f32 KV")
            for mode, threads in (("decode", 1), ("chunks:13", 2)):
                c = compare(engine.logits(path, tokens, shape, mode=mode, threads=threads), ref)
                check_bounded(report, f"{tag} {mode} kv=f32 threads={threads}", c, F32_BOUND,
                              "f32 weights, f32 KV")
            for mode in ("prefill", "decode"):
                c = compare(engine.logits(path, tokens, shape, mode=mode, kv="f16"), ref)
                check_bounded(report, f"{tag} {mode} kv=f16", c, F16_KV_BOUND,
                              "f32 weights, f16 KV")
            continue
        widths = emulation.quantized_inputs(path)
        with emulation.emulate(model, widths):
            refq = model.forward(tokens)
        kind = "moe" if any(ly.router is not None for ly in model.layers) else "dense"
        max_bound, rms_bound = QUANT_BOUND[kind]
        for mode in ("prefill", "decode"):
            cpp = engine.logits(path, tokens, shape, mode=mode)
            c = compare(cpp, ref)
            report.figure(f"{wtype} weights ({kind}), max", c["dl"])
            report.figure(f"{wtype} weights ({kind}), rms", c["rms"])
            report.check(c["dl"] <= max_bound and c["dh"] <= max_bound and c["rms"] <= rms_bound,
                         f"{tag} {mode} kv=f32: {describe(c)}, rms|Δlogit| {c['rms']:.3f} "
                         f"(bounds: max {max_bound:g}, rms {rms_bound:g}; argmax not required)")
            e = compare(cpp, refq)
            exact = int(np.sum(e["per_pos"] <= EXACT))
            report.exact[wtype] = report.exact.get(wtype, 0) + exact
            first_off = next((t for t in range(len(tokens)) if e["per_pos"][t] > EXACT), None)
            print(f"INFO {tag} {mode} vs the Q8_0-activation reference: {exact}/{len(tokens)} "
                  f"positions agree to {EXACT:g} (first that does not: {first_off})", flush=True)
    if not keep:
        for p in paths:
            os.remove(p)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dump", required=True, help="path of the tandem-dump-logits binary")
    p.add_argument("--reference", required=True, help="tools/reference directory")
    p.add_argument("--workdir", help="where models and dumps go (default: a temporary dir)")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--keep", action="store_true", help="keep the generated models")
    args = p.parse_args(argv)
    if importlib.util.find_spec("numpy") is None:
        print("SKIP: NumPy is not available to this Python (use /usr/bin/python3)")
        return 77
    sys.path.insert(0, os.path.abspath(args.reference))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if not os.access(args.dump, os.X_OK):
        print(f"FAIL: {args.dump} is missing; build the tandem-dump-logits target")
        print("0 passed, 1 failed")
        return 1
    workdir = args.workdir or tempfile.mkdtemp(prefix="tandem-parity-")
    os.makedirs(workdir, exist_ok=True)
    engine = Engine(args.dump, workdir)
    report = Report()
    isas = engine.isas()
    print(f"tandem-dump-logits: kernel paths {', '.join(isas)}; {N_TOKENS} tokens per sequence")
    variants = [v for v in args.variants.split(",") if v]
    for preset in variants:
        try:
            check_variant(report, engine, preset, isas, args.keep)
        except Exception as e:  # a crashed run is one failed check, the others still run
            report.check(False, f"{preset}: {type(e).__name__}: {e}")
    # A position that met no Q8_0 rounding-boundary flip checks every quantized matmul on its
    # path exactly. One variant alone may flip at position 0 (tiny-e4b q4_0 does), so the check
    # pools the variants and needs at least two of them.
    for wtype, n in report.exact.items():
        text = (f"{wtype}: {n} positions over all variants and modes agree to {EXACT:g} with "
                "the Q8_0-activation reference")
        if len(variants) >= 2:
            report.check(n > 0, text)
        else:
            print("INFO " + text)
    print("Largest figure per configuration (logits; rms over all positions and ids):")
    for name, value in report.worst.items():
        print(f"  {name}: {value:.2e}")
    if report.notes:
        print(f"{len(report.notes)} near-tie argmax flip(s) reported above (NOTE lines)")
    if not args.workdir and not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"{report.passed} passed, {report.failed} failed")
    return 0 if report.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
