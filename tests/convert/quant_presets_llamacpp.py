#!/usr/bin/env python3
"""llama.cpp as the oracle of `tandem quantize`'s K-quant and IQ4 presets, which need no importance
matrix (Q2_K, Q3_K_S, Q3_K_M, Q3_K_L, Q4_K_S, Q4_K_M, Q5_K_S, Q5_K_M, Q6_K, IQ4_NL, IQ4_XS): each
preset quantizes two f32 files, the random tiny model `tandem mkmodel` writes and the bundled
trained target (`tandem convert` of models/hf/target); on every file llama.cpp's llama-server
must load it, and its greedy continuation of a prompt must equal tandem's own on the same file by
the rule of the llama.cpp parity suites (tests/node/peer_compare.mjs): equal token ids up to the
first step where the engines pick differently, which must be a near-tie, llama.cpp's token within
2 * TOL of tandem's in tandem's own log-probs (both servers' /completion with n_probs; TOL below).
The trained file's mix must hold the preset's own type (the tiny model's 128-wide rows fall back
for most).

The peer build is ../shared/peer beside the repository, or the folder named by TANDEM_PEER_BIN; run
only through its bin/run. Without it the test says so and exits 77 (ctest: skipped).
Usage: quant_presets_llamacpp.py TANDEM_BINARY REPO_ROOT WORK_DIR"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

TANDEM, ROOT, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
PEER_BIN = os.environ.get("TANDEM_PEER_BIN", os.path.join(ROOT, "..", "shared", "peer", "bin"))
PEER_RUN = os.path.join(PEER_BIN, "run")
N_TOKENS = 32
# The log-prob bound. The media parity suites (tests/node/server_*_llamacpp) hold f32 and Q8_0
# files to 0.02; on these small quantized files the engines' activation rounding moves log-probs
# further, already for the presets that existed before (Q4_0, Q5_K_M at the near-ties of the same
# prompt need more than 0.04, within 2 * 0.05).
TOL = 0.05
PROMPT = 'import os\n\n\ndef read_lines(path):\n    """Return the lines of the file at path."""\n'
# Each preset and the type its mix is named after (docs/formats.md § Quantization presets).
PRESETS = {"Q2_K": "q2_K", "Q3_K_S": "q3_K", "Q3_K_M": "q3_K", "Q3_K_L": "q3_K",
           "Q4_K_S": "q4_K", "Q4_K_M": "q4_K", "Q5_K_S": "q5_K", "Q5_K_M": "q5_K",
           "Q6_K": "q6_K", "IQ4_NL": "iq4_nl", "IQ4_XS": "iq4_xs"}
SKIP = 77


def run(args, timeout=300):
    r = subprocess.run(args, capture_output=True, timeout=timeout)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {r.returncode}: "
                             f"{r.stderr.decode(errors='replace')[-2000:]}")
    return r.stdout


def peer_problem():
    if not os.path.exists(PEER_RUN):
        return f"{PEER_RUN} is missing"
    r = subprocess.run([PEER_RUN, "llama-server", "--version"], capture_output=True,
                       timeout=60)
    if r.returncode != 0:
        return f"llama-server does not start: {r.stderr.decode(errors='replace')[-500:]}"
    return None


def inspect(path):
    return json.loads(run([TANDEM, "inspect", "--json", "--all", path]))


def token_bytes(info):
    """Each token's bytes, for the messages (docs/formats.md § Token types): byte tokens <0xHH>
    are the byte, normal ones their text with U+2581 as a space, user-defined, control and
    unknown ones their text, unused ones nothing."""
    texts = info["metadata"]["tokenizer.ggml.tokens"]["value"]
    types = info["metadata"]["tokenizer.ggml.token_type"]["value"]
    out = []
    for text, kind in zip(texts, types):
        if kind == 6:
            out.append(bytes([int(text[3:5], 16)]))
        elif kind == 1:
            out.append(text.replace("\u2581", " ").encode())
        elif kind in (2, 3, 4):
            out.append(text.encode())
        else:
            out.append(b"")
    return out


def non_utf8_tokens(info):
    """The byte tokens 0x80..0xFF. llama-server answers 500 when its output is not valid UTF-8
    (llama.cpp issue 27543) and the random model emits such bytes freely, so both engines'
    requests ban them with logit_bias (tests/node/peer_compare.mjs does the same); each still
    reports its top log-probs from the unbiased logits."""
    texts = info["metadata"]["tokenizer.ggml.tokens"]["value"]
    types = info["metadata"]["tokenizer.ggml.token_type"]["value"]
    return [i for i, (text, kind) in enumerate(zip(texts, types))
            if kind == 6 and int(text[3:5], 16) >= 0x80]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def greedy(command, name, banned):
    """Starts the server `command` (its port added), asks /completion for N_TOKENS greedy tokens of
    PROMPT with the top 10 log-probs, and stops it: [(token id, log-prob, [(id, log-prob)])].
    Both engines answer through HTTP: llama-completion prints through a logging thread, and on a
    loaded machine it can exit before that thread has written everything, cutting its text short."""
    port = free_port()
    log = tempfile.TemporaryFile()
    server = subprocess.Popen(command + ["--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            # A server that exited (its port taken by another test since free_port) must not
            # leave the port's other owner to answer in its place.
            if server.poll() is not None:
                log.seek(0)
                raise AssertionError(f"{name} exited {server.returncode}: "
                                     f"{log.read().decode(errors='replace')[-1000:]}")
            try:
                if urllib.request.urlopen(f"{base}/health", timeout=5).status == 200:
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError(f"{name} did not come up")
        body = json.dumps({"prompt": PROMPT, "n_predict": N_TOKENS, "temperature": 0,
                           "n_probs": 10, "logit_bias": [[i, -100] for i in banned]}).encode()
        request = urllib.request.Request(f"{base}/completion", data=body,
                                         headers={"Content-Type": "application/json"})
        try:
            answer = json.load(urllib.request.urlopen(request, timeout=300))
        except urllib.error.HTTPError as e:
            raise AssertionError(f"{name} answered {e.code}: {e.read()[:500]!r}")
    finally:
        server.kill()
        server.wait(timeout=30)
    return [(p["id"], p["logprob"], [(q["id"], q["logprob"]) for q in p["top_logprobs"]])
            for p in answer["completion_probabilities"]]


def tandem_greedy(path, banned):
    return greedy([TANDEM, "serve", "-m", path, "-t", "2", "--no-warmup"], "tandem serve", banned)


def llamacpp_greedy(path, banned):
    return greedy([PEER_RUN, "llama-server", "-m", path, "-t", "2", "-c", "512", "--no-warmup",
                   "-np", "1"], "llama-server", banned)


def compare(ours, theirs, vocab):
    """How many steps agree, and the log-prob gap (in tandem) of the near-tie where they part;
    raises unless the first step that differs is a near-tie: llama.cpp's token within 2 * TOL of
    tandem's in tandem's own top log-probs."""
    assert len(theirs) == len(ours), f"llama-server gave {len(theirs)} steps"
    for i, ((token, logprob, top), (their, _, _)) in enumerate(zip(ours, theirs)):
        if token == their:
            continue
        near = [lp for t, lp in top if t == their and abs(lp - logprob) <= 2 * TOL]
        assert near, (f"step {i}: tandem picks {vocab[token]!r} ({logprob:.4f}), llama.cpp "
                      f"{vocab[their]!r}, not a near-tie in tandem's top "
                      f"{[(vocab[t], round(lp, 4)) for t, lp in top[:4]]}")
        return i, logprob - near[0]
    return len(ours), 0.0


def main():
    why = peer_problem()
    if why:
        print(f"skipped: the llama.cpp peer ({PEER_BIN}) cannot be used, {why}")
        return SKIP
    os.makedirs(WORK, exist_ok=True)
    sources = {"tiny": os.path.join(WORK, "tiny-f32.gguf"),
               "trained": os.path.join(WORK, "trained-f32.gguf")}
    run([TANDEM, "mkmodel", "-o", sources["tiny"], "--type", "f32"])
    run([TANDEM, "convert", os.path.join(ROOT, "models", "hf", "target"), "-o",
         sources["trained"], "--type", "f32", "--no-progress"])
    failed = 0
    for preset, own_type in PRESETS.items():
        for model, source in sources.items():
            path = os.path.join(WORK, f"{model}-{preset}.gguf")
            try:
                run([TANDEM, "quantize", source, path, preset, "--no-progress", "-t", "2"])
                info = inspect(path)
                types = {t["type"] for t in info["tensors"]}
                if model == "trained":
                    assert own_type in types, f"the mix holds no {own_type}: {sorted(types)}"
                banned = non_utf8_tokens(info)
                steps = tandem_greedy(path, banned)
                assert len(steps) == N_TOKENS, f"tandem gave {len(steps)} steps"
                agreed, gap = compare(steps, llamacpp_greedy(path, banned), token_bytes(info))
                how = ("all equal" if agreed == N_TOKENS else
                       f"equal up to a near-tie at step {agreed} (gap {gap:.4f})")
                print(f"ok   {preset} {model}: {sorted(types)}; {N_TOKENS} greedy tokens, {how}")
            except AssertionError as e:
                failed += 1
                print(f"FAIL {preset} {model}: {e}")
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
