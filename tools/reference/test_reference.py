#!/usr/bin/python3
"""Tests of the NumPy reference: GGUF reader, writer and dequantizers, the gemma4v vision tower,
the gemma4a audio front end and encoder (self-contained, on tiny random mmproj files), then the
Gemma 4 target and MTP assistant against llama.cpp's outputs in ../shared/fixtures/llamacpp-tiny,
and the image rules of the text side on that fixture's target.

Usage: test_reference.py [SHARED_DIR]   (default: <repo>/../shared, or $TANDEM_SHARED_DIR)
Exit code: 0 = all passed, 77 = skipped (fixture or NumPy absent), 1 = a check failed.
Prints one line per check and a final line "N passed, M failed".
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, HERE)
SKIP = 77

try:
    import numpy as np
except ImportError:
    print("SKIP: NumPy is not installed for this interpreter (apt-get install python3-numpy)")
    sys.exit(SKIP)

import assistant  # noqa: E402
import gemma4  # noqa: E402
import gguf_checks  # noqa: E402
import ops  # noqa: E402
import vision_checks  # noqa: E402
import audio_checks  # noqa: E402
import audio_encoder_checks  # noqa: E402

# Tolerances for the top-10 log-probabilities of logprobs-prompt0-top10.json. llama.cpp's own
# evaluation orders differ by up to 0.013 on this file (fixture README); float64 GELU adds up to
# an fp16 rounding step per activation on top. Observed: 0.057 exact, 0.019 with --gelu ggml.
LOGPROB_TOL = {"exact": 0.08, "ggml": 0.03}


class Fixture:
    def __init__(self, root):
        self.root = root
        self.target_path = os.path.join(root, "tiny-gemma4-f32.gguf")
        self.assistant_path = os.path.join(root, "tiny-gemma4-assistant-f32.gguf")
        self.prompts = self.json("prompts.json")["prompts"]
        self.nospec = self.json("greedy-nospec.json")["results"]
        self.mtp = self.json("greedy-mtp-n3.json")["results"]
        self.logprobs = self.json("logprobs-prompt0-top10.json")
        self.models = {}

    def json(self, name):
        with open(os.path.join(self.root, name)) as f:
            return json.load(f)

    def pair(self, gelu="exact"):
        if gelu not in self.models:
            target = gemma4.Model.load(self.target_path, gelu_mode=gelu)
            drafter = assistant.Assistant.load(self.assistant_path, gelu_mode=gelu).bind(target)
            self.models[gelu] = (target, drafter)
        return self.models[gelu]


def check_greedy_nospec(fx):
    """Teacher-forced: one pass over prompt + llama.cpp's 64 tokens; every argmax must be the
    next llama.cpp token (exactly equivalent to free-running greedy, which is also run for
    the shortest prompt)."""
    target, _ = fx.pair()
    for prompt, want in zip(fx.prompts, fx.nospec):
        ids, gen = prompt["token_ids"], want["token_ids"]
        argmax = np.argmax(target.run(ids + gen).logits[len(ids) - 1:-1], axis=1)
        bad = np.flatnonzero(argmax != np.array(gen))
        assert bad.size == 0, (f"prompt {prompt['id']}: first mismatch at generated token "
                               f"{bad[0]}: {argmax[bad[0]]} vs llama.cpp {gen[bad[0]]}")
    assert gemma4.greedy(target, fx.prompts[2]["token_ids"], 64) == fx.nospec[2]["token_ids"]
    print("    4 prompts x 64 greedy tokens identical to llama.cpp")


def max_logprob_diff(fx, gelu):
    target, _ = fx.pair(gelu)
    prompt, gen = fx.prompts[0]["token_ids"], fx.nospec[0]["token_ids"]
    logp = ops.log_softmax(target.run(prompt + gen).logits)
    worst = (0.0, None)
    for entry in fx.logprobs["positions"]:
        row = logp[len(prompt) - 1 + entry["pos"]]
        assert int(np.argmax(row)) == entry["token_id"], f"pos {entry['pos']}: argmax differs"
        for cand in entry["top10"]:
            d = abs(row[cand["id"]] - cand["logprob"])
            if d > worst[0]:
                worst = (d, entry["pos"])
    return worst


def check_logprobs(fx):
    for gelu in ("exact", "ggml"):
        diff, pos = max_logprob_diff(fx, gelu)
        print(f"    gelu={gelu}: max |logprob - llama.cpp| over 64 x top-10 = {diff:.4f} "
              f"(at pos {pos}; tolerance {LOGPROB_TOL[gelu]})")
        assert diff <= LOGPROB_TOL[gelu], f"gelu={gelu}: {diff} > {LOGPROB_TOL[gelu]}"


def check_mtp(fx):
    target, drafter = fx.pair()
    for prompt, want in zip(fx.prompts, fx.mtp):
        got = assistant.mtp_greedy(target, drafter, prompt["token_ids"], 64, 3)
        assert got["tokens"] == want["token_ids"], f"prompt {prompt['id']}: tokens differ"
        counts, ref = (got["drafted"], got["accepted"]), (want["draft_n"], want["draft_n_accepted"])
        print(f"    prompt {prompt['id']}: drafted/accepted {counts[0]}/{counts[1]}, "
              f"llama.cpp {ref[0]}/{ref[1]}")
        assert counts == ref, f"prompt {prompt['id']}: draft counts {counts} != llama.cpp {ref}"


def check_kv_sharing_and_causality(fx):
    """Prefix rows do not depend on later tokens; shared layers reuse the right owner."""
    target, _ = fx.pair()
    toks = fx.prompts[0]["token_ids"]
    full, part = target.run(toks), target.run(toks[:17])
    assert np.allclose(full.logits[:17], part.logits, rtol=0, atol=1e-12)
    assert target.kv_source == [0, 1, 2, 1, 1, 2], target.kv_source
    assert sorted(full.kv) == [0, 1, 2]
    assert drafter_kv_layers(fx) == [1, 1, 1, 2]


def drafter_kv_layers(fx):
    return fx.pair()[1].kv_layer


def check_draft_steps(fx):
    """The draft block: positions, step 0 independent of the position mode, chaining."""
    target, drafter = fx.pair()
    prompt = fx.prompts[2]["token_ids"]
    t0, h, const = assistant.draft_after_prompt(target, drafter, prompt, 3, "constant")
    _, _, incr = assistant.draft_after_prompt(target, drafter, prompt, 3, "increment")
    n = len(prompt)
    assert t0 == fx.nospec[2]["token_ids"][0]
    assert [s.pos for s in const] == [n, n, n] and [s.pos for s in incr] == [n, n + 1, n + 2]
    assert np.array_equal(const[0].logits, incr[0].logits)
    assert not np.allclose(const[1].logits, incr[1].logits)  # the mode matters from step 1
    state = target.run(prompt)
    logits, h_next, _ = drafter.step(state, n, const[0].token, const[0].h_next, n)
    assert np.array_equal(logits, const[1].logits) and np.array_equal(h_next, const[1].h_next)


def check_centroid_head(fx):
    """With masked_embd_* present only the top-k clusters' tokens get (dense-equal) logits."""
    _, drafter = fx.pair()
    rng = np.random.default_rng(7)
    n_c, d = 16, drafter.cfg.n_embd
    y = rng.standard_normal(d)
    dense = drafter.head(y)
    saved = drafter.centroids
    try:
        drafter.centroids = rng.standard_normal((n_c, d))
        drafter.ordering = rng.permutation(drafter.cfg.n_vocab).reshape(n_c, -1)
        drafter.centroid_top_k = 3
        sparse = drafter.head(y)
        top = np.argsort(-(drafter.centroids @ y))[:3]
        kept = np.zeros(drafter.cfg.n_vocab, bool)
        kept[drafter.ordering[top].reshape(-1)] = True
        assert np.array_equal(sparse[kept], dense[kept])
        assert np.all(np.isneginf(sparse[~kept])) and kept.sum() == 3 * drafter.ordering.shape[1]
    finally:
        drafter.centroids = saved


def run_cli(*args):
    cmd = [sys.executable, os.path.join(HERE, "reference.py"), *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return res.returncode, res.stdout, res.stderr


def check_cli(fx):
    target, drafter = fx.pair()
    prompt = fx.prompts[2]["token_ids"]
    toks = ",".join(map(str, prompt))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "l.npz")
        assert run_cli("logits", fx.target_path, "--tokens", toks, "--out", out)[0] == 0
        with np.load(out) as z:
            state = target.run(prompt)
            assert np.array_equal(z["logits"], state.logits)
            assert np.array_equal(z["hidden"], state.hidden)
        rc, stdout, _ = run_cli("greedy", fx.target_path, "--tokens", toks, "-n", "5")
        assert rc == 0 and json.loads(stdout)["tokens"] == fx.nospec[2]["token_ids"][:5], stdout
        rc, stdout, _ = run_cli("mtp-greedy", fx.target_path, fx.assistant_path, "--tokens", toks,
                                "-n", "6", "--draft-max", "3")
        res = json.loads(stdout)
        assert rc == 0 and res["tokens"] == fx.nospec[2]["token_ids"][:6], stdout
        want = assistant.mtp_greedy(target, drafter, prompt, 6, 3)
        assert (res["drafted"], res["accepted"]) == (want["drafted"], want["accepted"]), stdout
        out = os.path.join(tmp, "d.npz")
        assert run_cli("draft", fx.target_path, fx.assistant_path, "--tokens", toks,
                       "--draft-max", "3", "--out", out)[0] == 0
        _, _, steps = assistant.draft_after_prompt(target, drafter, prompt, 3)
        with np.load(out) as z:
            assert z["logits"].shape == (3, 512)
            assert np.array_equal(z["logits"], np.array([s.logits for s in steps]))
            assert list(z["tokens"]) == [s.token for s in steps]
        rc, _, err = run_cli("logits", fx.target_path, "--tokens", "2,512", "--out", out)
        assert rc == 1 and "out of range" in err, err
        rc, _, err = run_cli("logits", fx.assistant_path, "--tokens", "2", "--out", out)
        assert rc == 1 and "gemma4-assistant" in err, err


FIXTURE_CHECKS = [check_greedy_nospec, check_logprobs, check_mtp, check_kv_sharing_and_causality,
                  check_draft_steps, check_centroid_head, check_cli]


def run(name, fn, *args):
    t0 = time.time()
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - report every failure and keep going
        print(f"FAIL {name} ({time.time() - t0:.1f}s)")
        traceback.print_exc(file=sys.stdout)
        return False
    print(f"ok   {name} ({time.time() - t0:.1f}s)")
    return True


def shared_dir(argv):
    if len(argv) > 1:
        return argv[1]
    return os.environ.get("TANDEM_SHARED_DIR",
                          os.path.join(HERE, os.pardir, os.pardir, os.pardir, "shared"))


def main(argv):
    self_contained = (gguf_checks.CHECKS + vision_checks.CHECKS + audio_checks.CHECKS
                      + audio_encoder_checks.CHECKS)
    results = [run(fn.__name__, fn) for fn in self_contained]
    fixture_dir = os.path.join(shared_dir(argv), "fixtures", "llamacpp-tiny")
    if not os.path.isfile(os.path.join(fixture_dir, "tiny-gemma4-f32.gguf")):
        print(f"SKIP: the llama.cpp fixture is absent ({os.path.normpath(fixture_dir)}); "
              f"skipping {len(FIXTURE_CHECKS) + len(vision_checks.FIXTURE_CHECKS)} fixture checks")
    else:
        fx = Fixture(fixture_dir)
        results += [run(fn.__name__, fn, fx)
                    for fn in FIXTURE_CHECKS + vision_checks.FIXTURE_CHECKS]
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    if passed != len(results):
        return 1
    return 0 if len(results) > len(self_contained) else SKIP


if __name__ == "__main__":
    sys.exit(main(sys.argv))
